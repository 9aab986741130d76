// The checkpoint writer thread: it owns a second connection to each runtime's checkpoint file and
// writes the entries the main thread encoded, so the SQLite inserts, the entry hashes, the COMMIT
// and the durable points (the WAL's copy into the file, with its fsyncs) never stall the event loop
// that serves requests.
// One worker serves every runtime in the process; the messages are in checkpoint-protocol.ts.
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
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
  type WriterSettings,
} from './checkpoint-protocol.ts';

/**
 * The WAL is copied into the file (a durable point) once it is this large even when no durable
 * point is asked for: it holds every write since the last copy, full ones included.
 */
const WAL_BOUND_BYTES = 512 * 1024 * 1024;

interface OpenFile {
  readonly db: Database.Database;
  readonly path: string;
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
    // NORMAL, not FULL: a COMMIT writes the WAL without an fsync (a write's fsyncs, tens of MB,
    // held the disk for 50–100 ms and the journal's syncs, which every ingest answer waits for,
    // queued behind them: the p99 of `npm run bench:server`), and a process kill loses nothing
    // written (the pages are in the OS's cache). Not OFF: at OFF the WAL's copy into the file runs
    // without syncing the WAL first, so a power loss during a copy can tear pages of the file,
    // even pages of a checkpoint that was once durable, and journal retention deletes the batches
    // only such a checkpoint holds. At NORMAL SQLite syncs the WAL before every copy and the file
    // after it: a power loss leaves the file at some commit since the last sync, never damaged.
    db.pragma('synchronous = NORMAL');
    // No copy at SQLite's 1,000-page bound (each copy now syncs): the copies are this thread's
    // durable points (`durablePoint`), when the main thread asks for one or the WAL outgrew its bound.
    db.pragma('wal_autocheckpoint = 0');
    openSchema(db);
    const flags = new Int32Array(message.flags);
    files.set(message.file, {
      db,
      path: message.path,
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
  if (message.t === 'settings') {
    port.postMessage({
      t: 'settings',
      file: message.file,
      settings: settingsOf(file.db),
    } satisfies FromWorker);
    return;
  }
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
      const durable = (message.durable || walBytes(file.path) >= WAL_BOUND_BYTES) && durablePoint(file.db);
      idle(file);
      port?.postMessage({
        t: 'done',
        file: message.file,
        write: message.write,
        stats,
        durable,
      } satisfies FromWorker);
      return;
    }
  }
}

/**
 * Copies the WAL into the file and starts it over (`wal_checkpoint(TRUNCATE)`): at NORMAL SQLite
 * syncs the WAL, copies it and syncs the file, so every commit so far survives a power loss. False
 * when it could not finish (a reader held the WAL: the next one tries again) or failed.
 */
function durablePoint(db: Database.Database): boolean {
  try {
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    return result?.busy === 0;
  } catch {
    return false;
  }
}

function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

function settingsOf(db: Database.Database): WriterSettings {
  return {
    synchronous: db.pragma('synchronous', { simple: true }) as number,
    walAutocheckpoint: db.pragma('wal_autocheckpoint', { simple: true }) as number,
    journalMode: db.pragma('journal_mode', { simple: true }) as string,
  };
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
