// Taking a large incremental delta of a keyed arrangement looks up only the keys deleted since the
// last delta (to find its deletes), never every changed key: the take holds the server's thread in
// one piece, so its work must not grow with the inserts between checkpoints. Counted in lookups.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../common/types.ts';
import { encodeOne } from '../common/values.ts';
import { UniqueArrangement } from './unique-arrangement.ts';
import { SlotRowMap } from './slot-row-map.ts';

for (const kind of ['Map', 'slots'] as const) {
  test(`a large incremental take looks up the deleted keys only (${kind})`, () => {
    const a =
      kind === 'Map'
        ? new UniqueArrangement<number>()
        : new UniqueArrangement<number>(() => new SlotRowMap<number>(8, 0));
    a.trackChanges(true);
    for (let k = 0; k < 1000; k++) a.set(k, [k, 'v0']);
    a.takeDelta(false); // exported: the next delta is incremental

    for (let k = 1000; k < 21_000; k++) a.set(k, [k, 'new']); // 20,000 inserts
    for (let k = 0; k < 10; k++) a.delete(k); // 10 deletes, of which 3 are set again
    for (let k = 0; k < 3; k++) a.set(k, [k, 'back']);
    const keys = [20, 21, 20_500];
    const out: (readonly Value[] | undefined)[] = [];
    a.deleteMany(keys, keys.length, out); // and 3 deleted in one batch
    assert.equal(out.filter((r) => r !== undefined).length, 3);

    const delta = a.takeDelta(false);
    assert.equal(delta.replaceAll, false);
    assert.equal(a.lastTakeLookups, 13, 'the deleted keys, not the 20,013 changed ones');
    const deleted = [3, 4, 5, 6, 7, 8, 9, 20, 21, 20_500].map((k) => encodeOne(k));
    assert.deepEqual([...delta.deletes].sort(), deleted.sort());
    const upserts = new Map(delta.upserts);
    assert.equal(upserts.size, 20_000 - 1 + 3);
    assert.deepEqual(upserts.get(encodeOne(1)), [1, 'back']);
    assert.deepEqual(upserts.get(encodeOne(20_999)), [20_999, 'new']);
    assert.equal(upserts.has(encodeOne(20_500)), false);

    // The deletes were handed over with the delta: the next take starts from none.
    for (let k = 30_000; k < 33_000; k++) a.set(k, [k, 'more']);
    const next = a.takeDelta(false);
    assert.equal(a.lastTakeLookups, 0);
    assert.deepEqual(next.deletes, []);
    assert.equal(next.upserts.length, 3000);
  });
}
