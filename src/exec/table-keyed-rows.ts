// A keyed table's rows by primary key, with the rows a checkpoint load deferred: a table restored from
// column blocks keeps the loaded columns and builds its rows and key map on first use, or in slices
// (the server builds them while idle after a restart, so the first request does not pay for all).
// Beside it, committing a resolved batch to the rows (applyKeyed).
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { identicalRows } from '../ivm/exact-rows.ts';
import type { ZBatch } from '../ivm/zset.ts';
import type { KeyedFacts } from './table-batch.ts';
import { ColumnRows } from '../common/column-rows.ts';
import { UniqueArrangement } from '../ivm/unique-arrangement.ts';
import { SlotRowMap } from '../ivm/slot-row-map.ts';

export class KeyedRows {
  /**
   * The rows by key; read through `rows`, which first builds rows a load deferred. Slots, not a
   * Map: a serial key's lookup is one typed-array read (slot-row-map.ts), in a Map's order.
   */
  private readonly keyed: UniqueArrangement<Value>;
  /**
   * The rows as a checkpoint's column blocks loaded them, not yet built into rows and keyed: a
   * restart loads a million rows as a few typed arrays, and the first use builds them.
   */
  private deferred: ColumnRows | null = null;
  /** Rows of `deferred` already keyed (an idle build goes slice by slice: buildDeferredSlice). */
  private deferredBuilt = 0;
  private tracking = false;
  /** The slots `keyed` holds its rows in now (a load makes new ones): a join reads rows by them. */
  private map: SlotRowMap<Value> | null = null;

  constructor(private readonly keyOf: (row: readonly Value[]) => Value) {
    // Every row is set under its primary key, so the slots need not keep the keys.
    this.keyed = new UniqueArrangement<Value>(
      () => (this.map = new SlotRowMap<Value>(undefined, undefined, keyOf)),
    );
  }

  /** The rows' slots (built first if a load deferred them), for a join reading this table's rows. */
  get slots(): SlotRowMap<Value> {
    if (this.deferred !== null) this.buildDeferred();
    return this.map as SlotRowMap<Value>;
  }

  /** The keyed rows, built first if a load deferred them. */
  get rows(): UniqueArrangement {
    if (this.deferred !== null) this.buildDeferred();
    return this.keyed;
  }

  /** Builds the rows and key index a checkpoint load deferred (done once, on first use). */
  buildDeferred(): void {
    const rows = this.deferred;
    if (rows === null) return;
    if (this.deferredBuilt === 0) {
      this.deferred = null;
      this.keyed.load(rows, this.keyOf);
      return;
    }
    this.buildDeferredSlice(rows.length);
  }

  /** Builds up to `maxRows` more of the deferred rows; true when none is left. */
  buildDeferredSlice(maxRows: number): boolean {
    const rows = this.deferred;
    if (rows === null) return true;
    const keyed = this.keyed;
    const to = Math.min(rows.length, this.deferredBuilt + maxRows);
    // Not a change to checkpoint: the store holds these rows already.
    keyed.trackChanges(false);
    rows.forEachRowBetween(this.deferredBuilt, to, (row) =>
      keyed.set(this.keyOf(row as Value[]), row as Value[]),
    );
    keyed.trackChanges(this.tracking);
    this.deferredBuilt = to;
    if (to < rows.length) return false;
    this.deferred = null;
    this.deferredBuilt = 0;
    return true;
  }

  /** Whether loaded rows wait to be built. */
  get hasDeferred(): boolean {
    return this.deferred !== null;
  }

  /** The rows a load deferred, not built yet (null when none): sampled and counted as they are. */
  get deferredRows(): ColumnRows | null {
    return this.deferred;
  }

  trackChanges(on: boolean): void {
    this.tracking = on;
    // The flag only: contents a load deferred stay deferred.
    this.keyed.trackChanges(on);
  }

  /** Takes column-wise loaded rows as they are; they are built into rows and keyed on first use. */
  loadDeferred(values: ColumnRows): void {
    // Emptied (and marked as what the store holds) now.
    this.keyed.load([], this.keyOf);
    this.deferred = values.length > 0 ? values : null;
    this.deferredBuilt = 0;
  }

  /** Replaces the rows with a checkpoint's list of rows. */
  load(list: Iterable<unknown>): void {
    this.deferred = null;
    this.deferredBuilt = 0;
    this.keyed.load(list, this.keyOf);
  }
}

/**
 * Commits a keyed table's resolved batch to its rows (deletes first) and gives the views' change,
 * consolidated: by construction (each key is deleted and inserted at most once a batch), and where
 * an insert puts back exactly the row deleted under its key, by leaving that pair out. An
 * insert-only batch's change is the batch's own list of rows (nobody changes a batch's rows), not a
 * copy of it.
 */
