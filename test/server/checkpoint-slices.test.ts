// A checkpoint written by the writer thread never holds the main thread for more than a bounded
// amount of work: each slice reads (or deletes) at most SLICE_ENTRIES entries, whatever the clock
// says, and at most SLICE_ROW_ENTRIES of those it encodes one by one (an incremental write's rows).
// Counted with a slice length the clock never reaches, so only the entry bounds cut slices.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SLICE_ENTRIES, SLICE_ROW_ENTRIES } from '../../src/server/runtime/checkpoint-writer.ts';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import { assertReopensAlike, loadOrders, orderRows, withOrdersRuntime } from './checkpoint-orders.ts';

// Never due by itself, and slices the clock would never end.
const POLICY: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9, sliceMs: 1e9 };

test('every slice of a checkpoint off the thread handles at most SLICE_ENTRIES entries', async () => {
  await withOrdersRuntime(POLICY, async (rt, dir) => {
    loadOrders(rt, 0, 60_000);
    const full = await rt.checkpointInSlices();
    assert.ok(full !== null && full.full, 'the first checkpoint is full');
    assert.ok(full.upserts >= 60_000, `${full.upserts} entries`);
    assert.ok(full.maxSliceEntries !== undefined && full.maxSliceEntries > 0);
    assert.ok(full.maxSliceEntries <= SLICE_ENTRIES, `${full.maxSliceEntries} entries in one slice`);
    assert.ok((full.slices ?? 0) >= Math.ceil(60_000 / SLICE_ENTRIES), `${full.slices} slices`);

    // An incremental one with many deletes and upserts: both are bounded per slice.
    for (let start = 0; start < 30_000; start += 5000)
      rt.ingest('orders', { delete: orderRows(start, 5000) });
    loadOrders(rt, 60_000, 20_000);
    const incremental = await rt.checkpointInSlices();
    assert.ok(incremental !== null && !incremental.full, 'then incremental');
    assert.ok(incremental.deletes >= 30_000, `${incremental.deletes} deletes`);
    assert.ok(incremental.upserts >= 20_000, `${incremental.upserts} upserts`);
    assert.ok(
      (incremental.maxSliceEntries ?? Infinity) <= SLICE_ENTRIES,
      `${incremental.maxSliceEntries} entries in one slice`,
    );
    assert.ok((incremental.slices ?? 0) >= Math.ceil(50_000 / SLICE_ENTRIES), `${incremental.slices} slices`);
    assert.equal(rt.checkpoints.verify()?.epoch, rt.committedEpoch, 'the stored checkpoint verifies');
    assertReopensAlike(rt, dir, POLICY);
  });
});

test('an incremental checkpoint of upserts encodes at most SLICE_ROW_ENTRIES entries a slice', async () => {
  await withOrdersRuntime(POLICY, async (rt) => {
    loadOrders(rt, 0, 100_000);
    const full = await rt.checkpointInSlices();
    assert.ok(full !== null && full.full, 'the first checkpoint is full');
    loadOrders(rt, 100_000, 20_000);
    const incremental = await rt.checkpointInSlices();
    assert.ok(incremental !== null && !incremental.full, 'then incremental');
    // The new rows and the sellers' changed groups, each encoded as stored JSON.
    assert.ok(incremental.upserts >= 20_000, `${incremental.upserts} upserts`);
    assert.ok(incremental.maxSliceEntries !== undefined && incremental.maxSliceEntries > 0);
    assert.ok(
      incremental.maxSliceEntries <= SLICE_ROW_ENTRIES,
      `${incremental.maxSliceEntries} entries in one slice`,
    );
    assert.ok(
      (incremental.slices ?? 0) >= Math.ceil(incremental.upserts / SLICE_ROW_ENTRIES),
      `${incremental.slices} slices`,
    );
    assert.equal(rt.checkpoints.verify()?.epoch, rt.committedEpoch, 'the stored checkpoint verifies');
  });
});
