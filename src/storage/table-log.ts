// The durable table log: the engine's journal. DDL statements and table batches share one ordered
// sequence with a monotonic offset; replaying it into a fresh engine reproduces every epoch exactly.
import { createHash } from 'node:crypto';
import { SluiceError } from '../common/errors.ts';
import type { SourcePositions } from '../common/changes.ts';
import type { EngineJournal, JournalBatch, JournalDdl } from '../common/journal.ts';
import type { Row, Value } from '../common/types.ts';
import { decodeStored, encodeStored } from '../common/json-codec.ts';
import type { SqliteStore } from './sqlite-store.ts';
import { flatValuesText } from './ascii-json.ts';

/** What the engine hands the journal for one batch (fully resolved rows, as value arrays). */
export type BatchEntry = JournalBatch;

export type DdlEntry = JournalDdl;

export type LoggedEntry =
  | {
      readonly kind: 'ddl';
      readonly offset: number;
      readonly epoch: number;
      readonly at: number;
      readonly sql: string;
      /** The binding rules it was accepted under; absent in an entry from before they were recorded. */
      readonly rules?: number;
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
      /** The epoch's logical clock; absent in an entry from before the clock existed. */
      readonly clock?: number;
    }
  /**
   * A clock tick that is an epoch of its own. Stored as a batch of no table (target NULL, payload
   * `{"c": clock}`): the journal's kinds are fixed by its CHECK constraint, and older files stay valid.
   */
  | {
      readonly kind: 'tick';
      readonly offset: number;
      readonly epoch: number;
      readonly at: number;
      readonly clock: number;
    }
  /**
   * SET CLOCK moved a manual clock without an epoch (no bound was due): stored like a tick with
   * payload `{"c": clock, "s": 1}` and the current epoch; replay sets the clock, making no epoch.
   */
  | {
      readonly kind: 'clock';
      readonly offset: number;
      readonly epoch: number;
      readonly at: number;
      readonly clock: number;
    };

interface JournalRow {
  log_offset: number;
  kind: 'ddl' | 'batch';
  epoch: number;
  target: string | null;
  payload: string;
  positions: string | null;
  at: number;
  checksum: string | null;
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
  private readonly ddlStmt;
  private readonly deleteStmt;
  private readonly atStmt;
  private readonly lastClockStmt;

  /** Entries from this offset on must carry a checksum (older ones predate checksums). */
  private readonly checkedFrom: number;

