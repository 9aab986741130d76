// compareRows (top-n.ts) with text by UTF-16 code unit, JavaScript's `<`: the same order as long as
// no compared string holds a surrogate (text-order.ts holdsSurrogate), and cheaper, as `<` is one
// native comparison where code point order tests the strings first. For a caller that checks every
// row it will compare and moves to compareRows at the first holding a surrogate (select-job.ts).
// A copy rather than compareRows with a parameter: both run in one process (a view's Top-N and an
// ad-hoc ORDER BY), and one function shared by two text orders was 1.3× slower on ad-hoc sorts
// (bench/text-order.ts --engine).
import type { Value } from './types.ts';
import { compareExact, compareValues } from './values.ts';
import type { SortKey } from './top-n.ts';

/** compareValues for two values that differ and are not NULL; text by `<`, objects by compareValues. */
function compareUnequalUnits(x: Value, y: Value): number {
  if (typeof x === 'object' || x !== x || y !== y) return compareValues(x, y);
  return (x as number | string | bigint) < (y as number | string | bigint) ? -1 : 1;
}

/** compareRows' order, text by code unit: exact for rows whose text holds no surrogate. */
export function compareRowsByUnits(
  keys: readonly SortKey[],
): (a: readonly Value[], b: readonly Value[]) => number {
  const n = keys.length;
  const indexes = keys.map((k) => k.index);
  const signs = keys.map((k) => (k.desc ? -1 : 1));
  const nullFirst = keys.map((k) => (k.nullsFirst ? -1 : 1));
  return (a, b) => {
    for (let k = 0; k < n; k++) {
      const i = indexes[k] as number;
      const x = a[i] as Value;
      const y = b[i] as Value;
      if (x === y) continue;
      if (x === null) return nullFirst[k] as number;
      if (y === null) return -(nullFirst[k] as number);
      const c = compareUnequalUnits(x, y);
      if (c !== 0) return c * (signs[k] as number);
    }
    for (let i = 0; i < a.length; i++) {
      const x = a[i] as Value;
      const y = b[i] as Value;
      if (x === null || y === null) {
        if (x === y) continue;
        return x === null ? 1 : -1;
      }
      if (typeof x !== 'object' && x !== y && x === x && y === y)
        return (x as number | string | bigint) < (y as number | string | bigint) ? -1 : 1;
      const d = compareExact(x, y);
      if (d !== 0) return d;
    }
    return 0;
  };
}
