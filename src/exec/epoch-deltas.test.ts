// The epoch's deltas (epoch-deltas.ts): found by name whether scanned or, past eight entries, in a
// Map; a later set replaces; clear forgets everything; and an engine epoch that steps more views
// than the scan holds (a chain of views over views) ends in the same views as one batch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EpochDeltas } from './epoch-deltas.ts';
import { Engine } from './engine.ts';
import type { ZBatch } from '../ivm/zset.ts';

const batch = (n: number): ZBatch => ({
  rows: Array.from({ length: n }, (_, i) => [i]),
  weights: Array.from({ length: n }, () => 1),
  consolidated: true,
});

test('deltas are found by name, replaced by a later set, and forgotten by clear, below and past the scan', () => {
  for (const count of [1, 8, 9, 30]) {
    const deltas = new EpochDeltas();
    for (let round = 0; round < 3; round++) {
      const given = Array.from({ length: count }, (_, i) => batch(i + 1));
      for (let i = 0; i < count; i++) deltas.set(`r${i}`, given[i] as ZBatch);
      const replaced = batch(99);
      deltas.set('r0', replaced);
      assert.equal(deltas.size, count, `count ${count}`);
      assert.equal(deltas.get('r0'), replaced);
      for (let i = 1; i < count; i++) assert.equal(deltas.get(`r${i}`), given[i], `r${i} of ${count}`);
      assert.equal(deltas.get('missing'), undefined);
      assert.equal(deltas.has(`r${count - 1}`), true);
      deltas.clear();
      assert.equal(deltas.size, 0);
      for (let i = 0; i < count; i++) assert.equal(deltas.get(`r${i}`), undefined);
    }
  }
});

test('an epoch stepping more views than the scan holds ends as one batch of the same rows does', () => {
  // Twelve views: a chain of ten, each over the one before, and two more over the table.
  const ddl = [
    'CREATE TABLE t (k INT NOT NULL, v INT NOT NULL);',
    'CREATE MATERIALIZED VIEW c0 AS SELECT k, SUM(v) AS s FROM t GROUP BY k;',
    ...Array.from(
      { length: 9 },
      (_, i) => `CREATE MATERIALIZED VIEW c${i + 1} AS SELECT k, s + ${i + 1} AS s FROM c${i};`,
    ),
    'CREATE MATERIALIZED VIEW n AS SELECT COUNT(*) AS n FROM t;',
    'CREATE MATERIALIZED VIEW top AS SELECT MAX(s) AS m FROM c9;',
  ].join('\n');
  const rows = Array.from({ length: 200 }, (_, i) => ({ k: (i * 7) % 13, v: (i * 31) % 17 }));
  const single = new Engine();
  single.execute(ddl);
  const heard: number[] = [];
  single.subscribe('top', (c) => heard.push(c.epoch));
  for (const r of rows) single.applyChanges('t', { insert: [r] });
  const whole = new Engine();
  whole.execute(ddl);
  whole.applyChanges('t', { insert: rows });
  for (const view of ['c0', 'c5', 'c9', 'n', 'top']) {
    const sorted = (e: Engine): string[] =>
      e
        .viewSnapshot(view)
        .rows.map((r) => JSON.stringify(r))
        .sort();
    assert.deepEqual(sorted(single), sorted(whole), view);
  }
  // c9 is each key's sum plus 1 + 2 + … + 9.
  const sums = new Map<number, number>();
  for (const r of rows) sums.set(r.k, (sums.get(r.k) ?? 0) + r.v);
  assert.deepEqual(single.viewSnapshot('top').rows, [{ m: Math.max(...sums.values()) + 45 }]);
  assert.ok(heard.length > 0 && heard.length <= 200);
});
