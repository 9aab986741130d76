// Parser tests for CREATE FUNCTION / DROP FUNCTION / SHOW FUNCTIONS: both body forms, the `$$`
// token, options, and the refusals with their positions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatements } from '../parse.ts';
import { tokenize } from '../lexer.ts';
import { SluiceError } from '../../common/errors.ts';
import type { Statement } from '../ast.ts';

function one(sql: string): Statement {
  const statements = parseStatements(sql);
  assert.equal(statements.length, 1);
  return statements[0]!;
}

function refused(sql: string, code: string, message: string, line: number, column: number): void {
  assert.throws(
    () => parseStatements(sql),
    (e: unknown) =>
      e instanceof SluiceError &&
      e.code === code &&
      e.message === message &&
      e.position?.line === line &&
      e.position.column === column,
  );
}

describe('CREATE FUNCTION', () => {
  it('parses the $$ SELECT body in place, with its positions in the statement', () => {
    const s = one(
      'CREATE FUNCTION f(a int, "B" numeric(10, 2)) RETURNS bigint LANGUAGE SQL IMMUTABLE AS $$\n  SELECT a + "B" $$',
    );
    assert.equal(s.kind, 'createFunction');
    if (s.kind !== 'createFunction') return;
    assert.equal(s.name, 'f');
    assert.equal(s.orReplace, false);
    assert.deepEqual(
      s.params.map((p) => [p.name, p.type.name, p.type.params]),
      [
        ['a', 'int', []],
        ['B', 'numeric', [10, 2]],
      ],
    );
    assert.equal(s.returns.name, 'bigint');
    assert.equal(s.body.kind, 'binary');
    assert.deepEqual(s.body.pos, { line: 2, column: 10 });
  });

  it('parses OR REPLACE, RETURN, options after the body, and no parameters', () => {
    const s = one('CREATE OR REPLACE FUNCTION g() RETURNS int RETURN 1');
    assert.equal(s.kind === 'createFunction' && s.orReplace && s.params.length === 0, true);
    const t = one('CREATE FUNCTION h(x int) RETURNS int AS $$ SELECT x $$ LANGUAGE SQL IMMUTABLE');
    assert.equal(t.kind, 'createFunction');
  });

  it('refuses what it does not support at its position', () => {
    refused(
      'CREATE FUNCTION f(x int) RETURNS int AS $$ SELECT x FROM t $$',
      'NOT_SUPPORTED',
      'FROM in a SQL function body is not supported',
      1,
      53,
    );
    refused(
      "CREATE FUNCTION f(x int) RETURNS int AS 'SELECT x'",
      'NOT_SUPPORTED',
      'a function body in a string literal is not supported',
      1,
      41,
    );
    refused(
      'CREATE FUNCTION f(x int) RETURNS int STRICT RETURN x',
      'NOT_SUPPORTED',
      'STRICT in CREATE FUNCTION is not supported',
      1,
      38,
    );
    refused(
      'CREATE FUNCTION f(x int) RETURNS int LANGUAGE plpgsql RETURN x',
      'NOT_SUPPORTED',
      'LANGUAGE plpgsql is not supported',
      1,
      47,
    );
    refused(
      'CREATE FUNCTION f(x int) RETURNS int AS $$ SELECT x',
      'SYNTAX_ERROR',
      'syntax error at end of input',
      1,
      52,
    );
  });

  it('lexes $$ only as a body quote: a word may still hold $', () => {
    assert.deepEqual(
      tokenize('a$$b $$').map((t) => t.image),
      ['a$$b', '$$'],
    );
  });
});

describe('DROP FUNCTION and SHOW FUNCTIONS', () => {
  it('parses the optional argument types', () => {
    const s = one('DROP FUNCTION IF EXISTS f(int, numeric(10,2)) CASCADE');
    assert.equal(s.kind, 'drop');
    if (s.kind !== 'drop') return;
    assert.equal(s.objectKind, 'function');
    assert.deepEqual(
      s.argTypes?.map((t) => t.name),
      ['int', 'numeric'],
    );
    assert.equal(s.ifExists && s.cascade, true);
    const bare = one('DROP FUNCTION f');
    assert.equal(bare.kind === 'drop' && bare.argTypes === undefined, true);
  });

  it('refuses argument types after another object kind', () => {
    refused('DROP TABLE t(int)', 'SYNTAX_ERROR', 'syntax error at or near "("', 1, 13);
  });

  it('parses SHOW FUNCTIONS', () => {
    const s = one('SHOW FUNCTIONS');
    assert.equal(s.kind === 'show' && s.objectKind === 'functions', true);
  });
});
