// Checkpoints written by the writer thread: the main thread's connection writes none of the rows
// (counted by SQLite's own total_changes()), what the thread commits restores exactly, a shutdown
// in the middle of a write abandons it for one written whole, a thread that keeps dying makes the
// runtime write on the main thread, and an in-memory runtime (which no second connection can reach)
// still writes its slices on the main thread; a keyed table's column blocks are the same bytes
// whichever thread wrote them.
import assert from 'node:assert/strict';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { test } from 'node:test';
import { failWriterThreadForTests } from '../../src/server/runtime/checkpoint-writer.ts';
import { MAX_WRITER_THREAD_DEATHS } from '../../src/server/runtime/checkpoints.ts';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import { openRuntime, removeDir, sortedRows, tempDir } from './helpers.ts';
import { ORDERS_SCHEMA, loadOrders } from './checkpoint-orders.ts';

// Never due by itself: the tests take the checkpoints. Slices of 0 ms yield every few hundred entries.
const POLICY: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9, sliceMs: 0 };

function mainConnectionChanges(rt: SluiceRuntime): number {
  return rt.checkpointFile.db.prepare('SELECT total_changes()').pluck().get() as number;
}

test('the writer thread writes a sliced checkpoint: the main connection writes no row of it', async () => {
  const dir = tempDir();
  const crashed = tempDir();
  try {
    const rt = openRuntime(dir, { checkpoint: POLICY });
    rt.executeScript(ORDERS_SCHEMA);
    loadOrders(rt, 0, 30_000);
    const before = mainConnectionChanges(rt);
    const full = await rt.checkpointInSlices();
    assert.ok(full !== null && full.full, 'the first checkpoint is full');
    assert.ok(full.upserts >= 30_000, `${full.upserts} entries written`);
    assert.equal(mainConnectionChanges(rt), before, 'no row was written through the main connection');
    assert.equal(
      rt.checkpoints.info()?.entries,
      full.entries,
      'the main connection reads what the thread wrote',
    );

    loadOrders(rt, 30_000, 2_000);
    const incremental = await rt.checkpointInSlices();
    assert.ok(incremental !== null && !incremental.full, 'then incremental');
    assert.equal(mainConnectionChanges(rt), before);
    assert.equal(
      rt.checkpoints.verify()?.epoch,
      rt.committedEpoch,
      'the stored checkpoint verifies end to end',
    );
    const expected = sortedRows(rt.engine.viewSnapshot('seller_totals').rows);
    const epoch = rt.committedEpoch;
    // SIGKILL now: the files as they are, with no final checkpoint.
    rt.flush();
    cpSync(dir, crashed, { recursive: true });
    rt.close();
    const reopened = openRuntime(crashed, { checkpoint: POLICY });
    try {
      assert.equal(reopened.recovery.checkpointEpoch, epoch, 'recovered from the thread-written checkpoint');
      assert.equal(reopened.recovery.fallbackReason, null);
      assert.deepEqual(sortedRows(reopened.engine.viewSnapshot('seller_totals').rows), expected);
    } finally {
      reopened.close();
    }
  } finally {
    removeDir(dir);
    removeDir(crashed);
  }
});

