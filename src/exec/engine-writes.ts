// Which table a write may change: INSERT/UPDATE/DELETE and the ingest API write tables; a source or a
// source's errors relation is written by its connector alone; views and sinks hold no writable rows.
// An append-only relation (catalog.ts `isAppendOnly`) takes inserts only: every write, SQL or ingest or
// connector, goes through Engine.applyChanges, which asks `refuseAppendOnly` before and after the
// (effect-free) prepare, so a refused request changes nothing.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { formatValue } from '../common/values.ts';
import { isAppendOnly, type TableDef } from '../planner/catalog.ts';
import type { EngineJournal, TableChanges } from './api.ts';
import type { CheckpointedState } from './engine-checkpoints.ts';
import type { ApplyOptions } from './engine-types.ts';
import type { TableStore } from './table-store.ts';

/** The table an INSERT/UPDATE/DELETE at `pos` changes, or the error naming why `name` is not one. */
export function tableForWrite(
  state: CheckpointedState,
  name: string,
  pos: { line: number; column: number },
): TableStore {
  const table = state.tables.get(name);
  if (table !== undefined) {
    if (table.def.source !== undefined) throw sourceWriteError(table.def).at(pos);
    return table;
  }
  const sink = state.catalog.get(name);
  if (sink?.kind === 'sink') {
    throw new SluiceError('WRONG_OBJECT_KIND', `cannot change sink "${name}"`, {
      position: pos,
      hint: `a sink writes materialized view "${sink.view}" to Kafka; it holds no rows`,
    });
  }
  if (state.views.has(name)) {
    throw new SluiceError('WRONG_OBJECT_KIND', `cannot change materialized view "${name}"`, {
      position: pos,
      hint: 'write to the tables the view reads',
    });
  }
  throw new SluiceError('UNKNOWN_TABLE', `relation "${name}" does not exist`, { position: pos });
}

/**
 * The store a batch (Engine.applyChanges) for `table` goes to: a table's from anyone but a
 * connector, a source's or an errors relation's from its connector (with its positions) alone.
 */
export function batchStore(
  state: CheckpointedState,
  table: string,
  options: ApplyOptions | undefined,
): TableStore {
  const store = state.tables.get(table);
  if (store === undefined) {
    if (state.views.has(table))
      throw new SluiceError('WRONG_OBJECT_KIND', `cannot write to materialized view "${table}"`);
    if (state.catalog.get(table)?.kind === 'sink')
      throw new SluiceError('WRONG_OBJECT_KIND', `cannot write to sink "${table}"`);
    throw new SluiceError('UNKNOWN_TABLE', `table "${table}" does not exist`);
  }
  const fromSource = options?.fromSource === true;
  if (store.def.source !== undefined && !fromSource) throw sourceWriteError(store.def);
  if (store.def.errorsOf !== undefined && !fromSource) {
    throw new SluiceError(
      'WRONG_OBJECT_KIND',
      `"${table}" is the errors relation of source "${store.def.errorsOf}"; only its connector writes it`,
    );
  }
  if (store.def.source === undefined && store.def.errorsOf === undefined && fromSource) {
    throw new SluiceError('WRONG_OBJECT_KIND', `"${table}" is a table, not a source`);
  }
  if (fromSource && options?.positions === undefined) {
    throw new SluiceError('INTERNAL_ERROR', `a batch for source "${table}" must carry its positions`);
  }
  return store;
}

/** `changes` without the deletes of keys `store` does not hold (a keyless store keeps them all). */
export function withoutMissingDeletes(store: TableStore, changes: TableChanges): TableChanges {
  const deletes = changes.delete;
  if (deletes === undefined || store.def.primaryKey === null) return changes;
  const kept = deletes.filter((row, i) => store.hasKeyOf(store.normalizeRow(row, 'delete', i)));
  return kept.length === deletes.length ? changes : { ...changes, delete: kept };
}

/** A write to a source that does not come from its connector. */
function sourceWriteError(def: TableDef): SluiceError {
  return new SluiceError(
    'WRONG_OBJECT_KIND',
    `"${def.name}" is a source; its rows come from Kafka topic "${def.source?.topic ?? ''}"`,
    {
      hint: "only the source's connector writes its rows; to write rows yourself, create a table",
    },
  );
}

/**
 * Refuses a write that would remove a row of an append-only relation: with `removed` null, a request
 * with deletes (asked before it is resolved); else the rows the resolved batch removes — a keyed
 * table's insert of a stored key replaces the row under it, which is a delete too.
 */
export function refuseAppendOnly(
  def: TableDef,
  changes: TableChanges,
  removed: readonly (readonly Value[])[] | null,
): void {
  if (!isAppendOnly(def)) return;
  if (removed === null) {
    const n = changes.delete?.length ?? 0;
    if (n === 0) return;
    throw new SluiceError('APPEND_ONLY_TABLE', `cannot delete from append-only table "${def.name}"`, {
      detail: `the request deletes ${n} row${n === 1 ? '' : 's'}; nothing was applied`,
      hint: 'an APPEND ONLY table takes inserts only',
    });
  }
  const row = removed[0];
  if (row === undefined) return;
  const pk = def.primaryKey ?? [];
  const names = pk.map((c) => def.columns[c]?.name ?? '?');
  const values = pk.map((c) => formatValue(row[c] as Value));
  throw new SluiceError(
    'APPEND_ONLY_TABLE',
    `cannot replace a row of append-only table "${def.name}": an insert names a key it holds`,
    {
      detail: `Key (${names.join(', ')})=(${values.join(', ')}) already exists; nothing was applied.`,
      hint: 'an APPEND ONLY table takes inserts of new keys only',
    },
  );
}

