// The journal file's page size (src/storage/sqlite-store.ts): a new data directory's sluice.db gets
// 16 KB pages (fewer WAL writes per group commit); a file written before keeps its own page size
// (WAL mode fixes it) and opens, with its rows, as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { JOURNAL_PAGE_SIZE, SqliteStore } from '../../src/storage/sqlite-store.ts';
import { openRuntime, removeDir, tempDir } from './helpers.ts';

function pageSize(store: SqliteStore): unknown {
  return store.db.pragma('page_size', { simple: true });
}

test('a new journal file has 16 KB pages; the checkpoint file keeps the default', () => {
  const dir = tempDir();
  try {
    const store = new SqliteStore({ dataDir: dir });
    assert.equal(JOURNAL_PAGE_SIZE, 16384);
    assert.equal(pageSize(store), JOURNAL_PAGE_SIZE);
    store.close();
    const other = new SqliteStore({ dataDir: dir, file: 'checkpoint.db', journal: false });
    assert.equal(pageSize(other), 4096);
    other.close();
  } finally {
    removeDir(dir);
  }
});

test('a journal file made with 4 KB pages keeps them and its data', async () => {
  const dir = tempDir();
  try {
    // A file as an earlier version made it: default pages, WAL, written by a server.
    const old = new Database(join(dir, 'sluice.db'));
    old.pragma('journal_mode = WAL');
    old.close();
    const rt = openRuntime(dir);
    assert.equal(pageSize(rt.store), 4096);
    rt.executeScript(`CREATE TABLE t (id INTEGER NOT NULL, PRIMARY KEY (id));
CREATE MATERIALIZED VIEW n AS SELECT COUNT(*) AS c FROM t`);
    await rt.ingestGrouped('t', { insert: Array.from({ length: 500 }, (_, id) => ({ id })) });
    rt.close();
    const again = openRuntime(dir);
    assert.equal(pageSize(again.store), 4096);
    assert.deepEqual(again.engine.viewSnapshot('n').rows, [{ c: 500 }]);
    again.close();
  } finally {
    removeDir(dir);
  }
});
