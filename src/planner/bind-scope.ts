// What names a bound expression can reach: a FROM's scope (one relation, or a join's relations and
// PostgreSQL's join column list) and the resolution of a column reference in it.
import { SluiceError } from '../common/errors.ts';
import type { Pos } from '../parser/ast.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { ColumnMeta } from './catalog.ts';

/** One relation of a FROM with several: its columns sit at `offset` in the joined row. */
export interface ScopeRelation {
  /** What qualifies its columns: the alias, else the relation's name. */
  readonly name: string;
  readonly offset: number;
  readonly columns: readonly ColumnMeta[];
  /**
   * A function in FROM: what its alias alone stands for where no column has that name, as
   * PostgreSQL's whole-row reference reads it. A function of one column (no WITH ORDINALITY) gives
   * that value (`FROM t, jsonb_array_elements(t.j) AS e` lets `e` name the element); one of several
   * gives a record, which Sluice does not have.
   */
  readonly wholeRow?: 'value' | 'record';
}

/** A column as an unqualified name or `*` sees it: a USING column merged from both sides is one. */
export interface VisibleColumn {
  readonly name: string;
  readonly expr: ScalarExpr;
}

export interface Scope {
  /** The relation's name and alias as a query may qualify columns with. */
  readonly relationNames: readonly string[];
  readonly relationLabel: string;
  /** The columns of the row expressions are bound over. */
  readonly columns: readonly ColumnMeta[];
  /**
   * A FROM with joins: qualified names resolve in `relations`, unqualified names and `*` in
   * `visible` (PostgreSQL's join column list: USING columns once, then each side's other columns).
   */
  readonly relations?: readonly ScopeRelation[];
  readonly visible?: readonly VisibleColumn[];
  /** A single function in FROM (no `relations`): its alias as a whole-row reference. */
  readonly functionRelation?: ScopeRelation;
}

/** The columns `*` stands for (and unqualified names can reach). */
export function starColumns(scope: Scope): readonly { readonly name: string }[] {
  return scope.visible ?? scope.columns;
}

export function resolveColumn(
  name: string,
  table: string | undefined,
  scope: Scope | null,
  pos: Pos,
): ScalarExpr {
  if (scope === null) {
    throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" does not exist`, {
      position: pos,
      hint: 'the query has no FROM clause',
    });
  }
  if (scope.relations !== undefined && scope.visible !== undefined) {
    return (
      (table === undefined ? wholeRowOf(name, scope.relations, scope.visible, pos) : undefined) ??
      resolveJoinColumn(name, table, scope.relations, scope.visible, pos)
    );
  }
  const single = scope.functionRelation;
  if (single !== undefined && table === undefined) {
    const value = wholeRowOf(name, [single], single.columns, pos);
    if (value !== undefined) return value;
  }
  if (table !== undefined && !scope.relationNames.includes(table)) {
    throw new SluiceError('UNKNOWN_TABLE', `missing FROM-clause entry for table "${table}"`, {
      position: pos,
    });
  }
  const matches: number[] = [];
  scope.columns.forEach((c, i) => {
    if (c.name === name) matches.push(i);
  });
  if (matches.length > 1) {
    throw new SluiceError('AMBIGUOUS_COLUMN', `column reference "${name}" is ambiguous`, { position: pos });
  }
  const index = matches[0];
  if (index === undefined) {
    throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" does not exist in ${scope.relationLabel}`, {
      position: pos,
    });
  }
  const c = scope.columns[index] as ColumnMeta;
  return { kind: 'col', index, name: c.name, type: c.type };
}

/**
 * An unqualified name that no column has but a function in FROM is called: PostgreSQL reads it as
 * that relation's whole row, which for a function of one column is the column's value. A column of
 * that name wins, as in PostgreSQL (its columns are looked up before its relations).
 */
function wholeRowOf(
  name: string,
  relations: readonly ScopeRelation[],
  columns: readonly { readonly name: string }[],
  pos: Pos,
): ScalarExpr | undefined {
  if (columns.some((c) => c.name === name)) return undefined;
  const relation = relations.find((r) => r.name === name && r.wholeRow !== undefined);
  if (relation === undefined) return undefined;
  if (relation.wholeRow === 'record') {
    throw new SluiceError('NOT_SUPPORTED', `a whole-row reference to "${name}" is not supported`, {
      position: pos,
      hint: `"${name}" has ${relation.columns.length} columns: name one, ${name}.${relation.columns[0]?.name ?? 'value'}`,
    });
  }
  const c = relation.columns[0] as ColumnMeta;
  return { kind: 'col', index: relation.offset, name: c.name, type: c.type };
}

function resolveJoinColumn(
  name: string,
  table: string | undefined,
  relations: readonly ScopeRelation[],
  visible: readonly VisibleColumn[],
  pos: Pos,
): ScalarExpr {
  if (table !== undefined) {
    const relation = relations.find((r) => r.name === table);
    if (relation === undefined) {
      throw new SluiceError('UNKNOWN_TABLE', `missing FROM-clause entry for table "${table}"`, {
        position: pos,
      });
    }
    const i = relation.columns.findIndex((c) => c.name === name);
    if (i < 0) {
      throw new SluiceError('UNKNOWN_COLUMN', `column ${table}.${name} does not exist`, { position: pos });
    }
    const c = relation.columns[i] as ColumnMeta;
    return { kind: 'col', index: relation.offset + i, name: c.name, type: c.type };
  }
  let found: ScalarExpr | undefined;
  for (const v of visible) {
    if (v.name !== name) continue;
    if (found !== undefined) {
      throw new SluiceError('AMBIGUOUS_COLUMN', `column reference "${name}" is ambiguous`, { position: pos });
    }
    found = v.expr;
  }
  if (found === undefined) {
    throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" does not exist`, { position: pos });
  }
  return found;
}
