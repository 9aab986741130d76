// The migration of a data file's ended-history records into one table (changelog-history-migration.ts),
// on the file e02f5e3 wrote (test/fixtures/history-e02f5e3): stopped part way it leaves the old form
// as it was, it runs once however often the file is opened, and a drop record an earlier version
// writes after it (that version creates its own table again) is brought in at the next open.
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { migrateChangelogHistory } from '../../src/storage/changelog-history-migration.ts';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';
import { removeDir, tempDir } from './helpers.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/history-e02f5e3/data-dir/', import.meta.url));

interface Form {
  readonly columns: string[];
  readonly ends: unknown[];
  readonly drops: unknown[] | null;
}

function formOf(db: Database.Database): Form {
  const columns = (db.pragma('table_info(changelog_history_ends)') as { name: string }[]).map((c) => c.name);
  const hasDrops =
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'changelog_drops'").get() !==
    undefined;
  return {
    columns,
    ends: db.prepare('SELECT * FROM changelog_history_ends ORDER BY view').all(),
    drops: hasDrops ? db.prepare('SELECT * FROM changelog_drops ORDER BY view').all() : null,
  };
}

function withFile<T>(dir: string, use: (db: Database.Database) => T): T {
  const db = new Database(join(dir, 'sluice.db'));
  try {
    return use(db);
  } finally {
    db.close();
  }
}

const MIGRATED: Form = {
  columns: ['view', 'incarnation', 'epoch', 'reason'],
  ends: [
    // The live `again` was created at its drop epoch: the record names it.
    { view: 'again', incarnation: 10, epoch: 3, reason: 'dropped' },
    { view: 'gone', incarnation: 0, epoch: 5, reason: 'dropped' },
    { view: 'totals', incarnation: 4, epoch: 4, reason: 'recomputed' },
  ],
  drops: null,
};

test('the ended-history migration: all or nothing, once, and again after an older version wrote', () => {
  const dir = tempDir('sluice-history-migration-');
  try {
    cpSync(FIXTURE, dir, { recursive: true });
    const old = withFile(dir, formOf);
    assert.deepEqual(old, {
      columns: ['view', 'incarnation', 'epoch'],
      ends: [{ view: 'totals', incarnation: 4, epoch: 4 }],
      drops: [
        { view: 'again', epoch: 3 },
        { view: 'gone', epoch: 5 },
      ],
    });
    // Stopped after the rows were merged, before the old table went: the transaction never commits.
    withFile(dir, (db) => {
      db.exec('BEGIN EXCLUSIVE');
      assert.throws(
        () =>
          migrateChangelogHistory(db, {
            beforeDropOld: () => {
              throw new Error('stopped');
            },
          }),
        /stopped/,
      );
      db.exec('ROLLBACK');
    });
    assert.deepEqual(withFile(dir, formOf), old);

    // Opened by the store: migrated; opened again: the same.
    for (let i = 0; i < 2; i++) {
      new SqliteStore({ dataDir: dir }).close();
      assert.deepEqual(withFile(dir, formOf), MIGRATED, `open ${i + 1}`);
    }

    // An earlier version opens it in between: it creates its drop table again and records drops
    // there (one older than the end recorded for that name).
    withFile(dir, (db) => {
      db.exec('CREATE TABLE changelog_drops (view TEXT PRIMARY KEY, epoch INTEGER NOT NULL)');
      db.exec("INSERT INTO changelog_drops VALUES ('gone', 7), ('totals', 2)");
    });
    new SqliteStore({ dataDir: dir }).close();
    assert.deepEqual(withFile(dir, formOf), {
      ...MIGRATED,
      ends: [
        { view: 'again', incarnation: 10, epoch: 3, reason: 'dropped' },
        { view: 'gone', incarnation: 0, epoch: 7, reason: 'dropped' },
        // The later record stays.
        { view: 'totals', incarnation: 4, epoch: 4, reason: 'recomputed' },
      ],
    });
  } finally {
    removeDir(dir);
  }
});
