// The layout of a join arrangement's per-key records (join-arrangement.ts): four int32 cells a slot in
// one Int32Array — its first row, its last row, its number of distinct rows and the sum of their
// multiplicities — 16 B, four records to a cache line, so a probe reads a key's record in one miss.

/** Int32 cells per slot, and each number's place. */
export const SLOT_STRIDE = 4;
export const HEAD = 0;
export const TAIL = 1;
export const SIZE = 2;
export const TOTAL = 3;

/**
 * A TOTAL cell holding this is a total outside the int32 range (or this very value): the slot's
 * total is then in the arrangement's map of wide totals. Real multiplicities stay far inside it, so
 * that map stays empty.
 */
export const WIDE_TOTAL = -0x80000000;

/** Records for `n` slots, zeroed (no rows). */
export function newSlots(n: number): Int32Array<ArrayBuffer> {
  return new Int32Array(n * SLOT_STRIDE);
}

/** The slot's total: its TOTAL cell, or from `wide` when it did not fit. */
export function readTotal(slots: Int32Array, wide: ReadonlyMap<number, number>, slot: number): number {
  const t = slots[slot * SLOT_STRIDE + TOTAL] as number;
  return t !== WIDE_TOTAL ? t : (wide.get(slot) as number);
}

/** Sets the slot's total where it may not fit a TOTAL cell. */
export function writeTotal(slots: Int32Array, wide: Map<number, number>, slot: number, total: number): void {
  const at = slot * SLOT_STRIDE + TOTAL;
  if ((total | 0) === total && total !== WIDE_TOTAL) {
    slots[at] = total;
    wide.delete(slot);
  } else {
    slots[at] = WIDE_TOTAL;
    wide.set(slot, total);
  }
}
