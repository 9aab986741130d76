// The layout of a join arrangement's per-key records (join-arrangement.ts): four int32 cells a slot in
// one Int32Array — its first row, its last row, its number of distinct rows and the sum of their
// multiplicities — 16 B, four records to a cache line, so a probe reads a key's record in one miss.
import type { JoinKey } from './join-key.ts';

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

/**
 * The records renumbered so that each key is its own slot (every key in `slotKeys` a non-negative
 * int, the greatest at most `ceiling`): each held slot's record moved to its key's place, its rows'
 * `rowSlots` rewritten along the chain, and its wide total (if any) moved in `wide`. Returns the new
 * records and keys by slot (filled up to the last key, with no gap).
 */
export function slotsByKey(
  slots: Int32Array,
  slotKeys: readonly (JoinKey | undefined)[],
  ceiling: number,
  nexts: Int32Array,
  rowSlots: Int32Array,
  wide: Map<number, number>,
): { slots: Int32Array<ArrayBuffer>; slotKeys: (JoinKey | undefined)[] } {
  const out = newSlots(Math.max(16, ceiling + 1));
  const keys: (JoinKey | undefined)[] = [];
  for (let k = 0; k <= ceiling; k++) keys.push(undefined);
  const moved = new Map<number, number>();
  for (let slot = 0; slot < slotKeys.length; slot++) {
    const key = slotKeys[slot];
    if (key === undefined) continue;
    const to = (key as number) | 0;
    keys[to] = key; // -0 stays -0, as the key was given
    const from = slot * SLOT_STRIDE;
    const at = to * SLOT_STRIDE;
    for (let c = 0; c < SLOT_STRIDE; c++) out[at + c] = slots[from + c] as number;
    for (let id = slots[from + HEAD] as number; id >= 0; id = nexts[id] as number) rowSlots[id] = to;
    if (slots[from + TOTAL] === WIDE_TOTAL) moved.set(to, wide.get(slot) as number);
  }
  wide.clear();
  for (const [slot, total] of moved) wide.set(slot, total);
  keys.length = Math.min(keys.length, lastHeld(keys) + 1);
  return { slots: out, slotKeys: keys };
}

function lastHeld(keys: readonly (JoinKey | undefined)[]): number {
  let i = keys.length - 1;
  while (i >= 0 && keys[i] === undefined) i--;
  return i;
}
