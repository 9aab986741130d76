// One checkpoint write inside an open transaction, over entries already encoded as text: the part
// the main thread's store and the off-thread writer share. The caller opens and commits the
// transaction; this keeps the row count and the multiset hash of the header in step with the rows,
// and writes replaced states as base blocks, other changes as override rows (checkpoint-format.ts).
import type Database from 'better-sqlite3';
import { SluiceError } from '../common/errors.ts';
import {
  BLOCK_CHARS,
  BLOCK_ENTRIES,
  BLOCK_SUFFIX,
  LANE,
  checkMeta,
  entryHash,
  formatSum,
  hashBlock,
  hashEntry,
  hashRow,
  metaChecksum,
  parseObjects,
  parseSum,
  sqliteCode,
  type MetaRow,
  type StoredObject,
} from './checkpoint-format.ts';
import { decodeStored } from '../common/json-codec.ts';
import { encodeColumnBlock } from './column-block.ts';
import { TABLE_STATE, type TableBlock } from './table-blocks.ts';

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
  /** Rows held after the write (base blocks and per-key rows). */
  readonly entries: number;
  /** Entries held in base blocks, and per-key rows (overrides, tombstones) after the write. */
  readonly baseEntries: number;
  readonly overrideRows: number;
}

/** The prepared statements of one connection to a checkpoint file. */
export class CheckpointStatements {
  readonly meta: Database.Statement;
  readonly metaWrite: Database.Statement;
  readonly oldRow: Database.Statement;
  readonly insertNew: Database.Statement;
  readonly update: Database.Statement;
  readonly rewrite: Database.Statement;
  readonly insertRow: Database.Statement;
  readonly delete: Database.Statement;
  readonly hasRows: Database.Statement;
  readonly partSum: Database.Statement;
  readonly partClear: Database.Statement;

