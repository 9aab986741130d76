// The group commit's WAL sync off the server's thread (src/storage/sqlite-store.ts, "Deferred
// sync"): a group's COMMIT writes the WAL, its fdatasync runs on the libuv pool, and only when that
// returns is the group durable — its answers resolved, its epochs published, the committed epoch
// moved. The thread applies the next requests meanwhile, and commits them with a second sync in
// flight beside the first (never more); a read (flush) syncs at once instead.
// The real fdatasync runs in every test; a test only holds back the delivery of its completion to
// the store (its `walSync` seam), so the store's own bookkeeping — which syncs are taken, in issue
// order, and how many commits are durable — runs as in service.
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
  const sync = rt.store.walSync;
  rt.store.walSync = (fd, done) => sync(fd, (error) => held.push(() => done(error)));
  return held;
}

/** A sync issued by the runtime, its completion held: `release` delivers it once the real sync is back. */
interface IssuedSync {
  release(): Promise<void>;
}

/** Holds each WAL sync's completion in the order the syncs were issued (the syncs themselves run). */
function issueOrderSyncs(rt: SluiceRuntime): IssuedSync[] {
  const issued: IssuedSync[] = [];
  const sync = rt.store.walSync;
  rt.store.walSync = (fd, done) => {
    let returned: (() => void) | null = null;
    sync(fd, (error) => (returned = () => done(error)));
    issued.push({
      async release() {
        await loopUntil(() => returned !== null);
        (returned as unknown as () => void)();
      },
    });
  };
  return issued;
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

test('a group is answered and published only once its WAL sync returned; the next one commits and syncs meanwhile', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(SCHEMA);
    assert.equal(syncLevel(rt), 2, 'FULL outside a group');
    const before = rt.committedEpoch;
    const issued = issueOrderSyncs(rt);
    const answers: string[] = [];
    const a = rt.ingestGrouped('t', { insert: [{ id: 1, v: 10 }] });
    void a.then(() => answers.push('a'));
    assert.equal(syncLevel(rt), 1, "the open group's transaction runs at NORMAL");
    await loopUntil(() => issued.length > 0);
    assert.equal(issued.length, 1, 'the group committed and its sync was issued');
    assert.equal(rt.store.inTransaction, false);
    assert.equal(syncLevel(rt), 2, 'back at FULL after the deferred commit');
    assert.equal(answers.join(), '', 'not answered before the sync');
    assert.equal(rt.committedEpoch, before, 'not committed for readers before the sync');

    // The thread goes on: the next request's group commits and issues its own sync beside the first.
    const b = rt.ingestGrouped('t', { insert: [{ id: 2, v: 20 }] });
    void b.then(() => answers.push('b'));
    await loopUntil(() => issued.length > 1);
    assert.equal(issued.length, 2, 'two syncs in flight');
    assert.equal(rt.store.inTransaction, false);
    // A third group waits for one of them, applied but uncommitted.
    const c = rt.ingestGrouped('t', { insert: [{ id: 3, v: 30 }] });
    void c.then(() => answers.push('c'));
    await loopTurns(20);
    assert.equal(issued.length, 2, 'no third sync while two are in flight');
    assert.equal(rt.store.inTransaction, true, 'the third group waits, uncommitted');

    // The second sync returns first: it covers the first group's frames too, but the first sync may
    // still report an error of them, so nothing is answered until the first is back as well.
    await (issued[1] as IssuedSync).release();
    await loopTurns(20);
    assert.equal(answers.join(), '');
    assert.equal(rt.committedEpoch, before);
    assert.equal(rt.store.inTransaction, true, 'both syncs count as in flight until taken in order');
    await (issued[0] as IssuedSync).release();
    assert.equal((await b).epoch, before + 2);
    assert.deepEqual(answers, ['a', 'b'], 'answered in order, both by the first return');
    assert.equal((await a).epoch, before + 1);
    assert.equal(rt.committedEpoch, before + 2);
    // The third group committed as the syncs were taken; its own sync is in flight.
    assert.equal(rt.store.inTransaction, false);
    await loopUntil(() => issued.length > 2);
    assert.equal(rt.committedEpoch, before + 2, 'the third group waits for its own sync');
    await (issued[2] as IssuedSync).release();
    assert.equal((await c).epoch, before + 3);
    assert.equal(rt.committedEpoch, before + 3);
    assert.equal(rt.store.syncOwed, false);
    rt.close();
    const again = openRuntime(dir);
    assert.equal(again.committedEpoch, before + 3);
    assert.deepEqual(again.engine.viewSnapshot('s').rows, [{ total: 60, n: 3 }]);
    again.close();
  } finally {
    removeDir(dir);
  }
});

