// Set-returning functions in FROM: `unnest(array)` and `generate_series(start, stop [, step])`
// `[WITH ORDINALITY]`, each an Expand (FlatMap) of the relation before it, its arguments bound over
// that relation's columns (PostgreSQL's implicit LATERAL), or of the one empty row of a FROM-less
// SELECT when it stands alone (`FROM generate_series(1, 10) AS s(n)`). Only a cross join reads
// one: an outer join or an ON condition on it is refused.
import { SluiceError } from '../common/errors.ts';
import type { ExpandGenerator } from '../common/expand.ts';
import { expandTypes } from '../common/expand.ts';
import { jsonbSetColumns, type JsonbSetFunction } from '../common/json/jsonb-sets.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T, typeName, type SqlType } from '../common/types.ts';
import type { Expr, JoinRef, UnnestRef } from '../parser/ast.ts';
import { coerce, unifiedType } from './bind-coerce.ts';
import { bindExpr, containsAggregate, findAggregate } from './bind-expr.ts';
import type { Scope, ScopeRelation, VisibleColumn } from './bind-scope.ts';
import type { ColumnMeta } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';

/** A FROM item as bound: its plan and the names it makes visible. */
export interface FromBound {
  readonly plan: LogicalPlan;
  readonly relations: readonly ScopeRelation[];
  readonly visible: readonly VisibleColumn[];
}

/** The one empty row a function alone in FROM expands. */
const NO_RELATION: FromBound = { plan: { kind: 'values', columns: [] }, relations: [], visible: [] };

/** `FROM f(…)` with no relation before it. */
export function functionAlone(ref: UnnestRef): FromBound {
  return expandFrom(ref, NO_RELATION);
}

/** `left, f(…)` / `left CROSS JOIN [LATERAL] f(…)` (or `JOIN … ON TRUE`). */
export function lateralFunction(
  join: JoinRef,
  right: UnnestRef,
  left: FromBound,
  inView: boolean,
): FromBound {
  if (inView && right.fn === 'generate_series') {
    throw new SluiceError(
      'NOT_SUPPORTED',
      'generate_series after a relation in a materialized view is not supported',
      {
        position: right.pos,
        hint: 'each row written would add up to 100,000 rows to the view: join a series of its own, FROM t JOIN (SELECT n FROM generate_series(1, 10) AS s(n)) AS s ON …',
      },
    );
  }
  const onTrue = join.on === undefined || (join.on.kind === 'literal' && join.on.value === true);
  if (
    (join.joinKind !== 'cross' && join.joinKind !== 'inner') ||
    !onTrue ||
    join.using !== undefined ||
    join.natural
  ) {
    throw new SluiceError('NOT_SUPPORTED', `${right.fn} in FROM other than a cross join is not supported`, {
      position: right.pos,
      hint: `write FROM t, ${right.fn}(…) AS u(x) and filter in WHERE`,
    });
  }
  return expandFrom(right, left);
}

function expandFrom(ref: UnnestRef, left: FromBound): FromBound {
  const scope: Scope = {
    relationNames: left.relations.map((r) => r.name),
    relationLabel: 'the FROM clause',
    columns: left.plan.columns,
    relations: left.relations,
    visible: left.visible,
  };
  const args = ref.args.map((e) => bindArgument(e, scope, ref));
  const generator =
    ref.fn === 'unnest'
      ? unnestOf(ref, args)
      : ref.fn === 'generate_series'
        ? seriesOf(ref, args)
        : jsonbOf(ref, args);
  const name = ref.alias ?? ref.fn;
  const names = ref.columns ?? [];
  // PostgreSQL: a function of one unnamed column names it by the table alias, else by itself; the
  // jsonb functions name theirs (value; key and value); a column alias list names them all.
  const own = generator.kind === 'jsonb' ? (jsonbSetColumns(generator.fn) ?? [name]) : [name];
  const defaults = ref.ordinality ? [...own, 'ordinality'] : own;
  const available = defaults.length;
  if (names.length > available) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `table "${name}" has ${available} columns available but ${names.length} columns specified`,
      { position: names[names.length - 1]!.pos },
    );
  }
  // PostgreSQL: the value column is named by the column alias, else by the table alias, else the function.
  const nullable = generator.kind === 'unnest' || generator.kind === 'jsonb';
  const appended: ColumnMeta[] = expandTypes(generator).map((type, i) => ({
    name: names[i]?.name ?? (defaults[i] as string),
    type,
    nullable: nullable && i < own.length,
  }));
  if (left.relations.some((r) => r.name === name)) {
    throw new SluiceError('DUPLICATE_ALIAS', `table name "${name}" specified more than once`, {
      position: ref.pos,
      hint: `give the function its own alias: ${ref.fn}(…) AS u`,
    });
  }
  const width = left.plan.columns.length;
  const columns = [...left.plan.columns, ...appended];
  // PostgreSQL: the alias alone is the function's whole row — its value when it returns one column.
  const wholeRow = own.length === 1 && !ref.ordinality ? 'value' : 'record';
  return {
    plan: { kind: 'expand', input: left.plan, generator, columns },
    relations: [...left.relations, { name, offset: width, columns: appended, wholeRow }],
    visible: [
      ...left.visible,
      ...appended.map((c, i) => ({
        name: c.name,
        expr: { kind: 'col', index: width + i, name: c.name, type: c.type } satisfies ScalarExpr,
      })),
    ],
  };
}