  constructor(
    private readonly store: SqliteStore,
    private readonly hooks: TableLogHooks,
  ) {
    const db = store.db;
    this.checkedFrom = store.checksummedFrom.journal;
    const row = db.prepare('SELECT MAX(log_offset) AS o FROM journal').get() as { o: number | null };
    this.lastOffsetValue = row.o ?? 0;
    this.insertStmt = db.prepare(
      'INSERT INTO journal (log_offset, kind, epoch, target, payload, positions, at, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.pageStmt = db.prepare('SELECT * FROM journal WHERE log_offset > ? ORDER BY log_offset LIMIT ?');
    this.ddlStmt = db.prepare(
      "SELECT * FROM journal WHERE kind = 'ddl' AND log_offset <= ? ORDER BY log_offset",
    );
    this.deleteStmt = db.prepare('DELETE FROM journal WHERE log_offset = ?');
    this.atStmt = db.prepare('SELECT * FROM journal WHERE log_offset = ?');
    this.lastClockStmt = db.prepare(
      "SELECT * FROM journal WHERE kind = 'batch' AND target IS NULL AND log_offset <= ? ORDER BY log_offset DESC LIMIT 1",
    );
  }

  get lastOffset(): number {
    return this.lastOffsetValue;
  }

  appendBatch(entry: BatchEntry): SourcePositions {
    this.hooks.beforeAppend();
    this.store.begin();
    const offset = this.lastOffsetValue + 1;
    // A source batch carries its connector's positions (its Kafka offset ranges); a table batch's
    // position is its journal offset.
    const positions: SourcePositions = entry.positions ?? { [entry.table]: { offset } };
    const payload = batchEntryPayload(entry);
    const positionsText = JSON.stringify(positions);
    refuseIllFormed(payload, `a batch for "${entry.table}"`);
    refuseIllFormed(positionsText, `the positions of a batch for "${entry.table}"`);
    this.insertStmt.run(
      offset,
      'batch',
      entry.epoch,
      entry.table,
      payload,
      positionsText,
      Date.now(),
      entryChecksum(offset, 'batch', entry.epoch, entry.table, payload, positionsText),
    );
    this.lastOffsetValue = offset;
    this.lastBatch = { offset, epoch: entry.epoch };
    return positions;
  }

  /** Insert rows' values as a batch payload holds them ("i" without its brackets; see encodeBatchPayload). */
  encodeInserts(rows: readonly (readonly Value[])[]): string | null {
    if (rows.length === 0) return null;
    const text = flatValuesText(rows);
    return text === null ? null : text.slice(1, -1);
  }

  appendDdl(entry: DdlEntry): void {
    refuseIllFormed(entry.sql, 'a statement');
    this.hooks.beforeAppend();
    this.store.begin();
    const offset = this.lastOffsetValue + 1;
    // A DDL entry's positions column, unused by its kind, holds its binding rules.
    const rules = entry.rules === undefined ? null : encodeStored({ rules: entry.rules });
    this.insertStmt.run(
      offset,
      'ddl',
      entry.epoch,
      null,
      entry.sql,
      rules,
      Date.now(),
      entryChecksum(offset, 'ddl', entry.epoch, null, entry.sql, rules),
    );
    this.lastOffsetValue = offset;
    this.lastDdlOffset = offset;
    this.hooks.afterDdl();
  }

  appendTick(entry: { epoch: number; clock: number }): void {
    this.appendClockEntry(entry.epoch, { c: entry.clock });
  }

  appendClockSet(entry: { epoch: number; clock: number }): void {
    this.appendClockEntry(entry.epoch, { c: entry.clock, s: 1 });
  }

  /** The clock a restart must not lose: the last tick's or SET CLOCK's at or before `offset` (null: none). */
  lastClockSetting(offset: number): number | null {
    const row = this.lastClockStmt.get(offset) as JournalRow | undefined;
    if (row === undefined) return null;
    const entry = decodeEntry(row);
    return entry.kind === 'tick' || entry.kind === 'clock' ? entry.clock : null;
  }

  private appendClockEntry(epoch: number, body: { c: number; s?: 1 }): void {
    this.hooks.beforeAppend();
    this.store.begin();
    const offset = this.lastOffsetValue + 1;
    const payload = encodeStored(body);
    this.insertStmt.run(
      offset,
      'batch',
      epoch,
      null,
      payload,
      '{}',
      Date.now(),
      entryChecksum(offset, 'batch', epoch, null, payload, '{}'),
    );
    this.lastOffsetValue = offset;
  }

  /** Takes back the last batch: its apply failed after it was logged (inside the open transaction). */
  retractLastBatch(): void {
    if (this.lastBatch === null) return;
    this.deleteStmt.run(this.lastBatch.offset);
    if (this.lastOffsetValue === this.lastBatch.offset) this.lastOffsetValue -= 1;
    this.lastBatch = null;
  }

  /**
   * Every entry after `after` in offset order, read in pages (the store may be written between
   * pages). A damaged entry (checksum mismatch) throws STATE_ERROR.
   */
  *entries(after = 0, pageSize = 512): Generator<LoggedEntry> {
    for (;;) {
      const rows = this.pageStmt.all(after, pageSize) as JournalRow[];
      if (rows.length === 0) return;
      for (const row of rows) {
        // Offsets are dense (a taken-back batch's offset is reused), so a jump is a lost entry.
        if (row.log_offset !== after + 1) throw missingEntry(after + 1, row.log_offset);
        after = row.log_offset;
        yield this.decode(row);
      }
    }
  }

  /** The DDL entries up to `upTo` (the catalog a checkpoint belongs to), in offset order. */
  ddlEntries(upTo: number): LoggedEntry[] {
    return (this.ddlStmt.all(upTo) as JournalRow[]).map((row) => this.decode(row));
  }

  /** The DDL entries at `offsets` (ascending), checked like any replayed entry; throws if one is not DDL. */
  ddlEntriesAt(offsets: readonly number[]): LoggedEntry[] {
    return offsets.map((offset) => {
      const row = this.atStmt.get(offset) as JournalRow | undefined;
      const entry = row === undefined ? undefined : this.decode(row);
      if (entry?.kind !== 'ddl') {
        throw new SluiceError(
          'STATE_ERROR',
          `the catalog record names journal offset ${offset}, which holds no DDL`,
        );
      }
      return entry;
    });
  }

  private decode(row: JournalRow): LoggedEntry {
    if (row.checksum === null && row.log_offset >= this.checkedFrom) {
      throw damagedEntry(row.log_offset, 'it has no checksum');
    }
    return decodeEntry(row);
  }

  count(): number {
    const row = this.store.db.prepare('SELECT COUNT(*) AS n FROM journal').get() as { n: number };
    return row.n;
  }
}

/**
 * A checksum over everything an entry holds, so a damaged entry is found at replay instead of being
 * applied as different data. Entries written before checksums existed have none and are not checked.
 */
function entryChecksum(
  offset: number,
  kind: string,
  epoch: number,
  target: string | null,
  payload: string,
  positions: string | null,
): string {
  return createHash('sha1')
    .update(`${offset}\u0000${kind}\u0000${epoch}\u0000${target ?? ''}\u0000${positions ?? ''}\u0000`)
    .update(payload)
    .digest('base64')
    .slice(0, 16);
}

/**
 * SQLite stores a lone UTF-16 surrogate as bytes other than the UTF-8 the checksum is computed
 * over, and reads it back as another string: such an entry could never be replayed. Input is
 * checked at the door with positions; this keeps anything that got past it out of the journal.
 */
function refuseIllFormed(text: string, what: string): void {
  if (text.isWellFormed()) return;
  throw new SluiceError('INVALID_TEXT', `${what} holds text that is not well-formed Unicode`, {
    detail: 'it contains a lone UTF-16 surrogate (e.g. \\ud800 not followed by a low surrogate)',
    hint: 'send text as valid UTF-8 / well-formed UTF-16',
  });
}

function damagedEntry(offset: number, detail: string): SluiceError {
  return new SluiceError('STATE_ERROR', `journal entry at offset ${offset} is damaged`, {
    detail,
    hint: 'restore the data directory from a backup; the server does not replay damaged input',
  });
}

function missingEntry(offset: number, next: number): SluiceError {
  return new SluiceError('STATE_ERROR', `journal entry at offset ${offset} is missing`, {
    detail: `the journal continues at offset ${next}`,
    hint: 'restore the data directory from a backup; the server does not replay a journal with a gap',
  });
}

/** Checks an entry's checksum (entries from before checksums have none) and decodes it. */
function decodeEntry(row: JournalRow): LoggedEntry {
  if (
    row.checksum !== null &&
    row.checksum !==
      entryChecksum(row.log_offset, row.kind, row.epoch, row.target, row.payload, row.positions)
  ) {
    throw damagedEntry(row.log_offset, 'its checksum does not match its contents');
  }
  if (row.kind === 'ddl') {
    const entry = {
      kind: 'ddl',
      offset: row.log_offset,
      epoch: row.epoch,
      at: row.at,
      sql: row.payload,
    } as const;
    return row.positions === null ? entry : { ...entry, rules: ddlRules(row) };
  }
  if (row.target === null) {
    const tick = decodeStored(row.payload) as { c: number; s?: number };
    const kind = tick.s === 1 ? 'clock' : 'tick';
    return { kind, offset: row.log_offset, epoch: row.epoch, at: row.at, clock: tick.c };
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
    ...(payload.clock !== undefined ? { clock: payload.clock } : {}),
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
  clock?: number,
): string {
  // Plain values (the usual batch) are written straight as text (ascii-json.ts): the same bytes
  // encodeStored gives, since none needs a tag.
  return batchPayload(columns, flatValuesText(inserts), () => inserts, deletes, clock);
}

/**
 * The payload of a batch entry: with its inserts' text written ahead (`insertsText`), `inserts` is
 * read only if the payload needs the tagged encoder.
 */
export function batchEntryPayload(entry: BatchEntry): string {
  if (entry.insertsText === undefined)
    return encodeBatchPayload(entry.columns, entry.inserts, entry.deletes, entry.clock);
  const text = `[${entry.insertsText}]`;
  return batchPayload(entry.columns, text, () => entry.inserts, entry.deletes, entry.clock);
}

/**
 * A batch payload whose inserts' plain text is `insertsText` (null: they need tags); `inserts` is
 * called only when some part needs the tagged encoder. A large request's inserts' text is written
 * ahead of its epoch (TableLog.encodeInserts of runs of its rows, joined with ','): the same bytes
 * flatValuesText gives for all of them, so the payload, and replay, are the same.
 */
function batchPayload(
  columns: readonly string[],
  insertsText: string | null,
  inserts: () => readonly (readonly Value[])[],
  deletes: readonly (readonly Value[])[],
  clock: number | undefined,
): string {
  const deletesText = insertsText === null ? null : flatValuesText(deletes);
  // A clock of -0 or beyond the safe integers is left to the tagged encoder too.
  const plainClock = clock === undefined || (Number.isSafeInteger(clock) && !Object.is(clock, -0));
  if (deletesText !== null && plainClock) {
    const clockPart = clock === undefined ? '' : `,"c":${String(clock)}`;
    return `{"k":${JSON.stringify(columns)},"i":${insertsText},"d":${deletesText}${clockPart}}`;
  }
  const body = { k: columns, i: flatten(inserts()), d: flatten(deletes) };
  // The epoch's logical clock ("c"); a payload without one predates the clock.
  return encodeStored(clock === undefined ? body : { ...body, c: clock });
}

/** The rows' values in one array, row after row (Array.prototype.flat is several times slower). */
function flatten(rows: readonly (readonly Value[])[]): Value[] {
  const out: Value[] = [];
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as readonly Value[];
    for (let c = 0; c < row.length; c++) out.push(row[c] as Value);
  }
  return out;
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

export function decodeBatchPayload(text: string): { insert: Row[]; delete: Row[]; clock?: number } {
  const payload = decodeStored(text) as
    { k: string[]; i: unknown[]; d: unknown[]; c?: number } | { insert: Row[]; delete: Row[] };
  if ('k' in payload)
    return {
      insert: unflatten(payload.i, payload.k),
      delete: unflatten(payload.d, payload.k),
      ...(payload.c !== undefined ? { clock: payload.c } : {}),
    };
  return payload;
}

/** The binding rules a DDL entry records (its positions column: `{"rules": n}`). */
function ddlRules(row: JournalRow): number {
  let rules: unknown;
  try {
    rules = (decodeStored(row.positions as string) as { rules?: unknown } | null)?.rules;
  } catch {
    rules = undefined;
  }
  if (typeof rules !== 'number' || !Number.isInteger(rules) || rules < 1) {
    throw damagedEntry(row.log_offset, 'its binding rules are not a positive integer');
  }
  return rules;
}
