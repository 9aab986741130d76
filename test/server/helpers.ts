// Test helpers for the server suites: an in-process server on an ephemeral loopback port, a child
// process server (for kill -9 tests), and WebSocket/NDJSON clients that wait on conditions with
// bounded timeouts instead of sleeping.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import WebSocket from 'ws';
import { Engine } from '../../src/exec/engine.ts';
import { type AppOptions, type FastifyInstance, buildApp } from '../../src/server/app.ts';
import { DEFAULTS } from '../../src/server/defaults.ts';
import { SluiceRuntime } from '../../src/server/runtime.ts';
import type { RuntimeOptions } from '../../src/server/runtime/types.ts';
import type { ColumnInfo } from '../../src/common/types.ts';

const silentLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A durable runtime without a server (in this process), quiet, with the default settings. */
export function openRuntime(dataDir: string, overrides: Partial<RuntimeOptions> = {}): SluiceRuntime {
  return new SluiceRuntime({
    dataDir,
    retention: DEFAULTS.retention,
    limits: DEFAULTS.subscriberLimits,
    heartbeatMs: 60_000,
    snapshotChunkRows: 100,
    pruneIntervalMs: 60_000,
    createEngine: () => new Engine(),
    logger: silentLogger,
    checkpoint: DEFAULTS.checkpoint,
    ...overrides,
  });
}

/**
 * A runtime on a fresh data directory, set up by `setup`; then that directory as kill -9 leaves it
 * (flushed, and copied while the runtime still runs) opened again with `reopen` and handed to
 * `check`. Both directories are removed after.
 */
export function afterCrash(
  setup: (runtime: SluiceRuntime) => void,
  check: (runtime: SluiceRuntime) => void,
  reopen: Partial<RuntimeOptions> = {},
): void {
  const dir = tempDir();
  const crashed = tempDir();
  try {
    const first = openRuntime(dir);
    try {
      setup(first);
      first.flush();
      cpSync(dir, crashed, { recursive: true });
    } finally {
      first.close();
    }
    const again = openRuntime(crashed, reopen);
    try {
      check(again);
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
    removeDir(crashed);
  }
}

export interface TestServer {
  readonly app: FastifyInstance;
  readonly base: string;
  readonly wsBase: string;
  readonly dataDir: string | null;
  close(): Promise<void>;
}

export function tempDir(prefix = 'sluice-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Runs `use` on a runtime `open` makes in a fresh temporary directory, then closes the runtime and
 * removes the directory, whatever `use` did.
 */
export async function inTempRuntime<T>(
  open: (dir: string) => SluiceRuntime,
  use: (rt: SluiceRuntime, dir: string) => T | Promise<T>,
): Promise<T> {
  const dir = tempDir();
  try {
    const rt = open(dir);
    try {
      return await use(rt, dir);
    } finally {
      rt.close();
    }
  } finally {
    removeDir(dir);
  }
}

export function removeDir(dir: string | null): void {
  // The checkpoint writer thread closes its connection after `close()` returns (it is told to by a
  // message), and SQLite may create or drop a -wal/-shm file then: retry an ENOTEMPTY.
  if (dir !== null) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
}

/**
 * A suite's servers and data directories, closed and removed after it: `server(options)` starts one
 * that is closed after the suite, `dir()` makes a temporary data directory removed after it.
 */
export function serverFixture(): {
  server(options?: Partial<AppOptions>): Promise<TestServer>;
  dir(): string;
} {
  const open: TestServer[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const s of open) await s.close().catch(() => undefined);
    for (const d of dirs) removeDir(d);
  });
  return {
    async server(options = {}) {
      const s = await startServer(options);
      open.push(s);
      return s;
    },
    dir() {
      const d = tempDir();
      dirs.push(d);
      return d;
    },
  };
}

/** An NDJSON resume of `view` from epoch `from`: its status (410 refused, 200 served) and error code. */
export async function ndjsonResume(
  server: TestServer,
  view: string,
  from: number,
): Promise<{ status: number; code?: string }> {
  const controller = new AbortController();
  const res = await fetch(`${server.base}/v1/views/${view}/changes?resumeFrom=${from}`, {
    signal: controller.signal,
  });
  try {
    if (res.status === 200) return { status: 200 };
    const body = (await res.json()) as { error?: { code: string } };
    return { status: res.status, ...(body.error !== undefined ? { code: body.error.code } : {}) };
  } finally {
    controller.abort();
  }
}

/**
 * Options for a server opening a data directory checked in as a fixture: time-based retention off
 * (the changelog keeps a day by default, the journal a week), so what the fixture's history holds
 * does not depend on how long ago it was written.
 */
