// SQL functions (CREATE FUNCTION ... LANGUAGE SQL): checked once at CREATE, then inlined into every
// query that calls them while it is bound: the arguments, implicitly cast to the declared types,
// stand for the parameters in the body, and the result is cast to the declared return type. A view
// over a function is then maintained like any expression, and records the functions it inlined.
import { SluiceError, notSupported } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { SqlType } from '../common/types.ts';
import { typeName } from '../common/types.ts';
import type { Expr, Pos, Statement } from '../parser/ast.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { AGGREGATE_NAMES, bindExpr, type BindContext } from './bind-expr.ts';
import { coerce } from './bind-coerce.ts';
import { resolveTypeName } from './types-resolve.ts';

/** A SQL function in the catalog. */
export interface FunctionDef {
  readonly name: string;
  readonly params: readonly { readonly name: string; readonly type: SqlType }[];
  readonly returns: SqlType;
  readonly body: Expr;
  /** The CREATE FUNCTION statement as written. */
  readonly sql: string;
  /** The functions its body inlines (directly or through others): it depends on them. */
  readonly uses: readonly string[];
}

/** Where a query being bound finds functions; the catalog implements it. */
export interface FunctionLookup {
  getFunction(name: string): FunctionDef | undefined;
}

/**
 * Bounds on inlining, so that no statement costs much more than its text: each function may call
 * others several times, which multiplies (f1(x) = f0(f0(x)), f2(x) = f1(f1(x)), ... doubles at each
 * level), and nested calls nest the binder's recursion.
 */
export const MAX_INLINED_NODES = 20_000;
export const MAX_INLINE_DEPTH = 32;

interface Active {
  readonly lookup: FunctionLookup;
  readonly used: Set<string>;
  /** Body nodes inlined so far, and the calls being inlined now. */
  nodes: number;
  depth: number;
  /** The function whose body is being checked by CREATE FUNCTION (a call to it is recursion). */
  readonly defining?: string;
}

// Binding is synchronous: the functions of the query being bound are set for its duration.
let active: Active | null = null;

/**
 * Runs `bind` with `lookup`'s functions callable, and returns what it returned and the functions
 * it inlined. Nested calls (a subquery bound inside a query) share the outer call's record.
 */
export function withSqlFunctions<R>(
  lookup: FunctionLookup,
  bind: () => R,
  defining?: string,
): { result: R; used: string[] } {
  if (active !== null) return { result: bind(), used: [] };
  active = {
    lookup,
    used: new Set(),
    nodes: 0,
    // Checking a body at CREATE inlines it as a call would: it counts as the first level.
    depth: defining !== undefined ? 1 : 0,
    ...(defining !== undefined ? { defining } : {}),
  };
  const mine = active;
  try {
    return { result: bind(), used: [...mine.used] };
  } finally {
    active = null;
  }
}

