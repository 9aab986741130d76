// Resolving a request's rows to the exact row changes against a table's current rows (the part of
// `TableStore.prepare` that reads them): a keyed table's deletes and upserts by primary key, a keyless
// table's deletes by value. Nothing here changes the table; a bad row throws ROW_NOT_FOUND.
import { SluiceError } from '../common/errors.ts';
import { bigintAsText, encodeExactValues, encodeValues, formatValue } from '../common/values.ts';
import { compareExactRows, identicalRows } from '../ivm/exact-rows.ts';
import type { CountedArrangement } from '../ivm/counted-arrangement.ts';
import type { TableDef } from '../planner/catalog.ts';
import type { Value } from '../common/types.ts';
import { NOT_KEY_ONLY, isKeyOnlyDelete, type KeyDeleteKey } from './row-normalizer.ts';
import { hasInexactColumns } from './table-values.ts';
import { ABSENT, RequestKeys } from './table-request-keys.ts';

/** The table a request is resolved against. */
export interface ResolveTable {
  readonly def: TableDef;
  normalizeRow(input: unknown, what: 'insert' | 'delete', index: number): Value[];
  /** The key a delete naming only the primary key names, fast; NOT_KEY_ONLY for any other. */
  readonly keyDeleteKey: KeyDeleteKey;
  keyOf(row: readonly Value[]): Value;
}

/** A keyed table's current rows by key. */
export interface RowsByKey {
  get(key: Value): readonly Value[] | undefined;
  /** `out[i] = get(keys[i])` for i < n. */
  getMany(keys: readonly Value[], n: number, out: (readonly Value[] | undefined)[]): void;
  /** At least every number key held (Infinity when not known). */
  readonly numberCeiling: number;
}

/** A store's scratch lists of the keys a request looks up, its deletes' and then its inserts' (kept from request to request). */
export interface InsertLookups {
  readonly keys: Value[];
  /** Where the insert of `keys[j]` is in the request's inserts. */
  readonly at: number[];
  readonly rows: (readonly Value[] | undefined)[];
  /** A delete's row as the request gave it, and what it names (KEY_ONLY, ...; resolveDeletes). */
  readonly given: (readonly Value[] | undefined)[];
  readonly kinds: number[];
  /** The request's inserts as they are resolved, copied out at their size (`resolveKeyed`). */
  readonly inserts: (readonly Value[] | undefined)[];
}

/** A keyed store's scratch for resolving its requests (made on its first request, then reused). */
export interface ResolveScratch {
  readonly deleted: RequestKeys;
  readonly inserted: RequestKeys;
  readonly lookup: InsertLookups;
}

export function resolveScratch(): ResolveScratch {
  return {
    deleted: new RequestKeys(),
    inserted: new RequestKeys(),
    lookup: { keys: [], at: [], rows: [], given: [], kinds: [], inserts: [] },
  };
}

/** Insert lookups skipped because the keys were above every key held (tests count them). */
export const lookupsSkipped = { count: 0 };

/**
 * Two rows of one INSERT with the same primary key: refused whole, as PostgreSQL refuses them (a key
 * the table already holds is replaced, Sluice's upsert; the statement would otherwise keep only its
 * last row of the key and count the others as inserted).
 */
function repeatedKey(def: TableDef, row: readonly Value[]): SluiceError {
  const pk = def.primaryKey ?? [];
  const names = pk.map((i) => (def.columns[i] as { name: string }).name).join(', ');
  const values = pk.map((i) => JSON.stringify(row[i] ?? null, bigintAsText)).join(', ');
  return new SluiceError(
    'UNIQUE_VIOLATION',
    `duplicate key value violates the primary key of table "${def.name}"`,
    {
      detail: `Key (${names})=(${values}) appears more than once in this INSERT.`,
    },
  );
}

/** A row as an error's detail shows it: `(a=1, b='x')`. */
export function describeRow(def: TableDef, row: readonly Value[]): string {
  return `(${def.columns.map((c, i) => `${c.name}=${formatValue(row[i] as Value)}`).join(', ')})`;
}

/** Whether two rows' values encode alike: each value the same one, else compared by encoding. */
function sameValues(a: readonly Value[], b: readonly Value[]): boolean {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i === a.length || encodeValues(a) === encodeValues(b);
}

