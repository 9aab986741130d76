// GROUP BY ROLLUP / CUBE / GROUPING SETS (the parser lists each set as indices into GROUP BY): the
// query becomes a UNION ALL of one GROUP BY per set (UNION for SELECT DISTINCT), each branch with
// the grouping expressions its set leaves out written as NULL and GROUPING(…) as the set's bits, as
// PostgreSQL computes them. Each branch reads the query's FROM on its own, so a view of n sets
// maintains n aggregates (docs/sql.md says so). ORDER BY, LIMIT and OFFSET apply to the union.
import { notSupported, SluiceError } from '../common/errors.ts';
import type { Expr, OrderItem, Pos, SelectItem, SelectStmt } from '../parser/ast.ts';
import { defaultColumnName } from './bind-column-meta.ts';
import { childrenOf, containsAggregate, isAggregateCall } from './bind-expr.ts';

type ExprItem = Extract<SelectItem, { kind: 'expr' }>;

/** `stmt` (with `groupingSets`) as the union of one plain GROUP BY per grouping set. */
export function expandGroupingSets(stmt: SelectStmt): SelectStmt {
  const sets = stmt.groupingSets ?? [];
  const items = stmt.items.map((item) => {
    if (item.kind !== 'expr')
      throw notSupported('* in a SELECT with grouping sets', stmt.pos, 'list the columns');
    if (hasWindowCall(item.expr)) {
      throw notSupported('a window function in a SELECT with grouping sets', item.expr.pos);
    }
    return item;
  });
  if (stmt.distinctOn !== undefined) {
    throw notSupported('DISTINCT ON with grouping sets', stmt.distinctOn[0]?.pos ?? stmt.pos);
  }
  // Each GROUP BY entry as the expression it groups by: an ordinal or an output name is its item.
  const targets = stmt.groupBy.map((g) => groupTarget(g, items));
  const exprKey = expressionKeys(stmt);
  const canonical = new Map<string, number>();
  const canonicalOf = targets.map((t, i) => {
    const key = exprKey(t.expr);
    const known = canonical.get(key);
    if (known !== undefined) return known;
    canonical.set(key, i);
    return i;
  });
  const branches = sets.map((set) =>
    branchOf(stmt, items, targets, new Set(set.map((i) => canonicalOf[i]!)), exprKey),
  );
  if (branches.length === 1) {
    const only = branches[0]!;
    return {
      ...only,
      distinct: stmt.distinct,
      orderBy: stmt.orderBy,
      ...limits(stmt),
      ...(stmt.with !== undefined ? { with: stmt.with } : {}),
    };
  }
  let union: SelectStmt = branches[0]!;
  for (const right of branches.slice(1)) {
    union = {
      kind: 'select',
      distinct: false,
      items: [],
      groupBy: [],
      orderBy: [],
      setOp: { op: 'union', all: !stmt.distinct, left: union, right, pos: stmt.pos },
      pos: stmt.pos,
    };
  }
  return {
    ...union,
    orderBy: stmt.orderBy.map((o) => outerOrder(o, items, exprKey)),
    ...limits(stmt),
    ...(stmt.with !== undefined ? { with: stmt.with } : {}),
  };
}

function limits(stmt: SelectStmt): Pick<SelectStmt, 'limit' | 'offset'> {
  return {
    ...(stmt.limit !== undefined ? { limit: stmt.limit } : {}),
    ...(stmt.offset !== undefined ? { offset: stmt.offset } : {}),
  };
}

interface GroupTarget {
  /** What the entry groups by. */
  readonly expr: Expr;
  /** The select item an ordinal or output name refers to (wholly NULL where the set leaves it out). */
  readonly item?: number;
}

function groupTarget(g: Expr, items: readonly ExprItem[]): GroupTarget {
  if (g.kind === 'literal' && g.literalType === 'integer') {
    const n = Number(g.value);
    const item = items[n - 1];
    if (item === undefined) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        `GROUP BY position ${String(g.value)} is not in select list`,
        {
          position: g.pos,
        },
      );
    }
    return { expr: item.expr, item: n - 1 };
  }
  if (g.kind === 'column' && g.table === undefined) {
    // An output name groups by its item unless the items read an input column of that name.
    const named = items.findIndex((i) => i.alias === g.name);
    if (named >= 0 && !items.some((i) => readsColumn(i.expr, g.name)))
      return { expr: items[named]!.expr, item: named };
  }
  return { expr: g };
}

