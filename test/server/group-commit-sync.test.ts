// The group commit's WAL sync off the server's thread (src/storage/sqlite-store.ts, "Deferred
// sync"): a group's COMMIT writes the WAL, its fdatasync runs on the libuv pool, and only when that
// returns is the group durable — its answers resolved, its epochs published, the committed epoch
// moved. The thread applies the next requests meanwhile; a read (flush) syncs at once instead.
// The real fdatasync runs in every test; a test only holds back the delivery of its completion.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import { openRuntime, removeDir, tempDir } from './helpers.ts';

const SCHEMA = `CREATE TABLE t (id INTEGER NOT NULL, v INTEGER NOT NULL, PRIMARY KEY (id));
CREATE MATERIALIZED VIEW s AS SELECT SUM(v) AS total, COUNT(*) AS n FROM t`;

/** SQLite's `synchronous` level: 1 NORMAL, 2 FULL. */
function syncLevel(rt: SluiceRuntime): unknown {
  return rt.store.db.pragma('synchronous', { simple: true });
}

/** Delivers each WAL sync's completion only when the test releases it (the sync itself runs). */
function holdSyncs(rt: SluiceRuntime): Array<() => void> {
  const held: Array<() => void> = [];
  const sync = rt.store.syncAsync.bind(rt.store);
  rt.store.syncAsync = (done) => sync((error) => held.push(() => done(error)));
  return held;
}

/** Lets the event loop turn `turns` times (what the thread does meanwhile without a sync's return). */
async function loopTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

/**
 * Turns the event loop until `done` holds. A real fdatasync on the libuv pool takes what the disk
 * takes (a few ms quiet, far more on a loaded machine), so the bound is wall time an order of
 * magnitude above that, not a count of turns (1,000 turns ran out on a loaded machine).
 */
async function loopUntil(done: () => boolean, limitMs = 30_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!done() && Date.now() < deadline) await new Promise((r) => setImmediate(r));
}

test('a group is answered and published only once its WAL sync returned; the next one applies meanwhile', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(SCHEMA);
    assert.equal(syncLevel(rt), 2, 'FULL outside a group');
    const before = rt.committedEpoch;
    const held = holdSyncs(rt);
    let answered = false;
    const a = rt.ingestGrouped('t', { insert: [{ id: 1, v: 10 }] });
    void a.then(() => (answered = true));
    assert.equal(syncLevel(rt), 1, "the open group's transaction runs at NORMAL");
    await loopUntil(() => held.length > 0);
    assert.equal(held.length, 1, 'the group committed and its sync was issued');
    assert.equal(rt.store.inTransaction, false);
    assert.equal(syncLevel(rt), 2, 'back at FULL after the deferred commit');
    assert.equal(answered, false, 'not answered before the sync');
    assert.equal(rt.committedEpoch, before, 'not committed for readers before the sync');

    // The thread goes on: the next request applies into a new transaction, whose commit waits for
    // the sync in flight (one at a time).
    const b = rt.ingestGrouped('t', { insert: [{ id: 2, v: 20 }] });
    await loopTurns(20);
    assert.equal(held.length, 1, 'one sync in flight');
    assert.equal(rt.store.inTransaction, true, 'the next group waits for it, uncommitted');

    held.shift()?.();
    assert.equal((await a).epoch, before + 1);
    assert.equal(rt.committedEpoch, before + 1);
    // The second group committed as the first sync returned; its own sync is in flight.
    assert.equal(rt.store.inTransaction, false);
    await loopUntil(() => held.length > 0);
    assert.equal(held.length, 1);
    assert.equal(rt.committedEpoch, before + 1, 'the second group waits for its own sync');
    held.shift()?.();
    assert.equal((await b).epoch, before + 2);
    assert.equal(rt.committedEpoch, before + 2);
    assert.equal(rt.store.syncOwed, false);
    rt.close();
    const again = openRuntime(dir);
    assert.equal(again.committedEpoch, before + 2);
    assert.deepEqual(again.engine.viewSnapshot('s').rows, [{ total: 30, n: 2 }]);
    again.close();
  } finally {
    removeDir(dir);
  }
});

test('a read while a group sync is in flight syncs on the thread and completes the group first', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(SCHEMA);
    const before = rt.committedEpoch;
    const held = holdSyncs(rt);
    let answered = false;
    const a = rt.ingestGrouped('t', { insert: [{ id: 1, v: 5 }] });
    void a.then(() => (answered = true));
    await loopUntil(() => held.length > 0);
    assert.equal(held.length, 1);
    assert.equal(answered, false);
    // A read (or anything else that flushes): durable and complete at once, without the pool.
    rt.flush();
    assert.equal(rt.store.syncOwed, false);
    assert.equal(rt.committedEpoch, before + 1);
    await Promise.resolve();
    assert.equal(answered, true);
    // The late completion changes nothing; the next group goes the deferred way again.
    held.shift()?.();
    const b = rt.ingestGrouped('t', { insert: [{ id: 2, v: 6 }] });
    await loopUntil(() => held.length > 0);
    held.shift()?.();
    assert.equal((await b).epoch, before + 2);
    assert.deepEqual(rt.engine.viewSnapshot('s').rows, [{ total: 11, n: 2 }]);
    rt.close();
  } finally {
    removeDir(dir);
  }
});

test('a runtime in memory has no WAL to sync: a group completes at its commit', async () => {
  const rt = openRuntime('(in memory)', { dataDir: null });
  try {
    rt.executeScript(SCHEMA);
    const before = rt.committedEpoch;
    const held = holdSyncs(rt);
    const a = rt.ingestGrouped('t', { insert: [{ id: 1, v: 5 }] });
    assert.equal((await a).epoch, before + 1);
    assert.equal(held.length, 0);
  } finally {
    rt.close();
  }
});