export const FIXTURE_RETENTION = {
  retention: { ms: null },
  journalRetention: { ms: null },
} as const satisfies Partial<AppOptions>;

export async function startServer(options: Partial<AppOptions> = {}): Promise<TestServer> {
  const dataDir = options.dataDir === undefined ? null : options.dataDir;
  const app = await buildApp({ closeGraceMs: 300, ...options, dataDir });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address !== 'object') throw new Error('no address');
  return {
    app,
    base: `http://127.0.0.1:${address.port}`,
    wsBase: `ws://127.0.0.1:${address.port}`,
    dataDir,
    close: () => app.close(),
  };
}

export interface JsonResponse {
  readonly status: number;
  readonly body: Record<string, unknown> & { error?: { code: string; message: string; position?: unknown } };
  readonly text: string;
}

export async function request(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  raw?: string,
): Promise<JsonResponse> {
  const init: RequestInit = { method };
  if (raw !== undefined) init.body = raw;
  else if (body !== undefined) init.body = JSON.stringify(body);
  if (init.body !== undefined) init.headers = { 'content-type': 'application/json' };
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: JsonResponse['body'] = {};
  try {
    parsed = JSON.parse(text) as JsonResponse['body'];
  } catch {
    // not JSON (metrics, html)
  }
  return { status: res.status, body: parsed, text };
}

export async function sql(base: string, statements: string): Promise<JsonResponse> {
  return request(base, 'POST', '/v1/sql', { sql: statements });
}

/** Runs SQL and fails the test on an error answer. */
export async function sqlOk(base: string, statements: string): Promise<JsonResponse> {
  const r = await sql(base, statements);
  if (r.status !== 200) throw new Error(`sql failed (${r.status}): ${r.text}`);
  return r;
}

export type Message = Record<string, unknown> & { type: string; epoch?: number };

/** Polls `condition` until true (each check is cheap); rejects after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A WebSocket subscriber that records every message and the close code. */
export class WsClient {
  readonly messages: Message[] = [];
  closeCode: number | null = null;
  readonly socket: WebSocket;
  private readonly opened: Promise<void>;

  constructor(url: string, options: { paused?: boolean } = {}) {
    this.socket = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.socket.once('open', () => resolve());
      this.socket.once('error', reject);
      this.socket.once('unexpected-response', (_req, res) =>
        reject(new Error(`unexpected response ${res.statusCode}`)),
      );
    });
    this.socket.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)) as Message);
    });
    this.socket.on('close', (code) => {
      this.closeCode = code;
    });
    if (options.paused === true) this.opened.then(() => this.pause()).catch(() => undefined);
  }

  open(): Promise<void> {
    return this.opened;
  }

  pause(): void {
    // Stop reading from the TCP socket so the server's buffer fills (a slow consumer).
    (this.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  resume(): void {
    (this.socket as unknown as { _socket: { resume(): void } })._socket.resume();
  }

  of(type: string): Message[] {
    return this.messages.filter((m) => m.type === type);
  }

  async waitFor(predicate: (m: Message) => boolean, timeoutMs = 10_000, what = 'message'): Promise<Message> {
    let found: Message | undefined;
    await waitUntil(() => (found = this.messages.find(predicate)) !== undefined, timeoutMs, what);
    return found as Message;
  }

  async waitClosed(timeoutMs = 10_000): Promise<number> {
    await waitUntil(() => this.closeCode !== null, timeoutMs, 'close');
    return this.closeCode as number;
  }

  /** Waits for the changes message of `epoch` or a progress message at or past it. */
  async waitEpoch(epoch: number, timeoutMs = 10_000): Promise<void> {
    await this.waitFor(
      (m) =>
        (m.type === 'changes' || m.type === 'progress' || m.type === 'snapshot_end') &&
        (m.epoch ?? 0) >= epoch,
      timeoutMs,
      `epoch ${epoch}`,
    );
  }

  close(): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING)
      this.socket.terminate();
  }
}

/** The multiset a changelog folds to: canonical row JSON → count. */
export class FoldedView {
  readonly rows = new Map<string, number>();

  apply(message: Message): void {
    if (message.type === 'snapshot') {
      for (const row of message.rows as Record<string, unknown>[]) this.add(row, 1);
    } else if (message.type === 'changes') {
      for (const c of message.changes as { op: string; row: Record<string, unknown>; n?: number }[]) {
        const n = c.n ?? 1;
        this.add(c.row, c.op === '+I' || c.op === '+U' ? n : -n);
      }
    }
  }

