// `sluice subscribe VIEW`: prints a view's changelog live over the WebSocket API, one line per change
// (`+I`, `-D`, `-U`/`+U` with the row; a snapshot's rows as `+I`), until Ctrl-C. After a dropped
// connection (a server restart, SLOW_CONSUMER) it reconnects with `resumeFrom` = the last epoch it
// has wholly printed, so the output has no gap and no duplicate. Status goes to stderr, changes to
// stdout.
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { ApiClient, ClientError, objectName } from './api-client.ts';
import {
  cellText,
  displayWidth,
  escapeControls,
  isNumericType,
  MAX_ALIGN_WIDTH,
  type TableColumn,
  terminalSafeJson,
} from './table-format.ts';

export const SUBSCRIBE_USAGE = `Usage: sluice subscribe <view> [options]

Prints the changes of a materialized view as they happen, until Ctrl-C: a snapshot of its rows
first (as +I), then one line per change: +I insert, -D delete, -U/+U an update's old and new row.
A dropped connection is resumed from the last epoch printed, with no gap and no duplicate.

Options:
  --url <url>            the server (env SLUICE_URL; default http://127.0.0.1:8080)
  --token <token>        a bearer token, for a server with authentication (env SLUICE_TOKEN)
  --no-snapshot          only changes from now on, no snapshot
  --resume-from <epoch>  only the changes after this epoch (from the stored changelog)
  --format table|json    aligned columns (default), or one JSON object per line:
                         {"epoch":e,"op":"+I","row":{...}} (with "n" for a multiplicity k ≠ 1)
  --null <text>          how NULL prints in the table format (default NULL)
  -h, --help             show this help
`;

export interface SubscribeOptions {
  readonly client: ApiClient;
  readonly view: string;
  readonly snapshot: boolean;
  readonly resumeFrom: number | null;
  readonly format: 'table' | 'json';
  readonly nullText?: string;
  readonly output: NodeJS.WritableStream;
  readonly errors: NodeJS.WritableStream;
  /** First reconnect delay; it doubles up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
  /** The largest message accepted from the server (default `MAX_MESSAGE_BYTES`). */
  readonly maxMessageBytes?: number;
}

/** Close codes after which resuming cannot help: the request, the view or its history is wrong. */
const FATAL_CLOSE = new Set([4400, 4401, 4403, 4404, 4409, 4410, 4500]);
/**
 * The largest message read from the server. One epoch's changes arrive as one message (a
 * million-row epoch is about 48 MB), so the bound is generous; it keeps a broken or hostile
 * server from making the client buffer without limit.
 */
export const MAX_MESSAGE_BYTES = 128 * 1024 * 1024;
/** The error code `ws` gives a message past that bound. */
const MESSAGE_TOO_BIG = 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';
/** Ping the server this often; no pong by the next ping means the connection is dead. */
const PING_MS = 10_000;

interface Outcome {
  readonly subscribed: boolean;
  readonly code: number | null;
  readonly error: { code: string; message: string } | null;
  readonly failure: string | null;
  /** A message was past `maxMessageBytes`. */
  readonly tooBig: boolean;
  /**
   * The server broke the protocol: a message past `maxMessageBytes`, not JSON, not an object, or
   * one this client cannot read. Resuming would ask for the same message again, so the run ends.
   */
  readonly broken: boolean;
}

type Message = Record<string, unknown> & { type?: unknown };

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The objects of an array field (anything else in it, or a field that is no array, is none). */
function records(x: unknown): Message[] {
  return Array.isArray(x) ? x.filter(isRecord) : [];
}

