// Facts about a table's column values the store needs: which columns may hold equal values that
// print differently (1.5 and 1.50), and the upgrade of checkpoints written while NUMERIC was a double.
import { castValue } from '../common/cast.ts';
import { T } from '../common/types.ts';
import type { TableDef } from '../planner/catalog.ts';
import type { SqlType, Value } from '../common/types.ts';

/** Column types whose equal values always print alike (no SQL-equal rows of other texts). */
const ALWAYS_IDENTICAL: ReadonlySet<string> = new Set([
  'bool',
  'int',
  'text',
  'date',
  'timestamp',
  'timestamptz',
  'time',
  'uuid',
  'bytea',
  'unknown',
]);

/** Whether a column of the table may hold equal values that print differently (1.5 and 1.50). */
export function hasInexactColumns(def: TableDef): boolean {
  return def.columns.some((c) => !ALWAYS_IDENTICAL.has(c.type.kind));
}

/** Numeric columns of the table (a number there is from the double era: upgradeNumerics). */
export function numericColumns(columns: readonly { readonly type: SqlType }[]): number[] {
  return columns.flatMap((c, i) => (c.type.kind === 'numeric' ? [i] : []));
}

/**
 * Rows of a checkpoint written while NUMERIC was a double: each number in a numeric column becomes
 * the decimal of its shortest text (in place; entries are rows, or {r, c} for keyless tables).
 */
export function upgradeNumerics(list: unknown[], columns: readonly { readonly type: SqlType }[]): boolean {
  const numeric = numericColumns(columns);
  if (numeric.length === 0) return false;
  let upgraded = false;
  for (const entry of list) {
    const row = (Array.isArray(entry) ? entry : (entry as { r?: unknown }).r) as Value[] | undefined;
    if (!Array.isArray(row)) continue;
    for (const i of numeric) {
      const v = row[i];
      // a number is read as its shortest text, then takes the column's scale (0.1 → 0.10)
      if (typeof v === 'number' || typeof v === 'bigint') {
        row[i] = castValue(v, T.numeric, (columns[i] as { readonly type: SqlType }).type);
        upgraded = true;
      }
    }
  }
  return upgraded;
}
