// Growing the typed arrays that hold per-slot and per-row numbers: at least doubled, so n appends
// copy O(n) cells in all, and the old cells kept in place.

/** `a` copied into a Float64Array of at least `min` cells and twice its length. */
export function grownF64(a: Float64Array<ArrayBuffer>, min: number): Float64Array<ArrayBuffer> {
  const out = new Float64Array(Math.max(min, a.length * 2));
  out.set(a);
  return out;
}

/** `a` copied into an Int32Array of at least `min` cells and twice its length. */
export function grownI32(a: Int32Array<ArrayBuffer>, min: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(Math.max(min, a.length * 2));
  out.set(a);
  return out;
}