function bindArgument(e: Expr, scope: Scope, ref: UnnestRef): ScalarExpr {
  if (containsAggregate(e)) {
    throw new SluiceError('INVALID_AGGREGATE', 'aggregate functions are not allowed in functions in FROM', {
      position: findAggregate(e)?.pos ?? ref.pos,
    });
  }
  return bindExpr(e, { scope, aggregateContext: 'functions in FROM' });
}

function unnestOf(ref: UnnestRef, args: readonly ScalarExpr[]): ExpandGenerator {
  const array = args[0]!;
  if (array.type.kind !== 'array') {
    throw new SluiceError('UNKNOWN_FUNCTION', `function unnest(${typeName(array.type)}) does not exist`, {
      position: ref.pos,
      hint: 'unnest takes an array',
    });
  }
  return { kind: 'unnest', array, ordinality: ref.ordinality };
}

/**
 * generate_series over integers (the wider of the arguments' widths; step 1 unless given) or over
 * timestamps / timestamptz with an interval step, as PostgreSQL's overloads; others do not exist.
 */
function seriesOf(ref: UnnestRef, args: readonly ScalarExpr[]): ExpandGenerator {
  const missing = (): SluiceError =>
    new SluiceError(
      'UNKNOWN_FUNCTION',
      `function generate_series(${args.map((a) => typeName(a.type)).join(', ')}) does not exist`,
      {
        position: ref.pos,
        hint: 'generate_series(start, stop [, step]) over integers, or over timestamps with an interval step',
      },
    );
  if (args.length < 2 || args.length > 3) throw missing();
  // A quoted literal takes the type the others give it, as PostgreSQL resolves unknown arguments.
  const typeOf = (i: number): SqlType => (isUntypedLiteral(ref.args[i]) ? T.unknown : args[i]!.type);
  const types = args.map((_, i) => typeOf(i));
  if (types.some((t) => t.kind === 'numeric' || t.kind === 'float')) {
    throw new SluiceError(
      'NOT_SUPPORTED',
      'generate_series of numeric or floating-point values is not supported',
      {
        position: ref.pos,
        hint: 'a series of integers scaled in the select list: generate_series(0, 20) AS s(i), i * 0.5',
      },
    );
  }
  let type: SqlType;
  if (types.every((t) => t.kind === 'int' || t.kind === 'unknown') && types.some((t) => t.kind === 'int')) {
    type = types.some((t) => t.kind === 'int' && t.bits === 64) ? T.int64 : T.int32;
  } else {
    const step = args[2];
    if (step === undefined) throw missing();
    const ends = [0, 1].map((i) =>
      types[i]!.kind === 'unknown' ? { ...args[i]!, type: T.unknown } : args[i]!,
    );
    // Two untyped literals with an interval step are timestamptz, PostgreSQL's preferred time type.
    const unified = unifiedType(ends, ref.pos, 'generate_series');
    // Dates widen to timestamptz, as PostgreSQL's implicit cast picks that overload.
    type = unified.kind === 'unknown' || unified.kind === 'date' ? T.timestamptz : unified;
    if (type.kind !== 'timestamp' && type.kind !== 'timestamptz') throw missing();
    const interval = coerce(step, T.interval, ref.args[2]!.pos);
    return {
      kind: 'series',
      start: coerce(args[0]!, type, ref.args[0]!.pos),
      stop: coerce(args[1]!, type, ref.args[1]!.pos),
      step: interval,
      type,
      ordinality: ref.ordinality,
    };
  }
  return {
    kind: 'series',
    start: coerce(args[0]!, type, ref.args[0]!.pos),
    stop: coerce(args[1]!, type, ref.args[1]!.pos),
    step: args[2] !== undefined ? coerce(args[2], type, ref.args[2]!.pos) : null,
    type,
    ordinality: ref.ordinality,
  };
}

/** jsonb_array_elements[_text], jsonb_each[_text], jsonb_object_keys: one jsonb argument. */
function jsonbOf(ref: UnnestRef, args: readonly ScalarExpr[]): ExpandGenerator {
  const fn = ref.fn as JsonbSetFunction;
  const only = args[0];
  const value =
    args.length === 1 && only !== undefined && (only.type.kind === 'jsonb' || isUntypedLiteral(ref.args[0]))
      ? coerce(only, T.jsonb, ref.args[0]!.pos)
      : undefined;
  if (value === undefined) {
    throw new SluiceError(
      'UNKNOWN_FUNCTION',
      `function ${fn}(${args.map((a) => typeName(a.type)).join(', ')}) does not exist`,
      { position: ref.pos, hint: `${fn} takes one jsonb value` },
    );
  }
  return { kind: 'jsonb', fn, value, ordinality: ref.ordinality };
}

/** A quoted literal or NULL: untyped, it takes the function's argument type. */
function isUntypedLiteral(e: Expr | undefined): boolean {
  return e?.kind === 'literal' && (e.literalType === 'string' || e.literalType === 'null');
}
