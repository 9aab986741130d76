// Growing the typed arrays that hold per-slot and per-row numbers: at least doubled, so n appends
// copy O(n) cells in all, and the old cells kept in place.
import type { Value } from '../common/types.ts';

/** `a` copied into a Float64Array of at least `min` cells and twice its length. */
export function grownF64(a: Float64Array, min: number): Float64Array<ArrayBuffer> {
  const out = new Float64Array(Math.max(min, a.length * 2));
  out.set(a);
  return out;
}

/** `a` copied into an Int32Array of at least `min` cells and twice its length. */
export function grownI32(a: Int32Array, min: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(Math.max(min, a.length * 2));
  out.set(a);
  return out;
}

/**
 * A kept column's cells for `n` row ids, sized and grown with a join arrangement's per-row typed arrays
 * so a new row writes its cell in place: pushed, a million-row column's regrowth cost the fold more.
 */
export function cells(n: number): Value[] {
  return new Array<Value>(n).fill(null);
}

export function grownCells(a: readonly Value[], n: number): Value[] {
  const out = cells(n);
  for (let i = 0; i < a.length; i++) out[i] = a[i] as Value;
  return out;
}
