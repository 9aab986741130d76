// Binds a SELECT to a LogicalPlan: FROM → Scan, WHERE → Filter, GROUP BY/aggregates → Aggregate,
// HAVING → Filter, select list → Project, DISTINCT → Distinct. Also derives the output's unique key
// and rejects what cannot be maintained incrementally (ORDER BY/LIMIT in views) with NOT_SUPPORTED.
import { SluiceError, notSupported } from '../errors.ts';
import type { Expr, Pos, SelectStmt } from '../parser/ast.ts';
import type { ScalarExpr } from '../ivm/scalar-expr.ts';
import { printScalar } from '../ivm/scalar-expr.ts';
import { T, isNumeric, typeName } from '../types.ts';
import type { Catalog, ColumnMeta } from './catalog.ts';
import type { AggregateCall, AggregateFn, LogicalPlan } from './logical-plan.ts';
import type { Scope } from './bind-expr.ts';
import {
  bindExpr,
  childrenOf,
  containsAggregate,
  defaultColumnName,
  isAggregateCall,
  nullable,
} from './bind-expr.ts';

export interface OrderKey {
  readonly index: number;
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

export interface BoundQuery {
  readonly plan: LogicalPlan;
  readonly columns: readonly ColumnMeta[];
  readonly key: readonly number[] | null;
  readonly dependsOn: readonly string[];
  readonly orderBy: readonly OrderKey[];
  readonly limit?: number;
  readonly offset?: number;
}

export interface BindOptions {
  /** Binding a materialized view: ORDER BY / LIMIT / OFFSET are rejected. */
  readonly forView: boolean;
  /** CREATE MATERIALIZED VIEW v (a, b, ...) column names. */
  readonly columnNames?: readonly string[];
  readonly viewName?: string;
}

function scopeOf(plan: LogicalPlan, names: string[], label: string): Scope {
  return { relationNames: names, relationLabel: label, columns: plan.columns };
}

export function planKey(plan: LogicalPlan, catalog: Catalog): readonly number[] | null {
  switch (plan.kind) {
    case 'scan': {
      const o = catalog.get(plan.source);
      if (o === undefined || o.kind === 'sink') return null;
      return o.kind === 'table' ? o.primaryKey : o.key;
    }
    case 'values':
      return [];
    case 'filter':
      return planKey(plan.input, catalog);
    case 'project': {
      const inputKey = planKey(plan.input, catalog);
      if (inputKey === null) return null;
      const out: number[] = [];
      for (const k of inputKey) {
        const i = plan.exprs.findIndex((e) => e.kind === 'col' && e.index === k);
        if (i < 0) return null;
        out.push(i);
      }
      return out;
    }
    case 'aggregate':
      return plan.groupKeys.map((_, i) => i);
    case 'distinct':
      return plan.columns.map((_, i) => i);
  }
}

function constInt(e: Expr, what: string): number {
  const b = bindExpr(e, { scope: null, aggregateContext: what });
  if (b.kind !== 'const' || b.type.kind !== 'int' || b.value === null || Number(b.value) < 0) {
    throw new SluiceError('TYPE_MISMATCH', `argument of ${what} must be a non-negative integer constant`, {
      position: e.pos,
    });
  }
  return Number(b.value);
}

export function bindSelect(stmt: SelectStmt, catalog: Catalog, options: BindOptions): BoundQuery {
  if (options.forView) {
    const first = stmt.orderBy[0];
    if (first !== undefined)
      throw notSupported(
        'ORDER BY in a materialized view',
        first.pos,
        'order the rows when you read the view',
      );
    if (stmt.limit !== undefined) throw notSupported('LIMIT in a materialized view', stmt.limit.pos);
    if (stmt.offset !== undefined) throw notSupported('OFFSET in a materialized view', stmt.offset.pos);
    if (stmt.from === undefined) throw notSupported('a materialized view without FROM', stmt.pos);
  }

  // FROM
  let plan: LogicalPlan;
  let scope: Scope | null;
  const dependsOn: string[] = [];
  if (stmt.from === undefined) {
    plan = { kind: 'values', columns: [] };
    scope = null;
  } else {
    const ref = stmt.from;
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
    if (options.viewName !== undefined && source.name === options.viewName) {
      throw new SluiceError('INVALID_DEFINITION', `view "${source.name}" cannot read itself`, {
        position: ref.pos,
      });
    }
    dependsOn.push(source.name);
    plan = { kind: 'scan', source: source.name, sourceKind: source.kind, columns: source.columns };
    const names = ref.alias !== undefined ? [ref.alias] : [ref.name];
    const label = source.kind === 'view' ? 'view' : source.source !== undefined ? 'source' : 'table';
    scope = scopeOf(plan, names, `${label} "${ref.alias ?? ref.name}"`);
  }

  // WHERE
  if (stmt.where !== undefined) {
    if (containsAggregate(stmt.where)) {
      const agg = findAggregate(stmt.where);
      throw new SluiceError('INVALID_AGGREGATE', 'aggregate functions are not allowed in WHERE', {
        position: agg?.pos ?? stmt.where.pos,
      });
    }
    const predicate = bindExpr(stmt.where, { scope, aggregateContext: 'WHERE' });
    if (predicate.type.kind !== 'bool' && predicate.type.kind !== 'unknown') {
      throw new SluiceError(
        'TYPE_MISMATCH',
        `argument of WHERE must be type boolean, not type ${typeName(predicate.type)}`,
        {
          position: stmt.where.pos,
        },
      );
    }
    plan = { kind: 'filter', input: plan, predicate, columns: plan.columns };
  }

  // Expand the select list.
  const items: { expr: Expr; name: string; pos: Pos }[] = [];
  for (const item of stmt.items) {
    if (item.kind === 'star') {
      if (scope === null)
        throw new SluiceError('INVALID_DEFINITION', 'SELECT * with no tables specified is not valid', {
          position: item.pos,
        });
      if (item.table !== undefined && !scope.relationNames.includes(item.table)) {
        throw new SluiceError('UNKNOWN_TABLE', `missing FROM-clause entry for table "${item.table}"`, {
          position: item.pos,
        });
      }
      for (const c of scope.columns)
        items.push({ expr: { kind: 'column', name: c.name, pos: item.pos }, name: c.name, pos: item.pos });
    } else {
      items.push({ expr: item.expr, name: item.alias ?? defaultColumnName(item.expr), pos: item.pos });
    }
  }

  // ORDER BY (ad-hoc queries): an output ordinal, an output name, a select-list expression, or
  // any other expression, which is computed as a hidden trailing column and dropped after sorting.
  const hidden: Expr[] = [];
  const orderTargets = stmt.orderBy.map((o) => {
    if (o.expr.kind === 'literal' && o.expr.literalType === 'integer') {
      const index = Number(o.expr.value) - 1;
      if (index < 0 || index >= items.length) {
        throw new SluiceError(
          'INVALID_DEFINITION',
          `ORDER BY position ${String(o.expr.value)} is not in select list`,
          { position: o.pos },
        );
      }
      return { o, index };
    }
    if (o.expr.kind === 'column' && o.expr.table === undefined) {
      const name = o.expr.name;
      const matches = items.filter((i) => i.name === name).length;
      if (matches > 1)
        throw new SluiceError('AMBIGUOUS_COLUMN', `ORDER BY "${name}" is ambiguous`, { position: o.pos });
      if (matches === 1) return { o, index: items.findIndex((i) => i.name === name) };
    }
    const printed = JSON.stringify(stripPos(o.expr));
    const index = items.findIndex((i) => JSON.stringify(stripPos(i.expr)) === printed);
    if (index >= 0) return { o, index };
    if (stmt.distinct) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        'for SELECT DISTINCT, ORDER BY expressions must appear in select list',
        { position: o.pos },
      );
    }
    hidden.push(o.expr);
    return { o, index: items.length + hidden.length - 1 };
  });

  const grouped =
    stmt.groupBy.length > 0 || items.some((i) => containsAggregate(i.expr)) || stmt.having !== undefined;
  let exprs: ScalarExpr[];
  if (grouped) {
    const inputScope = scope;
    const inputColumns = plan.columns;
    // GROUP BY: an ordinal or an output alias refers to a select item; otherwise an input expression.
    const groupKeys: ScalarExpr[] = [];
    const keyIndex = new Map<string, number>();
    for (const g of stmt.groupBy) {
      let expr: Expr = g;
      if (g.kind === 'literal' && g.literalType === 'integer') {
        const item = items[Number(g.value) - 1];
        if (item === undefined) {
          throw new SluiceError(
            'INVALID_DEFINITION',
            `GROUP BY position ${String(g.value)} is not in select list`,
            { position: g.pos },
          );
        }
        expr = item.expr;
      } else if (
        g.kind === 'column' &&
        g.table === undefined &&
        !(inputScope?.columns.some((c) => c.name === g.name) ?? false)
      ) {
        const item = items.find((i) => i.name === g.name);
        if (item !== undefined) expr = item.expr;
      }
      if (containsAggregate(expr)) {
        throw new SluiceError('INVALID_AGGREGATE', 'aggregate functions are not allowed in GROUP BY', {
          position: g.pos,
        });
      }
      const bound = bindExpr(expr, { scope: inputScope, aggregateContext: 'GROUP BY' });
      const printed = printScalar(bound);
      if (!keyIndex.has(printed)) {
        keyIndex.set(printed, groupKeys.length);
        groupKeys.push(bound);
      }
    }
    const aggregates: AggregateCall[] = [];
    const aggIndex = new Map<string, number>();
    const keyColumns: ColumnMeta[] = groupKeys.map((k, i) => ({
      name: k.kind === 'col' ? k.name : `key${i}`,
      type: k.type,
      nullable: nullable(k, inputColumns),
    }));
    const aggOutputIndex = (): number => groupKeys.length + aggregates.length;
    const intercept = (e: Expr): ScalarExpr | undefined => {
      if (isAggregateCall(e) && e.kind === 'function') {
        const call = bindAggregate(e, inputScope);
        const printed = `${call.fn}:${call.distinct}:${call.arg === undefined ? '' : printScalar(call.arg)}`;
        let idx = aggIndex.get(printed);
        if (idx === undefined) {
          idx = aggOutputIndex();
          aggIndex.set(printed, idx);
          aggregates.push(call);
        }
        return { kind: 'col', index: idx, name: call.column.name, type: call.column.type };
      }
      if (e.kind === 'literal') return undefined;
      if (!containsAggregate(e)) {
        const bound = bindExpr(e, { scope: inputScope, aggregateContext: 'GROUP BY' });
        const idx = keyIndex.get(printScalar(bound));
        if (idx !== undefined) {
          const k = groupKeys[idx] as ScalarExpr;
          return { kind: 'col', index: idx, name: keyColumns[idx]?.name ?? `key${idx}`, type: k.type };
        }
        if (bound.kind === 'const') return bound;
        if (e.kind === 'column') {
          throw new SluiceError(
            'GROUPING_ERROR',
            `column "${e.name}" must appear in the GROUP BY clause or be used in an aggregate function`,
            {
              position: e.pos,
            },
          );
        }
      }
      return undefined;
    };
    const havingBound =
      stmt.having === undefined ? undefined : bindExpr(stmt.having, { scope: null, intercept });
    const itemExprs = [...items.map((i) => i.expr), ...hidden].map((x) =>
      bindExpr(x, { scope: null, intercept }),
    );
    const aggColumns = [...keyColumns, ...aggregates.map((a) => a.column)];
    plan = { kind: 'aggregate', input: plan, groupKeys, aggregates, columns: aggColumns };
    if (havingBound !== undefined) {
      if (havingBound.type.kind !== 'bool') {
        throw new SluiceError(
          'TYPE_MISMATCH',
          `argument of HAVING must be type boolean, not type ${typeName(havingBound.type)}`,
          {
            position: (stmt.having as Expr).pos,
          },
        );
      }
      plan = { kind: 'filter', input: plan, predicate: havingBound, columns: plan.columns };
    }
    exprs = itemExprs;
  } else {
    exprs = [...items.map((i) => i.expr), ...hidden].map((x) =>
      bindExpr(x, { scope, aggregateContext: 'this context' }),
    );
  }

  // Output names
  const names = [...items.map((i) => i.name), ...hidden.map((_, k) => `?order${k}`)];
  if (options.columnNames !== undefined) {
    if (options.columnNames.length > names.length) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        `view "${options.viewName ?? ''}" has ${names.length} columns but ${options.columnNames.length} column names were given`,
        {
          position: stmt.pos,
        },
      );
    }
    options.columnNames.forEach((n, i) => (names[i] = n));
  }
  if (!options.forView) {
    // Result rows are JSON objects: a repeated name gets a suffix (count, count_2, ...).
    const used = new Set<string>();
    names.forEach((n, i) => {
      let name = n;
      for (let k = 2; used.has(name); k++) name = `${n}_${k}`;
      used.add(name);
      names[i] = name;
    });
  } else {
    const seen = new Map<string, number>();
    names.forEach((n, i) => {
      const prev = seen.get(n);
      if (prev !== undefined) {
        throw new SluiceError('DUPLICATE_COLUMN', `column "${n}" specified more than once`, {
          position: items[i]?.pos ?? stmt.pos,
          hint: "give the columns distinct names with AS, or list the view's column names: CREATE MATERIALIZED VIEW v (a, b, ...) AS ...",
        });
      }
      seen.set(n, i);
    });
  }
  const inputCols = plan.columns;
  const columns: ColumnMeta[] = exprs.map((e, i) => ({
    name: names[i] as string,
    type: e.type.kind === 'unknown' ? T.text : e.type,
    nullable: nullable(e, inputCols),
  }));
  const identity =
    exprs.length === inputCols.length && exprs.every((e, i) => e.kind === 'col' && e.index === i);
  if (!identity) plan = { kind: 'project', input: plan, exprs, columns };
  else plan = { ...plan, columns } as LogicalPlan;

  if (stmt.distinct) plan = { kind: 'distinct', input: plan, columns: plan.columns };

  const orderBy: OrderKey[] = orderTargets.map(({ o, index }) => ({
    index,
    desc: o.desc,
    nullsFirst: o.nulls === undefined ? o.desc : o.nulls === 'first',
  }));
  const limit = stmt.limit === undefined ? undefined : constInt(stmt.limit, 'LIMIT');
  const offset = stmt.offset === undefined ? undefined : constInt(stmt.offset, 'OFFSET');

  return {
    plan,
    columns: columns.slice(0, items.length),
    key: planKey(plan, catalog),
    dependsOn,
    orderBy,
    ...(limit !== undefined ? { limit } : {}),
    ...(offset !== undefined ? { offset } : {}),
  };
}

