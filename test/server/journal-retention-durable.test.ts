// Journal retention deletes only what a checkpoint known to survive a power loss covers. The writer
// thread commits its checkpoints at synchronous=NORMAL (no fsync at COMMIT: a process kill loses
// nothing, a power loss may take the file back to an older commit) and makes one durable now and
// then (the WAL copied into the file with its fsyncs); only then does the offset retention may
// delete up to move. A checkpoint written on the main thread (synchronous=FULL) or loaded at a
// start (the files synced then) is durable at once.
import assert from 'node:assert/strict';
import fs, { statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve } from 'node:path';
import { test } from 'node:test';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import type { CheckpointPolicy, RuntimeOptions } from '../../src/server/runtime/types.ts';
import { inTempRuntime, openRuntime, removeDir, tempDir } from './helpers.ts';

const HOUR = 3_600_000;
/** Never due by itself: the tests take the checkpoints; and no durable point of the thread's own. */
const RARELY_DURABLE: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9, sliceMs: 0, durableIntervalMs: 1e9 };

function open(dir: string, checkpoint: CheckpointPolicy = RARELY_DURABLE): SluiceRuntime {
  const options: Partial<RuntimeOptions> = { checkpoint, journalRetention: { ms: HOUR, sliceRows: 1000 } };
  return openRuntime(dir, options);
}

function tableBatches(rt: SluiceRuntime): number {
  return rt.store.db
    .prepare("SELECT COUNT(*) AS n FROM journal WHERE kind = 'batch' AND target IS NOT NULL")
    .pluck()
    .get() as number;
}

function fill(rt: SluiceRuntime, batches: number, from = 0): void {
  if (from === 0) {
    rt.executeScript(`CREATE TABLE t (id BIGINT PRIMARY KEY, g INTEGER NOT NULL);
CREATE MATERIALIZED VIEW per_g AS SELECT g, COUNT(*) AS n FROM t GROUP BY g`);
  }
  for (let i = from; i < from + batches; i++) rt.ingest('t', { insert: [{ id: i, g: i % 5 }] });
}

/** Runs retention's slices with the clock past the retention; the batches deleted, or null if no slice may run. */
function trim(rt: SluiceRuntime): number | null {
  let deleted = 0;
  for (let first = true; ; first = false) {
    const slice = rt.trimJournalSlice(Date.now() + 2 * HOUR);
    if (slice === null) return first ? null : deleted;
    deleted += slice.deleted;
    if (!slice.more) return deleted;
  }
}

test("the writer thread's connection runs at synchronous=NORMAL, its WAL copied only at its own durable points", async () => {
  return inTempRuntime(open, async (rt) => {
    const settings = await rt.writerSettingsForTests();
    assert.deepEqual(settings, { synchronous: 1, walAutocheckpoint: 0, journalMode: 'wal' });
  });
});

test('a checkpoint the writer thread committed without a sync gates nothing; a durable one lets retention delete up to it', async () => {
  return inTempRuntime(open, async (rt) => {
    fill(rt, 40);
    const written = await rt.checkpointInSlices();
    assert.ok(written !== null);
    assert.equal(trim(rt), null, 'nothing is deleted below a checkpoint a power loss could take back');
    assert.equal(tableBatches(rt), 40);
    const status = rt.checkpointStatus();
    assert.equal(status.journalOffset, written.journalOffset);
    assert.equal(status.durableJournalOffset, null, 'committed, not yet known durable');
    assert.ok(statSync(`${rt.checkpointFile.path}-wal`).size > 0, 'the commit is in the WAL, not copied');

    // A checkpoint on the main thread's connection (synchronous=FULL) is durable at its COMMIT.
    fill(rt, 10, 40);
    const synced = rt.checkpoint();
    assert.ok(synced !== null);
    assert.equal(rt.checkpointStatus().durableJournalOffset, synced.journalOffset);
    // The journal's last entry stays (the next offset continues from it).
    assert.equal(trim(rt), 49);
    assert.equal(tableBatches(rt), 1);

    // A later unsynced one does not move the durable offset.
    fill(rt, 10, 50);
    await rt.checkpointInSlices();
    assert.equal(rt.checkpointStatus().durableJournalOffset, synced.journalOffset);
    // Only the batch kept as the journal's last entry, at the durable offset, goes now.
    assert.equal(trim(rt), 1);
    assert.equal(trim(rt), 0, 'nothing above the durable checkpoint is due');
    assert.equal(tableBatches(rt), 10);
  });
});

