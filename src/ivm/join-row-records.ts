// The layout of a join arrangement's per-row records (join-arrangement-rows.ts): a row id's numbers
// side by side in one 32-byte record — its multiplicity and arrival order as doubles, then its
// previous row in its slot's chain, its slot and its lookup-table hash as int32 — read through a
// Float64Array and an Int32Array over the same buffer. A write that updates or deletes an arranged
// row reaches a random id: with a typed array per number it touched a page and a line per array
// (slot, count, prev); a record is half a line. Its next row stays in an array of its own (see
// `nexts` in join-arrangement-rows.ts).

/** Float64 cells per row record (32 B): COUNT and SEQ are read through the Float64Array view. */
export const ROW_STRIDE = 4;
export const COUNT = 0;
export const SEQ = 1;
/** Int32 cells per row record, and the int32 numbers' places (through the Int32Array view). */
export const ROW_STRIDE_I32 = 2 * ROW_STRIDE;
export const PREV = 5;
export const SLOT = 6;
/** The row's hash mixed with its slot's (join-row-table.ts `mix`); read only while rows are found by the lookup table. */
export const MIXED = 7;

/** Row records: the two views of one buffer. */
export interface RowRecords {
  readonly f64: Float64Array<ArrayBuffer>;
  readonly i32: Int32Array<ArrayBuffer>;
}

/** Zeroed records for `n` row ids. */
export function newRowRecords(n: number): RowRecords {
  const f64 = new Float64Array(n * ROW_STRIDE);
  return { f64, i32: new Int32Array(f64.buffer) };
}

/** Row ids `records` has room for. */
export function rowCapacity(records: RowRecords): number {
  return records.f64.length / ROW_STRIDE;
}

/** `records` copied into records for at least `min` row ids and twice as many as before. */
export function grownRowRecords(records: RowRecords, min: number): RowRecords {
  const out = newRowRecords(Math.max(min, 2 * rowCapacity(records)));
  out.f64.set(records.f64);
  return out;
}
