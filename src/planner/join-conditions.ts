// Join conditions as a join's plan: ON conjuncts split into equi keys (what the join arranges its
// inputs by) and a residual, and conjuncts of ON and WHERE that read one side pushed into that side
// (and WHERE conjuncts that read only the relation before a jsonb function or series, below it).
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { columnsOf, remapColumns } from '../common/scalar-expr.ts';
import { castValue } from '../common/cast.ts';
import { T, type SqlType, type Value } from '../common/types.ts';
import type { ExpandGenerator } from '../common/expand.ts';
import type { ColumnMeta } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';

type JoinPlan = Extract<LogicalPlan, { kind: 'join' }>;

/** The operands of a top-level AND (a condition that is no AND is its own only conjunct). */
export function conjuncts(e: ScalarExpr): ScalarExpr[] {
  if (e.kind === 'and') return e.args.flatMap(conjuncts);
  return [e];
}

function andOf(parts: readonly ScalarExpr[]): ScalarExpr | null {
  if (parts.length === 0) return null;
  if (parts.length === 1) return parts[0] as ScalarExpr;
  return { kind: 'and', args: parts, type: T.bool };
}

function filterOver(plan: LogicalPlan, parts: readonly ScalarExpr[]): LogicalPlan {
  const predicate = andOf(parts);
  if (predicate === null) return plan;
  if (plan.kind === 'join') return pushIntoJoin(plan, parts);
  if (plan.kind === 'expand' && mayRaiseOnItsInput(plan.generator)) return pushThroughExpand(plan, parts);
  return { kind: 'filter', input: plan, predicate, columns: plan.columns };
}

/**
 * WHERE over a function in FROM after a relation (`FROM t, jsonb_array_elements(t.j) AS e`): the
 * conjuncts reading only the relation's columns filter its rows before the function reads them, as
 * PostgreSQL plans it, so `WHERE jsonb_typeof(t.j) = 'array'` keeps a scalar from reaching
 * jsonb_array_elements (which raises on one); the function's columns follow the relation's, so the
 * indices stay.
 */
function pushThroughExpand(
  plan: Extract<LogicalPlan, { kind: 'expand' }>,
  parts: readonly ScalarExpr[],
): LogicalPlan {
  const width = plan.input.columns.length;
  const below = parts.filter((c) => sideOf(c, width) === 'left');
  if (below.length === 0 || plan.input.kind === 'values') return filterAbove(plan, parts);
  const above = parts.filter((c) => !below.includes(c));
  return filterAbove({ ...plan, input: filterOver(plan.input, below) }, above);
}

/**
 * The generators that raise on a value of the wrong kind or size (a jsonb scalar, a zero step): only
 * their plans move a filter below them, so the plans of HOP windows and unnest (which raise on
 * nothing a filter would guard) print as before and their stored views load without a rebuild.
 */
function mayRaiseOnItsInput(generator: ExpandGenerator): boolean {
  return generator.kind === 'jsonb' || generator.kind === 'series';
}

function filterAbove(plan: LogicalPlan, parts: readonly ScalarExpr[]): LogicalPlan {
  const predicate = andOf(parts);
  return predicate === null ? plan : { kind: 'filter', input: plan, predicate, columns: plan.columns };
}

/** Which side(s) of a row of `width` left columns a condition reads. */
function sideOf(e: ScalarExpr, width: number): 'none' | 'left' | 'right' | 'both' {
  let left = false;
  let right = false;
  for (const i of columnsOf(e)) {
    if (i < width) left = true;
    else right = true;
  }
  return left ? (right ? 'both' : 'left') : right ? 'right' : 'none';
}

/**
 * Builds a join from its ON conjuncts (over the joined row): an equality of a left-only and a
 * right-only expression becomes an equi key; a conjunct reading one side is pushed into that side
 * where that keeps the result (either side of an inner join; the padded side of an outer join); the
 * rest is the residual. `ON true` is dropped.
 */
export function makeJoin(
  joinKind: JoinPlan['joinKind'],
  left: LogicalPlan,
  right: LogicalPlan,
  columns: readonly ColumnMeta[],
  parts: readonly ScalarExpr[],
): LogicalPlan {
  const width = left.columns.length;
  const toRight = (e: ScalarExpr): ScalarExpr => remapColumns(e, (i) => i - width);
  const leftKeys: ScalarExpr[] = [];
  const rightKeys: ScalarExpr[] = [];
  const residual: ScalarExpr[] = [];
  const leftOnly: ScalarExpr[] = [];
  const rightOnly: ScalarExpr[] = [];
  for (const c of parts) {
    if (c.kind === 'const' && c.value === true) continue;
    const nullSafe = c.kind === 'call' && c.fn === 'is_not_distinct_from' ? nullSafeKeys(c) : undefined;
    if (nullSafe !== undefined) {
      const [a, b] = nullSafe;
      const sa = sideOf(a[1], width);
      const sb = sideOf(b[1], width);
      if ((sa === 'left' && sb === 'right') || (sa === 'right' && sb === 'left')) {
        const [l, r] = sa === 'left' ? [a, b] : [b, a];
        leftKeys.push(...l);
        rightKeys.push(...r.map(toRight));
        continue;
      }
    }
    if (c.kind === 'call' && c.fn === 'eq') {
      const [a, b] = c.args as [ScalarExpr, ScalarExpr];
      const sa = sideOf(a, width);
      const sb = sideOf(b, width);
      if (sa === 'left' && sb === 'right') {
        leftKeys.push(a);
        rightKeys.push(toRight(b));
        continue;
      }
      if (sa === 'right' && sb === 'left') {
        leftKeys.push(b);
        rightKeys.push(toRight(a));
        continue;
      }
    }
    const side = sideOf(c, width);
    if (side === 'left' && (joinKind === 'inner' || joinKind === 'right')) leftOnly.push(c);
    else if (side === 'right' && (joinKind === 'inner' || joinKind === 'left')) rightOnly.push(toRight(c));
    else residual.push(c);
  }
  return {
    kind: 'join',
    joinKind,
    left: filterOver(left, leftOnly),
    right: filterOver(right, rightOnly),
    leftKeys,
    rightKeys,
    residual: andOf(residual),
    columns,
  };
}

