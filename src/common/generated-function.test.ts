// Two copies of the module (two checkouts in one process; here the same file under two URLs)
// compile the same text as two different sources, so V8's eval cache never hands one copy's
// kernel, with its type feedback, to the other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatedFunction } from './generated-function.ts';

test('one copy compiles a text as itself; another copy of the module as a different source', async () => {
  const other = (await import(`./generated-function.ts?copy=${process.pid}`)) as {
    generatedFunction: typeof generatedFunction;
  };
  const body = 'return a + b;';
  const mine = generatedFunction('a', 'b', body) as (a: number, b: number) => number;
  const again = generatedFunction('a', 'b', body) as (a: number, b: number) => number;
  const theirs = other.generatedFunction('a', 'b', body) as (a: number, b: number) => number;
  assert.equal(mine(2, 3), 5);
  assert.equal(theirs(2, 3), 5);
  assert.equal(mine.toString(), again.toString());
  assert.notEqual(mine.toString(), theirs.toString());
  assert.ok(mine.toString().includes(body));
});
