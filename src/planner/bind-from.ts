// Binds a FROM clause: one relation, or a tree of joins, to a LogicalPlan whose row is every leaf
// relation's columns side by side, with the scope names resolve in (qualified names per relation,
// unqualified names and `*` through PostgreSQL's join column list, where a USING column appears
// once). Join conditions become equi keys and a residual, with one-sided conjuncts pushed into
// their side, in join-conditions.ts (so a comma join with its predicates in WHERE is a keyed join).
import { SluiceError } from '../common/errors.ts';
import { DEFAULT_SQL_LIMITS } from '../common/limits.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { remapColumns } from '../common/scalar-expr.ts';
import { T, typeName } from '../common/types.ts';
import type {
  Expr,
  FromItem,
  JoinRef,
  Pos,
  SelectStmt,
  SubqueryRef,
  TableRef,
  WindowTvfRef,
} from '../parser/ast.ts';
import { functionAlone, lateralFunction } from './bind-from-functions.ts';
import { bindValues } from './bind-values.ts';
import { bindWindowTvf } from './bind-window-tvf.ts';
import { checkTemporalJoinKind, misplacedAsOf, temporalJoin, temporalSide } from './bind-temporal-join.ts';
import type { Catalog, ColumnMeta } from './catalog.ts';
import type { Scope, ScopeRelation, VisibleColumn } from './bind-scope.ts';
import { bindEquality } from './bind-coerce.ts';
import { bindExpr, containsAggregate, findAggregate } from './bind-expr.ts';
import type { LogicalPlan } from './logical-plan.ts';
import { conjuncts, makeJoin } from './join-conditions.ts';

/** A relation a query computes: a derived table's or a common table expression's result. */
export interface BoundRelation {
  readonly plan: LogicalPlan;
  readonly columns: readonly ColumnMeta[];
  readonly dependsOn: readonly string[];
}

/** `(SELECT …) AS s (a, b)`: the listed names replace the derived table's first column names. */
function renamed(bound: BoundRelation, ref: SubqueryRef): BoundRelation {
  const names = ref.columns;
  if (names === undefined) return bound;
  if (names.length > bound.columns.length) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `table "${ref.alias ?? ''}" has ${bound.columns.length} columns available but ${names.length} columns specified`,
      { position: names[bound.columns.length]!.pos },
    );
  }
  const columns = bound.columns.map((c, i) => ({ ...c, name: names[i]?.name ?? c.name }));
  const exprs: ScalarExpr[] = bound.columns.map((c, i) => ({
    kind: 'col',
    index: i,
    name: c.name,
    type: c.type,
  }));
  return { ...bound, plan: { kind: 'project', input: bound.plan, exprs, columns }, columns };
}

/** What FROM can name besides the catalog: the WITH queries in scope, and how to bind a subquery. */
export interface FromContext {
  /** Common table expressions by name; each bound once, every reference reads the same plan. */
  readonly ctes: ReadonlyMap<string, BoundRelation>;
  readonly bindSubquery: (query: SelectStmt) => BoundRelation;
  /**
   * Bound for a materialized view: generate_series may only stand alone there (after a relation it
   * would multiply every write of it by up to 100,000, which no epoch bound counts).
   */
  readonly inView?: boolean;
}

export interface BoundFrom {
  readonly plan: LogicalPlan;
  readonly scope: Scope;
  /** Relations read, each once. */
  readonly dependsOn: readonly string[];
}

interface Bound {
  readonly plan: LogicalPlan;
  readonly relations: readonly ScopeRelation[];
  readonly visible: readonly VisibleColumn[];
}

/**
 * `maxRelations` (SqlLimits.maxFromRelations) is checked on the tokens already; checked again here
 * so that binding, which recurses once per join, never meets a deeper tree than the limit allows.
 */
