// Pieces for the crash-equivalence and damage suites: a server child process that may die at any
// moment (spawned with extra environment, e.g. SLUICE_CRASH_POINT, and whose early death is an
// answer, not an error), a Prometheus text reader, and a WebSocket subscriber that survives server
// restarts by resuming from the last epoch it folded, keeping every `changes` message it received.
import { type ChildProcess, spawn } from 'node:child_process';
import { serverBundle } from './server-bundle.ts';
import WebSocket from 'ws';
import { FoldedView, type Message, startArgs } from '../server/helpers.ts';

export interface CrashableServer {
  readonly child: ChildProcess;
  readonly base: string;
  readonly wsBase: string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  dead(): boolean;
  output(): string;
}

export type SpawnOutcome =
  | { readonly kind: 'listening'; readonly server: CrashableServer }
  | {
      readonly kind: 'exited';
      readonly code: number | null;
      readonly signal: NodeJS.Signals | null;
      readonly output: string;
    };

/**
 * Starts `sluice start` on a free port. Resolves once it listens, or with its exit when it dies
 * first (a crash point reached during recovery, or a start refused).
 */
export async function spawnCrashable(
  dataDir: string,
  options: {
    args?: readonly string[];
    env?: Record<string, string>;
    timeoutMs?: number;
    /** SIGKILL the process this long after it was spawned unless it listens first (a kill during recovery). */
    killAfterMs?: number;
  } = {},
): Promise<SpawnOutcome> {
  const cli = await serverBundle();
  const child = spawn(process.execPath, [cli, ...startArgs(dataDir, options.args)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '', SLUICE_DATA_DIR: '', SLUICE_CRASH_POINT: '', ...options.env },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  let isDead = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      isDead = true;
      resolve({ code, signal });
    }),
  );
  const killer =
    options.killAfterMs === undefined
      ? undefined
      : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m !== null) {
      clearTimeout(killer);
      const port = Number(m[1]);
      return {
        kind: 'listening',
        server: {
          child,
          base: `http://127.0.0.1:${port}`,
          wsBase: `ws://127.0.0.1:${port}`,
          exited,
          dead: () => isDead,
          output: () => out,
        },
      };
    }
    if (isDead) {
      clearTimeout(killer);
      const { code, signal } = await exited;
      return { kind: 'exited', code, signal, output: out };
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not listen within ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Kills a child (SIGKILL) unless it already exited, and waits for its exit. */
export async function killHard(server: CrashableServer | undefined): Promise<void> {
  if (server === undefined) return;
  if (!server.dead()) server.child.kill('SIGKILL');
  await server.exited;
}

/** Metric value from Prometheus text (the sample without labels, or with exactly `labels`). */
export function metricValue(text: string, name: string, labels = ''): number | undefined {
  const want = labels === '' ? name : `${name}{${labels}}`;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    if (space < 0) continue;
    // The default tenant's label (every series of a tenant has one) is not part of the match.
    const series = line
      .slice(0, space)
      .replace(/,tenant="default"\}$/, '}')
      .replace(/\{tenant="default"\}$/, '');
    if (series === want) return Number(line.slice(space + 1));
  }
  return undefined;
}

/** True for errors that mean "the server went away" (fetch to a dead process, reset sockets). */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const text = `${error.message} ${String((error as { cause?: unknown }).cause ?? '')}`;
  return /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|other side closed|UND_ERR|EPIPE|terminated/i.test(
    text,
  );
}

/**
 * A subscriber of one view across server restarts: the first connection takes a snapshot, every
 * later one resumes from `epoch` (the last epoch it folded: a changes, progress or snapshot_end
 * message). Keeps every changes message and the fold of the whole stream.
 */