/** Adds ON conjuncts to an inner join already built (WHERE pushed into it): rebuilds it with them. */
function pushIntoJoin(plan: JoinPlan, parts: readonly ScalarExpr[]): LogicalPlan {
  const width = plan.left.columns.length;
  if (plan.joinKind !== 'inner') {
    // WHERE conjuncts on the preserved side of an outer join filter the rows it contributes.
    const preserved: ScalarExpr[] = [];
    const above: ScalarExpr[] = [];
    for (const c of parts) {
      const side = sideOf(c, width);
      if (side === 'left' && plan.joinKind === 'left') preserved.push(c);
      else if (side === 'right' && plan.joinKind === 'right') preserved.push(c);
      else above.push(c);
    }
    let joined: LogicalPlan = plan;
    if (preserved.length > 0) {
      joined =
        plan.joinKind === 'left'
          ? { ...plan, left: filterOver(plan.left, preserved) }
          : {
              ...plan,
              right: filterOver(
                plan.right,
                preserved.map((c) => remapColumns(c, (i) => i - width)),
              ),
            };
    }
    const predicate = andOf(above);
    return predicate === null ? joined : { kind: 'filter', input: joined, predicate, columns: plan.columns };
  }
  const existing: ScalarExpr[] = plan.leftKeys.map((k, i) =>
    bindEqualityTyped(
      k,
      remapColumns(plan.rightKeys[i] as ScalarExpr, (x) => x + width),
    ),
  );
  if (plan.residual !== null) existing.push(...conjuncts(plan.residual));
  const rebuilt = makeJoin('inner', plan.left, plan.right, plan.columns, [...existing, ...parts]);
  // A WHERE conjunct over a temporal join's output is one over the rows each left row met.
  return plan.temporal === true ? { ...(rebuilt as JoinPlan), temporal: true } : rebuilt;
}

/** An equi key pair back as its (already typed) equality condition. */
function bindEqualityTyped(left: ScalarExpr, right: ScalarExpr): ScalarExpr {
  return { kind: 'call', fn: 'eq', args: [left, right], type: T.bool };
}

/**
 * WHERE over a FROM: pushed into its joins where it can be (see `makeJoin`) and below a FROM function
 * that may raise (see `pushThroughExpand`), else a Filter above.
 */
export function whereOver(plan: LogicalPlan, predicate: ScalarExpr): LogicalPlan {
  const pushable = plan.kind === 'join' || (plan.kind === 'expand' && mayRaiseOnItsInput(plan.generator));
  if (!pushable) return { kind: 'filter', input: plan, predicate, columns: plan.columns };
  return filterOver(plan, conjuncts(predicate));
}

/**
 * A stand-in value of each type, for the null-safe join keys below: any value does, the key beside
 * it says whether the operand was NULL.
 */
const STAND_IN_TEXT: Partial<Record<SqlType['kind'], string>> = {
  bool: 'false',
  int: '0',
  float: '0',
  numeric: '0',
  text: '',
  date: '2000-01-01',
  timestamp: '2000-01-01 00:00:00',
  timestamptz: '2000-01-01 00:00:00+00',
  time: '00:00:00',
  interval: '0 seconds',
  jsonb: 'null',
  uuid: '00000000-0000-0000-0000-000000000000',
  bytea: '',
  array: '{}',
};

function standIn(type: SqlType): Value | undefined {
  const text = STAND_IN_TEXT[type.kind];
  if (text === undefined) return undefined;
  try {
    return castValue(text, T.text, type);
  } catch {
    return undefined;
  }
}

/**
 * `a IS NOT DISTINCT FROM b` as equi keys that are never NULL (a join's NULL key matches nothing):
 * (a IS NULL, coalesce(a, v)) against (b IS NULL, coalesce(b, v)) for one value v of the operands'
 * type. The pairs are equal exactly when a and b are both NULL or equal: a NULL operand and one
 * equal to v differ in the first key. Undefined for a type with no stand-in (the condition stays a
 * residual).
 */
type KeyPair = readonly [ScalarExpr, ScalarExpr];

function nullSafeKeys(c: Extract<ScalarExpr, { kind: 'call' }>): [KeyPair, KeyPair] | undefined {
  const [a, b] = c.args as [ScalarExpr, ScalarExpr];
  const value = standIn(a.type);
  if (value === undefined || value === null) return undefined;
  const keys = (x: ScalarExpr): KeyPair => [
    { kind: 'call', fn: 'is_null', args: [x], type: T.bool },
    { kind: 'coalesce', args: [x, { kind: 'const', value, type: x.type }], type: x.type },
  ];
  return [keys(a), keys(b)];
}
