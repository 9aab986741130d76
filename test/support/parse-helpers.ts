// Helpers for the parser's unit tests: parse one statement or expression, narrow it to a kind,
// compare shapes without positions, expect a SluiceError, and build expected AST shapes tersely.
import assert from 'node:assert/strict';
import { parseStatements } from '../../src/parser/parse.ts';
import { SluiceError, type ErrorCode, type SourcePosition } from '../../src/common/errors.ts';
import { DEFAULT_SQL_LIMITS, type SqlLimits } from '../../src/common/limits.ts';
import type { BinaryOp, Expr, SelectStmt, Statement } from '../../src/parser/ast.ts';

export function one(sql: string): Statement {
  const statements = parseStatements(sql);
  assert.equal(statements.length, 1, `expected one statement in ${sql}`);
  return statements[0]!;
}

/** Narrows a statement (or expression) to one kind, failing the test otherwise. */
export function stmt<K extends Statement['kind']>(
  s: Statement | undefined,
  kind: K,
): Extract<Statement, { kind: K }> {
  assert.equal(s?.kind, kind);
  return s as Extract<Statement, { kind: K }>;
}
export function node<K extends Expr['kind']>(e: Expr | undefined, kind: K): Extract<Expr, { kind: K }> {
  assert.equal(e?.kind, kind);
  return e as Extract<Expr, { kind: K }>;
}

export function select(sql: string): SelectStmt {
  const statement = one(sql);
  assert.equal(statement.kind, 'select');
  return statement.query;
}

/** The expression of `SELECT <text>` (first select item). */
export function expr(text: string): Expr {
  const item = select(`SELECT ${text}`).items[0];
  assert.equal(item?.kind, 'expr');
  return item.expr;
}

/** The expression as parsed by the chevrotain DML path (`UPDATE t SET c = <text>`). */
export function dmlExpr(text: string): Expr {
  const statement = one(`UPDATE t SET c = ${text}`);
  assert.equal(statement.kind, 'update');
  return statement.assignments[0]!.value;
}

/** A deep copy without `pos` fields (nor a numeric literal's source `text`), for comparing shapes. */
export function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(
          ([key]) => key !== 'pos' && !(key === 'text' && (value as { kind?: unknown }).kind === 'literal'),
        )
        .map(([key, inner]) => [key, shape(inner)]),
    );
  }
  return value;
}

/** Shape of `SELECT <text>`, also checked to equal the DML path's shape. */
export function exprShape(text: string): unknown {
  const fromSelect = shape(expr(text));
  assert.deepEqual(shape(dmlExpr(text)), fromSelect, `SELECT and UPDATE paths differ for ${text}`);
  return fromSelect;
}

export function throwsSluice(
  sql: string,
  code: ErrorCode,
  message: string,
  position?: SourcePosition,
  limits: Partial<SqlLimits> = {},
): void {
  assert.throws(
    () => parseStatements(sql, { ...DEFAULT_SQL_LIMITS, ...limits }),
    (error: unknown) => {
      assert.ok(error instanceof SluiceError, `expected SluiceError, got ${String(error)}`);
      assert.equal(error.code, code, `code for ${sql}: ${error.message}`);
      assert.equal(error.message, message, `message for ${sql}`);
      if (position !== undefined) assert.deepEqual(error.position, position, `position for ${sql}`);
      return true;
    },
  );
}

export const col = (name: string, table?: string): unknown =>
  table === undefined ? { kind: 'column', name } : { kind: 'column', table, name };
export const int = (value: number | bigint): unknown => ({ kind: 'literal', value, literalType: 'integer' });
export const num = (value: number): unknown => ({ kind: 'literal', value, literalType: 'numeric' });
export const str = (value: string): unknown => ({ kind: 'literal', value, literalType: 'string' });
export const bool = (value: boolean): unknown => ({ kind: 'literal', value, literalType: 'boolean' });
export const nul = { kind: 'literal', value: null, literalType: 'null' };
export const bin = (op: BinaryOp, left: unknown, right: unknown): unknown => ({
  kind: 'binary',
  op,
  left,
  right,
});
export const fn = (name: string, args: unknown[], distinct = false, star = false): unknown => ({
  kind: 'function',
  name,
  args,
  distinct,
  star,
});
export const type = (name: string, params: number[] = []): unknown => ({ name, params });
