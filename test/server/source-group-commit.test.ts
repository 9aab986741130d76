// A source's batches are group-committed (src/server/runtime/commit.ts, writeGrouped): the batches a
// source delivers together (a fetch of a backlog cut into several batches) are applied, each as its
// own epoch with its positions, into one transaction, committed once with its WAL sync on the pool,
// and published only once that sync returned. Counts COMMITs, never time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConnectorHost } from '../../src/server/connectors.ts';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import type { SourceBatch } from '../../src/source/kafka/kafka-source-types.ts';
import { openRuntime, removeDir, tempDir } from './helpers.ts';

// Nothing listens on port 9: the source's own reader retries in the background and delivers nothing.
const SCHEMA = `CREATE SOURCE orders (id INTEGER NOT NULL, v INTEGER NOT NULL, PRIMARY KEY (id))
  FROM KAFKA (brokers '127.0.0.1:9', topic 'orders', format 'json');
CREATE MATERIALIZED VIEW s AS SELECT SUM(v) AS total, COUNT(*) AS n FROM orders`;

function hostOf(rt: SluiceRuntime): ConnectorHost {
  return (rt.connectors as unknown as { host: ConnectorHost }).host;
}

function incarnationOf(rt: SluiceRuntime, source: string): number {
  const known = (rt as unknown as { connectorIncarnations: Map<string, { incarnation: number }> })
    .connectorIncarnations;
  const entry = known.get(source);
  assert.ok(entry !== undefined);
  return entry.incarnation;
}

/** Counts the store's COMMITs and holds each WAL sync's completion until the test releases it. */
function instrument(rt: SluiceRuntime): { commits: () => number; held: Array<() => void> } {
  let commits = 0;
  const commit = rt.store.commitUnsynced.bind(rt.store);
  rt.store.commitUnsynced = () => {
    if (rt.store.inTransaction) commits += 1;
    return commit();
  };
  const held: Array<() => void> = [];
  const sync = rt.store.walSync;
  rt.store.walSync = (fd, done) => sync(fd, (error) => held.push(() => done(error)));
  return { commits: () => commits, held };
}

async function loopUntil(done: () => boolean, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!done() && Date.now() < deadline) await new Promise((r) => setImmediate(r));
}

/** Batch `i` of a backlog: rows 10i..10i+9 of partition 0, offsets to match. */
function batch(i: number): SourceBatch {
  const rows = Array.from({ length: 10 }, (_, k) => [10 * i + k, 1] as const);
  return {
    upserts: [],
    typedUpserts: rows,
    deletes: [],
    positions: { topic: 'orders', partitions: { '0': { from: 10 * i, next: 10 * i + 10 } } },
    skipped: [],
    records: rows.length,
  };
}

test('batches delivered together share one COMMIT, each its own epoch; published once synced', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(SCHEMA);
    const incarnation = incarnationOf(rt, 'orders');
    const host = hostOf(rt);
    const { commits, held } = instrument(rt);
    const before = rt.committedEpoch;
    const epochAt = rt.engine.epoch;

    for (let i = 0; i < 5; i++) host.applySourceBatch('orders', incarnation, batch(i));
    assert.equal(rt.engine.epoch, epochAt + 5, 'five epochs, one per batch');
    assert.equal(commits(), 0, 'nothing committed while the batches were delivered');
    assert.equal(rt.store.inTransaction, true);
    await loopUntil(() => held.length > 0);
    assert.equal(commits(), 1, 'the five batches committed together');
    assert.equal(rt.committedEpoch, before, 'not published before the WAL sync returned');
    assert.deepEqual([...rt.sourceStore.offsets('orders', incarnation)], [[0, 50]]);

    // Delivered while that sync is in flight: the next group, committed when it returns.
    for (let i = 5; i < 8; i++) host.applySourceBatch('orders', incarnation, batch(i));
    held.shift()?.();
    assert.equal(rt.committedEpoch, epochAt + 5);
    await loopUntil(() => held.length > 0);
    assert.equal(commits(), 2);
    held.shift()?.();
    assert.equal(rt.committedEpoch, epochAt + 8);
    assert.deepEqual(rt.engine.viewSnapshot('s').rows, [{ total: 80, n: 80 }]);
    assert.deepEqual([...rt.sourceStore.offsets('orders', incarnation)], [[0, 80]]);
    rt.close();

    // Both groups are in the journal: a restart replays them.
    const again = openRuntime(dir);
    assert.deepEqual(again.engine.viewSnapshot('s').rows, [{ total: 80, n: 80 }]);
    assert.deepEqual([...again.sourceStore.offsets('orders', incarnation)], [[0, 80]]);
    again.close();
  } finally {
    removeDir(dir);
  }
});
