// The checkpoint writer thread: it owns a second connection to each runtime's checkpoint file and
// writes the entries the main thread encoded, so the SQLite inserts, the entry hashes and the
// COMMIT (with its fsync and WAL copy) never stall the event loop that serves requests.
// One worker serves every runtime in the process; the messages are in checkpoint-protocol.ts.
import Database from 'better-sqlite3';
import { parentPort } from 'node:worker_threads';
import { SluiceError } from '../../common/errors.ts';
import { openSchema } from '../../storage/checkpoint-format.ts';
import {
  CheckpointStatements,
  CheckpointTransaction,
  checkpointWriteError,
} from '../../storage/checkpoint-transaction.ts';
import { crashPoint } from '../crash-points.ts';
import {
  ABORTED_WRITE,
  BUSY,
  RELEASED,
  type FromWorker,
  type ToWorker,
  type WireError,
} from './checkpoint-protocol.ts';

interface OpenFile {
  readonly db: Database.Database;
  readonly stmts: CheckpointStatements;
  readonly flags: Int32Array;
  write: number;
  txn: CheckpointTransaction | null;
  epoch: number;
}

const files = new Map<number, OpenFile>();
const port = parentPort;
if (port === null) throw new Error('checkpoint-worker.ts runs as a worker thread');

port.on('message', (message: ToWorker) => {
  // In a worker thread process.exit ends the thread only: the main thread sees it die.
  if (message.t === 'exit-for-test') process.exit(70);
  if (message.t === 'open') {
    // The main thread verified and recovered the file; this connection only writes to it.
    const db = new Database(message.path, { timeout: 5000 });
    db.pragma('journal_mode = WAL');
    // No fsync of its own: a checkpoint only shortens recovery (the journal is kept whole), and one
    // that a power loss left behind, damaged or older, is detected by its checksums and replayed
    // around (docs/server.md). Its fsyncs (tens of MB at the COMMIT and at the WAL's copy into the
    // file) held the disk for 50–100 ms, and the journal's own syncs waited behind them: every ingest
    // request answered then waited too (the p99 of `npm run bench:server`). A process that is killed
    // loses nothing written: the pages are in the OS's cache.
    db.pragma('synchronous = OFF');
    openSchema(db);
    const flags = new Int32Array(message.flags);
    files.set(message.file, {
      db,
      stmts: new CheckpointStatements(db),
      flags,
      write: -1,
      txn: null,
      epoch: -1,
    });
    return;
  }
  const file = files.get(message.file);
  if (file === undefined) return;
  if (message.t === 'release') {
    rollback(file);
    file.db.close();
    files.delete(message.file);
    // The main thread's close() waits for this: the file's -wal and -shm are gone or settled.
    Atomics.store(file.flags, RELEASED, 1);
    Atomics.notify(file.flags, RELEASED);
    if (files.size === 0) port.close();
    return;
  }
  if (message.t === 'begin') {
    rollback(file);
    // Busy before the abort check (the main thread sets the abort, then reads busy): one of the two
    // threads always sees the other's store, so a write is never begun under a shutdown's own.
    Atomics.store(file.flags, BUSY, 1);
    file.write = message.write;
    file.epoch = message.header.epoch;
  } else if (message.write !== file.write) {
    return; // a message of a write that was abandoned or failed
  }
  if (message.t === 'abort' || Atomics.load(file.flags, ABORTED_WRITE) === file.write) {
    rollback(file);
    file.write = -1;
    return;
  }
  try {
    step(file, message);
  } catch (error) {
    rollback(file);
    const write = file.write;
    file.write = -1;
    const previous = safeEpoch(file);
    port.postMessage({
      t: 'failed',
      file: message.file,
      write,
      error: toWire(checkpointWriteError(error, file.epoch, previous)),
    } satisfies FromWorker);
  }
});

function step(file: OpenFile, message: Exclude<ToWorker, { t: 'open' | 'release' | 'abort' }>): void {
  switch (message.t) {
    case 'begin': {
      file.db.exec('BEGIN IMMEDIATE');
      file.txn = new CheckpointTransaction(file.stmts, message.header);
      file.txn.start();
      return;
    }
    case 'batch': {
      const txn = live(file);
      if (message.replaceAll !== null) txn.part(message.stateId, message.replaceAll);
      for (const key of message.removes) txn.remove(message.stateId, key);
      for (let i = 0; i < message.keys.length; i++) {
        txn.upsert(message.stateId, message.keys[i] as string, message.texts[i] as string);
      }
      port?.postMessage({ t: 'ack', file: message.file, write: message.write } satisfies FromWorker);
      return;
    }
    case 'blocks': {
      const txn = live(file);
      if (message.replaceAll !== null) txn.part(message.stateId, message.replaceAll);
      for (const block of message.blocks) txn.columnBlock(block);
      port?.postMessage({ t: 'ack', file: message.file, write: message.write } satisfies FromWorker);
      return;
    }
    case 'commit': {
      const txn = live(file);
      crashPoint('during-checkpoint');
      const stats = txn.finish();
      file.db.exec('COMMIT');
      file.txn = null;
      file.write = -1;
      idle(file);
      port?.postMessage({ t: 'done', file: message.file, write: message.write, stats } satisfies FromWorker);
      return;
    }
  }
}

function live(file: OpenFile): CheckpointTransaction {
  if (file.txn === null)
    throw new SluiceError('INTERNAL_ERROR', 'checkpoint entries arrived outside a write');
  return file.txn;
}

function rollback(file: OpenFile): void {
  file.txn = null;
  if (file.db.open && file.db.inTransaction) file.db.exec('ROLLBACK');
  idle(file);
}

function idle(file: OpenFile): void {
  Atomics.store(file.flags, BUSY, 0);
  Atomics.notify(file.flags, BUSY);
}

function safeEpoch(file: OpenFile): number | null {
  try {
    return file.stmts.header()?.epoch ?? null;
  } catch {
    return null;
  }
}

function toWire(error: unknown): WireError {
  if (error instanceof SluiceError) {
    return {
      code: error.code,
      message: error.message,
      ...(error.detail !== undefined ? { detail: error.detail } : {}),
      ...(error.hint !== undefined ? { hint: error.hint } : {}),
    };
  }
  return { code: 'STATE_ERROR', message: error instanceof Error ? error.message : String(error) };
}
