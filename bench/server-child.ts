// A Sluice server as a child process for the end-to-end benches (bench/server-e2e.ts, the Kafka
// bench): `start` on a free port over a fresh data directory, the port read from its log, the log's
// end kept for an error message, and its CPU seconds read from /proc.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export interface ServerChildOptions {
  /** The checkout's `src/cli.ts`. */
  readonly cli: string;
  /** Node's own flags (e.g. `--cpu-prof`), before the CLI. */
  readonly nodeArgs?: readonly string[];
  /** More `start` flags after the port, data directory and log level. */
  readonly serverArgs?: readonly string[];
  readonly logLevel: string;
  /** The temporary data directory's name prefix. */
  readonly tempPrefix: string;
}

export interface ServerChild {
  readonly child: ChildProcessByStdio<null, Readable, null>;
  readonly dataDir: string;
  /** The port once the server says it listens; rejected if it exits first. */
  readonly port: Promise<number>;
  /** Resolves when the process has exited (an exit nobody asked for is reported, with the log's end). */
  readonly exited: Promise<void>;
  /** The end of what the server wrote to stdout (its log). */
  output(): string;
}

export function spawnServer(o: ServerChildOptions): ServerChild {
  const dataDir = mkdtempSync(join(tmpdir(), o.tempPrefix));
  const child = spawn(
    process.execPath,
    [
      ...(o.nodeArgs ?? []),
      '--import',
      'tsx',
      o.cli,
      'start',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--log-level',
      o.logLevel,
      ...(o.serverArgs ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.length > 100_000) out = out.slice(-10_000);
  });
  const output = (): string => out.slice(-4000);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      // An exit the bench did not ask for (a crash) is otherwise only a connection reset: say why.
      if (!child.killed)
        console.error(`server ${child.pid} exited (code ${code}, signal ${signal}): ${output()}`);
      resolve();
    }),
  );
  const port = new Promise<number>((resolve, reject) => {
    let seen = '';
    const onData = (d: Buffer): void => {
      seen += d.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen);
      if (m === null) return;
      child.stdout.off('data', onData);
      resolve(Number(m[1]));
    };
    child.stdout.on('data', onData);
    child.once('exit', () => reject(new Error(`server exited: ${output()}`)));
  });
  // A bench that fails before it awaits the port must not also die of an unhandled rejection.
  port.catch(() => undefined);
  return { child, dataDir, port, exited, output };
}

/** Stops the server (SIGTERM), waits for it, and removes its data directory. */
export async function stopServer(s: Pick<ServerChild, 'child' | 'dataDir' | 'exited'>): Promise<void> {
  s.child.kill('SIGTERM');
  await s.exited;
  rmSync(s.dataDir, { recursive: true, force: true });
}

/** CPU seconds (user + system) a process has used, from /proc; NaN where there is none. */
export function processCpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** A process's resident set now and its peak so far (VmRSS, VmHWM), in MB; null where /proc lacks them. */
export function processMemoryMb(pid: number | undefined): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number =>
      Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    const rss = kb('VmRSS');
    const hwm = kb('VmHWM');
    return Number.isFinite(rss) && Number.isFinite(hwm)
      ? { rss: Math.round(rss / 1024), hwm: Math.round(hwm / 1024) }
      : null;
  } catch {
    return null;
  }
}
