// DDL of SQL functions: CREATE [OR REPLACE] FUNCTION, DROP FUNCTION [CASCADE] and SHOW FUNCTIONS.
// A function is catalog metadata only (views inline it when they are bound), journaled like a view.
import { SluiceError } from '../common/errors.ts';
import { typeName } from '../common/types.ts';
import type { Statement } from '../parser/ast.ts';
import type { Catalog, SinkDef, ViewDef } from '../planner/catalog.ts';
import {
  defineSqlFunction,
  recheckSqlFunction,
  signatureOf,
  type FunctionDef,
} from '../planner/sql-functions.ts';
import { resolveTypeName } from '../planner/types-resolve.ts';
import type { StatementResult } from './api.ts';

export interface FunctionDdlContext {
  readonly catalog: Catalog;
  /** Journals the statement (before the catalog changes). */
  journal(sql: string): void;
  /** Removes a view or sink (a dependent dropped by CASCADE). */
  removeObject(name: string, reason: string): void;
}

/** What depends on function `name`: views inlining it, what reads those views, and functions. */
function dependentsOf(
  catalog: Catalog,
  name: string,
): { views: ViewDef[]; sinks: SinkDef[]; functions: FunctionDef[] } {
  const direct = catalog.functionDependents(name);
  const views = new Map<string, ViewDef>();
  for (const v of direct.views) {
    views.set(v.name, v);
    for (const d of catalog.transitiveDependents(v.name)) views.set(d.name, d);
  }
  const sinks = new Map<string, SinkDef>();
  for (const v of direct.views) for (const s of catalog.dependentSinks(v.name)) sinks.set(s.name, s);
  const order = new Map(catalog.views().map((v, i) => [v.name, i]));
  const sorted = [...views.values()].sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
  return { views: sorted, sinks: [...sinks.values()], functions: direct.functions };
}

export function createFunction(
  stmt: Extract<Statement, { kind: 'createFunction' }>,
  ctx: FunctionDdlContext,
): StatementResult {
  const existing = ctx.catalog.getFunction(stmt.name);
  if (existing !== undefined && !stmt.orReplace) {
    throw new SluiceError('DUPLICATE_OBJECT', `function "${stmt.name}" already exists`, {
      position: stmt.pos,
      hint: 'Sluice does not overload functions by argument types: drop it first, or choose another name',
    });
  }
  const deps = existing !== undefined ? dependentsOf(ctx.catalog, stmt.name) : null;
  if (deps !== null && deps.views.length > 0) {
    // Views inlined the old body: replacing it would leave them computing what it no longer says.
    throw new SluiceError(
      'DEPENDENT_OBJECTS',
      `cannot replace function "${stmt.name}" because other objects depend on it`,
      {
        position: stmt.pos,
        detail: dependentsDetail(stmt.name, deps),
        hint: 'drop the dependent objects first',
      },
    );
  }
  const def = defineSqlFunction(stmt, ctx.catalog);
  // Functions calling it inline it afresh at every use: check they still bind over the new body
  // (this also refuses a cycle through them) and record what they now use, before journaling.
  let rechecked: FunctionDef[] = [];
  if (existing !== undefined && deps !== null && deps.functions.length > 0) {
    ctx.catalog.setFunction(def);
    try {
      rechecked = deps.functions.map((f) => {
        try {
          return recheckSqlFunction(f, ctx.catalog);
        } catch (error) {
          if (!(error instanceof SluiceError)) throw error;
          throw new SluiceError(
            'DEPENDENT_OBJECTS',
            `cannot replace function "${stmt.name}" because function "${f.name}" depends on it`,
            { position: stmt.pos, detail: `over the new definition, its body fails: ${error.message}` },
          );
        }
      });
    } finally {
      ctx.catalog.setFunction(existing);
    }
  }
  ctx.journal(stmt.text);
  ctx.catalog.setFunction(def);
  for (const f of rechecked) ctx.catalog.setFunction(f);
  return { statement: 'CREATE FUNCTION', object: def.name };
}

function dependentsDetail(name: string, deps: ReturnType<typeof dependentsOf>): string {
  return [
    ...deps.views.map((v) =>
      v.functions?.includes(name) === true
        ? `materialized view "${v.name}" depends on function "${name}"`
        : `materialized view "${v.name}" depends on "${v.dependsOn.join('", "')}"`,
    ),
    ...deps.sinks.map((s) => `sink "${s.name}" depends on "${s.view}"`),
    ...deps.functions.map((f) => `function "${f.name}" depends on function "${name}"`),
  ].join('\n');
}

export function dropFunction(
  stmt: Extract<Statement, { kind: 'drop' }>,
  ctx: FunctionDdlContext,
): StatementResult {
  const result = { statement: 'DROP FUNCTION', object: stmt.name };
  const def = ctx.catalog.getFunction(stmt.name);
  const written = stmt.argTypes?.map((t) => typeName(resolveTypeName(t)));
  const matches =
    def !== undefined &&
    (written === undefined ||
      (written.length === def.params.length && written.every((t, i) => t === typeName(def.params[i]!.type))));
  if (def === undefined || !matches) {
    if (stmt.ifExists) return result;
    const shown = written !== undefined ? `${stmt.name}(${written.join(', ')})` : stmt.name;
    throw new SluiceError('UNKNOWN_FUNCTION', `function ${shown} does not exist`, {
      position: stmt.pos,
      ...(def !== undefined ? { hint: `the function is ${signatureOf(def)}` } : {}),
    });
  }
  const deps = dependentsOf(ctx.catalog, stmt.name);
  const any = deps.views.length + deps.sinks.length + deps.functions.length > 0;
  if (any && !stmt.cascade) {
    throw new SluiceError(
      'DEPENDENT_OBJECTS',
      `cannot drop function "${stmt.name}" because other objects depend on it`,
      {
        position: stmt.pos,
        detail: dependentsDetail(stmt.name, deps),
        hint: 'use DROP ... CASCADE to drop the dependent objects too',
      },
    );
  }
  ctx.journal(stmt.text);
  const reason = `dropped by CASCADE from function "${stmt.name}"`;
  for (const s of deps.sinks) ctx.removeObject(s.name, reason);
  for (const v of [...deps.views].reverse()) ctx.removeObject(v.name, reason);
  for (const f of deps.functions) ctx.catalog.removeFunction(f.name);
  ctx.catalog.removeFunction(stmt.name);
  return result;
}

export function showFunctions(catalog: Catalog): StatementResult {
  const text = (name: string) => ({ name, type: 'text', nullable: false }) as const;
  return {
    statement: 'SHOW FUNCTIONS',
    columns: [text('name'), text('arguments'), text('returns'), text('definition')],
    rows: catalog.functions().map((f) => ({
      name: f.name,
      arguments: f.params.map((p) => `${p.name} ${typeName(p.type)}`).join(', '),
      returns: typeName(f.returns),
      definition: f.sql,
    })),
  };
}