export class Subscriber {
  /** The last epoch wholly printed: where a reconnect resumes from. */
  epoch: number | null;
  private columns: TableColumn[] | null = null;
  private widths: number[] = [];
  private stopped = false;
  private socket: WebSocket | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly options: SubscribeOptions) {
    this.epoch = options.resumeFrom;
  }

  /** Ends the subscription (Ctrl-C): `run` resolves with 0. */
  stop(): void {
    this.stopped = true;
    this.socket?.close(1000);
    this.wake?.();
  }

  private status(message: string): void {
    this.options.errors.write(`sluice subscribe: ${message}\n`);
  }

  private url(): string {
    const query =
      this.epoch !== null
        ? `resumeFrom=${this.epoch}`
        : `snapshot=${this.options.snapshot ? 'true' : 'false'}`;
    return this.options.client.wsUrl(`/v1/views/${encodeURIComponent(this.options.view)}/subscribe?${query}`);
  }

  /** Runs until stopped (0) or an error resuming cannot fix (1). */
  async run(): Promise<number> {
    const first = this.options.retryMs ?? 200;
    const max = this.options.maxRetryMs ?? 5000;
    let delay = first;
    let everSubscribed = false;
    while (!this.stopped) {
      const outcome = await this.connect();
      if (this.stopped) return 0;
      if (outcome.subscribed) {
        everSubscribed = true;
        delay = first;
      }
      const reason = outcome.tooBig
        ? `the server sent a message larger than ${this.maxMessageBytes()} bytes, the most this client accepts` +
          (this.epoch !== null ? ` (after epoch ${this.epoch}; --resume-from a later epoch skips it)` : '')
        : outcome.error !== null
          ? `${outcome.error.code}: ${escapeControls(outcome.error.message)}`
          : outcome.failure !== null
            ? escapeControls(outcome.failure)
            : `closed with code ${outcome.code ?? 'none'}`;
      // A broken message would come again on resuming (after the same epoch): that ends the run too.
      if ((outcome.code !== null && FATAL_CLOSE.has(outcome.code)) || outcome.broken || !everSubscribed) {
        this.status(`${everSubscribed ? '' : `cannot subscribe to "${this.viewName()}": `}${reason}`);
        return 1;
      }
      this.status(
        `connection lost (${reason}); resuming ${this.epoch === null ? 'with a new subscription' : `after epoch ${this.epoch}`} in ${delay} ms`,
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
      delay = Math.min(max, delay * 2);
    }
    return 0;
  }

  private maxMessageBytes(): number {
    return this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  }

  /** The view's name as the status lines print it (it may hold any character). */
  private viewName(): string {
    return escapeControls(this.options.view);
  }

  private connect(): Promise<Outcome> {
    return new Promise((resolve) => {
      const socket = new WebSocket(this.url(), {
        headers: this.options.client.authHeaders(),
        maxPayload: this.maxMessageBytes(),
      });
      this.socket = socket;
      let subscribed = false;
      let error: Outcome['error'] = null;
      let failure: string | null = null;
      let tooBig = false;
      let broken = false;
      let alive = true;
      const ping = setInterval(() => {
        if (!alive) {
          failure = `no answer to a ping in ${PING_MS / 1000} s`;
          socket.terminate();
          return;
        }
        alive = false;
        if (socket.readyState === WebSocket.OPEN) socket.ping(); // a stalled handshake ends at the next tick
      }, PING_MS);
      socket.on('pong', () => (alive = true));
      socket.on('message', (data) => {
        alive = true;
        let parsed: unknown;
        try {
          parsed = JSON.parse(data.toString());
        } catch {
          failure = 'a message that is not JSON';
          broken = true;
          socket.terminate();
          return;
        }
        if (!isRecord(parsed)) {
          failure = 'a message that is not a JSON object';
          broken = true;
          socket.terminate();
          return;
        }
        const message: Message = parsed;
        try {
          if (message.type === 'subscribed') {
            subscribed = true;
            this.subscribed(message);
          } else if (message.type === 'error') {
            error = { code: escapeControls(String(message.code)), message: String(message.message) };
          } else this.handle(message);
        } catch (e) {
          // A throw here would end the process with a stack trace; end this connection instead.
          failure = `a message this client cannot read (${e instanceof Error ? e.message : String(e)})`;
          broken = true;
          socket.terminate();
        }
      });
      socket.on('error', (e: Error & { code?: string }) => {
        if (e.code === MESSAGE_TOO_BIG) tooBig = broken = true;
        failure ??= e.message;
      });
      socket.on('close', (code) => {
        clearInterval(ping);
        if (this.socket === socket) this.socket = null;
        resolve({
          subscribed,
          code: code === 1005 || code === 1006 ? null : code,
          error,
          failure,
          tooBig,
          broken,
        });
      });
    });
  }

  private subscribed(message: Message): void {
    // Entries not shaped as the API's columns are skipped: a broken server's answer must not throw.
    const columns = records(message.columns).map((c) => ({
      name: String(c.name),
      type: typeof c.type === 'string' ? c.type : '',
    }));
    const at = typeof message.epoch === 'number' ? message.epoch : null;
    this.status(
      this.epoch !== null
        ? `subscribed to "${this.viewName()}", resuming after epoch ${this.epoch}`
        : `subscribed to "${this.viewName()}" at epoch ${at ?? '?'}${message.snapshot === true ? ' with a snapshot' : ''}`,
    );
    // A stream without a snapshot continues from the subscribed epoch: that is already a resume point.
    if (this.epoch === null && message.snapshot !== true && at !== null) this.epoch = at;
    if (this.columns !== null && JSON.stringify(this.columns) === JSON.stringify(columns)) return;
    this.columns = columns;
    if (this.options.format === 'table') this.header();
  }

  private handle(message: Message): void {
    const epoch = typeof message.epoch === 'number' ? message.epoch : null;
    if (epoch === null) return;
    switch (message.type) {
      case 'snapshot':
        for (const row of Array.isArray(message.rows) ? message.rows : [])
          this.line(epoch, '+I', row, undefined);
        break;
      case 'snapshot_end':
        this.epoch = epoch;
        break;
      case 'changes': {
        if (this.epoch !== null && epoch <= this.epoch) return; // never print an epoch twice
        for (const c of records(message.changes))
          this.line(epoch, String(c.op), c.row, typeof c.n === 'number' ? c.n : undefined);
        for (const e of records(message.errors)) this.line(epoch, String(e.op), e.error, undefined);
        this.epoch = epoch;
        break;
      }
      case 'progress':
        if (this.epoch === null || epoch > this.epoch) this.epoch = epoch;
        break;
    }
  }

  private header(): void {
    const names = ['epoch', 'op', ...(this.columns ?? []).map((c) => escapeControls(c.name))];
    this.widths = names.map((n, i) => Math.min(Math.max(displayWidth(n), i === 0 ? 6 : 2), MAX_ALIGN_WIDTH));
    const right = [true, false, ...(this.columns ?? []).map((c) => isNumericType(c.type))];
    this.options.output.write(
      this.render(names, right) + '\n' + this.widths.map((w) => '-'.repeat(w + 2)).join('+') + '\n',
    );
  }

  private render(cells: readonly string[], right: readonly boolean[]): string {
    return cells
      .map((cell, i) => {
        const w = displayWidth(cell);
        // Later lines line up with the widest, up to MAX_ALIGN_WIDTH (a longer cell overflows).
        if (w > (this.widths[i] ?? 0)) this.widths[i] = Math.min(w, MAX_ALIGN_WIDTH);
        const fill = ' '.repeat(Math.max(0, (this.widths[i] ?? 0) - w));
        return ` ${right[i] === true ? fill + cell : cell + fill} `;
      })
      .join('|')
      .trimEnd();
  }

  private line(epoch: number, op: string, row: unknown, n: number | undefined): void {
    const out = this.options.output;
    if (this.options.format === 'json') {
      const json = JSON.stringify({ epoch, op, row, ...(n === undefined || n === 1 ? {} : { n }) });
      out.write(terminalSafeJson(json) + '\n');
      return;
    }
    const record = typeof row === 'object' && row !== null ? (row as Record<string, unknown>) : {};
    const columns = this.columns ?? [];
    const isError = op === '+E' || op === '-E';
    const cells = isError
      ? [cellText(record.code), cellText(record.message)]
      : columns.map((c) => cellText(record[c.name], this.options.nullText ?? 'NULL'));
    const right = [true, false, ...(isError ? [false, false] : columns.map((c) => isNumericType(c.type)))];
    out.write(
      this.render(
        [String(epoch), escapeControls(op) + (n === undefined || n === 1 ? '' : `×${n}`), ...cells],
        right,
      ) + '\n',
    );
  }
}