test('a read with two group syncs in flight syncs on the thread and completes both groups first', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(SCHEMA);
    const before = rt.committedEpoch;
    const issued = issueOrderSyncs(rt);
    const answers: string[] = [];
    void rt.ingestGrouped('t', { insert: [{ id: 1, v: 1 }] }).then(() => answers.push('a'));
    await loopUntil(() => issued.length > 0);
    void rt.ingestGrouped('t', { insert: [{ id: 2, v: 2 }] }).then(() => answers.push('b'));
    await loopUntil(() => issued.length > 1);
    assert.equal(answers.join(), '');
    rt.flush();
    assert.equal(rt.store.syncOwed, false);
    assert.equal(rt.committedEpoch, before + 2);
    await loopTurns(2);
    assert.deepEqual(answers, ['a', 'b']);
    // The late returns, in either order, change nothing; the next group goes the deferred way again.
    await (issued[1] as IssuedSync).release();
    await (issued[0] as IssuedSync).release();
    await loopTurns(5);
    assert.deepEqual(answers, ['a', 'b']);
    const c = rt.ingestGrouped('t', { insert: [{ id: 3, v: 3 }] });
    await loopUntil(() => issued.length > 2);
    assert.equal(rt.committedEpoch, before + 2);
    await (issued[2] as IssuedSync).release();
    assert.equal((await c).epoch, before + 3);
    assert.deepEqual(rt.engine.viewSnapshot('s').rows, [{ total: 6, n: 3 }]);
    rt.close();
  } finally {
    removeDir(dir);
  }
});

test('a failed sync fails the groups it covers even when a later sync returned first without an error', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(SCHEMA);
    const before = rt.committedEpoch;
    // The first sync issued reports a write error (as Linux's fsync would for a lost page).
    // Completions held by issue order (the real syncs may return in either order).
    const held: Array<() => void> = [];
    const sync = rt.store.walSync;
    let n = 0;
    rt.store.walSync = (fd, done) => {
      const index = n++;
      sync(
        fd,
        (error) => (held[index] = () => done(index === 0 ? new Error('EIO: i/o error, fdatasync') : error)),
      );
    };
    const outcomes: string[] = [];
    const a = rt.ingestGrouped('t', { insert: [{ id: 1, v: 1 }] });
    a.then(
      () => outcomes.push('a answered'),
      () => outcomes.push('a failed'),
    );
    await loopUntil(() => n > 0);
    const b = rt.ingestGrouped('t', { insert: [{ id: 2, v: 2 }] });
    b.then(
      () => outcomes.push('b answered'),
      () => outcomes.push('b failed'),
    );
    await loopUntil(() => held[0] !== undefined && held[1] !== undefined);
    // Deliver the later sync's success first, then the earlier one's error.
    const [first, second] = held;
    (second as () => void)();
    await loopTurns(5);
    assert.equal(outcomes.join(), '', 'a later sync alone answers nothing');
    (first as () => void)();
    await loopTurns(5);
    assert.deepEqual(outcomes.sort(), ['a failed', 'b failed']);
    assert.equal(rt.committedEpoch, before);
    rt.close();
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