/** One grouping set's branch: its GROUP BY, the left-out expressions NULL, GROUPING(…) its bits. */
function branchOf(
  stmt: SelectStmt,
  items: readonly ExprItem[],
  targets: readonly GroupTarget[],
  grouped: ReadonlySet<number>,
  exprKey: (e: Expr) => string,
): SelectStmt {
  const leftOut = new Map<string, number>();
  const allKeys = new Map<string, number>();
  targets.forEach((t, i) => {
    const key = exprKey(t.expr);
    if (!allKeys.has(key)) allKeys.set(key, i);
    if (!grouped.has(allKeys.get(key)!)) leftOut.set(key, i);
  });
  const nulledItems = new Set<number>();
  targets.forEach((t) => {
    if (t.item !== undefined && leftOut.has(exprKey(t.expr))) nulledItems.add(t.item);
  });
  const rewrite = (e: Expr): Expr =>
    mapExpr(e, (x) => {
      if (isAggregateCall(x)) return x;
      if (x.kind === 'function' && x.name === 'grouping' && x.over === undefined)
        return groupingBits(x, allKeys, leftOut, exprKey);
      const key = exprKey(x);
      if (leftOut.has(key)) return nullAt(x.pos);
      // An expression the set groups by keeps its value whole, even when a column inside it is
      // left out: the set (k % 2) of ROLLUP (k % 2, k) shows k % 2, not NULL % 2.
      if (allKeys.has(key)) return x;
      return undefined;
    });
  const branchItems: SelectItem[] = items.map((item, i) => {
    const expr = nulledItems.has(i) ? nullAt(item.expr.pos) : rewrite(item.expr);
    return { ...item, expr, alias: item.alias ?? defaultColumnName(item.expr) };
  });
  const groupBy = targets.flatMap((_, i) => (grouped.has(i) ? [stmt.groupBy[i]!] : []));
  const having = stmt.having !== undefined ? rewrite(stmt.having) : undefined;
  // A set of no columns is one group of every row, even with no aggregate to say so.
  const aggregated =
    groupBy.length > 0 ||
    having !== undefined ||
    stmt.items.some((i) => i.kind === 'expr' && containsAggregate(i.expr));
  const branch: SelectStmt = {
    kind: 'select',
    distinct: false,
    items: branchItems,
    ...(stmt.from !== undefined ? { from: stmt.from } : {}),
    ...(stmt.where !== undefined ? { where: stmt.where } : {}),
    groupBy,
    orderBy: [],
    pos: stmt.pos,
  };
  if (having !== undefined) return { ...branch, having };
  return aggregated ? branch : { ...branch, having: trueAt(stmt.pos) };
}

/** GROUPING(a, b, …): bit n (from the right) set when the set leaves the n-th argument out. */
function groupingBits(
  call: Extract<Expr, { kind: 'function' }>,
  allKeys: ReadonlyMap<string, number>,
  leftOut: ReadonlyMap<string, number>,
  exprKey: (e: Expr) => string,
): Expr {
  if (call.args.length === 0 || call.args.length > 31) {
    throw new SluiceError('INVALID_DEFINITION', 'GROUPING must have between 1 and 31 arguments', {
      position: call.pos,
    });
  }
  let bits = 0;
  for (const arg of call.args) {
    const key = exprKey(arg);
    if (!allKeys.has(key)) {
      throw new SluiceError(
        'INVALID_DEFINITION',
        'arguments to GROUPING must be grouping expressions of the associated query level',
        { position: arg.pos },
      );
    }
    bits = bits * 2 + (leftOut.has(key) ? 1 : 0);
  }
  return { kind: 'literal', value: bits, literalType: 'integer', pos: call.pos };
}