export function bindFrom(
  item: FromItem,
  catalog: Catalog,
  viewName: string | undefined,
  maxRelations: number = DEFAULT_SQL_LIMITS.maxFromRelations,
  context?: FromContext,
): BoundFrom {
  const leaves = countLeaves(item, maxRelations);
  if (leaves > maxRelations) {
    throw new SluiceError('TOO_MANY_ITEMS', `FROM has more than ${maxRelations} relations`, {
      position: item.pos,
    });
  }
  const dependsOn: string[] = [];
  const seenNames = new Set<string>();
  const addDependencies = (names: readonly string[]): void => {
    for (const n of names) if (!dependsOn.includes(n)) dependsOn.push(n);
  };
  /** A derived table or a WITH query: its bound plan, under the name it is referenced by. */
  const computed = (relation: BoundRelation, name: string | undefined, pos: Pos): Bound => {
    if (name !== undefined) {
      if (seenNames.has(name)) {
        throw new SluiceError('DUPLICATE_ALIAS', `table name "${name}" specified more than once`, {
          position: pos,
        });
      }
      seenNames.add(name);
    }
    addDependencies(relation.dependsOn);
    return {
      plan: relation.plan,
      // An unnamed derived table: no qualifier reaches its columns, unqualified names do.
      relations: [{ name: name ?? '', offset: 0, columns: relation.columns }],
      visible: relation.columns.map((c, i) => ({ name: c.name, expr: col(i, c) })),
    };
  };
  const subquery = (ref: SubqueryRef): Bound => {
    if (context === undefined) throw new SluiceError('INTERNAL_ERROR', 'a subquery reached FROM unbound');
    return computed(renamed(context.bindSubquery(ref.query), ref), ref.alias, ref.pos);
  };
  const leaf = (ref: TableRef): Bound => {
    if (ref.asOfProctime !== undefined) throw misplacedAsOf(ref.asOfProctime);
    const cte = context?.ctes.get(ref.name);
    if (cte !== undefined) {
      // Conditions are pushed into joins; a WITH query's join is read by others too, so it is
      // kept whole behind a projection (one shared plan) and conditions stay above it.
      const shared: BoundRelation = cte.plan.kind === 'join' ? { ...cte, plan: identityOver(cte.plan) } : cte;
      return computed(shared, ref.alias ?? ref.name, ref.pos);
    }
    const source = catalog.get(ref.name);
    if (source === undefined) {
      throw new SluiceError('UNKNOWN_TABLE', `relation "${ref.name}" does not exist`, { position: ref.pos });
    }
    if (source.kind === 'sink') {
      throw new SluiceError('WRONG_OBJECT_KIND', `"${source.name}" is a sink, not a relation`, {
        position: ref.pos,
        hint: `read materialized view "${source.view}", which the sink writes`,
      });
    }
    if (viewName !== undefined && source.name === viewName) {
      throw new SluiceError('INVALID_DEFINITION', `view "${source.name}" cannot read itself`, {
        position: ref.pos,
      });
    }
    const name = ref.alias ?? ref.name;
    if (seenNames.has(name)) {
      throw new SluiceError('DUPLICATE_ALIAS', `table name "${name}" specified more than once`, {
        position: ref.pos,
        hint: 'give each use of the relation its own alias: FROM t AS a JOIN t AS b ON ...',
      });
    }
    seenNames.add(name);
    if (!dependsOn.includes(source.name)) dependsOn.push(source.name);
    const plan: LogicalPlan = {
      kind: 'scan',
      source: source.name,
      sourceKind: source.kind,
      columns: source.columns,
    };
    return {
      plan,
      relations: [{ name, offset: 0, columns: source.columns }],
      visible: source.columns.map((c, i) => ({ name: c.name, expr: col(i, c) })),
    };
  };
  /** TUMBLE / HOP over a relation: the relation bound under the call's name, window columns appended. */
  const windowed = (ref: WindowTvfRef): Bound => {
    const source = ref.source;
    const inner =
      source.kind === 'table'
        ? leaf(ref.alias !== undefined ? { ...source, alias: ref.alias } : source)
        : subquery(ref.alias !== undefined ? { ...source, alias: ref.alias } : source);
    const relation = inner.relations[0]!;
    const bound = bindWindowTvf(ref, { plan: inner.plan, columns: relation.columns }, relation.name);
    return {
      plan: bound.plan,
      relations: [{ ...relation, columns: bound.columns }],
      visible: bound.columns.map((c, i) => ({ name: c.name, expr: col(i, c) })),
    };
  };
  const bind = (from: FromItem): Bound =>
    from.kind === 'table'
      ? leaf(from)
      : from.kind === 'subquery'
        ? subquery(from)
        : from.kind === 'windowTvf'
          ? windowed(from)
          : from.kind === 'unnest'
            ? functionAlone(from)
            : from.kind === 'values'
              ? computed(bindValues(from), from.alias, from.pos)
              : join(from, bind, context);
  if (item.kind === 'table' && context?.ctes.get(item.name) === undefined) {
    const single = leaf(item);
    const source = catalog.get(item.name);
    const label =
      source?.kind === 'view'
        ? 'view'
        : source?.kind === 'table' && source.source !== undefined
          ? 'source'
          : 'table';
    return {
      plan: single.plan,
      scope: {
        relationNames: [item.alias ?? item.name],
        relationLabel: `${label} "${item.alias ?? item.name}"`,
        columns: single.plan.columns,
      },
      dependsOn,
    };
  }
  if (item.kind !== 'join') {
    const single = bind(item);
    const name = single.relations[0]?.name ?? '';
    return {
      plan: single.plan,
      scope: {
        relationNames: name === '' ? [] : [name],
        relationLabel: name === '' ? 'the subquery' : `relation "${name}"`,
        columns: single.relations[0]?.columns ?? single.plan.columns,
        ...(single.relations[0]?.wholeRow !== undefined ? { functionRelation: single.relations[0] } : {}),
      },
      dependsOn,
    };
  }
  const bound = bind(item);
  return {
    plan: bound.plan,
    scope: {
      relationNames: bound.relations.map((r) => r.name),
      relationLabel: 'the FROM clause',
      columns: bound.plan.columns,
      relations: bound.relations,
      visible: bound.visible,
    },
    dependsOn,
  };
}

