// One checkpoint write inside an open transaction, over entries already encoded as text: the part
// the main thread's store and the off-thread writer share. The caller opens and commits the
// transaction; this keeps the entry count and the multiset hash of the header in step with the rows.
import type Database from 'better-sqlite3';
import { SluiceError } from '../common/errors.ts';
import {
  LANE,
  checkMeta,
  entryHash,
  formatSum,
  hashEntry,
  metaChecksum,
  parseObjects,
  parseSum,
  sqliteCode,
  type MetaRow,
  type StoredObject,
} from './checkpoint-format.ts';

/** What a checkpoint records besides its entries. */
export interface CheckpointHeader {
  readonly epoch: number;
  /** A full checkpoint rewrites every entry; an incremental one applies deltas to the stored one. */
  readonly full: boolean;
  readonly journalOffset: number;
  /** The source positions, already in the stored encoding. */
  readonly positions: string;
  /** The epoch's logical clock (µs); null when the engine gave none. */
  readonly clock: number | null;
  /** Every object and its state ids: a stored state no object lists any more is removed. */
  readonly objects: readonly StoredObject[];
}

/** What a written checkpoint reports (the caller adds its timings). */
export interface CheckpointTransactionStats {
  /** Checkpoints written into this file so far, this one included. */
  readonly seq: number;
  readonly epoch: number;
  readonly journalOffset: number;
  /** True when the whole state was rewritten (a full checkpoint). */
  readonly full: boolean;
  readonly upserts: number;
  readonly deletes: number;
  /** Characters of keys and values written (≈ bytes for ASCII state). */
  readonly bytes: number;
  /** Entries held after the write. */
  readonly entries: number;
}

/** The prepared statements of one connection to a checkpoint file. */
export class CheckpointStatements {
  readonly meta: Database.Statement;
  readonly metaWrite: Database.Statement;
  readonly oldHash: Database.Statement;
  readonly insertNew: Database.Statement;
  readonly update: Database.Statement;
  readonly delete: Database.Statement;
  readonly partSum: Database.Statement;
  readonly partClear: Database.Statement;

  constructor(readonly db: Database.Database) {
    this.meta = db.prepare('SELECT * FROM checkpoint_meta WHERE id = 1');
    this.metaWrite = db.prepare(
      `INSERT INTO checkpoint_meta (id, seq, epoch, positions, journal_offset, created_at, objects, entry_count, entry_sum, next_ord, checksum, clock)
       VALUES (1, @seq, @epoch, @positions, @journal_offset, @created_at, @objects, @entry_count, @entry_sum, @next_ord, @checksum, @clock)
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, epoch = excluded.epoch, positions = excluded.positions,
         journal_offset = excluded.journal_offset, created_at = excluded.created_at, objects = excluded.objects,
         entry_count = excluded.entry_count, entry_sum = excluded.entry_sum, next_ord = excluded.next_ord,
         checksum = excluded.checksum, clock = excluded.clock`,
    );
    this.oldHash = db
      .prepare('SELECT h1, h2, ord FROM checkpoint_state WHERE state_id = ? AND entry_key = ?')
      .raw(true);
    // `ord` is the entry's insertion sequence and an update keeps it, so entries load back in the
    // order a Map would hold them (an append-only table's rows a0, a1, … stay in sequence).
    this.insertNew = db.prepare(
      'INSERT OR IGNORE INTO checkpoint_state (state_id, entry_key, ord, value, h1, h2) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.update = db.prepare(
      'UPDATE checkpoint_state SET value = ?, h1 = ?, h2 = ? WHERE state_id = ? AND entry_key = ?',
    );
    this.delete = db
      .prepare('DELETE FROM checkpoint_state WHERE state_id = ? AND entry_key = ? RETURNING h1, h2')
      .raw(true);
    this.partSum = db
      .prepare(
        `SELECT COUNT(*), COALESCE(SUM(h1) % ${LANE}, 0), COALESCE(SUM(h2) % ${LANE}, 0)
         FROM checkpoint_state WHERE state_id = ?`,
      )
      .raw(true);
    this.partClear = db.prepare('DELETE FROM checkpoint_state WHERE state_id = ?');
  }

  /** The stored header row, unverified; undefined when no checkpoint was written. */
  header(): MetaRow | undefined {
    return this.meta.get() as MetaRow | undefined;
  }
}

/**
 * One checkpoint being written: `start`, then per state `part` followed by its `remove`s and
 * `upsert`s, then `finish`. All of it must run inside one transaction the caller opened.
 */
export class CheckpointTransaction {
  private count = 0;
  private s1 = 0;
  private s2 = 0;
  private seq = 0;
  private nextOrd = 0;
  private upserts = 0;
  private deletes = 0;
  private bytes = 0;
  private partReplaced = false;

  constructor(
    private readonly stmts: CheckpointStatements,
    private readonly header: CheckpointHeader,
  ) {}