/** UPDATE and DELETE of an append-only table, refused at the statement whatever rows they match. */
export function refuseAppendOnlyStatement(
  def: TableDef,
  statement: 'UPDATE' | 'DELETE',
  pos: { line: number; column: number },
): void {
  if (!isAppendOnly(def)) return;
  throw new SluiceError(
    'APPEND_ONLY_TABLE',
    `cannot ${statement === 'UPDATE' ? 'update' : 'delete from'} append-only table "${def.name}"`,
    { position: pos, hint: 'an APPEND ONLY table takes inserts only' },
  );
}

/** The fewest insert rows whose journal text is written ahead of the epoch (see InsertsAhead). */
export const INSERTS_AHEAD_MIN_ROWS = 8192;

/** Insert rows normalised and written per step of InsertsAhead: ≈ 3–5 ms at three columns. */
export const INSERTS_AHEAD_SLICE_ROWS = 4096;

/**
 * Steps of InsertsAhead, the most rows one normalised and wrote, and the batches whose journal took
 * the text written ahead, process-wide (tests count them).
 */
export const insertsAheadCounts = { steps: 0, maxRowsInStep: 0, used: 0 };

/**
 * A large insert-only request's journal text (its rows' values as EngineJournal.encodeInserts writes
 * them, piece by piece), written ahead of its epoch a step at a time, so that the epoch's one block no longer
 * encodes the rows. It reads nothing the engine changes: a table's rows normalise the same until
 * the table is dropped (its store is then another), and a table with a clock DEFAULT is never
 * taken (its rows depend on the epoch's clock). Nothing is applied or journaled here; the request
 * is still validated whole inside its epoch, and a row that fails (or needs the journal's tags)
 * ends the job, leaving the request to the usual path, which names the same row.
 */
export class InsertsAhead {
  private readonly parts: string[] = [];
  private next = 0;
  private abandoned = false;

  constructor(
    readonly store: TableStore,
    private readonly rows: readonly unknown[],
    /** The journal's text of some rows' values (EngineJournal.encodeInserts). */
    private readonly encode: (rows: readonly (readonly Value[])[]) => string | null,
  ) {}

  /** Normalises and writes up to `count` more rows; true once every row is done (or abandoned). */
  step(count: number): boolean {
    const end = Math.min(this.rows.length, this.next + count);
    if (!this.abandoned) {
      const values: Value[][] = [];
      try {
        for (let i = this.next; i < end; i++) values.push(this.store.normalizeRow(this.rows[i], 'insert', i));
      } catch {
        this.abandoned = true;
      }
      insertsAheadCounts.steps++;
      if (end - this.next > insertsAheadCounts.maxRowsInStep)
        insertsAheadCounts.maxRowsInStep = end - this.next;
      const text = this.abandoned ? null : this.encode(values);
      if (text === null) this.abandoned = true;
      else this.parts.push(text);
    }
    this.next = this.abandoned ? this.rows.length : end;
    return this.next === this.rows.length;
  }

  /**
   * The rows' journal text (without brackets) for a batch of `store` that inserts `inserted` rows,
   * or null when it is not theirs: not finished, abandoned, the table was dropped (or dropped and
   * made again), or the batch inserts other rows than the request's (a keyed request naming a key
   * twice keeps its last row).
   */
  textFor(store: TableStore, inserted: number): string | null {
    if (this.abandoned || this.next !== this.rows.length || store !== this.store) return null;
    if (inserted !== this.rows.length) return null;
    insertsAheadCounts.used++;
    return this.parts.join(',');
  }
}

/**
 * A job writing the journal text of a request's inserts ahead of its epoch, or null when the request
 * is not one for it: small, not insert-only, not into a plain keyless table, or into a table whose
 * rows read the epoch's clock.
 */
export function insertsAhead(
  state: CheckpointedState,
  journal: EngineJournal | null,
  table: string,
  changes: TableChanges,
): InsertsAhead | null {
  const encode = journal?.encodeInserts;
  if (encode === undefined) return null;
  const rows = changes.insert;
  if (rows === undefined || rows.length < INSERTS_AHEAD_MIN_ROWS || (changes.delete?.length ?? 0) > 0)
    return null;
  const store = state.tables.get(table);
  if (store === undefined || store.def.source !== undefined || store.def.errorsOf !== undefined) return null;
  // A keyed table's request is left in one block: measured (bench/README.md, sql-latency.ts), its
  // epoch's garbage collection grew by more than the encoding saved.
  if (store.def.primaryKey !== null) return null;
  if ((store.def.defaults ?? []).some((d) => d?.atClock !== undefined)) return null;
  return new InsertsAhead(store, rows, (values) => encode.call(journal, values));
}