/** The plan's columns as they are, as a projection (a node that conditions are not pushed through). */
function identityOver(plan: LogicalPlan): LogicalPlan {
  const exprs = plan.columns.map((c, i) => col(i, c));
  return { kind: 'project', input: plan, exprs, columns: plan.columns };
}

function countLeaves(item: FromItem, max: number): number {
  let n = 0;
  const stack: FromItem[] = [item];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (x.kind !== 'join') n += 1;
    else stack.push(x.left, x.right);
    if (n > max) break;
  }
  return n;
}

function col(index: number, c: ColumnMeta): ScalarExpr {
  return { kind: 'col', index, name: c.name, type: c.type };
}

function join(ref: JoinRef, bind: (from: FromItem) => Bound, context: FromContext | undefined): Bound {
  if (ref.right.kind === 'unnest') {
    return lateralFunction(ref, ref.right, bind(ref.left), context?.inView === true);
  }
  // `JOIN r FOR SYSTEM_TIME AS OF PROCTIME()`: r bound as any relation, the join marked temporal.
  const asOf = temporalSide(ref);
  if (asOf !== null) checkTemporalJoinKind(ref, asOf);
  const left = bind(ref.left);
  const right = bind(asOf !== null ? { ...asOf, asOfProctime: undefined } : ref.right);
  const width = left.plan.columns.length;
  const joinKind = ref.joinKind === 'cross' ? 'inner' : ref.joinKind;
  const nullableLeft = joinKind === 'right' || joinKind === 'full';
  const nullableRight = joinKind === 'left' || joinKind === 'full';
  const columns: ColumnMeta[] = [
    ...left.plan.columns.map((c) => (nullableLeft ? { ...c, nullable: true } : c)),
    ...right.plan.columns.map((c) => (nullableRight ? { ...c, nullable: true } : c)),
  ];
  const shift = (e: ScalarExpr): ScalarExpr => remapColumns(e, (i) => i + width);
  const relations: ScopeRelation[] = [
    ...left.relations,
    ...right.relations.map((r) => ({ ...r, offset: r.offset + width })),
  ];
  const rightVisible = right.visible.map((v) => ({ name: v.name, expr: shift(v.expr) }));

  // USING / NATURAL: the named columns are equated and appear once, first.
  let usingNames: { name: string; pos: Pos }[] | null = null;
  if (ref.using !== undefined) usingNames = [...ref.using];
  else if (ref.natural) {
    const rightNames = new Set(right.visible.map((v) => v.name));
    const seen = new Set<string>();
    usingNames = [];
    for (const v of left.visible) {
      if (rightNames.has(v.name) && !seen.has(v.name)) {
        seen.add(v.name);
        usingNames.push({ name: v.name, pos: ref.pos });
      }
    }
  }
  const conditions: ScalarExpr[] = [];
  let visible: VisibleColumn[] = [...left.visible, ...rightVisible];
  if (usingNames !== null) {
    const merged: VisibleColumn[] = [];
    const names = new Set<string>();
    for (const u of usingNames) {
      if (names.has(u.name)) {
        throw new SluiceError(
          'DUPLICATE_COLUMN',
          `column "${u.name}" appears more than once in USING clause`,
          {
            position: u.pos,
          },
        );
      }
      names.add(u.name);
      const l = usingSide(left.visible, u, 'left');
      const r = usingSide(rightVisible, u, 'right');
      const eq = bindEquality(l, r, u.pos);
      conditions.push(eq);
      const [lk, rk] = eq.kind === 'call' ? (eq.args as [ScalarExpr, ScalarExpr]) : [l, r];
      const expr: ScalarExpr =
        joinKind === 'full'
          ? { kind: 'coalesce', args: [lk, rk], type: lk.type }
          : joinKind === 'right'
            ? rk
            : lk;
      merged.push({ name: u.name, expr });
    }
    visible = [
      ...merged,
      ...left.visible.filter((v) => !names.has(v.name)),
      ...rightVisible.filter((v) => !names.has(v.name)),
    ];
  }

  if (ref.on !== undefined) {
    const scope: Scope = {
      relationNames: relations.map((r) => r.name),
      relationLabel: 'the join',
      columns,
      relations,
      visible: [...left.visible, ...rightVisible],
    };
    conditions.push(bindCondition(ref.on, scope));
  }
  const joined = makeJoin(joinKind, left.plan, right.plan, columns, conditions.flatMap(conjuncts));
  const plan = asOf !== null ? temporalJoin(joined, ref) : joined;
  return { plan, relations, visible };
}

