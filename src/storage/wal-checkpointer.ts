// Checkpoints of the journal file's WAL (copying its frames into sluice.db), run from a worker
// thread's own connection instead of inside a group commit's COMMIT on the server's thread, where
// SQLite's autocheckpoint stalled the thread 32-196 ms every 1,000 pages (bench/README.md,
// server-e2e.ts, 2026-12-05).
//
// After each commit the store reports the WAL's size. Past `softBytes` the worker runs a PASSIVE
// checkpoint (it never waits for, nor blocks, the writer); never two at once. SQLite restarts the
// WAL from its start only when a writer begins with every committed frame copied, so under steady
// ingest a run may always be one commit behind: past `hardBytes` the server's thread waits for a
// run in flight and checkpoints itself, which bounds the file. `journal_size_limit` (set by the
// store to `softBytes`) truncates the file at each restart, so its size is what was written since.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Slots of the flags shared with the worker. */
const RUNNING = 0;
const CLOSED = 1;
/** How long the server's thread waits for a run in flight (hard bound, close) before going on. */
const WAIT_MS = 10_000;

/**
 * The worker's code, a CommonJS script evaluated in the thread: nothing to build or resolve beside
 * better-sqlite3, which the main thread resolves for it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const flags = new Int32Array(workerData.flags);
const db = new Database(workerData.path, { timeout: 5000 });
// A checkpoint syncs the WAL before copying it and sluice.db after, as the server's own did.
db.pragma('synchronous = FULL');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    Atomics.store(flags, ${CLOSED}, 1);
    Atomics.notify(flags, ${CLOSED});
    parentPort.close();
    return;
  }
  let reply;
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    reply = { log: row.log, checkpointed: row.checkpointed, busy: row.busy };
  } catch (error) {
    reply = { error: String(error && error.message ? error.message : error) };
  }
  Atomics.store(flags, ${RUNNING}, 0);
  Atomics.notify(flags, ${RUNNING});
  parentPort.postMessage(reply);
});
`;

export interface WalCheckpointOptions {
  /** WAL bytes past which a checkpoint is started off the thread (default: 1,000 pages). */
  readonly softBytes?: number;
  /** WAL bytes past which the server's thread checkpoints itself (default: 4 × softBytes). */
  readonly hardBytes?: number;
  /** False: no worker, every checkpoint on the server's thread past `hardBytes` (tests). */
  readonly thread?: boolean;
}

export interface WalCheckpointCounts {
  /** Checkpoints started on the worker thread. */
  offThread: number;
  /** Checkpoints run on the server's thread (past the hard bound, or with no worker). */
  onThread: number;
  /** The worker's runs that failed (the next commit past the bound retries). */
  failed: number;
}

export class WalCheckpointer {
  readonly softBytes: number;
  readonly hardBytes: number;
  readonly counts: WalCheckpointCounts = { offThread: 0, onThread: 0, failed: 0 };
  /** The last failed run's error (the next commit past the bound tries again). */
  lastError: string | null = null;
  private readonly flags = new Int32Array(new SharedArrayBuffer(8));
  private worker: Worker | null = null;

  constructor(
    private readonly db: Database.Database,
    path: string,
    pageSize: number,
    options: WalCheckpointOptions = {},
  ) {
    this.softBytes = options.softBytes ?? 1000 * pageSize;
    this.hardBytes = Math.max(this.softBytes, options.hardBytes ?? 4 * this.softBytes);
    if (options.thread === false) return;
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, sqlite, flags: this.flags.buffer },
    });
    worker.unref();
    worker.on('message', (reply: { error?: string }) => {
      if (reply.error === undefined) return;
      this.counts.failed++;
      this.lastError = reply.error;
    });
    // A thread that died leaves the checkpoints to the server's thread, past the hard bound.
    const gone = (): void => {
      if (this.worker !== worker) return;
      this.worker = null;
      Atomics.store(this.flags, RUNNING, 0);
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.worker = worker;
  }

  /** Whether a run on the worker has not finished yet. */
  get running(): boolean {
    return Atomics.load(this.flags, RUNNING) === 1;
  }

  /** After a commit, with the WAL file's size: start or run a checkpoint if it is due. */
  committed(walBytes: number): void {
    if (walBytes <= this.softBytes) return;
    if (walBytes > this.hardBytes || this.worker === null) {
      if (walBytes > this.hardBytes) this.checkpointHere();
      return;
    }
    if (this.running) return;
    Atomics.store(this.flags, RUNNING, 1);
    this.counts.offThread++;
    this.worker.postMessage('run');
  }

  /** Stops the worker (after its run in flight), before the store's connection closes. */
  close(): void {
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    worker.postMessage('close');
    waitFor(this.flags, CLOSED, 0);
  }

  /** A PASSIVE checkpoint on this connection, once a run in flight (holding the copy's lock) ended. */
  private checkpointHere(): void {
    waitFor(this.flags, RUNNING, 1);
    this.counts.onThread++;
    this.db.pragma('wal_checkpoint(PASSIVE)');
  }
}

/** Blocks until the flag leaves `value` (at most WAIT_MS). */
function waitFor(flags: Int32Array, slot: number, value: number): void {
  const deadline = performance.now() + WAIT_MS;
  while (Atomics.load(flags, slot) === value) {
    const left = deadline - performance.now();
    if (left <= 0) return;
    Atomics.wait(flags, slot, value, left);
  }
}
