// Join keys: a row's key as a Map key with SQL's equality (one column: the value itself; several:
// their encoding), shared by joins, semi-joins, temporal joins and the shared arrangements.
import type { Value } from '../common/types.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { compileScalar } from '../common/scalar-expr.ts';
import { encodeOne } from '../common/values.ts';

/**
 * A join key as a Map key: a one-column key is the value itself (see `keyValue`), a longer one the
 * values' encoding, no key at all ''.
 */
export type JoinKey = boolean | number | bigint | string;

/** The key of a row as a Map key, or null when a key value is NULL (it can match nothing). */
export type KeyFn = (row: readonly Value[]) => JoinKey | null;

/**
 * A single key value as a Map key with SQL's equality: Map keys compare by SameValueZero, so a
 * number is its own key (0 and -0 meet, as `=` has them; so do NaN and NaN, as PostgreSQL orders
 * floats) and a string is its own key (never equal to a number: '1' is not 1). An integer held as
 * a bigint is keyed as the number it equals when a double holds it exactly (1n meets 1, 2n**60n
 * meets 2**60), else as the bigint (Map compares bigints by value).
 */
export function keyValue(v: Exclude<Value, null>): JoinKey {
  if (typeof v === 'object') return v.key(); // a decimal: one key for 1.5 and 1.50; an interval per total
  if (typeof v !== 'bigint') return v;
  const n = Number(v);
  return Number.isFinite(n) && BigInt(n) === v ? n : v;
}

/** The checkpoint form of a key (as the encoded keys of earlier versions were written). */
export function keyEntryId(key: JoinKey, width: number): string {
  return width === 1 ? encodeOne(key) : (key as string);
}

/** A join key's Map key for a row (also the shared arrangements' key, so both arrange alike). */
export function compileKey(exprs: readonly ScalarExpr[]): KeyFn {
  if (exprs.length === 0) return () => '';
  const first = exprs[0] as ScalarExpr;
  if (exprs.length === 1 && first.kind === 'col') {
    const i = first.index;
    return (row) => {
      const v = row[i] as Value;
      return v === null ? null : typeof v === 'bigint' || typeof v === 'object' ? keyValue(v) : v;
    };
  }
  if (exprs.length === 1) {
    const f = compileScalar(first);
    return (row) => {
      const v = f(row);
      return v === null ? null : keyValue(v);
    };
  }
  const fns = exprs.map(compileScalar);
  return (row) => {
    let key = '';
    for (const f of fns) {
      const v = f(row);
      if (v === null) return null;
      key += encodeOne(v);
    }
    return key;
  };
}

/**
 * Whether the key `compileKey` makes of `exprs` never throws: no key at all, or one plain column (its
 * value as it is). A caller that needs no key of a row may then skip computing it, there being no
 * error of it to report.
 */
export function keyCannotFail(exprs: readonly ScalarExpr[]): boolean {
  return exprs.length === 0 || (exprs.length === 1 && (exprs[0] as ScalarExpr).kind === 'col');
}