function usingSide(
  visible: readonly VisibleColumn[],
  u: { name: string; pos: Pos },
  side: string,
): ScalarExpr {
  const found = visible.filter((v) => v.name === u.name);
  if (found.length === 0) {
    throw new SluiceError(
      'UNKNOWN_COLUMN',
      `column "${u.name}" specified in USING clause does not exist in ${side} table`,
      {
        position: u.pos,
      },
    );
  }
  if (found.length > 1) {
    throw new SluiceError(
      'AMBIGUOUS_COLUMN',
      `common column name "${u.name}" appears more than once in ${side} table`,
      {
        position: u.pos,
      },
    );
  }
  return (found[0] as VisibleColumn).expr;
}

function bindCondition(on: Expr, scope: Scope): ScalarExpr {
  if (containsAggregate(on)) {
    throw new SluiceError('INVALID_AGGREGATE', 'aggregate functions are not allowed in JOIN conditions', {
      position: findAggregate(on)?.pos ?? on.pos,
    });
  }
  const bound = bindExpr(on, { scope, aggregateContext: 'JOIN conditions' });
  if (bound.type.kind === 'unknown') return { kind: 'const', value: null, type: T.bool };
  if (bound.type.kind !== 'bool') {
    throw new SluiceError(
      'TYPE_MISMATCH',
      `argument of JOIN/ON must be type boolean, not type ${typeName(bound.type)}`,
      { position: on.pos },
    );
  }
  return bound;
}