export class ResumingSubscriber {
  readonly folded = new FoldedView();
  /** Every changes message, in arrival order, across connections (unless constructed with keep: false). */
  readonly changes: Message[] = [];
  /** The epoch of every changes message, in arrival order (kept also with keep: false). */
  readonly epochs: number[] = [];
  /** Epoch the stream started from (the first snapshot's). */
  startEpoch = -1;
  /** Last epoch folded; -1 before the snapshot ended. */
  epoch = -1;
  connections = 0;
  /** The last connections' opens, closes and shutdown errors (for a failure's message). */
  readonly events: string[] = [];
  /** Protocol problems seen (an error message other than the shutdown one, a bad order). */
  readonly problems: string[] = [];
  private socket: WebSocket | null = null;
  private snapshotRows: Message[] = [];

  /** The view the server streams (a query subscription's temporary view: from its `subscribed`). */
  servedView: string;

  /**
   * `keep: false` drops the messages once folded (long runs), keeping only their epochs; `query`
   * subscribes to that SELECT (`/v1/subscribe?sql=`) instead of the view `view`.
   */
  constructor(
    readonly view: string,
    readonly name: string,
    private readonly options: { keep?: boolean; query?: string } = {},
  ) {
    this.servedView = view;
  }

  get connected(): boolean {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  /** Connects (snapshot the first time, resumeFrom afterwards); resolves when open. */
  async connect(wsBase: string): Promise<void> {
    this.disconnect();
    const query = this.epoch < 0 ? 'snapshot=true' : `resumeFrom=${this.epoch}`;
    const path =
      this.options.query === undefined
        ? `/v1/views/${this.view}/subscribe?`
        : `/v1/subscribe?sql=${encodeURIComponent(this.options.query)}&`;
    const socket = new WebSocket(`${wsBase}${path}${query}`);
    this.socket = socket;
    this.connections += 1;
    socket.on('message', (data) => this.onMessage(JSON.parse(String(data)) as Message));
    socket.on('error', () => undefined);
    socket.on('close', (code) => this.note(`close ${code} at epoch ${this.epoch}`));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('closed before open')));
      socket.once('unexpected-response', (_req, res) =>
        reject(new Error(`unexpected response ${res.statusCode}`)),
      );
    });
  }

  private note(event: string): void {
    this.events.push(event);
    if (this.events.length > 40) this.events.splice(0, 20);
  }

  disconnect(): void {
    const s = this.socket;
    this.socket = null;
    if (s !== null && (s.readyState === WebSocket.OPEN || s.readyState === WebSocket.CONNECTING))
      s.terminate();
  }

  private fold(m: Message): void {
    try {
      this.folded.apply(m);
    } catch (error) {
      this.problems.push(`${this.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private onMessage(m: Message): void {
    switch (m.type) {
      case 'subscribed':
        this.note(`subscribed ${String(m.view)} at ${String(m.epoch)} (${this.epoch})`);
        if (typeof m.view === 'string') this.servedView = m.view;
        if (this.epoch >= 0 && m.epoch !== this.epoch)
          this.problems.push(`${this.name}: subscribed at ${m.epoch}, asked to resume from ${this.epoch}`);
        break;
      case 'snapshot':
        this.snapshotRows.push(m);
        break;
      case 'snapshot_end':
        for (const s of this.snapshotRows) this.fold(s);
        this.snapshotRows = [];
        this.startEpoch = m.epoch as number;
        this.epoch = m.epoch as number;
        break;
      case 'changes': {
        const e = m.epoch as number;
        if (e <= this.epoch)
          this.problems.push(`${this.name}: changes of epoch ${e} after epoch ${this.epoch}`);
        if (this.options.keep !== false) this.changes.push(m);
        this.epochs.push(e);
        this.fold(m);
        this.epoch = e;
        break;
      }
      case 'progress':
        if ((m.epoch as number) > this.epoch) this.epoch = m.epoch as number;
        break;
      case 'error':
        this.note(`error ${String(m.code)} at epoch ${this.epoch}`);
        if (m.code !== 'UNAVAILABLE') this.problems.push(`${this.name}: error ${JSON.stringify(m)}`);
        break;
      default:
        this.problems.push(`${this.name}: unexpected message ${JSON.stringify(m)}`);
    }
  }
}
