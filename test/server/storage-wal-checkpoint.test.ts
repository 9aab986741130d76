// The journal file's WAL checkpoints (src/storage/wal-checkpointer.ts): run from a worker thread's
// connection, not inside a COMMIT; the WAL stays within its hard bound whatever the worker does
// (counted in bytes of the -wal file and in checkpoint runs, never in time); and the directory's
// own lock (sluice.lock) still refuses a second server, in this process or another, until the
// owner closes or dies.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SluiceError } from '../../src/common/errors.ts';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';
import { removeDir, tempDir } from './helpers.ts';

const SOFT = 64 * 1024;
/** One commit's rows: 8 rows of 4 KB text, about 2-3 pages of 16 KB with the b-tree's own. */
const ROW = 'x'.repeat(4096);

function commitSome(store: SqliteStore, n: number): void {
  store.begin();
  const insert = store.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
  for (let i = 0; i < 8; i++) insert.run(`k${n}-${i}`, ROW);
  store.commit();
}

function walBytes(dir: string): number {
  return statSync(join(dir, 'sluice.db-wal')).size;
}

/** The WAL header's checkpoint sequence number: how many times the WAL was started over. */
function walRestarts(dir: string): number {
  return readFileSync(join(dir, 'sluice.db-wal')).readUInt32BE(12);
}

function isLocked(e: unknown): boolean {
  return e instanceof SluiceError && e.code === 'STATE_ERROR' && /another Sluice server/.test(e.hint ?? '');
}

test('past the hard bound the thread checkpoints itself: the WAL stays bounded', () => {
  const dir = tempDir();
  try {
    const store = new SqliteStore({
      dataDir: dir,
      walCheckpoint: { softBytes: SOFT, hardBytes: 4 * SOFT, thread: false },
    });
    const checkpointer = store.walCheckpointer;
    assert.ok(checkpointer !== null);
    // Not SQLite's autocheckpoint: it is off on this connection.
    assert.equal(store.db.pragma('wal_autocheckpoint', { simple: true }), 0);
    let largest = 0;
    let before = 0;
    let grewMost = 0;
    for (let n = 0; n < 200; n++) {
      commitSome(store, n);
      const size = walBytes(dir);
      largest = Math.max(largest, size);
      grewMost = Math.max(grewMost, size - before);
      before = size;
    }
    // 200 commits of ≥ 32 KB each: ≥ 6.4 MB written, never more than the bound and one commit held.
    assert.ok(checkpointer.counts.onThread >= 10, `on-thread runs ${checkpointer.counts.onThread}`);
    assert.equal(checkpointer.counts.offThread, 0);
    assert.ok(largest <= 4 * SOFT + grewMost, `largest WAL ${largest} bytes`);
    store.close();
    const again = new SqliteStore({ dataDir: dir });
    const rows = again.db.prepare("SELECT COUNT(*) AS c FROM meta WHERE key LIKE 'k%'").get() as {
      c: number;
    };
    assert.equal(rows.c, 200 * 8);
    again.close();
  } finally {
    removeDir(dir);
  }
});

test('the worker checkpoints off the thread; once it caught up the next commit restarts the WAL', async () => {
  const dir = tempDir();
  try {
    // A hard bound out of reach: the new file's schema alone passes 4 × SOFT.
    const store = new SqliteStore({
      dataDir: dir,
      walCheckpoint: { softBytes: SOFT, hardBytes: 1000 * SOFT },
    });
    const checkpointer = store.walCheckpointer;
    assert.ok(checkpointer !== null);
    let n = 0;
    while (checkpointer.counts.offThread === 0) commitSome(store, n++);
    const before = walBytes(dir);
    const sequence = walRestarts(dir);
    assert.ok(before > SOFT);
    while (checkpointer.running) await new Promise((resolve) => setTimeout(resolve, 5));
    // Every committed frame is in sluice.db now: this commit starts the WAL over (its header's
    // checkpoint sequence moves on) and truncates the file to the bound or to its own frames.
    commitSome(store, n++);
    assert.equal(walRestarts(dir), sequence + 1);
    assert.ok(walBytes(dir) <= before, `WAL ${before} → ${walBytes(dir)} bytes`);
    assert.equal(checkpointer.counts.onThread, 0);
    assert.equal(checkpointer.counts.failed, 0);
    // Shutdown with a run in flight: the worker finishes it and closes before the store does.
    while (checkpointer.counts.offThread < 2) commitSome(store, n++);
    store.close();
    const again = new SqliteStore({ dataDir: dir });
    const rows = again.db.prepare("SELECT COUNT(*) AS c FROM meta WHERE key LIKE 'k%'").get() as {
      c: number;
    };
    assert.equal(rows.c, n * 8);
    again.close();
  } finally {
    removeDir(dir);
  }
});

test('a second server on the directory is refused, from another process too, until the owner dies', async () => {
  const dir = tempDir();
  try {
    const owner = new SqliteStore({ dataDir: dir });
    assert.throws(() => new SqliteStore({ dataDir: dir }), isLocked);
    owner.close();
    // Another process holds the directory, then is killed: the kernel drops its lock.
    const script = `import { SqliteStore } from ${JSON.stringify(join(process.cwd(), 'src/storage/sqlite-store.ts'))};
new SqliteStore({ dataDir: ${JSON.stringify(dir)} });
process.stdout.write('open\\n');
setInterval(() => undefined, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('open')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`the owner process exited (${code})`)));
    });
    assert.throws(() => new SqliteStore({ dataDir: dir }), isLocked);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const after = new SqliteStore({ dataDir: dir });
    after.close();
  } finally {
    removeDir(dir);
  }
});
