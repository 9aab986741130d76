// Primary-key lookups for UPDATE and DELETE. A WHERE that pins every primary-key column to constants
// (`id = 5`, `a = 1 AND b = 'x' AND …`, `id IN (1, 2, 3)`) names the only rows it can match, so the
// statement reads those rows by key instead of scanning the table. Any other WHERE scans. The whole
// predicate is still evaluated on each row found, so a lookup only narrows what is read.
import type { SqlType, Value } from '../common/types.ts';
import { columnsOf, compileScalar, type ScalarExpr } from '../common/scalar-expr.ts';
import { normalizeBigInt } from '../common/values.ts';

/** More key combinations than this (a product of IN lists) scan instead. */
const MAX_PINNED_KEYS = 25_000;

/**
 * Types whose SQL equality is equality of the stored value, so a constant finds its row by key:
 * integers (any width; stored normalised), text without padding, uuid and bytea. Others (floats with -0 and
 * NaN, CHAR(n), numerics) scan.
 */
function keyable(column: SqlType, constant: SqlType): boolean {
  if (column.kind === 'int') return constant.kind === 'int';
  if (column.kind === 'text')
    return constant.kind === 'text' && column.fixed !== true && constant.fixed !== true;
  // uuid and bytea are their canonical text: equal values are equal strings
  if (column.kind === 'uuid' || column.kind === 'bytea') return constant.kind === column.kind;
  return false;
}

function conjuncts(predicate: ScalarExpr): ScalarExpr[] {
  const out: ScalarExpr[] = [];
  const stack: ScalarExpr[] = [predicate];
  for (let e = stack.pop(); e !== undefined; e = stack.pop()) {
    if (e.kind === 'and') stack.push(...e.args);
    else out.push(e);
  }
  return out;
}

/** The constants a conjunct pins the primary-key column at `column` to, or null. */
function pinned(conjunct: ScalarExpr, column: number, columnType: SqlType): readonly ScalarExpr[] | null {
  const isKeyColumn = (e: ScalarExpr): boolean => e.kind === 'col' && e.index === column;
  const usable = (e: ScalarExpr): boolean => columnsOf(e).size === 0 && keyable(columnType, e.type);
  if (conjunct.kind === 'call' && conjunct.fn === 'eq' && conjunct.args.length === 2) {
    const [a, b] = conjunct.args as [ScalarExpr, ScalarExpr];
    if (isKeyColumn(a) && usable(b)) return [b];
    if (isKeyColumn(b) && usable(a)) return [a];
  }
  if (conjunct.kind === 'in' && !conjunct.negated && isKeyColumn(conjunct.operand)) {
    if (conjunct.list.every(usable)) return conjunct.list;
  }
  return null;
}

/**
 * The primary-key values (one array per key, in primary-key column order) that are the only ones
 * `predicate` can be true for, or null when it does not pin every key column (the caller scans).
 * A constant that cannot be evaluated (it raises) also gives null: the scan then raises it, or not
 * at all on an empty table, as evaluating the WHERE row by row does.
 */
export function pinnedKeys(
  predicate: ScalarExpr,
  primaryKey: readonly number[],
  columns: readonly { readonly type: SqlType }[],
): (readonly Value[])[] | null {
  const parts = conjuncts(predicate);
  const choices: Value[][] = [];
  let combinations = 1;
  for (const column of primaryKey) {
    const type = (columns[column] as { type: SqlType }).type;
    let exprs: readonly ScalarExpr[] | null = null;
    for (const c of parts) {
      exprs = pinned(c, column, type);
      if (exprs !== null) break;
    }
    if (exprs === null) return null;
    const values: Value[] = [];
    const seen = new Set<Value>();
    for (const e of exprs) {
      let v: Value;
      try {
        v = compileScalar(e)([]);
      } catch {
        return null;
      }
      // NULL = anything is never true: that constant names no row.
      if (v === null) continue;
      if (typeof v === 'bigint') v = normalizeBigInt(v);
      const id = typeof v === 'bigint' ? `n${v}` : v;
      if (seen.has(id)) continue;
      seen.add(id);
      values.push(v);
    }
    combinations *= values.length;
    if (combinations > MAX_PINNED_KEYS) return null;
    choices.push(values);
  }
  let keys: Value[][] = [[]];
  for (const values of choices) {
    const next: Value[][] = [];
    for (const prefix of keys) for (const v of values) next.push([...prefix, v]);
    keys = next;
  }
  return keys;
}
