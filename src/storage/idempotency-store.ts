// The durable half of the idempotency window: each ingest request's client key with the answer it got,
// in the server's SQLite file, written in the same transaction as the batch it applied — so a key is
// on disk exactly when its batch is, across a graceful restart and a SIGKILL alike.
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { SluiceError } from '../common/errors.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS idempotency_keys (
  seq INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  fingerprint TEXT NOT NULL,
  target TEXT NOT NULL,
  accepted INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  at INTEGER NOT NULL,
  checksum TEXT NOT NULL
);
`;

/** One remembered request: its key, what it asked (the fingerprint) and the answer it was given. */
export interface IdempotencyRecord {
  /** Arrival order (rowid); the oldest go first. */
  readonly seq: number;
  readonly key: string;
  /** Hash of the request (route target and exact body bytes): the same key must ask the same. */
  readonly fingerprint: string;
  /** The table written. */
  readonly target: string;
  readonly accepted: number;
  readonly epoch: number;
  /** Wall-clock ms when it was applied (the window is measured from here, also across restarts). */
  readonly at: number;
}

/** A stored row in raw (array) form: seq, key, fingerprint, target, accepted, epoch, at, checksum. */
type StoredRow = [number, string, string, string, number, number, number, string];

export class IdempotencyStore {
  private readonly insertStmt;
  private readonly pruneStmt;
  private readonly newestStmt;

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    // OR REPLACE: a key forgotten in memory (expired) may be used again before its row was pruned.
    this.insertStmt = db.prepare(
      `INSERT OR REPLACE INTO idempotency_keys (key, fingerprint, target, accepted, epoch, at, checksum)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.pruneStmt = db.prepare('DELETE FROM idempotency_keys WHERE seq < ?');
    this.newestStmt = db
      .prepare(
        'SELECT seq, key, fingerprint, target, accepted, epoch, at, checksum FROM idempotency_keys ORDER BY seq DESC LIMIT ?',
      )
      .raw();
  }

  /** Inside the transaction of the batch the key applied (the caller has begun it). Returns its seq. */
  record(entry: Omit<IdempotencyRecord, 'seq'>): number {
    const info = this.insertStmt.run(
      entry.key,
      entry.fingerprint,
      entry.target,
      entry.accepted,
      entry.epoch,
      entry.at,
      recordChecksum(entry),
    );
    return Number(info.lastInsertRowid);
  }

  /** Forgets every key older than `seq` (the oldest one still remembered). */
  pruneBefore(seq: number): void {
    this.pruneStmt.run(seq);
  }

  /**
   * The newest `limit` records, newest first. A damaged row (checksum mismatch) throws STATE_ERROR:
   * a key read back wrong could apply a batch twice.
   */
  newest(limit: number): IdempotencyRecord[] {
    const rows = this.newestStmt.all(limit) as StoredRow[];
    return rows.map(([seq, key, fingerprint, target, accepted, epoch, at, checksum]) => {
      const record: IdempotencyRecord = { seq, key, fingerprint, target, accepted, epoch, at };
      if (checksum !== recordChecksum(record)) {
        throw new SluiceError('STATE_ERROR', `idempotency key record ${seq} is damaged`, {
          detail: 'its checksum does not match its contents',
          hint: 'restore the data directory from a backup; the server does not trust a damaged key record',
        });
      }
      return record;
    });
  }
}

function recordChecksum(r: Omit<IdempotencyRecord, 'seq'>): string {
  return createHash('sha1')
    .update(`${r.key}\u0000${r.fingerprint}\u0000${r.target}\u0000${r.accepted}\u0000${r.epoch}\u0000${r.at}`)
    .digest('base64')
    .slice(0, 16);
}
