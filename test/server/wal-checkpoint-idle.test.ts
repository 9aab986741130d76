// The journal's WAL is checkpointed between requests, not inside one's COMMIT: through requests
// answered one at a time (the server bench's latency phase), every time the WAL was started over
// (its header's restart count) followed a WAL checkpoint the store ran itself once a group's
// answers were out. SQLite's autocheckpoint (1,000 frames) had run inside the COMMIT that crossed
// it, with its fsyncs, so the request committing waited for them (bench/README.md, server-e2e.ts).
import assert from 'node:assert/strict';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import { walRestartCount } from '../../src/storage/sqlite-store.ts';
import { openRuntime, removeDir, sortedRows, tempDir } from './helpers.ts';
import { ORDERS_SCHEMA, orderRows } from './checkpoint-orders.ts';

const POLICY: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9, sliceMs: 0 };

function restarts(dir: string): number {
  const fd = openSync(join(dir, 'sluice.db-wal'), 'r');
  try {
    return walRestartCount(fd);
  } finally {
    closeSync(fd);
  }
}

test('the WAL is checkpointed between requests: no restart follows an autocheckpoint in a COMMIT', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir, { checkpoint: POLICY });
    let expected: unknown;
    try {
      rt.executeScript(ORDERS_SCHEMA);
      await rt.ingestGrouped('orders', { insert: orderRows(1, 10) });
      const before = restarts(dir);
      const checkpointsBefore = rt.store.walCheckpoints;
      let nextId = 11;
      for (let i = 0; i < 500; i++) {
        await rt.ingestGrouped('orders', { insert: orderRows(nextId, 10) });
        nextId += 10;
        // The next request comes a loop turn later, as a client's would: the checkpoint's turn.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const started = restarts(dir) - before;
      const own = rt.store.walCheckpoints - checkpointsBefore;
      assert.ok(started >= 1, `the WAL was started over ${started} times`);
      assert.ok(started <= own, `${started} restarts, ${own} checkpoints of the store's own`);
      expected = sortedRows(rt.engine.viewSnapshot('seller_totals').rows);
    } finally {
      rt.close();
    }
    const reopened = openRuntime(dir, { checkpoint: POLICY });
    try {
      assert.deepEqual(sortedRows(reopened.engine.viewSnapshot('seller_totals').rows), expected);
    } finally {
      reopened.close();
    }
  } finally {
    removeDir(dir);
  }
});