/** A keyed batch's rows being resolved, with their keys (table-batch.ts `KeyedFacts`). */
export interface KeyedResolution {
  /** Replaced (not pushed to) by a request's deletes, which come first: see `checkDeletes`. */
  deletes: (readonly Value[])[];
  /** Replaced by the request's inserts when it has any (`resolveKeyed`). */
  inserts: (readonly Value[])[];
  deleteKeys: Value[];
}

/**
 * A keyed table's request: deletes name stored rows (by key, or by the whole row), inserts replace
 * the row stored under their key; pushes the rows removed to `out.deletes` (their keys to
 * `out.deleteKeys`) and the rows added to `out.inserts`. Answers whether an insert puts back exactly the row deleted
 * under its key (null: not known, when a request inserts a key twice).
 */
export function resolveKeyed(
  table: ResolveTable,
  byKey: RowsByKey,
  deleteRows: readonly unknown[],
  insertRows: readonly unknown[],
  normalizeInsert: (input: unknown, i: number) => Value[],
  out: KeyedResolution,
  /** The store's scratch tables (table-request-keys.ts), begun here. */
  scratch: ResolveScratch,
  /** A key inserted twice refuses the request (one INSERT statement) instead of the later row winning. */
  refuseRepeatedKeys = false,
  /** `deleteRows` are rows as the table stores them (typed): each is a whole row to delete. */
  typedDeletes = false,
): boolean | null {
  // Keys this request deletes (deletes come first, so a later insert of one adds it back).
  const deletedKeys = scratch.deleted;
  deletedKeys.begin();
  if (deleteRows.length > 0) resolveDeletes(table, byKey, deleteRows, out, scratch, typedDeletes);
  // Read after the deletes: `checkDeletes` may have given `out` lists of its own.
  const { deletes, deleteKeys } = out;
  if (insertRows.length === 0) return false;
  // Resolved into the scratch list, then copied out at their size: pushed one by one into a list of
  // their own, the inserts were regrown 9 times on the way to 1,000 rows (3.3 slots allocated per
  // row, 8% of the bytes the Top-N bench's insert phase allocated).
  const inserts = scratch.lookup.inserts as (readonly Value[])[];
  const count = { n: 0 };
  try {
    return resolveInserts(
      table,
      byKey,
      insertRows,
      normalizeInsert,
      inserts,
      count,
      out,
      deletes,
      deleteKeys,
      scratch,
      refuseRepeatedKeys,
    );
  } finally {
    // Not kept alive by the scratch until the next request, nor after one that throws.
    inserts.fill(undefined as unknown as readonly Value[], 0, count.n);
  }
}

/**
 * `resolveKeyed`'s inserts, resolved into `inserts` (the scratch list; `count.n` of them) and then
 * given to `out.inserts` at their size.
 */
