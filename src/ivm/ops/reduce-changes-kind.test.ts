// The Reduce's change buffer (reduce-changes.ts): a numeric column's scratch and kept columns are all
// in V8's double-elements kind, so the consumers of its batches read one kind at every step size.
// A buffer that has written a NULL, a bigint or text moves to store sites of its own: V8's are shared
// by every caller of a function, and a site that has stored into a tagged array turns the double
// arrays it stores into tagged. The second test checks numeric buffers after such a buffer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import type { Value } from '../../common/types.ts';
import { ChangeBuffer } from './reduce-changes.ts';

const records = { data: new Float64Array(16), stride: 4 };

/** V8's test for double elements, read through its runtime functions (enabled here for this alone). */
function doublesTest(): ((a: unknown) => boolean) | null {
  setFlagsFromString('--allow-natives-syntax');
  try {
    return new Function('a', 'return %HasDoubleElements(a)') as (a: unknown) => boolean;
  } catch {
    return null;
  }
}

/** Steps of these sizes written by every path (integers and fractions, `odd` at the first write). */
function kindsOf(hasDoubles: (a: unknown) => boolean, odd: Value | undefined): string[] {
  let first = odd !== undefined;
  const buffer = new ChangeBuffer(2);
  const kinds = new Set<string>();
  // at the kept sizes, the spills and the scratch
  for (const n of [2, 2, 1, 4, 3, 150, 2, 0, 300, 2, 1]) {
    buffer.clear();
    for (let i = 0; i < n; i++) {
      if (i % 4 === 0 && i + 1 < n) {
        buffer.replace2(i, i + 0.25, first ? (odd as Value) : i + 1);
        first = false;
        i++;
      } else if (i % 4 === 2) buffer.insert([i, i]);
      else if (i % 4 === 3) buffer.retract(records, 0, [i, i * 0.5], 0, 1);
      else buffer.put2(1, i, i * 1.5);
    }
    const batch = buffer.take();
    for (const col of batch.cols) kinds.add(hasDoubles(col) ? 'double' : 'other');
  }
  return [...kinds];
}

test("a numeric column is lent in one elements kind at every step size (V8's double arrays)", (t) => {
  // The consumers' loads stay monomorphic only if every batch's columns are of one kind.
  const hasDoubles = doublesTest();
  if (hasDoubles === null) return t.skip('V8 runtime functions unavailable');
  assert.deepEqual(kindsOf(hasDoubles, undefined), ['double']);
});

test('numeric buffers stay double after another buffer wrote a NULL, text and a bigint', (t) => {
  const hasDoubles = doublesTest();
  if (hasDoubles === null) return t.skip('V8 runtime functions unavailable');
  for (const odd of [null, 'text', 2n ** 60n]) assert.ok(kindsOf(hasDoubles, odd).includes('other'));
  assert.deepEqual(kindsOf(hasDoubles, undefined), ['double']);
  assert.deepEqual(kindsOf(hasDoubles, undefined), ['double']);
});