test('a shutdown during a thread-written checkpoint abandons it for one written whole', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir, { checkpoint: POLICY });
    rt.executeScript(ORDERS_SCHEMA);
    loadOrders(rt, 0, 40_000);
    const writing = rt.checkpointInSlices();
    // Let a few slices go by, then close while the thread is still writing.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    const status = rt.checkpointStatus();
    assert.equal(status.written, 0, 'the sliced checkpoint had not finished');
    const expected = sortedRows(rt.engine.viewSnapshot('seller_totals').rows);
    const epoch = rt.committedEpoch;
    rt.close();
    assert.equal(await writing, null, 'the abandoned write reports no checkpoint');
    const reopened = openRuntime(dir, { checkpoint: POLICY });
    try {
      assert.equal(reopened.recovery.checkpointEpoch, epoch, 'the shutdown checkpoint covers every epoch');
      assert.equal(reopened.recovery.replayedEntries, 0, 'nothing to replay');
      assert.deepEqual(sortedRows(reopened.engine.viewSnapshot('seller_totals').rows), expected);
    } finally {
      reopened.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('in memory, sliced checkpoints are written on the main thread', async () => {
  const rt = openRuntime(null as unknown as string, { dataDir: null, checkpoint: POLICY });
  try {
    rt.executeScript(ORDERS_SCHEMA);
    loadOrders(rt, 0, 3_000);
    const before = mainConnectionChanges(rt);
    const stats = await rt.checkpointInSlices();
    assert.ok(stats !== null && stats.full);
    // Blocks of entries: a few rows for 3,000 entries, all written by the main connection.
    assert.ok(mainConnectionChanges(rt) - before > 0, 'the main connection wrote the entries');
  } finally {
    rt.close();
  }
});

test('a writer thread that dies again and again: checkpoints go on, written on the main thread', async () => {
  const dir = tempDir();
  const crashed = tempDir();
  // The writer thread does not keep the process alive (unref'd); a server's sockets do, this here.
  const keepAlive = setInterval(() => {}, 1000);
  try {
    const rt = openRuntime(dir, { checkpoint: POLICY });
    rt.executeScript(ORDERS_SCHEMA);
    loadOrders(rt, 0, 3_000);
    // Deaths with a completed write between them do not add up.
    failWriterThreadForTests(MAX_WRITER_THREAD_DEATHS - 1);
    for (let i = 0; i < MAX_WRITER_THREAD_DEATHS - 1; i++) assert.equal(await rt.checkpointInSlices(), null);
    const before = mainConnectionChanges(rt);
    const ok = await rt.checkpointInSlices();
    assert.ok(ok !== null && ok.full, 'a new thread wrote a full checkpoint');
    assert.equal(mainConnectionChanges(rt), before, 'the thread wrote it');
    loadOrders(rt, 3_000, 1_000);
    failWriterThreadForTests(MAX_WRITER_THREAD_DEATHS);
    for (let i = 1; i <= MAX_WRITER_THREAD_DEATHS; i++) {
      assert.equal(await rt.checkpointInSlices(), null, `write ${i} fails: its thread died`);
      assert.equal(rt.checkpointStatus().writerFallback === null, i < MAX_WRITER_THREAD_DEATHS);
    }
    assert.equal(rt.checkpointStatus().failures, 2 + MAX_WRITER_THREAD_DEATHS);
    assert.match(rt.checkpointStatus().writerFallback ?? '', /died 3 times in a row/);
    failWriterThreadForTests(0);
    const fallback = await rt.checkpointInSlices();
    assert.ok(
      fallback !== null && fallback.full,
      'the next checkpoint is written (full: the failed ones took deltas)',
    );
    assert.ok(mainConnectionChanges(rt) - before > 0, 'by the main connection');
    const expected = sortedRows(rt.engine.viewSnapshot('seller_totals').rows);
    const epoch = rt.committedEpoch;
    rt.flush();
    cpSync(dir, crashed, { recursive: true });
    rt.close();
    const reopened = openRuntime(crashed, { checkpoint: POLICY });
    try {
      assert.equal(reopened.recovery.checkpointEpoch, epoch, 'recovered from the main-thread checkpoint');
      assert.deepEqual(sortedRows(reopened.engine.viewSnapshot('seller_totals').rows), expected);
    } finally {
      reopened.close();
    }
  } finally {
    clearInterval(keepAlive);
    failWriterThreadForTests(0);
    removeDir(dir);
    removeDir(crashed);
  }
});

test('close() returns once the writer thread has closed its connection: the directory can go at once', async () => {
  const dir = tempDir();
  try {
    for (let round = 0; round < 3; round++) {
      const rt = openRuntime(dir, { checkpoint: POLICY });
      if (round === 0) rt.executeScript(ORDERS_SCHEMA);
      loadOrders(rt, round * 2_000, 2_000);
      assert.ok((await rt.checkpointInSlices()) !== null, 'the thread wrote a checkpoint');
      rt.close();
      // The last connection to a WAL database removes its -wal and -shm files as it closes.
      const left = readdirSync(dir).filter((f) => f.startsWith('checkpoint') && /-(wal|shm)$/.test(f));
      assert.deepEqual(left, [], `round ${round}: the thread still had the checkpoint file open`);
    }
    rmSync(dir, { recursive: true });
  } finally {
    removeDir(dir);
  }
});

test('a keyed table written whole by the thread (keys put straight into its blocks) is stored as the main thread stores it', async () => {
  // Keys of every kind a table's key can be: safe integers of both signs and 0 (their text written
  // digit by digit), and a text key table beside it (encoded as before).
  const schema = `CREATE TABLE nums (k DOUBLE NOT NULL, v INTEGER, PRIMARY KEY (k));
CREATE TABLE texts (k TEXT NOT NULL, v INTEGER, PRIMARY KEY (k))`;
  const keys = [
    0,
    -1,
    1,
    9,
    10,
    99,
    100,
    -100,
    2 ** 53 - 1,
    -(2 ** 53 - 1),
    2 ** 53,
    1.5,
    -0.25,
    1e21,
    123456789,
  ];
  for (let i = 0; i < 5_000; i++) keys.push(i * 7919 - 20_000_000);
  const fill = (rt: SluiceRuntime): void => {
    rt.executeScript(schema);
    rt.ingest('nums', { insert: [...new Set(keys)].map((k, i) => ({ k, v: i % 3 === 0 ? null : i })) });
    rt.ingest('texts', { insert: Array.from({ length: 3_000 }, (_, i) => ({ k: `k"${i}\u00e9`, v: i })) });
  };
  const blocks = (rt: SluiceRuntime): unknown[] =>
    rt.checkpointFile.db
      .prepare(
        "SELECT state_id, entry_key, ord, value, kind FROM checkpoint_state WHERE kind = 'c' ORDER BY 1, 2",
      )
      .all();
  const threadDir = tempDir();
  const mainDir = tempDir();
  try {
    const thread = openRuntime(threadDir, { checkpoint: POLICY });
    const main = openRuntime(mainDir, { checkpoint: POLICY });
    try {
      fill(thread);
      fill(main);
      const before = mainConnectionChanges(thread);
      const sliced = await thread.checkpointInSlices();
      assert.ok(sliced !== null && sliced.full);
      assert.equal(mainConnectionChanges(thread), before, 'the thread wrote it');
      const whole = main.checkpoint();
      assert.ok(whole !== null && whole.full);
      const written = blocks(thread);
      assert.ok(written.length >= 4, `${written.length} column blocks`);
      assert.deepEqual(written, blocks(main));
    } finally {
      thread.close();
      main.close();
    }
  } finally {
    removeDir(threadDir);
    removeDir(mainDir);
  }
});