function resolveInserts(
  table: ResolveTable,
  byKey: RowsByKey,
  insertRows: readonly unknown[],
  normalizeInsert: (input: unknown, i: number) => Value[],
  inserts: (readonly Value[])[],
  count: { n: number },
  out: KeyedResolution,
  deletes: (readonly Value[])[],
  deleteKeys: Value[],
  scratch: ResolveScratch,
  refuseRepeatedKeys: boolean,
): boolean | null {
  const deletedKeys = scratch.deleted;
  const anyDeleted = deletes.length > 0;
  let putsBack: boolean | null = false;
  // Where each key's insert is (a Map's set and get per insert showed in profiles).
  const insertedAt = scratch.inserted;
  insertedAt.begin();
  // The stored rows the inserts replace are looked up all at once after this pass (`getMany`): on a
  // large table each lookup misses the cache, and a pass of them overlaps the misses.
  const lookup = scratch.lookup;
  let n = 0;
  // The inserts so far (`inserts` is longer: a scratch list).
  let m = 0;
  // While the keys come strictly ascending (serial ids, the common ingest) none can repeat, so they
  // are not recorded: the greatest so far, or NaN once one is not greater (then the inserts so far
  // are recorded and every later key is looked up and recorded as it comes).
  let ascending = -Infinity;
  // A loop, not a `forEach` closure: the counters it updates (`n`, `ascending`, `putsBack`) then stay
  // locals instead of living in a context object that every row's writes go through.
  for (let i = 0; i < insertRows.length; i++) {
    const row = normalizeInsert(insertRows[i], i);
    const k = table.keyOf(row);
    if (typeof k === 'number' && k > ascending) ascending = k;
    else {
      if (ascending === ascending) recordInserts(table, inserts, m, insertedAt);
      ascending = NaN;
      // Where the key's insert goes, found and (when new) recorded in one probe.
      const earlier = insertedAt.claim(k, m);
      if (earlier !== ABSENT) {
        if (refuseRepeatedKeys) throw repeatedKey(table.def, row);
        inserts[earlier] = row; // a later insert of the same key in one request wins
        // Whether the row it replaced was put back was judged on the earlier one: not known now.
        putsBack = null;
        continue;
      }
    }
    // A stored row under the key is replaced, unless this request already deleted it.
    const deletedAt = anyDeleted ? deletedKeys.get(k) : ABSENT;
    if (deletedAt !== ABSENT) {
      if (putsBack === false && identicalRows(deletes[deletedAt] as readonly Value[], row)) putsBack = true;
    } else {
      lookup.keys[n] = k;
      lookup.at[n++] = m;
    }
    // Written in place, or appended at the list's end (so it stays packed).
    inserts[m++] = row;
    count.n = m;
  }
  out.inserts = inserts.slice(0, m);
  if (n === 0) return putsBack;
  const { keys, at, rows } = lookup;
  // Ascending keys all above every key held (serial ids appended): none replaces a row, nothing to
  // look up. Each lookup of an absent key past the key index's direct table is a hashed probe.
  if (ascending === ascending && (keys[0] as number) > byKey.numberCeiling) {
    lookupsSkipped.count += n;
    return putsBack;
  }
  byKey.getMany(keys, n, rows);
  // In insert order, as a pass deleting and inserting key by key would push them. A null (a key
  // inserted twice) stays null whatever the rows, so judging the rows after the inserts reads alike.
  for (let j = 0; j < n; j++) {
    const old = rows[j];
    if (old === undefined) continue;
    rows[j] = undefined; // not kept alive by the scratch until the next request
    deletes.push(old);
    deleteKeys.push(keys[j] as Value);
    if (putsBack === false && identicalRows(old, inserts[at[j] as number] as readonly Value[]))
      putsBack = true;
  }
  return putsBack;
}

/** Records where each insert so far is (their keys are distinct: they came ascending). */
function recordInserts(
  table: ResolveTable,
  inserts: readonly (readonly Value[])[],
  m: number,
  insertedAt: RequestKeys,
): void {
  for (let j = 0; j < m; j++) insertedAt.claim(table.keyOf(inserts[j] as readonly Value[]), j);
}

/**
 * A keyed table's deletes, into `out.deletes` and `out.deleteKeys` (and recorded in `scratch.deleted`
 * where each key's row is): the keys first, then their stored rows in one pass (`getMany`, as for the
 * inserts), then each checked in request order, so the first bad row is the one named.
 */
function resolveDeletes(
  table: ResolveTable,
  byKey: RowsByKey,
  deleteRows: readonly unknown[],
  out: KeyedResolution,
  scratch: ResolveScratch,
  typed: boolean,
): void {
  const deletedKeys = scratch.deleted;
  const { keys, kinds, given } = scratch.lookup;
  let n = 0;
  try {
    for (; n < deleteRows.length; n++) {
      const input = deleteRows[n];
      // `{"id": 7}`, the common delete, skips the general path: its key alone, no row built (an
      // error names the row, built again from the input then: checkDeletes).
      const fast = typed ? NOT_KEY_ONLY : table.keyDeleteKey(input);
      let k: Value;
      let keyOnly = true;
      if (typed) {
        // A stored row (an UPDATE's or DELETE's): checked whole against the row stored under its key.
        const row = input as Value[];
        keyOnly = false;
        k = table.keyOf(row);
        given[n] = row;
      } else if (fast !== NOT_KEY_ONLY) {
        k = fast;
        given[n] = undefined;
      } else {
        const row = table.normalizeRow(input, 'delete', n);
        keyOnly = isKeyOnlyDelete(table.def, input as Record<string, unknown>);
        k = table.keyOf(row);
        given[n] = row;
      }
      keys[n] = k;
      // Recorded as deleted (where its row goes in `deletes`) in the same probe that finds an
      // earlier delete of the key (a request that throws leaves the mark behind: `begin` forgets it).
      kinds[n] = deletedKeys.claim(k, n) !== ABSENT ? REPEATED : keyOnly ? KEY_ONLY : WHOLE_ROW;
    }
  } catch (e) {
    // A row that cannot be read: a row before it that names no stored row is the error to report.
    checkDeletes(table, byKey, deleteRows, n, out, scratch);
    throw e;
  }
  checkDeletes(table, byKey, deleteRows, n, out, scratch);
}