export function applyKeyed(
  table: { readonly def: { readonly name: string }; keyOf(row: readonly Value[]): Value },
  byKey: UniqueArrangement,
  batch: { readonly deletes: readonly (readonly Value[])[]; readonly inserts: readonly (readonly Value[])[] },
  /** What `prepare` found, when the batch is still the one it resolved. */
  facts: KeyedFacts | undefined,
): ZBatch {
  const { deletes, inserts } = batch;
  let consolidated = true;
  const putsBack = facts?.putsBack ?? null;
  if (putsBack !== null) consolidated = !putsBack;
  else if (deletes.length > 0) {
    // A key inserted while stored is one this batch deletes first (prepare pairs them): its row
    // is read before the deletes, not kept from them in a Map (a set and get per row).
    for (const row of inserts) {
      const old = byKey.get(table.keyOf(row));
      if (old !== undefined && identicalRows(old, row)) {
        consolidated = false;
        break;
      }
    }
  }
  if (deletes.length === 0) {
    for (let i = 0; i < inserts.length; i++) {
      const row = inserts[i] as readonly Value[];
      byKey.set(table.keyOf(row), row);
    }
    return { rows: inserts as (readonly Value[])[], weights: signs(0, inserts.length), consolidated };
  }
  const nd = deletes.length;
  const deleteKeys = facts?.deleteKeys;
  // Where a row is put back: each delete's place by its key, to find the pairs the change leaves
  // out — by key, with the keys read anyway, not `consolidate`'s exact encoding of every row (a
  // string built per row: 3.1% of the join bench's mutations phase, where about one auction in a
  // hundred is put back with its old category, so most batches of auctions went through it).
  const deletedAt = consolidated ? null : new Map<Value, number>();
  // The rows taken, in the deletes' order.
  let removed: (readonly Value[])[];
  if (deleteKeys !== undefined) {
    // The keys `prepare` found, distinct (it refuses a key deleted twice): taken in one pass into
    // the scratch list.
    const taken = TAKEN;
    byKey.deleteMany(deleteKeys, nd, taken);
    let same = true;
    for (let i = 0; i < nd; i++) {
      const row = taken[i];
      if (row === undefined) {
        taken.fill(undefined, 0, nd);
        throw absentRow(table.def.name);
      }
      if (row !== deletes[i]) same = false;
      deletedAt?.set(deleteKeys[i] as Value, i);
    }
    // The rows `prepare` read are the ones taken (nothing wrote the table between): the change reads
    // the batch's own list (nobody changes a batch's rows) instead of a copy built row by row.
    removed = same ? (deletes as (readonly Value[])[]) : (taken.slice(0, nd) as (readonly Value[])[]);
    taken.fill(undefined, 0, nd);
  } else {
    removed = [];
    for (let i = 0; i < nd; i++) {
      const k = table.keyOf(deletes[i] as Value[]);
      const existing = byKey.delete(k);
      if (existing === undefined) throw absentRow(table.def.name);
      deletedAt?.set(k, i);
      removed.push(existing);
    }
  }
  let putBack: Uint8Array | null = null;
  for (let j = 0; j < inserts.length; j++) {
    const row = inserts[j] as readonly Value[];
    const k = table.keyOf(row);
    byKey.set(k, row);
    const at = deletedAt?.get(k);
    if (at !== undefined && identicalRows(removed[at] as readonly Value[], row)) {
      putBack ??= new Uint8Array(nd + inserts.length);
      putBack[at] = putBack[nd + j] = 1;
    }
  }
  const rows = inserts.length === 0 ? removed : removed.concat(inserts);
  const weights = signs(nd, inserts.length);
  return putBack === null ? { rows, weights, consolidated: true } : leftOut(rows, weights, putBack);
}

/**
 * Rows a keyed table's deletes take, in order (shared by every table: written and emptied within one
 * `applyKeyed`, so no table's rows stay reachable through it).
 */
const TAKEN: (readonly Value[] | undefined)[] = [];

/**
 * -1s, then +1s: shared prefixes a change's weights are copied from at their size (one allocation,
 * where a list pushed one weight at a time was regrown on the way: 3.3 slots per row at 1,000). Grown
 * by pushes, so packed small integers like every other batch's weights (the operators' weight
 * loads stay monomorphic); up to SHARED_SIGNS long, so a huge batch leaves no huge array behind.
 */
const MINUS_ONES: number[] = [];
const ONES: number[] = [];
const SHARED_SIGNS = 1 << 16;

/** A change's weights: `minus` times -1, then `plus` times +1. */
function signs(minus: number, plus: number): number[] {
  const n = minus + plus;
  if (n > SHARED_SIGNS) {
    const weights: number[] = [];
    for (let i = 0; i < minus; i++) weights.push(-1);
    for (let i = 0; i < plus; i++) weights.push(1);
    return weights;
  }
  const from = minus > 0 ? MINUS_ONES : ONES;
  while (from.length < n) from.push(from === MINUS_ONES ? -1 : 1);
  const weights = from.slice(0, n);
  if (minus > 0 && plus > 0) weights.fill(1, minus);
  return weights;
}

function absentRow(table: string): SluiceError {
  return new SluiceError('STATE_ERROR', `replayed delete of an absent row in table "${table}"`);
}

/** The change without the rows marked in `out`: what `consolidate` makes of it, in its order. */
function leftOut(rows: readonly (readonly Value[])[], weights: readonly number[], out: Uint8Array): ZBatch {
  const kept: (readonly Value[])[] = [];
  const keptWeights: number[] = [];
  for (let i = 0; i < rows.length; i++)
    if (out[i] === 0) {
      kept.push(rows[i] as readonly Value[]);
      keptWeights.push(weights[i] as number);
    }
  return { rows: kept, weights: keptWeights, consolidated: true };
}