function stripPos(e: unknown): unknown {
  if (Array.isArray(e)) return e.map(stripPos);
  if (typeof e === 'bigint') return `${e}n`;
  if (e !== null && typeof e === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) if (k !== 'pos') out[k] = stripPos(v);
    return out;
  }
  return e;
}

function findAggregate(e: Expr): Expr | undefined {
  if (isAggregateCall(e)) return e;
  for (const c of childrenOf(e)) {
    const f = findAggregate(c);
    if (f !== undefined) return f;
  }
  return undefined;
}

function bindAggregate(e: Extract<Expr, { kind: 'function' }>, scope: Scope | null): AggregateCall {
  const name = e.name;
  if (e.star) {
    if (name !== 'count')
      throw new SluiceError('UNKNOWN_FUNCTION', `function ${name}(*) does not exist`, { position: e.pos });
    return { fn: 'count_star', distinct: false, column: { name: 'count', type: T.int64, nullable: false } };
  }
  if (e.args.length !== 1) {
    throw new SluiceError('UNKNOWN_FUNCTION', `function ${name} takes exactly one argument`, {
      position: e.pos,
    });
  }
  const argAst = e.args[0] as Expr;
  if (containsAggregate(argAst)) {
    throw new SluiceError('INVALID_AGGREGATE', 'aggregate function calls cannot be nested', {
      position: argAst.pos,
    });
  }
  let arg = bindExpr(argAst, { scope, aggregateContext: 'aggregate arguments' });
  if (arg.type.kind === 'unknown') arg = { ...arg, type: T.text };
  const fn = name as AggregateFn;
  const mismatch = (): SluiceError =>
    new SluiceError('UNKNOWN_FUNCTION', `function ${name}(${typeName(arg.type)}) does not exist`, {
      position: e.pos,
      hint: 'no function matches the given name and argument types; you might need to add explicit type casts',
    });
  if (e.distinct && fn !== 'count' && fn !== 'min' && fn !== 'max') {
    throw notSupported(`${name.toUpperCase()}(DISTINCT ...)`, e.pos, 'COUNT(DISTINCT ...) is supported');
  }
  switch (fn) {
    case 'count':
      return { fn, distinct: e.distinct, arg, column: { name: 'count', type: T.int64, nullable: false } };
    case 'sum': {
      if (!isNumeric(arg.type)) throw mismatch();
      const type = arg.type.kind === 'int' ? T.int64 : arg.type.kind === 'numeric' ? T.numeric : arg.type;
      return { fn, distinct: false, arg, column: { name: 'sum', type, nullable: true } };
    }
    case 'avg': {
      if (!isNumeric(arg.type)) throw mismatch();
      const type = arg.type.kind === 'float' ? T.float64 : T.numeric;
      return { fn, distinct: false, arg, column: { name: 'avg', type, nullable: true } };
    }
    case 'min':
    case 'max':
      if (arg.type.kind === 'bool') throw mismatch();
      return { fn, distinct: false, arg, column: { name: fn, type: arg.type, nullable: true } };
    default:
      throw mismatch();
  }
}
