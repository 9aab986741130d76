// The keyed view Output's per-step helpers: consolidating a delta by the view's key, and pairing a
// consolidated delta's -old/+new of one key into -U/+U changes. In a keyed view a key holds at most
// one row, so rows that could cancel or add up share a key: grouping by the key (an int id for most
// views) finds them without building a string of every row's values, and each row's key is computed
// once per step and read again by the pairing.
import {
  ChangeList,
  changeCodes,
  KIND_DELETE,
  KIND_INSERT,
  KIND_UPDATE_AFTER,
  KIND_UPDATE_BEFORE,
} from '../../common/raw-changes.ts';
import type { Value } from '../../common/types.ts';
import { encodeExactOne } from '../../common/values.ts';
import type { ZBatch } from '../zset.ts';

/**
 * Whether two values print alike, i.e. `encodeExactOne(a) === encodeExactOne(b)` (the identity
 * `consolidate` uses), without building the texts for primitives of one type: a number's text is
 * the same exactly when Object.is is (-0 is 'n-0;'), a string's, bigint's or boolean's when ===.
 */
function sameExactValue(a: Value, b: Value): boolean {
  const t = typeof a;
  if (t === typeof b && t !== 'object') return t === 'number' ? Object.is(a, b) : a === b;
  // Objects, null and mixed kinds (a number and a bigint of one value print alike): by their texts.
  return encodeExactOne(a) === encodeExactOne(b);
}

/**
 * Whether two rows print alike (every encoding is self-delimiting, so column by column is the same
 * as comparing `encodeExactValues` of the rows).
 */
export function sameExactRow(a: readonly Value[], b: readonly Value[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameExactValue(a[i] as Value, b[i] as Value)) return false;
  return true;
}

/** Work a keyed Output did, counted for tests (they count work, never time it). */
export interface KeyedOutputWork {
  /** Row keys computed (once per row a step, however it is consolidated and paired). */
  keysComputed: number;
  /** Insertions whose retraction was looked up in a Map (not found next to them). */
  pairedByLookup: number;
}

/** Map keys compare by SameValueZero: NaN is NaN. */
function sameKey(a: Value, b: Value): boolean {
  return a === b || (a !== a && b !== b);
}

/**
 * `consolidate(batch)` for a view whose rows are keyed by `keyOf`: the same rows and weights in the
 * same order (each distinct row where it first appeared, weights summed, zeros dropped), and each
 * kept row's key in `keys` (cleared and filled). Only rows of one key are compared.
 */
export function consolidateByKey(
  batch: ZBatch,
  keyOf: (row: readonly Value[]) => Value,
  keys: Value[],
): ZBatch {
  const n = batch.rows.length;
  keys.length = 0;
  if (n === 1 && batch.weights[0] !== 0) {
    // One row (a batch of one event): nothing to compare, no Map.
    keys.push(keyOf(batch.rows[0] as readonly Value[]));
    return { rows: batch.rows, weights: batch.weights, consolidated: true };
  }
  const rows: (readonly Value[])[] = [];
  const weights: number[] = [];
  /** Index (in rows) of each key's first distinct row; its later ones are chained through `next`. */
  const first = new Map<Value, number>();
  const next: number[] = [];
  let zeros = 0;
  for (let i = 0; i < n; i++) {
    const row = batch.rows[i] as readonly Value[];
    const w = batch.weights[i] as number;
    const k = keyOf(row);
    let at = first.get(k);
    if (at === undefined) {
      first.set(k, rows.length);
    } else {
      let last = at;
      while (at !== -1 && !sameExactRow(rows[at] as readonly Value[], row)) {
        last = at;
        at = next[at] as number;
      }
      if (at !== -1) {
        const sum = (weights[at] as number) + w;
        if (sum === 0) zeros++;
        else if (weights[at] === 0) zeros--;
        weights[at] = sum;
        continue;
      }
      next[last] = rows.length;
    }
    rows.push(row);
    weights.push(w);
    keys.push(k);
    next.push(-1);
    if (w === 0) zeros++;
  }
  if (zeros === 0) return { rows, weights, consolidated: true };
  // Drop the rows that cancelled out, in place.
  let kept = 0;
  for (let i = 0; i < rows.length; i++) {
    if (weights[i] === 0) continue;
    rows[kept] = rows[i] as readonly Value[];
    weights[kept] = weights[i] as number;
    keys[kept] = keys[i] as Value;
    kept++;
  }
  rows.length = kept;
  weights.length = kept;
  keys.length = kept;
  return { rows, weights, consolidated: true };
}

/** Which retractions a pairing matched (reused by every call: nothing holds it past one). */
let pairedScratch = new Uint8Array(1024);

/**
 * The changelog entries of a keyed view's consolidated delta (`keys[i]` the key of `rows[i]`, at
 * most one retraction and one insertion per key): in the order of the insertions, `+I` for a new key
 * and `-U` old, `+U` new for a key also retracted; then `-D` for each retraction left, in order. A
 * retraction next to its key's insertion (how a Reduce emits a changed group) pairs without a lookup;
 * the others are found through a Map of the retractions, built only if one is needed. Each row is one
 * change, so the list codes the delta's rows in place (no object per change).
 */
export function pairKeyedChanges(
  delta: ZBatch,
  keys: readonly Value[],
  retractions: number,
  work: KeyedOutputWork,
): ChangeList {
  const rows = delta.rows;
  const weights = delta.weights;
  const n = rows.length;
  if (retractions === 0) return new ChangeList(rows, null, null);
  const codes = changeCodes(n);
  if (pairedScratch.length < n) pairedScratch = new Uint8Array(Math.max(n, pairedScratch.length * 2));
  const paired = pairedScratch;
  paired.fill(0, 0, n);
  let at = 0;
  let byKey: Map<Value, number> | null = null;
  for (let i = 0; i < n; i++) {
    if ((weights[i] as number) < 0) continue;
    const k = keys[i] as Value;
    let old = -1;
    if (i > 0 && (weights[i - 1] as number) < 0 && sameKey(keys[i - 1] as Value, k)) old = i - 1;
    else if (i + 1 < n && (weights[i + 1] as number) < 0 && sameKey(keys[i + 1] as Value, k)) old = i + 1;
    else {
      work.pairedByLookup++;
      if (byKey === null) {
        byKey = new Map();
        for (let j = 0; j < n; j++) if ((weights[j] as number) < 0) byKey.set(keys[j] as Value, j);
      }
      old = byKey.get(k) ?? -1;
    }
    if (old < 0) codes[at++] = (i << 2) | KIND_INSERT;
    else {
      paired[old] = 1;
      codes[at++] = (old << 2) | KIND_UPDATE_BEFORE;
      codes[at++] = (i << 2) | KIND_UPDATE_AFTER;
    }
  }
  if (at < n)
    for (let j = 0; j < n; j++)
      if ((weights[j] as number) < 0 && paired[j] === 0) codes[at++] = (j << 2) | KIND_DELETE;
  return new ChangeList(rows, codes, null);
}
