// The Reduce's change buffer (reduce-changes.ts): a numeric column's scratch and kept columns are all
// in V8's double-elements kind, so the consumers of its batches read one kind at every step size.
// A file of its own: V8's store sites are shared by every buffer in the process, and one that has
// seen a NULL or text written (reduce-changes.test.ts does) turns a double column tagged at its next
// write, whatever the value: this checks a process whose Reduces write numbers only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { ChangeBuffer } from './reduce-changes.ts';

const records = { data: new Float64Array(16), stride: 4 };

test("a numeric column is lent in one elements kind at every step size (V8's double arrays)", (t) => {
  // The consumers' loads stay monomorphic only if every batch's columns are of one kind; the kind is
  // V8's, read through its runtime functions (enabled here for this check alone).
  setFlagsFromString('--allow-natives-syntax');
  let hasDoubles: (a: unknown) => boolean;
  try {
    hasDoubles = new Function('a', 'return %HasDoubleElements(a)') as (a: unknown) => boolean;
  } catch {
    t.skip('V8 runtime functions unavailable');
    return;
  }
  const buffer = new ChangeBuffer(2);
  const kinds = new Set<string>();
  // integers and fractions, by every write path, at the kept sizes, the spills and the scratch
  for (const n of [2, 2, 1, 4, 3, 150, 2, 0, 300, 2, 1]) {
    buffer.clear();
    for (let i = 0; i < n; i++) {
      if (i % 4 === 0 && i + 1 < n) {
        buffer.replace2(i, i + 0.25, i + 1);
        i++;
      } else if (i % 4 === 2) buffer.insert([i, i]);
      else if (i % 4 === 3) buffer.retract(records, 0, [i, i * 0.5], 0, 1);
      else buffer.put2(1, i, i * 1.5);
    }
    const batch = buffer.take();
    for (const col of batch.cols) kinds.add(hasDoubles(col) ? 'double' : 'other');
  }
  assert.deepEqual([...kinds], ['double']);
});