function usageError(message: string): number {
  process.stderr.write(`sluice subscribe: ${message}\n\n${SUBSCRIBE_USAGE}`);
  return 2;
}

/** `sluice subscribe …`: returns the exit status. */
export async function subscribeMain(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        'no-snapshot': { type: 'boolean' },
        'resume-from': { type: 'string' },
        format: { type: 'string' },
        null: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(SUBSCRIBE_USAGE);
    return 0;
  }
  if (positionals.length !== 1)
    return usageError(
      positionals.length === 0 ? 'missing view name' : `unexpected argument "${positionals[1] ?? ''}"`,
    );
  const format = values.format ?? 'table';
  if (format !== 'table' && format !== 'json')
    return usageError(`--format must be table or json, not "${format}"`);
  let resumeFrom: number | null = null;
  if (values['resume-from'] !== undefined) {
    const raw = values['resume-from'];
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
      return usageError(`--resume-from must be an epoch (a non-negative integer), not "${raw}"`);
    resumeFrom = Number(raw);
  }
  let client: ApiClient;
  try {
    client = new ApiClient(
      values.url ?? (process.env.SLUICE_URL || 'http://127.0.0.1:8080'),
      values.token ?? process.env.SLUICE_TOKEN ?? null,
    );
  } catch (error) {
    return usageError(error instanceof ClientError ? error.message : String(error));
  }
  const subscriber = new Subscriber({
    client,
    view: objectName(positionals[0] ?? ''),
    snapshot: values['no-snapshot'] !== true,
    resumeFrom,
    format,
    ...(values.null === undefined ? {} : { nullText: values.null }),
    output: process.stdout,
    errors: process.stderr,
  });
  const stop = (): void => subscriber.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const code = await subscriber.run();
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  return code;
}