  /** Reads the previous header and clears what this checkpoint replaces. */
  start(): void {
    const previous = this.stmts.header();
    if (this.header.full) {
      // A full checkpoint trusts nothing stored: it starts from an empty state table.
      this.stmts.db.exec('DELETE FROM checkpoint_state');
      this.seq = (previous?.seq ?? 0) + 1;
      return;
    }
    if (previous === undefined) {
      throw new SluiceError(
        'STATE_ERROR',
        `cannot write an incremental checkpoint at epoch ${this.header.epoch}: there is no previous checkpoint`,
        { hint: 'the first checkpoint of a data file must be full' },
      );
    }
    checkMeta(previous);
    this.count = previous.entry_count;
    [this.s1, this.s2] = parseSum(previous.entry_sum);
    this.seq = previous.seq + 1;
    this.nextOrd = previous.next_ord;
    const live = new Set<string>();
    for (const o of this.header.objects) for (const id of o.parts) live.add(id);
    for (const o of parseObjects(previous.objects)) {
      for (const stateId of o.parts) if (!live.has(stateId)) this.clearPart(stateId);
    }
  }

  /** Starts one state's delta; a replacing delta clears what was stored for it. */
  part(stateId: string, replaceAll: boolean): void {
    this.partReplaced = replaceAll;
    if (replaceAll && !this.header.full) this.clearPart(stateId);
  }

  /** Removes one entry of the current state (nothing to do when the state was replaced). */
  remove(stateId: string, key: string): void {
    if (this.partReplaced) return;
    const old = this.stmts.delete.get(stateId, key) as [number, number] | undefined;
    if (old === undefined) return;
    this.count--;
    this.s1 = (this.s1 - old[0] + LANE) % LANE;
    this.s2 = (this.s2 - old[1] + LANE) % LANE;
    this.deletes++;
  }

  /** Writes one entry, its value already encoded. */
  upsert(stateId: string, key: string, text: string): void {
    // Most changed entries of a growing state are new (a source's new rows): try the insert first,
    // one statement; an existing key falls through to the update path.
    hashEntry(stateId, key, this.nextOrd, text);
    if (
      this.stmts.insertNew.run(stateId, key, this.nextOrd, text, entryHash[0], entryHash[1]).changes === 1
    ) {
      this.nextOrd++;
      this.count++;
    } else {
      const old = this.stmts.oldHash.get(stateId, key) as [number, number, number];
      hashEntry(stateId, key, old[2], text);
      this.stmts.update.run(text, entryHash[0], entryHash[1], stateId, key);
      this.s1 = (this.s1 - old[0] + LANE) % LANE;
      this.s2 = (this.s2 - old[1] + LANE) % LANE;
    }
    this.s1 = (this.s1 + (entryHash[0] as number)) % LANE;
    this.s2 = (this.s2 + (entryHash[1] as number)) % LANE;
    this.upserts++;
    this.bytes += key.length + text.length;
  }

  /** Writes the header; the caller commits. */
  finish(): CheckpointTransactionStats {
    const h = this.header;
    const objects = JSON.stringify(h.objects);
    const meta: MetaRow = {
      seq: this.seq,
      epoch: h.epoch,
      positions: h.positions,
      journal_offset: h.journalOffset,
      created_at: Date.now(),
      objects,
      entry_count: this.count,
      entry_sum: formatSum(this.s1, this.s2),
      next_ord: this.nextOrd,
      checksum: '',
      clock: h.clock,
    };
    meta.checksum = metaChecksum(meta);
    this.stmts.metaWrite.run(meta);
    return {
      seq: this.seq,
      epoch: h.epoch,
      journalOffset: h.journalOffset,
      full: h.full,
      upserts: this.upserts,
      deletes: this.deletes,
      bytes: this.bytes + h.positions.length + objects.length,
      entries: this.count,
    };
  }

  private clearPart(stateId: string): void {
    const [n, p1, p2] = this.stmts.partSum.get(stateId) as [number, number, number];
    if (n === 0) return;
    this.stmts.partClear.run(stateId);
    this.count -= n;
    this.s1 = (this.s1 - p1 + LANE) % LANE;
    this.s2 = (this.s2 - p2 + LANE) % LANE;
  }
}

/**
 * A failed checkpoint write as the error the server reports: disk full named as such, and whether
 * the previous checkpoint (`previousEpoch`, null when none) is intact.
 */
export function checkpointWriteError(error: unknown, epoch: number, previousEpoch: number | null): unknown {
  if (error instanceof SluiceError) return error;
  const code = sqliteCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const kept =
    previousEpoch === null
      ? 'no checkpoint was stored before'
      : `the previous checkpoint (epoch ${previousEpoch}) is intact`;
  if (code === 'SQLITE_FULL') {
    return new SluiceError('STATE_ERROR', `disk full: the checkpoint at epoch ${epoch} was not written`, {
      detail: `${message}; ${kept}`,
      hint: 'free disk space; the next checkpoint will be a full one',
    });
  }
  return new SluiceError('STATE_ERROR', `the checkpoint at epoch ${epoch} was not written`, {
    detail: `${code ?? 'error'}: ${message}; ${kept}`,
  });
}