  private add(row: Record<string, unknown>, n: number): void {
    const key = canonicalRow(row);
    const next = (this.rows.get(key) ?? 0) + n;
    if (next < 0) throw new Error(`changelog made row ${key} negative`);
    if (next === 0) this.rows.delete(key);
    else this.rows.set(key, next);
  }

  sorted(): string[] {
    const out: string[] = [];
    for (const [key, n] of this.rows) for (let i = 0; i < n; i++) out.push(key);
    return out.sort();
  }
}

export function canonicalRow(row: Record<string, unknown>): string {
  return JSON.stringify(
    Object.keys(row)
      .sort()
      .map((k) => [k, row[k]]),
  );
}

export function sortedRows(rows: readonly Record<string, unknown>[]): string[] {
  return rows.map(canonicalRow).sort();
}

// ---- a server in a child process (kill -9 tests) -------------------------------------------------

export interface ChildServer {
  readonly child: ChildProcess;
  readonly base: string;
  readonly wsBase: string;
  readonly exited: Promise<number | null>;
  output(): string;
}

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;

/** `sluice start` arguments for a test server: any free loopback port, quiet logs. */
export function startArgs(dataDir: string, extraArgs: readonly string[] = []): string[] {
  return [
    'start',
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--data-dir',
    dataDir,
    '--log-level',
    'warn',
    ...extraArgs,
  ];
}

/** A view's columns, key and rows over REST (GET /v1/views/{name} and its rows, page by page). */
export async function restView(
  base: string,
  view: string,
): Promise<{ columns: ColumnInfo[]; key: string[] | null; rows: Record<string, unknown>[] }> {
  const info = await request(base, 'GET', `/v1/views/${view}`);
  if (info.status !== 200) throw new Error(`view ${view}: ${info.text}`);
  return {
    columns: info.body.columns as ColumnInfo[],
    key: (info.body.key ?? null) as string[] | null,
    rows: await allViewRows(base, view),
  };
}

/** Every row of a view, following the `next` cursor of its pages (each page is of its own epoch). */
export async function allViewRows(base: string, view: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  let next: string | null = null;
  do {
    const after: string = next === null ? '' : `&after=${encodeURIComponent(next)}`;
    const page = await request(base, 'GET', `/v1/views/${view}/rows?limit=10000${after}`);
    if (page.status !== 200) throw new Error(`view ${view}: ${page.text}`);
    rows.push(...(page.body.rows as Record<string, unknown>[]));
    next = (page.body.next ?? null) as string | null;
  } while (next !== null);
  return rows;
}

/**
 * Every row of a view read over REST at one epoch: all pages (a read without a cursor gets only the
 * first page, so a whole-view comparison must follow `next`), each of which must report the same
 * epoch. Throws on a page that is not 200, with its status and body.
 */
export async function viewRowsAtOneEpoch(
  base: string,
  view: string,
): Promise<{ readonly epoch: number; readonly rows: Record<string, unknown>[]; readonly pages: number }> {
  const rows: Record<string, unknown>[] = [];
  let epoch: number | null = null;
  let next: string | null = null;
  let pages = 0;
  do {
    const after: string = next === null ? '' : `?after=${encodeURIComponent(next)}`;
    const page = await request(base, 'GET', `/v1/views/${view}/rows${after}`);
    if (page.status !== 200) throw new Error(`view ${view}: page ${pages + 1}: ${page.status} ${page.text}`);
    const at = page.body.epoch as number;
    if (epoch !== null && at !== epoch) {
      throw new Error(`view ${view}: page ${pages + 1} is of epoch ${at}, the first of epoch ${epoch}`);
    }
    epoch = at;
    pages += 1;
    rows.push(...(page.body.rows as Record<string, unknown>[]));
    next = (page.body.next ?? null) as string | null;
  } while (next !== null);
  return { epoch: epoch as number, rows, pages };
}

export async function spawnServer(
  dataDir: string,
  extraArgs: string[] = [],
  timeoutMs = 30_000,
): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...startArgs(dataDir, extraArgs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '', SLUICE_DATA_DIR: '' },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let port = 0;
  let dead = false;
  void exited.then(() => (dead = true));
  await waitUntil(
    () => {
      if (dead) throw new Error(`server exited early:\n${out}`);
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m !== null) port = Number(m[1]);
      return port !== 0;
    },
    timeoutMs,
    'the child server to listen',
  );
  return {
    child,
    base: `http://127.0.0.1:${port}`,
    wsBase: `ws://127.0.0.1:${port}`,
    exited,
    output: () => out,
  };
}