  constructor(readonly db: Database.Database) {
    this.meta = db.prepare('SELECT * FROM checkpoint_meta WHERE id = 1');
    this.metaWrite = db.prepare(
      `INSERT INTO checkpoint_meta (id, seq, epoch, positions, journal_offset, created_at, objects, entry_count, entry_sum, next_ord, checksum, clock, base_entries, override_rows)
       VALUES (1, @seq, @epoch, @positions, @journal_offset, @created_at, @objects, @entry_count, @entry_sum, @next_ord, @checksum, @clock, @base_entries, @override_rows)
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, epoch = excluded.epoch, positions = excluded.positions,
         journal_offset = excluded.journal_offset, created_at = excluded.created_at, objects = excluded.objects,
         entry_count = excluded.entry_count, entry_sum = excluded.entry_sum, next_ord = excluded.next_ord,
         checksum = excluded.checksum, clock = excluded.clock, base_entries = excluded.base_entries,
         override_rows = excluded.override_rows`,
    );
    this.oldRow = db
      .prepare('SELECT h1, h2, ord, kind FROM checkpoint_state WHERE state_id = ? AND entry_key = ?')
      .raw(true);
    // `ord` is the entry's insertion sequence and an update keeps it, so entries load back in the
    // order a Map would hold them (an append-only table's rows a0, a1, … stay in sequence).
    this.insertNew = db.prepare(
      'INSERT OR IGNORE INTO checkpoint_state (state_id, entry_key, ord, value, h1, h2) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.update = db.prepare(
      'UPDATE checkpoint_state SET value = ?, h1 = ?, h2 = ? WHERE state_id = ? AND entry_key = ?',
    );
    this.rewrite = db.prepare(
      'UPDATE checkpoint_state SET value = ?, ord = ?, kind = ?, h1 = ?, h2 = ? WHERE state_id = ? AND entry_key = ?',
    );
    this.insertRow = db.prepare(
      'INSERT INTO checkpoint_state (state_id, entry_key, ord, value, h1, h2, kind) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.delete = db
      .prepare('DELETE FROM checkpoint_state WHERE state_id = ? AND entry_key = ? RETURNING h1, h2')
      .raw(true);
    this.hasRows = db.prepare('SELECT 1 FROM checkpoint_state WHERE state_id = ? LIMIT 1').raw(true);
    this.partSum = db
      .prepare(
        `SELECT COUNT(*), COALESCE(SUM(h1) % ${LANE}, 0), COALESCE(SUM(h2) % ${LANE}, 0), COALESCE(SUM(ord), 0)
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
 * A replacing part (every part of a full checkpoint) is written as base blocks; the other parts as
 * override rows (see checkpoint-format.ts). The keys of a replacing part are distinct (the engine
 * hands out a Map's entries).
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
  private baseEntries = 0;
  private overrideRows = 0;
  private partReplaced = false;
  /** The current (non-replacing) part has base blocks: its deletes must leave tombstones. */
  private partHasBase = false;
  /** The base block being filled: its text so far, entries, and the state's next block number. */
  private blockId = '';
  private blockKeys = '';
  private blockText = '';
  private blockEntries = 0;
  private blockNumber = 0;

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
    // A file written before blocks: every row is a per-entry ('v') row.
    this.baseEntries = previous.base_entries ?? 0;
    this.overrideRows = previous.override_rows ?? previous.entry_count;
    const live = new Set<string>();
    for (const o of this.header.objects) for (const id of o.parts) live.add(id);
    for (const o of parseObjects(previous.objects)) {
      for (const stateId of o.parts) if (!live.has(stateId)) this.clearPart(stateId);
    }
  }

  /** Starts one state's delta; a replacing delta clears what was stored for it. */
  part(stateId: string, replaceAll: boolean): void {
    this.flushBlock();
    this.partReplaced = replaceAll;
    this.partHasBase = false;
    if (replaceAll) {
      if (!this.header.full) this.clearPart(stateId);
      this.blockId = stateId + BLOCK_SUFFIX;
      this.blockNumber = 0;
    } else {
      this.partHasBase = this.stmts.hasRows.get(stateId + BLOCK_SUFFIX) !== undefined;
    }
  }

  /** Removes one entry of the current state (nothing to do when the state was replaced). */
  remove(stateId: string, key: string): void {
    if (this.partReplaced) return;
    if (!this.partHasBase) {
      // No base block can hold the key: its row (if any) is all there is, as before blocks.
      const old = this.stmts.delete.get(stateId, key) as [number, number] | undefined;
      if (old === undefined) return;
      this.count--;
      this.overrideRows--;
      this.sub(old[0], old[1]);
      this.deletes++;
      return;
    }
    // The key may be in a base block: a tombstone hides it there.
    const old = this.stmts.oldRow.get(stateId, key) as [number, number, number, string] | undefined;
    if (old !== undefined && old[3] === 't') return;
    hashRow(stateId, 't', key, 0, '');
    if (old === undefined) {
      this.stmts.insertRow.run(stateId, key, 0, '', entryHash[0], entryHash[1], 't');
      this.count++;
      this.overrideRows++;
    } else {
      this.stmts.rewrite.run('', 0, 't', entryHash[0], entryHash[1], stateId, key);
      this.sub(old[0], old[1]);
    }
    this.add(entryHash[0] as number, entryHash[1] as number);
    this.deletes++;
  }

  /** Writes one entry, its value already encoded. */
  upsert(stateId: string, key: string, text: string): void {
    this.upserts++;
    this.bytes += key.length + text.length;
    if (this.partReplaced) {
      this.appendToBlock(key, text);
      return;
    }
    // Most changed entries of a growing state are new (a source's new rows): try the insert first,
    // one statement; an existing key falls through to the update path.
    hashEntry(stateId, key, this.nextOrd, text);
    if (
      this.stmts.insertNew.run(stateId, key, this.nextOrd, text, entryHash[0], entryHash[1]).changes === 1
    ) {
      this.nextOrd++;
      this.count++;
      this.overrideRows++;
    } else {
      const old = this.stmts.oldRow.get(stateId, key) as [number, number, number, string];
      if (old[3] === 't') {
        // Deleted at an earlier checkpoint, inserted again: it goes to the end, as in a Map.
        hashRow(stateId, 'm', key, this.nextOrd, text);
        this.stmts.rewrite.run(text, this.nextOrd, 'm', entryHash[0], entryHash[1], stateId, key);
        this.nextOrd++;
      } else {
        // An update keeps the entry's place (its ord, and its kind).
        hashRow(stateId, old[3], key, old[2], text);
        this.stmts.update.run(text, entryHash[0], entryHash[1], stateId, key);
      }
      this.sub(old[0], old[1]);
    }
    this.add(entryHash[0] as number, entryHash[1] as number);
  }

  /** Writes the header; the caller commits. */
  finish(): CheckpointTransactionStats {
    this.flushBlock();
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
      base_entries: this.baseEntries,
      override_rows: this.overrideRows,
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
      baseEntries: this.baseEntries,
      overrideRows: this.overrideRows,
    };
  }

  /**
   * Writes one base block of the current (replaced) table state, already encoded by column
   * (table-blocks.ts), after any entries appended before it.
   */
  columnBlock(block: TableBlock): void {
    if (!this.partReplaced) {
      throw new SluiceError('INTERNAL_ERROR', 'a column block arrived for a state that is not replaced');
    }
    this.flushBlock();
    this.upserts += block.n;
    this.bytes += block.bytes.length;
    this.insertColumnBlock(block.bytes, block.n);
  }

  private appendToBlock(key: string, text: string): void {
    const first = this.blockEntries === 0;
    this.blockKeys += (first ? '[' : ',') + JSON.stringify(key);
    this.blockText += (first ? '[' : ',') + text;
    this.blockEntries++;
    if (this.blockEntries >= BLOCK_ENTRIES || this.blockText.length >= BLOCK_CHARS) this.flushBlock();
  }

  private flushBlock(): void {
    if (this.blockEntries === 0) return;
    // Entries of a table that reached here one by one (not through table-blocks.ts) still go column
    // by column in binary when they are rows of one width, decoded from their stored JSON.
    const columns = this.blockId.startsWith(TABLE_STATE)
      ? encodeColumnBlock(this.blockKeys + ']', decodeStored(this.blockText + ']') as unknown[])
      : null;
    if (columns !== null) this.insertColumnBlock(columns, this.blockEntries);
    else {
      // Keys, a newline (JSON text holds none), values: a load parses the keys only when it needs them.
      const key = String(this.blockNumber++).padStart(10, '0');
      const text = this.blockKeys + ']\n' + this.blockText + ']';
      // A block's ord is its number of entries (the reader checks it, compaction sums it).
      hashEntry(this.blockId, key, this.blockEntries, text);
      this.stmts.insertRow.run(this.blockId, key, this.blockEntries, text, entryHash[0], entryHash[1], 'v');
      this.add(entryHash[0] as number, entryHash[1] as number);
      this.count++;
      this.baseEntries += this.blockEntries;
    }
    this.blockKeys = '';
    this.blockText = '';
    this.blockEntries = 0;
  }

  /** Inserts the next base block of the current state, in binary (a 'c' row). */
  private insertColumnBlock(columns: Uint8Array, n: number): void {
    const key = String(this.blockNumber++).padStart(10, '0');
    const bytes = Buffer.from(columns.buffer, columns.byteOffset, columns.length);
    hashBlock(this.blockId, key, n, bytes);
    this.stmts.insertRow.run(this.blockId, key, n, bytes, entryHash[0], entryHash[1], 'c');
    this.add(entryHash[0] as number, entryHash[1] as number);
    this.count++;
    this.baseEntries += n;
  }

  private add(h1: number, h2: number): void {
    this.s1 = (this.s1 + h1) % LANE;
    this.s2 = (this.s2 + h2) % LANE;
  }

  private sub(h1: number, h2: number): void {
    this.s1 = (this.s1 - h1 + LANE) % LANE;
    this.s2 = (this.s2 - h2 + LANE) % LANE;
  }

  private clearPart(stateId: string): void {
    for (const id of [stateId, stateId + BLOCK_SUFFIX]) {
      const [n, p1, p2, ords] = this.stmts.partSum.get(id) as [number, number, number, number];
      if (n === 0) continue;
      this.stmts.partClear.run(id);
      this.count -= n;
      this.sub(p1, p2);
      if (id === stateId) this.overrideRows -= n;
      else this.baseEntries -= ords;
    }
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
