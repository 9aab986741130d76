// One generated value per column list: found again by the same array without its text, and by an
// equal list in another array; the text map stays bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ColumnListCache } from './column-list-cache.ts';

test('a column list is made once, found by its array and by its text', () => {
  let made = 0;
  const cache = new ColumnListCache((columns) => {
    made++;
    return columns.join('|');
  });
  const list = ['bucket', 'sellers'];
  assert.equal(cache.get(list), 'bucket|sellers');
  assert.equal(cache.get(list), 'bucket|sellers');
  assert.equal(cache.get(['bucket', 'sellers']), 'bucket|sellers');
  assert.equal(made, 1);
  assert.equal(cache.get(['sellers', 'bucket']), 'sellers|bucket');
  assert.equal(made, 2);
});

test('a null value is kept as found, and the text map is emptied when full', () => {
  let made = 0;
  const cache = new ColumnListCache<string | null>((columns) => {
    made++;
    return columns.length === 0 ? null : (columns[0] ?? null);
  }, 2);
  const empty: string[] = [];
  assert.equal(cache.get(empty), null);
  assert.equal(cache.get(empty), null);
  assert.equal(made, 1);
  cache.get(['a']);
  cache.get(['b']); // full: the texts of [] and ['a'] are dropped
  assert.equal(cache.get(['a']), 'a');
  assert.equal(made, 4);
  assert.equal(cache.get(empty), null); // still found by its array
  assert.equal(made, 4);
});
