// Binds UNION [ALL], INTERSECT [ALL] and EXCEPT [ALL] trees: every branch must have as many columns
// as the first; each column's type is unified across the branches as PostgreSQL does (NULL and
// string literals adapt, numbers widen, other categories do not mix) and every branch is cast to
// it; the first branch names the columns. A chain of UNION ALL becomes one Union with many inputs.
import { SluiceError } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T, typeName, type SqlType } from '../common/types.ts';
import type { Pos, SelectStmt, SetOperation } from '../parser/ast.ts';
import { coerce } from './bind-coerce.ts';
import type { BoundRelation } from './bind-from.ts';
import type { ColumnMeta } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';
import { commonType } from './types-resolve.ts';
import { charKeyed } from './bind-char-key.ts';

/** Binds `stmt.setOp` (present); `bindBranch` binds a plain branch (a nested query). */
export function bindSetOperation(
  stmt: SelectStmt,
  bindBranch: (query: SelectStmt) => BoundRelation,
): BoundRelation {
  const set = stmt.setOp as SetOperation;
  const bind = (q: SelectStmt): BoundRelation =>
    q.setOp !== undefined && q.orderBy.length === 0 && q.limit === undefined && q.offset === undefined
      ? q.with === undefined
        ? bindSetOperation(q, bindBranch)
        : bindBranch(q)
      : bindBranch(q);
  const left = bind(set.left);
  const right = bind(set.right);
  const what = set.op.toUpperCase();
  if (left.columns.length !== right.columns.length) {
    throw new SluiceError('INVALID_DEFINITION', `each ${what} query must have the same number of columns`, {
      position: itemPos(set.right, 0),
      detail: `the left side has ${left.columns.length}, the right side ${right.columns.length}`,
    });
  }
  const types: SqlType[] = left.columns.map((_, i) => {
    const l = branchType(left, i);
    const r = branchType(right, i);
    const adapted = [
      literalAdapts(left, set.left, i) ? T.unknown : l,
      literalAdapts(right, set.right, i) ? T.unknown : r,
    ];
    // Otherwise only where the types do not meet as they are (text and a string literal already do):
    // a plan accepted before keeps its column types.
    const t = charFirstType(adapted) ?? commonType([l, r]) ?? commonType(adapted);
    if (t === null) {
      throw new SluiceError(
        'TYPE_MISMATCH',
        `${what} types ${typeName(l)} and ${typeName(r)} cannot be matched`,
        { position: itemPos(set.right, i) },
      );
    }
    return t.kind === 'unknown' ? T.text : t;
  });
  const columns: ColumnMeta[] = left.columns.map((c, i) => ({
    name: c.name,
    type: types[i]!,
    nullable: c.nullable || right.columns[i]!.nullable,
  }));
  // Rows matched as equal (all but UNION ALL's) hold each char value in one spelling (bind-char-key.ts).
  const keyed = set.op === 'union' && set.all ? (p: LogicalPlan): LogicalPlan => p : charKeyed;
  const l = keyed(conform(left, columns, set.left));
  const r = keyed(conform(right, columns, set.right));
  const dependsOn = [...left.dependsOn];
  for (const d of right.dependsOn) if (!dependsOn.includes(d)) dependsOn.push(d);
  let plan: LogicalPlan;
  if (set.op === 'union' && set.all) {
    // UNION ALL chains (left-nested) become one node with many inputs.
    const inputs = l.kind === 'union' && left.plan.kind === 'union' ? [...l.inputs, r] : [l, r];
    plan = { kind: 'union', inputs, columns };
  } else plan = { kind: 'setOp', op: set.op, all: set.all, left: l, right: r, columns };
  return { plan, columns, dependsOn };
}

/**
 * PostgreSQL's select_common_type over string types where the first typed branch is char: each string
 * type casts implicitly to each other, so the first typed one wins; and its select_common_typmod keeps
 * the length only where both branches are that char(n) — a NULL or a string literal (unknown there)
 * or another string type makes it char without a length (bpchar: a char(n) value keeps its padding, a
 * text or literal value its trailing spaces, both insignificant). `c UNION s` of a char(5) c and a
 * text s is bpchar, `s UNION c` text (c's padding dropped), `c UNION 'x'` and `c UNION NULL` bpchar,
 * `c UNION c` char(5). Null where the general rules apply.
 */
function charFirstType(types: readonly SqlType[]): SqlType | null {
  const typed = types.filter((t) => t.kind !== 'unknown');
  const first = typed[0];
  if (first === undefined || first.kind !== 'text' || first.fixed !== true) return null;
  if (!typed.every((t) => t.kind === 'text')) return null;
  return types.every((t) => typeName(t) === typeName(first)) ? first : T.bpchar;
}

/** A branch column's type, `unknown` where it is a NULL or string literal (which adapt). */
function branchType(branch: BoundRelation, i: number): SqlType {
  const plan = branch.plan;
  if (plan.kind === 'project') {
    const e = plan.exprs[i];
    if (e?.kind === 'const' && e.type.kind === 'unknown') return T.unknown;
  }
  return branch.columns[i]!.type;
}

/**
 * Whether the branch's i-th column is a quoted string literal written in its own select list, which
 * PostgreSQL types by the other branches (`SELECT n FROM t UNION SELECT '0'` is an integer column).
 * A cast literal, or one under a nested set operation or DISTINCT, is text there, as in PostgreSQL.
 */
function literalAdapts(branch: BoundRelation, query: SelectStmt, i: number): boolean {
  const plan = branch.plan;
  if (plan.kind !== 'project' || plan.exprs[i]?.kind !== 'const') return false;
  if (query.setOp !== undefined || query.items.some((it) => it.kind === 'star')) return false;
  const item = query.items[i];
  return item?.kind === 'expr' && item.expr.kind === 'literal' && item.expr.literalType === 'string';
}

/** The branch's plan with its columns cast to the unified types (literals converted in place). */
function conform(branch: BoundRelation, columns: readonly ColumnMeta[], query: SelectStmt): LogicalPlan {
  const plan = branch.plan;
  const same = branch.columns.every((c, i) => typeName(c.type) === typeName(columns[i]!.type));
  const renamed = (cs: readonly ColumnMeta[]): ColumnMeta[] =>
    cs.map((c, i) => ({ ...c, name: columns[i]?.name ?? c.name, type: columns[i]?.type ?? c.type }));
  if (same) return plan;
  if (plan.kind === 'project') {
    const exprs = plan.exprs.map((e, i) => {
      const to = columns[i];
      return to === undefined ? e : coerce(e, to.type, itemPos(query, i));
    });
    return { ...plan, exprs, columns: renamed(plan.columns) };
  }
  const exprs: ScalarExpr[] = branch.columns.map((c, i) =>
    coerce({ kind: 'col', index: i, name: c.name, type: c.type }, columns[i]!.type, itemPos(query, i)),
  );
  return { kind: 'project', input: plan, exprs, columns: renamed(branch.columns) };
}

/** Where the i-th output column of a branch is written (its leftmost SELECT's item). */
function itemPos(query: SelectStmt, i: number): Pos {
  let q = query;
  while (q.setOp !== undefined) q = q.setOp.left;
  const items = q.items;
  if (items.some((it) => it.kind === 'star')) return items[0]?.pos ?? q.pos;
  return items[i]?.pos ?? items[0]?.pos ?? q.pos;
}
