// The image of a Top-N's first ORDER BY key: a double per row, monotone in the sort order, that a
// partition compares in one array of doubles before it reads any row (topn-partition.ts).
import { Decimal } from '../../common/decimal.ts';
import type { SortKey } from '../../common/top-n.ts';
import type { Value } from '../../common/types.ts';
import { codePointUnit } from '../../common/text-order.ts';

/** A row's image: a double, or NaN when its first sort key has none. */
export type KeyImage = (row: readonly Value[]) => number;

/**
 * 2^16 and 2^32: a text's first three UTF-16 units, as digits of one double (exact below 2^53), each
 * unit ≥ 0xD800 moved into code point order (codePointUnit: a surrogate above U+E000–U+FFFF).
 */
const U16 = 65536;
const U32 = U16 * U16;

/**
 * A monotone image of the first ORDER BY key (a row sorted before another never has a larger image),
 * with DESC and NULLS FIRST/LAST applied: rows of different images are in image order, rows of one
 * image are told apart by the full compare. Numbers (NaN after every number, as PostgreSQL), bigints
 * and numerics by their nearest double (rounding keeps order, not distinctness), text by its first
 * three UTF-16 units in code point order (as compareValues), booleans as 0 and 1; intervals, jsonb and
 * arrays have none (NaN: the partition is searched by the full compare). No ORDER BY: no image.
 */
export function keyImage(orderBy: readonly SortKey[]): KeyImage {
  const first = orderBy[0];
  if (first === undefined) return () => NaN;
  const { index, desc } = first;
  const nullImage = first.nullsFirst ? -Infinity : Infinity;
  return (row) => {
    const v = row[index] as Value;
    let x: number;
    switch (typeof v) {
      case 'number':
        x = v === v ? v : Infinity;
        break;
      case 'string':
        x = v.length === 0 ? 0 : textImage(v);
        break;
      case 'bigint':
        x = Number(v);
        break;
      case 'boolean':
        x = v ? 1 : 0;
        break;
      default:
        if (v === null) return nullImage;
        if (v instanceof Decimal) x = v.toNumber();
        else return NaN;
    }
    return desc ? -x : x;
  };
}

/** The first three units of a non-empty text as one double; a missing unit is 0 (text holds no NUL). */
function textImage(v: string): number {
  const a = v.charCodeAt(0);
  const b = v.length > 1 ? v.charCodeAt(1) : 0;
  const c = v.length > 2 ? v.charCodeAt(2) : 0;
  // ASCII and most BMP text: no unit to move
  if (a < 0xd800 && b < 0xd800 && c < 0xd800) return a * U32 + b * U16 + c;
  return codePointUnit(a) * U32 + codePointUnit(b) * U16 + codePointUnit(c);
}