/** ORDER BY over the union: a select item's expression is its ordinal (PostgreSQL sorts by it). */
function outerOrder(o: OrderItem, items: readonly ExprItem[], exprKey: (e: Expr) => string): OrderItem {
  const key = exprKey(o.expr);
  const index = items.findIndex((i) => exprKey(i.expr) === key);
  if (index < 0 || (o.expr.kind === 'column' && o.expr.table === undefined)) return o;
  return { ...o, expr: { kind: 'literal', value: index + 1, literalType: 'integer', pos: o.expr.pos } };
}

function nullAt(pos: Pos): Expr {
  return { kind: 'literal', value: null, literalType: 'null', pos };
}

function trueAt(pos: Pos): Expr {
  return { kind: 'literal', value: true, literalType: 'boolean', pos };
}

/**
 * An expression's identity, positions aside. `t.k` and `k` are one column when `k` is written with
 * no other qualifier in the query (an unqualified name that binds is that column), as PostgreSQL
 * matches them once bound.
 */
function expressionKeys(stmt: SelectStmt): (e: Expr) => string {
  const qualifiers = new Map<string, Set<string | undefined>>();
  const roots = [
    ...stmt.items.flatMap((i) => (i.kind === 'expr' ? [i.expr] : [])),
    ...stmt.groupBy,
    ...(stmt.having !== undefined ? [stmt.having] : []),
    ...stmt.orderBy.map((o) => o.expr),
  ];
  for (const root of roots) {
    someExpr(root, (x) => {
      if (x.kind === 'column') {
        const seen = qualifiers.get(x.name) ?? new Set<string | undefined>();
        seen.add(x.table);
        qualifiers.set(x.name, seen);
      }
      return false;
    });
  }
  const loose = new Set(
    [...qualifiers].filter(([, q]) => q.has(undefined) && q.size === 2).map(([name]) => name),
  );
  return (e) =>
    JSON.stringify(e, (k, v: unknown) => {
      if (k === 'pos') return undefined;
      if (k === 'table' && typeof v === 'string') return undefined;
      if (typeof v === 'bigint') return `${v.toString()}n`;
      if (isExpr(v) && v.kind === 'column' && v.table !== undefined && !loose.has(v.name)) {
        return { kind: 'column', qualified: v.table, name: v.name };
      }
      return v;
    });
}

function isExpr(v: unknown): v is Expr {
  return (
    typeof v === 'object' && v !== null && typeof (v as { kind?: unknown }).kind === 'string' && 'pos' in v
  );
}

/**
 * `e` with each subexpression `f` answers for replaced (and not entered); nested queries, window
 * specifications and type names are kept as they are.
 */
function mapExpr(e: Expr, f: (e: Expr) => Expr | undefined): Expr {
  const replaced = f(e);
  if (replaced !== undefined) return replaced;
  if (e.kind === 'subquery' || e.kind === 'exists') return e;
  let changed = false;
  const out: Record<string, unknown> = {};
  const mapValue = (v: unknown): unknown => {
    if (isExpr(v)) {
      const m = mapExpr(v, f);
      if (m !== v) changed = true;
      return m;
    }
    if (Array.isArray(v)) return v.map(mapValue);
    if (typeof v === 'object' && v !== null && ('when' in v || 'then' in v)) {
      const w = v as { when: unknown; then: unknown };
      return { ...w, when: mapValue(w.when), then: mapValue(w.then) };
    }
    return v;
  };
  for (const [k, v] of Object.entries(e)) {
    out[k] = k === 'pos' || k === 'over' || k === 'type' || k === 'query' ? v : mapValue(v);
  }
  return changed ? (out as unknown as Expr) : e;
}

/** Whether `test` holds for `e` or a subexpression of it (nested queries not entered). */
function someExpr(e: Expr, test: (e: Expr) => boolean): boolean {
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (test(x)) return true;
    stack.push(...childrenOf(x));
  }
  return false;
}

function hasWindowCall(e: Expr): boolean {
  return someExpr(e, (x) => x.kind === 'function' && x.over !== undefined);
}

function readsColumn(e: Expr, name: string): boolean {
  return someExpr(e, (x) => x.kind === 'column' && x.name === name);
}
