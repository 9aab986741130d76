// While a checkpoint is written in slices, an ingest request waits behind one slice at most: a
// slice first waits until the requests applied before it are answered (committed, synced,
// published). A request's group takes several loop turns (its hops, the COMMIT, the WAL sync's
// return), and a slice resumed by setImmediate alone ran in each of them. Counted in slices resumed
// between a request's apply and its answer, never in time; and the checkpoint still ends while a
// request is always in flight (a slice waits once, then runs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import { assertReopensAlike, loadOrders, orderRows, withOrdersRuntime } from './checkpoint-orders.ts';

// Never due by itself; every slice ends after its first read batch, so a write has many slices.
const POLICY: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9, sliceMs: 0 };

/**
 * Sends grouped ingest requests of 10 rows from `chains` loops (each sends its next from a timer
 * once its last is answered) until `done` is set; returns the most slices resumed between one
 * request's apply and its answer, and the requests answered.
 */
async function ingestWhile(
  rt: SluiceRuntime,
  chains: number,
  firstId: number,
  done: () => boolean,
): Promise<{ maxSlicesWaited: number; answered: number }> {
  let nextId = firstId;
  let maxSlicesWaited = 0;
  let answered = 0;
  const chain = async (): Promise<void> => {
    while (!done()) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (done()) return;
      const before = rt.checkpointSlicesResumed;
      await rt.ingestGrouped('orders', { insert: orderRows(nextId, 10) });
      nextId += 10;
      answered++;
      maxSlicesWaited = Math.max(maxSlicesWaited, rt.checkpointSlicesResumed - before);
    }
  };
  await Promise.all(Array.from({ length: chains }, chain));
  return { maxSlicesWaited, answered };
}

test('an ingest request waits behind one checkpoint slice at most, and the checkpoint still ends', async () => {
  await withOrdersRuntime(POLICY, async (rt, dir) => {
    loadOrders(rt, 0, 200_000);
    for (const chains of [1, 2]) {
      // Both full: an incremental one of the few rows sent during the first has few slices.
      rt.checkpoints.requireFull();
      let written = false;
      const resumedBefore = rt.checkpointSlicesResumed;
      const write = rt.checkpointInSlices().finally(() => (written = true));
      const ingest = await ingestWhile(rt, chains, 1_000_000 * chains, () => written);
      const stats = await write;
      assert.ok(stats !== null, 'the checkpoint was written');
      const resumed = rt.checkpointSlicesResumed - resumedBefore;
      assert.ok(resumed >= 20, `${resumed} slices resumed: the write has many`);
      assert.ok(ingest.answered >= 10, `${ingest.answered} requests answered during the write`);
      assert.ok(
        ingest.maxSlicesWaited <= 1,
        `a request waited behind ${ingest.maxSlicesWaited} slices (${chains} chains)`,
      );
      assert.ok((stats.ingestWaits ?? 0) >= 1, `${stats.ingestWaits} slices waited for answers`);
    }
    assert.equal(rt.checkpoints.verify()?.epoch !== undefined, true, 'the stored checkpoint verifies');
    assertReopensAlike(rt, dir, POLICY);
  });
});