/** A call of a SQL function, inlined; undefined when `e` names none. */
export function inlineSqlFunction(
  e: Extract<Expr, { kind: 'function' }>,
  ctx: BindContext,
): ScalarExpr | undefined {
  if (active === null) return undefined;
  if (active.defining === e.name) {
    throw notSupported(
      'a recursive SQL function',
      e.pos,
      'a SQL function is inlined, so it cannot call itself',
    );
  }
  const def = active.lookup.getFunction(e.name);
  if (def === undefined) return undefined;
  if (
    e.distinct ||
    e.star ||
    e.filter !== undefined ||
    e.over !== undefined ||
    e.args.length !== def.params.length
  ) {
    throw new SluiceError(
      'UNKNOWN_FUNCTION',
      `function ${e.name} with ${e.args.length} arguments does not exist`,
      {
        position: e.pos,
        hint: `the function is ${signatureOf(def)}`,
      },
    );
  }
  active.used.add(def.name);
  for (const u of def.uses) active.used.add(u);
  active.nodes += countNodes(def.body);
  if (active.nodes > MAX_INLINED_NODES || active.depth >= MAX_INLINE_DEPTH) {
    throw new SluiceError(
      'STATEMENT_TOO_LARGE',
      active.depth >= MAX_INLINE_DEPTH
        ? `SQL functions nest more than ${MAX_INLINE_DEPTH} calls deep`
        : `statement is too large once its SQL functions are inlined (more than ${MAX_INLINED_NODES} expression nodes)`,
      { position: e.pos, hint: 'call fewer functions, or functions that call fewer others' },
    );
  }
  const bound = e.args.map((a) => bindExpr(a, ctx));
  let args: ScalarExpr[];
  try {
    args = bound.map((a, i) => coerce(a, def.params[i]!.type, e.args[i]!.pos));
  } catch (error) {
    if (!(error instanceof SluiceError) || error.code !== 'TYPE_MISMATCH') throw error;
    // As PostgreSQL: no implicit cast to the declared types means no such function.
    throw new SluiceError(
      'UNKNOWN_FUNCTION',
      `function ${e.name}(${bound.map((a) => typeName(a.type)).join(', ')}) does not exist`,
      {
        position: e.pos,
        hint: `the function is ${signatureOf(def)}; you might need to add explicit type casts`,
      },
    );
  }
  const state = active;
  state.depth++;
  try {
    return inlineBody(def, args, e.pos);
  } catch (error) {
    if (!(error instanceof SluiceError)) throw error;
    // The body's positions are in its CREATE FUNCTION: point at the call, and say whose body it is.
    const detail = `in the body of function ${signatureOf(def)}${error.detail !== undefined ? `: ${error.detail}` : ''}`;
    throw new SluiceError(error.code, error.message, {
      position: e.pos,
      detail,
      ...(error.hint !== undefined ? { hint: error.hint } : {}),
    });
  } finally {
    state.depth--;
  }
}

/** `name(type, ...)`, as PostgreSQL names a function. */
export function signatureOf(def: FunctionDef): string {
  return `${def.name}(${def.params.map((p) => typeName(p.type)).join(', ')})`;
}

function inlineBody(def: FunctionDef, args: readonly ScalarExpr[], pos: Pos): ScalarExpr {
  const byName = new Map(def.params.map((p, i) => [p.name, args[i]!]));
  const body = bindExpr(def.body, {
    scope: null,
    aggregateContext: 'a SQL function body',
    intercept: (x) => (x.kind === 'column' && x.table === undefined ? byName.get(x.name) : undefined),
  });
  try {
    return coerce(body, def.returns, pos);
  } catch (error) {
    if (!(error instanceof SluiceError) || error.code !== 'TYPE_MISMATCH') throw error;
    throw new SluiceError(
      'TYPE_MISMATCH',
      `return type mismatch in function declared to return ${typeName(def.returns)}`,
      { position: def.body.pos, detail: `the body's type is ${typeName(body.type)}` },
    );
  }
}

/** The nodes of an expression tree (an explicit stack: no recursion). */
function countNodes(body: Expr): number {
  let n = 0;
  const stack: Expr[] = [body];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    n++;
    for (const c of exprChildren(x)) stack.push(c as Expr);
  }
  return n;
}

/** Functions whose value changes from call to call: a maintained view cannot inline them. */
const VOLATILE = new Set([
  'now',
  'current_timestamp',
  'current_date',
  'current_time',
  'localtime',
  'localtimestamp',
  'clock_timestamp',
  'statement_timestamp',
  'transaction_timestamp',
  'timeofday',
  'random',
  'gen_random_uuid',
]);

