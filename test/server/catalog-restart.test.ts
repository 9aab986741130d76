// Recovery from a checkpoint rebuilds the catalog from the DDL entries of its live objects (recorded
// with each DDL statement), not from every DDL statement ever run: a server that created and dropped
// thousands of objects restarts in the time its live catalog takes. A data file without that record
// (written before it existed), or with one that does not rebuild the checkpoint's catalog, is
// recovered from the whole DDL history as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/exec/engine.ts';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import { openRuntime, removeDir, sortedRows, tempDir } from './helpers.ts';

const policy: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9 };
const CYCLES = 40;

/** Opens `dir` with an engine that counts the statements it executes (replayed ones, at start). */
function reopen(dir: string): { rt: SluiceRuntime; executed: () => number } {
  let executed = 0;
  const rt = openRuntime(dir, {
    checkpoint: policy,
    createEngine: () => {
      const engine = new Engine();
      const execute = engine.execute.bind(engine);
      engine.execute = (sql, options) => {
        executed += 1;
        return execute(sql, options);
      };
      return engine;
    },
  });
  return { rt, executed: () => executed };
}

function contents(rt: SluiceRuntime): Record<string, unknown> {
  const show = (sql: string) => rt.execute(sql)[0]?.rows ?? [];
  return {
    tables: show('SHOW TABLES'),
    views: show('SHOW VIEWS'),
    functions: show('SHOW FUNCTIONS'),
    totals: sortedRows(rt.engine.viewSnapshot('totals').rows),
    scaled: sortedRows(rt.engine.viewSnapshot('scaled').rows),
  };
}

/** A live catalog of 5 entries (a function replaced once) after 3·CYCLES statements of churn. */
function churn(rt: SluiceRuntime): void {
  rt.executeScript(`CREATE TABLE orders (id BIGINT PRIMARY KEY, seller INTEGER NOT NULL, amount INTEGER NOT NULL);
CREATE FUNCTION twice(x integer) RETURNS integer RETURN x * 2`);
  for (let i = 0; i < CYCLES; i++) {
    rt.executeScript(`CREATE TABLE t (a INTEGER);
CREATE MATERIALIZED VIEW per_a AS SELECT a, COUNT(*) AS n FROM t GROUP BY a;
DROP TABLE t CASCADE`);
    if (i === CYCLES / 2)
      rt.execute('CREATE OR REPLACE FUNCTION twice(x integer) RETURNS integer RETURN x + x');
  }
  rt.executeScript(`CREATE MATERIALIZED VIEW totals AS SELECT seller, SUM(amount) AS total FROM orders GROUP BY seller;
CREATE MATERIALIZED VIEW scaled AS SELECT seller, twice(total) AS t2 FROM totals`);
  rt.ingest('orders', {
    insert: Array.from({ length: 50 }, (_, i) => ({ id: i, seller: i % 7, amount: i })),
  });
}

test('a restart from a checkpoint replays only the live catalog, and the state is the same', () => {
  const origin = tempDir();
  const dir = tempDir();
  try {
    let expected: Record<string, unknown>;
    const rt = openRuntime(origin, { checkpoint: policy });
    try {
      churn(rt);
      assert.notEqual(rt.checkpoint(), null);
      // After the checkpoint: more DDL and a batch, replayed from the journal's tail.
      rt.executeScript(`CREATE TABLE t (a INTEGER); DROP TABLE t;
CREATE MATERIALIZED VIEW big AS SELECT id FROM orders WHERE amount > 40`);
      rt.ingest('orders', { insert: [{ id: 100, seller: 1, amount: 1000 }] });
      rt.flush();
      expected = contents(rt);
      // As kill -9 leaves it (closing would take a checkpoint of everything).
      cpSync(origin, dir, { recursive: true });
    } finally {
      rt.close();
    }
    const first = reopen(dir);
    try {
      // 5 live entries before the checkpoint + 3 after it; replaying the history would be 3·40 more.
      assert.equal(first.executed(), 5 + 3);
      assert.deepEqual(contents(first.rt), expected);
      // The catalog goes on changing and a second restart (from a new checkpoint) is exact too.
      first.rt.execute('DROP MATERIALIZED VIEW big');
      first.rt.ingest('orders', { insert: [{ id: 101, seller: 2, amount: 7 }] });
      assert.notEqual(first.rt.checkpoint(), null);
      expected = contents(first.rt);
    } finally {
      first.rt.close();
    }
    const second = reopen(dir);
    try {
      assert.equal(second.executed(), 5);
      assert.deepEqual(contents(second.rt), expected);
    } finally {
      second.rt.close();
    }
  } finally {
    removeDir(origin);
    removeDir(dir);
  }
});

test('a data file without the catalog record (or with a wrong one) recovers from the whole DDL history', () => {
  const dir = tempDir();
  try {
    let expected: Record<string, unknown>;
    const rt = openRuntime(dir, { checkpoint: policy });
    try {
      churn(rt);
      assert.notEqual(rt.checkpoint(), null);
      expected = contents(rt);
    } finally {
      rt.close();
    }
    const all = 2 + 3 * CYCLES + 1 + 2;
    // As a data file written before the record existed.
    const db = new Database(join(dir, 'sluice.db'));
    db.exec('DELETE FROM catalog_snapshots');
    db.close();
    const old = reopen(dir);
    try {
      assert.equal(old.executed(), all);
      assert.deepEqual(contents(old.rt), expected);
    } finally {
      old.rt.close();
    }
    // That recovery recorded the catalog (and closing took a checkpoint): the next restart replays
    // only the live one.
    const recorded = reopen(dir);
    try {
      assert.equal(recorded.executed(), 5);
      assert.deepEqual(contents(recorded.rt), expected);
    } finally {
      recorded.rt.close();
    }
    // A record naming a dropped object's entries too (checksum and all): not the checkpoint's
    // catalog, so the history is replayed and the state is still the same.
    const tamper = new Database(join(dir, 'sluice.db'));
    const row = tamper.prepare('SELECT ddl_offset FROM catalog_snapshots ORDER BY ddl_offset DESC').get() as {
      ddl_offset: number;
    };
    tamper.close();
    const wrong = reopen(dir);
    try {
      wrong.rt.catalogSnapshots.write(row.ddl_offset, [1, 2, 3]);
    } finally {
      wrong.rt.close();
    }
    const fallback = reopen(dir);
    try {
      assert.equal(fallback.executed(), 3 + all);
      assert.deepEqual(contents(fallback.rt), expected);
    } finally {
      fallback.rt.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('a script of many CREATEs records the catalog once, after its last statement', () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir, { checkpoint: policy });
    try {
      const n = 120;
      rt.executeScript(Array.from({ length: n }, (_, i) => `CREATE TABLE t${i} (a INTEGER)`).join(';\n'));
      rt.flush();
      const rows = rt.store.db.prepare('SELECT ddl_offset, entries FROM catalog_snapshots').all() as {
        ddl_offset: number;
        entries: string;
      }[];
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.entries.split(',').length, n);
    } finally {
      rt.close();
    }
  } finally {
    removeDir(dir);
  }
});