test("the writer thread's durable point syncs the file and starts the WAL over; the offset retention deletes up to follows it", async () => {
  return inTempRuntime(
    (dir) => open(dir, { ...RARELY_DURABLE, durableIntervalMs: 0 }),
    async (rt) => {
      fill(rt, 30);
      const written = await rt.checkpointInSlices();
      assert.ok(written !== null);
      assert.equal(rt.checkpointStatus().durableJournalOffset, written.journalOffset);
      assert.equal(statSync(`${rt.checkpointFile.path}-wal`).size, 0, 'the WAL was copied and truncated');
      assert.equal(trim(rt), 29);
    },
  );
});

test('a checkpoint loaded at a start is synced then, and retention may delete what it covers', async () => {
  const dir = tempDir();
  try {
    const rt = open(dir);
    let covered: number;
    try {
      fill(rt, 20);
      const written = await rt.checkpointInSlices();
      assert.ok(written !== null);
      covered = written.journalOffset;
      assert.equal(rt.checkpointStatus().durableJournalOffset, null);
    } finally {
      // A kill would leave the same files: close() writes no checkpoint when nothing changed since.
      rt.close();
    }
    const again = open(dir);
    try {
      assert.equal(again.recovery.checkpointOffset, covered);
      assert.equal(again.checkpointStatus().durableJournalOffset, covered);
      assert.equal(trim(again), 19);
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
  }
});

/** Runs `body` with every fsyncSync of this process recorded by the path its descriptor was opened with. */
function recordingFsyncs<T>(body: () => T): { result: T; synced: string[] } {
  const { openSync, fsyncSync } = fs;
  const opened = new Map<number, string>();
  const synced: string[] = [];
  fs.openSync = ((
    path: fs.PathLike,
    ...rest: Parameters<typeof openSync> extends [unknown, ...infer R] ? R : never
  ) => {
    const fd = openSync(path, ...rest);
    opened.set(fd, resolve(String(path)));
    return fd;
  }) as typeof openSync;
  fs.fsyncSync = (fd: number) => {
    synced.push(opened.get(fd) ?? `fd ${fd}`);
    fsyncSync(fd);
  };
  syncBuiltinESMExports();
  try {
    return { result: body(), synced };
  } finally {
    fs.openSync = openSync;
    fs.fsyncSync = fsyncSync;
    syncBuiltinESMExports();
  }
}

test('a first start syncs the data directory, so the new checkpoint.db keeps its name once a durable point syncs the file', () => {
  const dir = tempDir();
  try {
    const { result: rt, synced } = recordingFsyncs(() => open(dir));
    try {
      assert.equal(rt.recovery.checkpointOffset, null);
      assert.ok(synced.includes(resolve(dir)), `the data directory was not synced: ${synced.join(', ')}`);
    } finally {
      rt.close();
    }
  } finally {
    removeDir(dir);
  }
});

test("a checkpoint loaded at a start is made durable with its directory: the WAL's name may be the killed process's, never synced", async () => {
  const dir = tempDir();
  try {
    const rt = open(dir);
    try {
      fill(rt, 5);
      assert.ok((await rt.checkpointInSlices()) !== null);
    } finally {
      rt.close();
    }
    const { result: again, synced } = recordingFsyncs(() => open(dir));
    try {
      assert.ok(again.checkpointStatus().durableJournalOffset !== null);
      // The files first, then the directory holding their names, before anything may be deleted.
      assert.ok(synced.includes(resolve(dir, 'checkpoint.db')), synced.join(', '));
      assert.ok(synced.includes(resolve(dir)), `the data directory was not synced: ${synced.join(', ')}`);
      assert.ok(synced.indexOf(resolve(dir)) > synced.indexOf(resolve(dir, 'checkpoint.db')));
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
  }
});