const KEY_ONLY = 0;
const WHOLE_ROW = 1;
/** A delete of a key an earlier delete of the request names. */
const REPEATED = 2;

/** The first `n` deletes the scratch holds, looked up and checked in order (resolveDeletes). */
function checkDeletes(
  table: ResolveTable,
  byKey: RowsByKey,
  deleteRows: readonly unknown[],
  n: number,
  out: KeyedResolution,
  scratch: ResolveScratch,
): void {
  const def = table.def;
  const { keys, kinds, rows: stored, given } = scratch.lookup;
  byKey.getMany(keys, n, stored);
  for (let i = 0; i < n; i++) {
    const existing = stored[i];
    // Undefined for a key-only delete the fast path read.
    const row = given[i];
    // Not kept alive by the scratch until the next request.
    given[i] = undefined;
    const kind = kinds[i];
    if (existing === undefined || kind === REPEATED) {
      clearFrom(scratch.lookup, 0, n);
      throw new SluiceError(
        'ROW_NOT_FOUND',
        `delete row ${i + 1}: no row with this primary key in table "${def.name}"`,
        { detail: describeRow(def, row ?? table.normalizeRow(deleteRows[i], 'delete', i)) },
      );
    }
    if (kind === WHOLE_ROW && !sameValues(existing, row as readonly Value[])) {
      clearFrom(scratch.lookup, 0, n);
      throw new SluiceError(
        'ROW_NOT_FOUND',
        `delete row ${i + 1}: the row in table "${def.name}" differs from the one to delete`,
        {
          detail: `stored ${describeRow(def, existing)}, given ${describeRow(def, row as readonly Value[])}`,
          hint: 'delete by primary key only to remove the row whatever its other values',
        },
      );
    }
  }
  // Every delete names a stored row: the rows and keys are the scratch's first n, copied out at
  // their size in one allocation each. Pushed one by one, each list was regrown 9 times on the way
  // to 1,000 rows (3.3 slots allocated per row); the two were a third of the bytes the Top-N bench's
  // delete phase allocated.
  if (out.deletes.length === 0 && out.deleteKeys.length === 0) {
    out.deletes = stored.slice(0, n) as (readonly Value[])[];
    out.deleteKeys = keys.slice(0, n);
  } else {
    for (let i = 0; i < n; i++) {
      out.deletes.push(stored[i] as readonly Value[]);
      out.deleteKeys.push(keys[i] as Value);
    }
  }
  // Not kept alive by the scratch until the next request.
  stored.fill(undefined, 0, n);
}

/** Drops the scratch's rows [from, to) (a request that throws leaves none behind). */
function clearFrom(lookup: InsertLookups, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    lookup.rows[i] = undefined;
    lookup.given[i] = undefined;
  }
}

/** A keyless table's deletes: each names one copy of a stored row; pushes the rows to `deletes`. */
export function resolveKeylessDeletes(
  table: ResolveTable,
  ms: CountedArrangement,
  deleteRows: readonly unknown[],
  deletes: (readonly Value[])[],
  /** `deleteRows` are rows as the table stores them (an UPDATE's or DELETE's): not normalised again. */
  typed = false,
): void {
  const def = table.def;
  const used = new Map<string, number>();
  deleteRows.forEach((input, i) => {
    let row = typed ? (input as Value[]) : table.normalizeRow(input, 'delete', i);
    let k = encodeExactValues(row);
    let have = ms.count(row) - (used.get(k) ?? 0);
    if (have <= 0 && hasInexactColumns(def)) {
      // No row of this text left: a row of an equal value and another text (1.50 for 1.5), as
      // DELETE … WHERE x = 1.5 would; the one whose text sorts first, so replay picks the same.
      const equal = [...ms.equalRows(encodeValues(row))].sort((a, b) => compareExactRows(a.row, b.row));
      for (const e of equal) {
        const ek = encodeExactValues(e.row);
        if (e.count - (used.get(ek) ?? 0) > 0) {
          row = e.row as Value[];
          k = ek;
          have = 1;
          break;
        }
      }
    }
    if (have <= 0) {
      throw new SluiceError('ROW_NOT_FOUND', `delete row ${i + 1}: no such row in table "${def.name}"`, {
        detail: describeRow(def, row),
      });
    }
    used.set(k, (used.get(k) ?? 0) + 1);
    deletes.push(row);
  });
}
