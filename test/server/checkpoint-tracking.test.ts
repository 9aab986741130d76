// The server tracks which state entries change (for incremental checkpoints) only while that pays:
// not before the first checkpoint is taken (the next one is full anyway), and not after one that
// found a quarter or more of the state changed (checkpoints.ts, reconsiderTracking). Untracked, the
// next checkpoint is full; every checkpoint restores the same state either way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import { openRuntime, removeDir, sortedRows, tempDir } from './helpers.ts';

const policy: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9 };
const schema = `CREATE TABLE orders (id BIGINT NOT NULL, seller INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (id));
CREATE MATERIALIZED VIEW totals AS SELECT seller, SUM(amount) AS total FROM orders GROUP BY seller`;

function rows(from: number, n: number): { id: number; seller: number; amount: number }[] {
  return Array.from({ length: n }, (_, i) => ({
    id: from + i,
    seller: (from + i) % 97,
    amount: (from + i) % 13,
  }));
}

test('no changes are tracked before the first checkpoint; a restart from one tracks them', () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir, { checkpoint: policy });
    try {
      rt.executeScript(schema);
      rt.ingest('orders', { insert: rows(0, 100) });
      assert.equal(rt.changesTracked, false);
      assert.equal(rt.checkpoint()?.full, true);
      assert.equal(rt.changesTracked, true, 'a small state is tracked after its first checkpoint');
      rt.ingest('orders', { insert: rows(100, 3) });
      const second = rt.checkpoint();
      assert.equal(second?.full, false);
      assert.equal(second?.upserts, 3 + 3, 'three rows and their three sellers');
    } finally {
      rt.close();
    }
    const again = openRuntime(dir, { checkpoint: policy });
    try {
      assert.equal(again.changesTracked, true);
      assert.equal(again.engine.viewSnapshot('totals').rows.length, 97);
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('a checkpoint that finds a quarter of a large state new stops tracking: the next is full, then tracked again', () => {
  const dir = tempDir();
  try {
    let expected: string[];
    const rt = openRuntime(dir, { checkpoint: policy });
    try {
      rt.executeScript(schema);
      for (let b = 0; b < 14; b++) rt.ingest('orders', { insert: rows(b * 5000, 5000) });
      // 70,000 new entries (and 97 groups) since no checkpoint: the first one is full, and decides
      // nothing (nothing before it to say how fast the state changes).
      assert.equal(rt.checkpoint()?.full, true);
      assert.equal(rt.changesTracked, true, 'the first full checkpoint keeps tracking on');
      for (let b = 14; b < 28; b++) rt.ingest('orders', { insert: rows(b * 5000, 5000) });
      // 70,000 changed entries against a base of 70,097: past a quarter.
      assert.equal(rt.checkpoint()?.full, false);
      assert.equal(rt.changesTracked, false, '70,000 changes are past a quarter of 70,097');
      rt.ingest('orders', { delete: rows(70_000, 70_000) });
      rt.ingest('orders', { insert: rows(70_000, 10) });
      rt.ingest('orders', { delete: rows(0, 5) });
      // Untracked, so whole; it grew by 5 entries: tracked again.
      const second = rt.checkpoint();
      assert.equal(second?.full, true);
      assert.equal(second?.upserts, 70_000 + 10 - 5 + 97);
      assert.equal(rt.changesTracked, true);
      rt.ingest('orders', { insert: rows(70_010, 2) });
      const third = rt.checkpoint();
      assert.equal(third?.full, false);
      assert.equal(third?.upserts, 2 + 2);
      assert.equal(rt.changesTracked, true);
      expected = sortedRows(rt.engine.viewSnapshot('totals').rows);
    } finally {
      rt.close();
    }
    const again = openRuntime(dir, { checkpoint: policy });
    try {
      assert.equal(again.recovery.fallbackReason, null);
      assert.deepEqual(sortedRows(again.engine.viewSnapshot('totals').rows), expected);
      assert.equal(again.engine.tableRows('orders').length, 70_007);
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
  }
});
