// Row identity and order over exact values: two rows are one only when every value prints alike
// (1.5 and 1.50 are two rows; encodeExactValues), and rows of equal values are ordered by their
// texts (compareExact) — the order that picks which of a group's equal rows shows.
import type { Value } from '../common/types.ts';
import { compareExact, identicalValues } from '../common/values.ts';

/** compareExact column by column: one total order whatever order the rows arrived in. */
export function compareExactRows(a: readonly Value[], b: readonly Value[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareExact(a[i] as Value, b[i] as Value);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/** Whether two rows print alike (NaN is NaN; -0 is not 0; 1.5 is not 1.50). */
export function identicalRows(a: readonly Value[], b: readonly Value[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!identicalValues(a[i] as Value, b[i] as Value)) return false;
  }
  return true;
}
