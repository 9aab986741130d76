// Binds `(VALUES (…), …)` in FROM: each row's expressions bound with no relation in scope (a column
// reference is an unknown column, an aggregate is refused), every row as wide as the first, each
// column's type unified across the rows as PostgreSQL's VALUES does (as for UNION: NULL and string
// literals adapt, numbers widen), and the relation planned as the one empty row of a FROM-less
// SELECT expanded into these rows.
import { SluiceError } from '../common/errors.ts';
import type { RowsGenerator } from '../common/expand.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T } from '../common/types.ts';
import type { ValuesRef } from '../parser/ast.ts';
import { coerce, isConst, unifiedType } from './bind-coerce.ts';
import { bindExpr } from './bind-expr.ts';
import { columnRefs } from './bind-subquery.ts';
import type { BoundRelation } from './bind-from.ts';
import type { ColumnMeta } from './catalog.ts';

export function bindValues(ref: ValuesRef): BoundRelation {
  const width = ref.rows[0]?.length ?? 0;
  const bound: ScalarExpr[][] = ref.rows.map((row) => {
    if (row.length !== width) {
      throw new SluiceError('INVALID_DEFINITION', 'VALUES lists must all be the same length', {
        position: row[Math.min(row.length, width)]?.pos ?? row[0]?.pos ?? ref.pos,
      });
    }
    return row.map((e) => {
      const column = columnRefs(e)[0];
      if (column !== undefined) {
        const name = column.table !== undefined ? `${column.table}.${column.name}` : column.name;
        throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" does not exist`, {
          position: column.pos,
          hint: "VALUES in FROM holds constants: it cannot read another relation's columns (LATERAL is not supported)",
        });
      }
      return bindExpr(e, { scope: null, aggregateContext: 'VALUES' });
    });
  });
  if (ref.columns !== undefined && ref.columns.length > width) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `table "${ref.alias ?? '*VALUES*'}" has ${width} columns available but ${ref.columns.length} columns specified`,
      { position: ref.columns[width]!.pos },
    );
  }
  const rows: ScalarExpr[][] = bound.map(() => new Array<ScalarExpr>(width));
  const columns: ColumnMeta[] = [];
  for (let c = 0; c < width; c++) {
    const column = bound.map((row) => row[c]!);
    const unified = unifiedType(column, ref.rows[0]![c]!.pos, 'VALUES');
    // A column of NULLs (or of untyped literals only) is text, as PostgreSQL resolves it.
    const type = unified.kind === 'unknown' ? T.text : unified;
    for (let r = 0; r < rows.length; r++) rows[r]![c] = coerce(column[r]!, type, ref.rows[r]![c]!.pos);
    const nullable = rows.some((row) => {
      const e = row[c]!;
      return !isConst(e) || e.value === null;
    });
    columns.push({ name: ref.columns?.[c]?.name ?? `column${c + 1}`, type, nullable });
  }
  const generator: RowsGenerator = { kind: 'rows', rows, types: columns.map((c) => c.type) };
  return {
    plan: { kind: 'expand', input: { kind: 'values', columns: [] }, generator, columns },
    columns,
    dependsOn: [],
  };
}
