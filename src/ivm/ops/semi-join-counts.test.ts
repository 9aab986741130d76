// Unit tests of MatchCounts, a semi-join's right-side counts: its checkpoint entries are the general
// Arrangement's it replaced (same ids, same stored form, in full and as deltas), a fold lists each
// key it touched once with its total before the fold, and a key that leaves and comes back within a
// fold keeps one slot; a small integer key's total is read by value, equal to its slot's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { Arrangement } from '../arrangement.ts';
import { keyEntryId, type JoinKey } from '../join-key.ts';
import type { StateDelta } from '../state.ts';
import { MatchCounts } from './semi-join-counts.ts';
import { mulberry32 as random } from '../../../test/support/checkpoint-workload.ts';

/** A delta with its upserts sorted by id (the two structures may list them in other orders). */
function sorted(delta: StateDelta): StateDelta {
  const upserts = [...delta.upserts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { replaceAll: delta.replaceAll, upserts, deletes: [...delta.deletes].sort() };
}

test('checkpoint entries are the ones the general Arrangement wrote, in full and as deltas', () => {
  const keyId = (k: JoinKey): string => keyEntryId(k, 1);
  const counts = new MatchCounts('counts', 'R', keyId, [0]);
  const reference = new Arrangement<JoinKey, number, readonly Value[]>('reference', 'R', keyId);
  counts.trackChanges(true);
  reference.trackChanges(true);
  const rnd = random(13);
  const held = new Map<number, number>();
  for (let epoch = 0; epoch < 200; epoch++) {
    counts.beginFold();
    // Right rows [k] with a second column the stored row must drop (width 1).
    for (let i = 0; i < 8; i++) {
      const k = Math.floor(rnd() * 12);
      const have = held.get(k) ?? 0;
      const w = have > 0 && rnd() < 0.5 ? -1 : 1 + Math.floor(rnd() * 2);
      held.set(k, have + w);
      const row: readonly Value[] = [k, epoch];
      counts.add(k, row, w);
      reference.add(k, 0, row.slice(0, 1), w, 0);
    }
    counts.endFold();
    for (const [k, n] of held) assert.equal(counts.total(k), n, `key ${k} after epoch ${epoch}`);
    if (epoch % 7 === 0) {
      const full = epoch % 21 === 0;
      assert.deepEqual(sorted(counts.takeDelta(full)), sorted(reference.takeDelta(full)), `epoch ${epoch}`);
    }
  }
  // A load of the full export gives the same entries back, and the same totals.
  const all = counts.takeDelta(true).upserts.map(([, value]) => value);
  const loaded = new MatchCounts('loaded', 'R', keyId, [0]);
  loaded.load(all, (row) => row[0] as number);
  assert.deepEqual(sorted(loaded.takeDelta(true)), sorted(reference.takeDelta(true)));
  for (const [k, n] of held) assert.equal(loaded.total(k), n);
});

test('a fold lists each touched key once, first-touch order, with its total before the fold', () => {
  const counts = new MatchCounts('counts', 'R', String, [0]);
  counts.beginFold();
  counts.add(5, [5], 2);
  counts.add(7, [7], 1);
  counts.endFold();
  counts.beginFold();
  counts.add(7, [7], -1); // 7 leaves...
  counts.add(9, [9], 1);
  counts.add(5, [5], 1);
  counts.add(7, [7], 3); // ...and comes back in the same fold: one key, touched once
  const seen: [JoinKey, number, number][] = [];
  for (let i = 0; i < counts.touchedCount; i++)
    seen.push([counts.touchedKey(i), counts.totalBefore(i), counts.totalNow(i)]);
  assert.deepEqual(seen, [
    [7, 1, 3],
    [9, 0, 1],
    [5, 2, 3],
  ]);
  counts.endFold();
  assert.equal(counts.size, 3);
  // A key left at 0 at the end of a fold is forgotten; a negative total is refused.
  counts.beginFold();
  counts.add(9, [9], -1);
  counts.endFold();
  assert.equal(counts.total(9), 0);
  assert.equal(counts.size, 2);
  assert.throws(() => counts.add(9, [9], -1), /negative multiplicity/);
});

test('a small non-negative integer key is probed by value, without the slot index', () => {
  const counts = new MatchCounts('counts', 'R', String, [0]);
  counts.beginFold();
  for (let k = 0; k < 5000; k++) counts.add(k, [k], 1 + (k % 3));
  counts.endFold();
  let sum = 0;
  for (let k = 0; k < 6000; k++) sum += counts.total(k);
  // Keys 0..4999 (and the absent ones up to the table's end) read one cell each.
  assert.equal(sum, 5000 + 1667 + 2 * 1666); // Σ (1 + k % 3) over 0..4999
  const before = counts.slotProbes;
  for (let k = 0; k < 5000; k++) counts.total(k);
  assert.equal(counts.slotProbes, before);
  assert.equal(counts.total(-0), 1); // -0 meets 0, as `=` has it
  // Keys the table does not hold go through the slots: text, fractions, negatives, sparse ids.
  counts.beginFold();
  counts.add('a', ['a'], 2);
  counts.add(1.5, [1.5], 1);
  counts.add(-3, [-3], 1);
  counts.add(2 ** 30, [2 ** 30], 1);
  counts.endFold();
  const probes = counts.slotProbes;
  assert.deepEqual(
    ['a', 1.5, -3, 2 ** 30, 'b'].map((k) => counts.total(k)),
    [2, 1, 1, 1, 0],
  );
  assert.equal(counts.slotProbes, probes + 5);
});

test('totals read by value stay equal to the slots over random folds, growth, loads and clears', () => {
  const keyId = (k: JoinKey): string => keyEntryId(k, 1);
  const rnd = random(29);
  let counts = new MatchCounts('counts', 'R', keyId, [0]);
  counts.trackChanges(true);
  const held = new Map<number, number>();
  // Keys mostly dense and growing (the table grows to cover them), some sparse or negative.
  const draw = (epoch: number): number => {
    const r = rnd();
    if (r < 0.05) return -1 - Math.floor(rnd() * 5);
    if (r < 0.1) return 1_000_000 + Math.floor(rnd() * 5);
    return Math.floor(rnd() * (50 + 40 * epoch));
  };
  for (let epoch = 0; epoch < 120; epoch++) {
    counts.beginFold();
    for (let i = 0; i < 40; i++) {
      const k = draw(epoch);
      const have = held.get(k) ?? 0;
      const w = have > 0 && rnd() < 0.4 ? -Math.min(have, 1 + Math.floor(rnd() * 2)) : 1;
      held.set(k, have + w);
      counts.add(k, [k], w);
      // Within the fold too, the total read is the one just written.
      assert.equal(counts.total(k), have + w, `key ${k} in epoch ${epoch}`);
    }
    counts.endFold();
    for (const [k, n] of held) assert.equal(counts.total(k), n, `key ${k} after epoch ${epoch}`);
    if (epoch % 40 === 39) {
      const all = counts.takeDelta(true).upserts.map(([, value]) => value);
      counts = new MatchCounts('loaded', 'R', keyId, [0]);
      counts.load(all, (row) => row[0] as number);
      counts.trackChanges(true);
    }
  }
  counts.clear();
  for (const k of held.keys()) assert.equal(counts.total(k), 0);
});
