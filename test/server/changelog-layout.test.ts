// The changelog table's layout (src/storage/sqlite-store.ts): a new data directory's `changelog` is a
// rowid table with (view, epoch) in its own index; a file made before holds it WITHOUT ROWID and keeps
// it. Every operation of the changelog store answers the same over either layout, and a server
// restarts from a directory of the old layout with its stored changes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ChangelogStore } from '../../src/storage/changelog-store.ts';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';
import { openRuntime, removeDir, tempDir } from './helpers.ts';

/** The changelog table as every version before this layout created it. */
const OLD_CHANGELOG = `CREATE TABLE changelog (
  view TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  at INTEGER NOT NULL,
  message TEXT NOT NULL,
  prev INTEGER,
  checksum TEXT,
  PRIMARY KEY (view, epoch)
) WITHOUT ROWID`;

function changelogSql(db: Database.Database): string {
  const row = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'changelog'")
    .get() as {
    sql: string;
  };
  return row.sql;
}

/** A data directory whose sluice.db has the old changelog table (the rest made by the store). */
function oldLayoutDir(): string {
  const dir = tempDir();
  const db = new Database(join(dir, 'sluice.db'));
  db.pragma('journal_mode = WAL');
  db.exec(OLD_CHANGELOG);
  db.close();
  return dir;
}

test('a new file has a rowid changelog; an old file keeps its WITHOUT ROWID one', () => {
  const fresh = tempDir();
  const old = oldLayoutDir();
  try {
    const a = new SqliteStore({ dataDir: fresh });
    assert.doesNotMatch(changelogSql(a.db), /WITHOUT ROWID/i);
    a.close();
    const b = new SqliteStore({ dataDir: old });
    assert.match(changelogSql(b.db), /WITHOUT ROWID/i);
    b.close();
  } finally {
    removeDir(fresh);
    removeDir(old);
  }
});

/** The same workload on a store; what each operation answered, in order. */
function workload(log: ChangelogStore): unknown[] {
  const out: unknown[] = [];
  let seed = 7;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed % n;
  };
  log.register('v', 1, 0);
  log.register('w', 1, 0);
  for (let e = 1; e <= 300; e++) {
    // Entries of a few bytes to tens of KB (overflow pages in either layout); some epochs skipped.
    if (rand(5) === 0) continue;
    const view = rand(3) === 0 ? 'w' : 'v';
    log.append(view, e, e * 10, `{"e":${e},"c":"${'x'.repeat(rand(3) === 0 ? rand(40_000) : rand(200))}"}`);
    if (rand(7) === 0) log.append(view, e, e * 10, 'REWRITTEN (ignored)');
    if (e % 50 === 0) {
      out.push(['prune-epochs', log.prune('v', e, e * 10, { epochs: 120, ms: null })]);
      out.push(['prune-time', log.prune('w', e, e * 10, { epochs: null, ms: 1_500 })]);
    }
  }
  for (const view of ['v', 'w']) {
    out.push(['count', view, log.count(view), log.countAfter(view, 200)]);
    out.push(['read', view, log.read(view, 0, 1_000, 1_000)]);
    out.push(['read-range', view, log.read(view, 220, 260, 5)]);
    out.push(['get', view, log.get(view, 299), log.get(view, 298)]);
  }
  log.drop('w', 250, 300);
  out.push(['after-drop', log.count('w'), log.historyEnd('w')]);
  return out;
}

test('the changelog store answers the same over either layout', () => {
  const fresh = tempDir();
  const old = oldLayoutDir();
  try {
    const answers = [fresh, old].map((dir) => {
      const store = new SqliteStore({ dataDir: dir });
      const out = workload(new ChangelogStore(store.db));
      store.close();
      // Read again after a reopen (checksums verified on read).
      const again = new SqliteStore({ dataDir: dir });
      out.push(['reopened', new ChangelogStore(again.db).read('v', 0, 1_000, 1_000)]);
      again.close();
      return out;
    });
    assert.deepEqual(answers[1], answers[0]);
    assert.ok(JSON.stringify(answers[0]).length > 100_000, 'the workload stored large entries');
  } finally {
    removeDir(fresh);
    removeDir(old);
  }
});

test('a server restarts from a directory of the old layout with its changes', async () => {
  const dir = oldLayoutDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(`CREATE TABLE t (id INTEGER NOT NULL, g INTEGER NOT NULL, PRIMARY KEY (id));
CREATE MATERIALIZED VIEW n AS SELECT g, COUNT(*) AS c FROM t GROUP BY g`);
    for (let b = 0; b < 5; b++) {
      await rt.ingestGrouped('t', {
        insert: Array.from({ length: 200 }, (_, i) => ({ id: b * 200 + i, g: i % 7 })),
      });
    }
    const stored = rt.store.db.prepare("SELECT COUNT(*) AS n FROM changelog WHERE view = 'n'").get() as {
      n: number;
    };
    assert.equal(stored.n, 5);
    rt.close();
    const again = openRuntime(dir);
    assert.match(changelogSql(again.store.db), /WITHOUT ROWID/i);
    const counts = new Map<number, number>();
    for (let id = 0; id < 1_000; id++) counts.set((id % 200) % 7, (counts.get((id % 200) % 7) ?? 0) + 1);
    assert.deepEqual(
      again.engine
        .viewSnapshot('n')
        .rows.map((r) => [Number(r.g), Number(r.c)])
        .sort((x, y) => (x[0] as number) - (y[0] as number)),
      [...counts].sort((x, y) => x[0] - y[0]),
    );
    const after = again.store.db.prepare("SELECT COUNT(*) AS n FROM changelog WHERE view = 'n'").get() as {
      n: number;
    };
    assert.equal(after.n, 5);
    again.close();
  } finally {
    removeDir(dir);
  }
});
