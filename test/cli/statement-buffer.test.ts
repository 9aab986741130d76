// Splitting shell input into statements: a line ending with `;` outside quotes, quoted identifiers
// and comments ends one; the lexical state carries across lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatementBuffer, StatementTooLongError } from '../../src/cli/statement-buffer.ts';

function feed(lines: readonly string[]): { text: string; firstLine: number }[] {
  const buffer = new StatementBuffer();
  const out: { text: string; firstLine: number }[] = [];
  lines.forEach((line, i) => {
    const done = buffer.push(line, i + 1);
    if (done !== null) out.push(done);
  });
  const rest = buffer.rest();
  if (rest !== null) out.push(rest);
  return out;
}

test('a statement runs when a line ends with ;', () => {
  assert.deepEqual(feed(['SELECT 1,', '  2;', 'SELECT 3;']), [
    { text: 'SELECT 1,\n  2;', firstLine: 1 },
    { text: 'SELECT 3;', firstLine: 3 },
  ]);
  // Two statements on one line go together; a ; in the middle of a line does not end anything.
  assert.deepEqual(feed(['SELECT 1; SELECT 2;']), [{ text: 'SELECT 1; SELECT 2;', firstLine: 1 }]);
  assert.deepEqual(feed(['SELECT 1; SELECT', '2;']), [{ text: 'SELECT 1; SELECT\n2;', firstLine: 1 }]);
  // Trailing blanks and a line comment after the ; still end the statement.
  assert.deepEqual(feed(['SELECT 1;   -- done', 'SELECT 2; \t']), [
    { text: 'SELECT 1;   -- done', firstLine: 1 },
    { text: 'SELECT 2; \t', firstLine: 2 },
  ]);
});

test('a ; inside a string, a quoted identifier or a comment does not end the statement', () => {
  assert.deepEqual(feed(["SELECT 'a;", "b;' AS x;"]), [{ text: "SELECT 'a;\nb;' AS x;", firstLine: 1 }]);
  assert.deepEqual(feed(["SELECT 'it''s;'", ';']), [{ text: "SELECT 'it''s;'\n;", firstLine: 1 }]);
  assert.deepEqual(feed(['SELECT 1 AS "x;', '";']), [{ text: 'SELECT 1 AS "x;\n";', firstLine: 1 }]);
  assert.deepEqual(feed(['SELECT 1 -- not yet;', ';']), [{ text: 'SELECT 1 -- not yet;\n;', firstLine: 1 }]);
  assert.deepEqual(feed(['SELECT /* ;', '/* nested; */ still; */ 1;']), [
    { text: 'SELECT /* ;\n/* nested; */ still; */ 1;', firstLine: 1 },
  ]);
});

test('the state is visible for the prompt, and blank statements are not sent', () => {
  const buffer = new StatementBuffer();
  assert.equal(buffer.push("SELECT 'abc", 1), null);
  assert.equal(buffer.state, 'string');
  assert.equal(buffer.pending, true);
  assert.equal(buffer.push("' /* x", 2), null);
  assert.equal(buffer.state, 'comment');
  assert.ok(buffer.push('*/ ;', 3) !== null);
  assert.equal(buffer.pending, false);
  assert.equal(buffer.state, 'code');
  // Only blanks, comments and semicolons: nothing to run.
  assert.deepEqual(feed(['', '-- a comment;', ';', '/* c */ ;;', '   ']), []);
  // Unfinished text at the end of input runs (as psql does).
  assert.deepEqual(feed(['SELECT 1', '']), [{ text: 'SELECT 1\n', firstLine: 1 }]);
});

test('the buffer is bounded: past its limit it refuses and starts over', () => {
  const buffer = new StatementBuffer(100);
  buffer.push('SELECT', 1);
  assert.throws(() => buffer.push('x'.repeat(100), 2), StatementTooLongError);
  assert.equal(buffer.pending, false);
  assert.deepEqual(buffer.push('SELECT 1;', 3), { text: 'SELECT 1;', firstLine: 3 });
});
