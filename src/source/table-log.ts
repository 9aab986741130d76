// The durable table log: the engine's journal. DDL statements and table batches share one ordered
// sequence with a monotonic offset; replaying it into a fresh engine reproduces every epoch exactly.
import type { EngineJournal, JournalBatch, SourcePositions } from '../exec/api.ts';
import type { Row, Value } from '../types.ts';
import { decodeStored, encodeStored } from './json-codec.ts';
import type { SqliteStore } from './sqlite-store.ts';

/** What the engine hands the journal for one batch (fully resolved rows, as value arrays). */
export type BatchEntry = JournalBatch;

export interface DdlEntry {
  readonly epoch: number;
  readonly sql: string;
}

export type LoggedEntry =
  | {
      readonly kind: 'ddl';
      readonly offset: number;
      readonly epoch: number;
      readonly at: number;
      readonly sql: string;
    }
  | {
      readonly kind: 'batch';
      readonly offset: number;
      readonly epoch: number;
      readonly at: number;
      readonly table: string;
      readonly inserts: Row[];
      readonly deletes: Row[];
      readonly positions: SourcePositions;
    };

interface JournalRow {
  log_offset: number;
  kind: 'ddl' | 'batch';
  epoch: number;
  target: string | null;
  payload: string;
  positions: string | null;
  at: number;
}

export interface TableLogHooks {
  /** Called before every append, so the caller can observe the effect of the previous statement. */
  beforeAppend(): void;
  /** Called after a DDL statement was logged (it takes effect right after). */
  afterDdl(): void;
}

/**
 * Appends go into the store's open transaction (begun here if needed); the caller commits once the
 * engine call has applied. The positions of a batch are `{ [table]: { offset } }`.
 */
export class TableLog implements EngineJournal {
  private lastOffsetValue: number;
  /** The last batch appended by this process, so a failed apply can be taken back. */
  lastBatch: { offset: number; epoch: number } | null = null;
  lastDdlOffset = 0;
  private readonly insertStmt;
  private readonly pageStmt;
  private readonly deleteStmt;

  constructor(
    private readonly store: SqliteStore,
    private readonly hooks: TableLogHooks,
  ) {
    const db = store.db;
    const row = db.prepare('SELECT MAX(log_offset) AS o FROM journal').get() as { o: number | null };
    this.lastOffsetValue = row.o ?? 0;
    this.insertStmt = db.prepare(
      'INSERT INTO journal (log_offset, kind, epoch, target, payload, positions, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.pageStmt = db.prepare('SELECT * FROM journal WHERE log_offset > ? ORDER BY log_offset LIMIT ?');
    this.deleteStmt = db.prepare('DELETE FROM journal WHERE log_offset = ?');
  }

  get lastOffset(): number {
    return this.lastOffsetValue;
  }

  appendBatch(entry: BatchEntry): SourcePositions {
    this.hooks.beforeAppend();
    this.store.begin();
    const offset = this.lastOffsetValue + 1;
    const positions: SourcePositions = { [entry.table]: { offset } };
    this.insertStmt.run(
      offset,
      'batch',
      entry.epoch,
      entry.table,
      encodeBatchPayload(entry.columns, entry.inserts, entry.deletes),
      JSON.stringify(positions),
      Date.now(),
    );
    this.lastOffsetValue = offset;
    this.lastBatch = { offset, epoch: entry.epoch };
    return positions;
  }

  appendDdl(entry: DdlEntry): void {
    this.hooks.beforeAppend();
    this.store.begin();
    const offset = this.lastOffsetValue + 1;
    this.insertStmt.run(offset, 'ddl', entry.epoch, null, entry.sql, null, Date.now());
    this.lastOffsetValue = offset;
    this.lastDdlOffset = offset;
    this.hooks.afterDdl();
  }

  /** Takes back the last batch: its apply failed after it was logged (inside the open transaction). */
  retractLastBatch(): void {
    if (this.lastBatch === null) return;
    this.deleteStmt.run(this.lastBatch.offset);
    if (this.lastOffsetValue === this.lastBatch.offset) this.lastOffsetValue -= 1;
    this.lastBatch = null;
  }

  /** Every entry in offset order, read in pages (the store may be written between pages). */
  *entries(pageSize = 512): Generator<LoggedEntry> {
    let after = 0;
    for (;;) {
      const rows = this.pageStmt.all(after, pageSize) as JournalRow[];
      if (rows.length === 0) return;
      for (const row of rows) {
        after = row.log_offset;
        yield decodeEntry(row);
      }
    }
  }

  count(): number {
    const row = this.store.db.prepare('SELECT COUNT(*) AS n FROM journal').get() as { n: number };
    return row.n;
  }
}

function decodeEntry(row: JournalRow): LoggedEntry {
  if (row.kind === 'ddl') {
    return { kind: 'ddl', offset: row.log_offset, epoch: row.epoch, at: row.at, sql: row.payload };
  }
  const payload = decodeBatchPayload(row.payload);
  return {
    kind: 'batch',
    offset: row.log_offset,
    epoch: row.epoch,
    at: row.at,
    table: row.target ?? '',
    inserts: payload.insert,
    deletes: payload.delete,
    positions: JSON.parse(row.positions ?? '{}') as SourcePositions,
  };
}

// A batch payload is stored column-positionally: {"k":[columns],"i":[flat values],"d":[flat values]}
// (stride = number of columns), in storage JSON (bigints and non-finite floats tagged). The engine
// hands over value arrays in column order, so they are written as they are. Earlier versions stored
// {"insert":[rows],"delete":[rows]}, which is still read.

export function encodeBatchPayload(
  columns: readonly string[],
  inserts: readonly (readonly Value[])[],
  deletes: readonly (readonly Value[])[],
): string {
  return encodeStored({ k: columns, i: inserts.flat(), d: deletes.flat() });
}

function unflatten(values: readonly unknown[], keys: readonly string[]): Row[] {
  const rows: Row[] = [];
  for (let at = 0; at < values.length; at += keys.length) {
    const row: Row = {};
    for (let k = 0; k < keys.length; k++) row[keys[k] as string] = values[at + k] as Row[string];
    rows.push(row);
  }
  return rows;
}

export function decodeBatchPayload(text: string): { insert: Row[]; delete: Row[] } {
  const payload = decodeStored(text) as
    { k: string[]; i: unknown[]; d: unknown[] } | { insert: Row[]; delete: Row[] };
  if ('k' in payload)
    return { insert: unflatten(payload.i, payload.k), delete: unflatten(payload.d, payload.k) };
  return payload;
}
