// A checkpoint written in slices while ingest goes on must hold exactly the state of the epoch it
// was taken at: a crash right after it commits restarts from it plus the journal tail into the
// same views as the uninterrupted run (the outside attack's "negative multiplicity in min state").
// The crash is a copy of the data directory taken while the server runs with no transaction open:
// what a SIGKILL at that moment would leave on disk.
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { test } from 'node:test';
import { Engine } from '../../src/index.ts';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import { CheckpointStore } from '../../src/storage/checkpoint-store.ts';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';
import { mulberry32 } from '../support/checkpoint-workload.ts';
import { openRuntime, removeDir, sortedRows, tempDir } from './helpers.ts';

const SCHEMA = `CREATE TABLE orders (id BIGINT NOT NULL, seller INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (id));
CREATE MATERIALIZED VIEW seller_stats AS SELECT seller, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi, COUNT(DISTINCT amount) AS kinds, COUNT(*) AS n FROM orders GROUP BY seller;
CREATE MATERIALIZED VIEW histogram AS SELECT FLOOR(total / 100) AS bucket, COUNT(*) AS sellers FROM seller_stats GROUP BY FLOOR(total / 100)`;

const SELLERS = 1500;

test('a checkpoint written in slices while epochs run restores to the state of its own epoch', async () => {
  const dir = tempDir();
  const crashed = tempDir();
  // Never due by itself: the test takes the checkpoints. Slices of 0 ms yield every few hundred entries.
  const policy: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9, sliceMs: 0 };
  try {
    const rt = openRuntime(dir, { checkpoint: policy });
    rt.executeScript(SCHEMA);
    const rnd = mulberry32(7);
    const live = new Map<number, { id: number; seller: number; amount: number }>();
    let nextId = 1;
    const batch = (size: number) => {
      const insert: { id: number; seller: number; amount: number }[] = [];
      const del: { id: number }[] = [];
      for (let i = 0; i < size; i++) {
        // Few distinct amounts per seller, so later batches change counts of values already held.
        const row = { id: nextId++, seller: Math.floor(rnd() * SELLERS), amount: Math.floor(rnd() * 4) * 10 };
        insert.push(row);
      }
      const ids = [...live.keys()];
      for (let i = 0; i < size / 2 && ids.length > 0; i++) {
        const id = ids.splice(Math.floor(rnd() * ids.length), 1)[0] as number;
        del.push({ id });
        live.delete(id);
      }
      for (const r of insert) live.set(r.id, r);
      return { insert, delete: del };
    };
    for (let i = 0; i < 10; i++) rt.ingest('orders', batch(1000));
    assert.ok(rt.checkpoint()?.full, 'the first checkpoint is full');
    // Every group changes, so the next (incremental) checkpoint writes thousands of entries.
    for (let i = 0; i < 4; i++) rt.ingest('orders', batch(1000));

    const writing = rt.checkpointInSlices();
    let settled = false;
    void writing.then(() => (settled = true));
    let during = 0;
    while (!settled) {
      await rt.ingestGrouped('orders', batch(200));
      during += 1;
    }
    const stats = await writing;
    assert.ok(stats !== null && !stats.full, 'an incremental checkpoint was written');
    assert.ok(during >= 3, `epochs ran between the checkpoint's slices (${during})`);
    assert.ok(rt.committedEpoch > stats.epoch);

    // SIGKILL now: the files as they are, with no final checkpoint.
    rt.flush();
    cpSync(dir, crashed, { recursive: true });
    const expected = {
      epoch: rt.committedEpoch,
      stats: sortedRows(rt.engine.viewSnapshot('seller_stats').rows),
      histogram: sortedRows(rt.engine.viewSnapshot('histogram').rows),
    };
    rt.close();

    const again = openRuntime(crashed, { checkpoint: policy });
    try {
      assert.equal(again.recovery.checkpointEpoch, stats.epoch, 'recovered from the sliced checkpoint');
      assert.equal(again.recovery.fallbackReason, null);
      assert.equal(again.committedEpoch, expected.epoch);
      assert.deepEqual(sortedRows(again.engine.viewSnapshot('seller_stats').rows), expected.stats);
      assert.deepEqual(sortedRows(again.engine.viewSnapshot('histogram').rows), expected.histogram);
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
    removeDir(crashed);
  }
});

// The shape of the defect, made on purpose: a checkpoint whose state is from beyond the journal
// offset it records. For a SUM over a keyless table nothing fails when the tail is replayed on top
// of it — the total is silently counted twice — so recovery checks every replayed epoch against the
// changelog stored before the restart, and on a difference recovers from the whole journal instead
// and says so.
test('a checkpoint that disagrees with the journal is found at start; the journal alone recovers', () => {
  const dir = tempDir();
  const policy: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9 };
  const schema = `CREATE TABLE ledger (acct INTEGER NOT NULL, amt BIGINT NOT NULL);
CREATE MATERIALIZED VIEW balances AS SELECT acct, SUM(amt) AS total, COUNT(*) AS n FROM ledger GROUP BY acct`;
  try {
    const batches = Array.from({ length: 12 }, (_, b) => ({
      insert: Array.from({ length: 5 }, (_, i) => ({ acct: (b + i) % 3, amt: 10 * b + i })),
    }));
    const rt = openRuntime(dir, { checkpoint: policy });
    rt.executeScript(schema);
    for (const b of batches) rt.ingest('ledger', b);
    const expected = sortedRows(rt.engine.viewSnapshot('balances').rows);
    const lastOffset = rt.log.lastOffset;
    rt.close();

    // The whole state, with the epoch and positions of three batches earlier and their offset.
    const stateAt = (n: number) => {
      const engine = new Engine();
      engine.setStateTracking(true);
      engine.execute(schema);
      for (const b of batches.slice(0, n)) engine.applyChanges('ledger', b);
      return engine.takeCheckpoint(true);
    };
    const earlier = stateAt(batches.length - 3);
    const file = new SqliteStore({ dataDir: dir, file: 'checkpoint.db', journal: false });
    const cps = new CheckpointStore(file.db);
    cps.clear();
    cps.write(
      { ...stateAt(batches.length), epoch: earlier.epoch, positions: earlier.positions },
      lastOffset - 3,
    );
    file.close();

    const again = openRuntime(dir, { checkpoint: policy });
    try {
      assert.equal(again.recovery.checkpointEpoch, null, 'the checkpoint was not used');
      assert.match(again.recovery.fallbackReason ?? '', /checkpoint disagrees with the journal/);
      assert.equal(again.recovery.replayedEntries, lastOffset, 'the whole journal was replayed');
      assert.deepEqual(sortedRows(again.engine.viewSnapshot('balances').rows), expected);
      // The next checkpoint is full and good: a restart after it uses it.
      assert.ok(again.checkpoint()?.full);
    } finally {
      again.close();
    }
    const third = openRuntime(dir, { checkpoint: policy });
    try {
      assert.equal(third.recovery.fallbackReason, null);
      assert.deepEqual(sortedRows(third.engine.viewSnapshot('balances').rows), expected);
    } finally {
      third.close();
    }
  } finally {
    removeDir(dir);
  }
});