/** Refuses what a body may not hold (aggregates, window calls, volatile functions), at its position. */
function refuseBodyConstructs(body: Expr): void {
  const stack: Expr[] = [body];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (x.kind === 'subquery' || x.kind === 'exists')
      throw notSupported('a subquery in a SQL function body', x.pos);
    if (x.kind === 'function') {
      if (x.over !== undefined) throw notSupported('a window function in a SQL function body', x.pos);
      if (AGGREGATE_NAMES.has(x.name)) throw notSupported('an aggregate in a SQL function body', x.pos);
      if (VOLATILE.has(x.name)) {
        throw notSupported(
          `${x.name}() in a SQL function body`,
          x.pos,
          'a SQL function must be immutable to be inlined into a view',
        );
      }
    }
    for (const c of exprChildren(x)) stack.push(c as Expr);
  }
}

/**
 * The catalog entry of a CREATE FUNCTION: its parameters and body checked by binding the body over
 * parameters of the declared types (which also records the functions it inlines).
 */
export function defineSqlFunction(
  stmt: Extract<Statement, { kind: 'createFunction' }>,
  lookup: FunctionLookup,
): FunctionDef {
  const seen = new Set<string>();
  for (const p of stmt.params) {
    if (seen.has(p.name)) {
      throw new SluiceError('INVALID_DEFINITION', `parameter name "${p.name}" used more than once`, {
        position: p.pos,
      });
    }
    seen.add(p.name);
  }
  if (AGGREGATE_NAMES.has(stmt.name)) {
    throw new SluiceError(
      'DUPLICATE_OBJECT',
      `function "${stmt.name}" already exists as an aggregate function`,
      {
        position: stmt.pos,
      },
    );
  }
  const params = stmt.params.map((p) => ({ name: p.name, type: resolveTypeName(p.type) }));
  const returns = resolveTypeName(stmt.returns);
  refuseBodyConstructs(stmt.body);
  if (
    shadowsBuiltin(
      stmt.name,
      params.map((p) => p.type),
    )
  ) {
    throw new SluiceError(
      'DUPLICATE_OBJECT',
      `function "${stmt.name}" already exists as a built-in function`,
      {
        position: stmt.pos,
      },
    );
  }
  const probe: FunctionDef = { name: stmt.name, params, returns, body: stmt.body, sql: stmt.text, uses: [] };
  // Parameters stand for columns of unknown value: binding checks names and types, folds nothing.
  const columns = params.map((p, i): ScalarExpr => ({ kind: 'col', index: i, name: p.name, type: p.type }));
  const { used } = withSqlFunctions(lookup, () => inlineBody(probe, columns, stmt.returnsPos), stmt.name);
  return { ...probe, uses: used };
}

/**
 * `def` bound again after a function it calls was replaced: its new list of uses, or the error
 * its body now gives (the replacement is then refused).
 */
export function recheckSqlFunction(def: FunctionDef, lookup: FunctionLookup): FunctionDef {
  const columns = def.params.map((p, i): ScalarExpr => ({
    kind: 'col',
    index: i,
    name: p.name,
    type: p.type,
  }));
  const { used } = withSqlFunctions(lookup, () => inlineBody(def, columns, def.body.pos), def.name);
  return { ...def, uses: used };
}

/** Whether a built-in function takes these argument types (a SQL function may not hide it). */
function shadowsBuiltin(name: string, types: readonly SqlType[]): boolean {
  const pos = { line: 1, column: 1 };
  const args = types.map((_, i): Expr => ({ kind: 'column', name: String(i), pos }));
  const call: Expr = { kind: 'function', name, args, distinct: false, star: false, pos };
  try {
    bindExpr(call, {
      scope: null,
      intercept: (x) => {
        if (x.kind !== 'column') return undefined;
        return { kind: 'const', value: null, type: types[Number(x.name)]! };
      },
    });
    return true;
  } catch {
    return false;
  }
}

/** The parameter names of the SQL function `name` callable now (named arguments), or undefined. */
export function sqlFunctionParams(name: string): readonly string[] | undefined {
  return active?.lookup.getFunction(name)?.params.map((p) => p.name);
}
