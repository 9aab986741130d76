// A DDL entry records the binding rules it was accepted under, and its replay binds by them: a table
// created with a `bpchar` column (PostgreSQL's unlimited blank-padded type) comes back after a
// kill -9 as it was created, where replaying it under the older rules made it char(1) and refused
// the rows it had accepted. An entry journaled before the rules were recorded still replays under
// the older rules (its `bpchar` column is char(1), as when it was accepted).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';
import { TableLog } from '../../src/storage/table-log.ts';
import { BINDING_RULES } from '../../src/planner/journaled-binding.ts';
import type { SluiceError } from '../../src/common/errors.ts';
import { afterCrash, openRuntime, removeDir, tempDir } from './helpers.ts';

const SCHEMA = `CREATE TABLE t (id integer PRIMARY KEY, b bpchar);
CREATE MATERIALIZED VIEW lens AS SELECT id, b, octet_length(b) AS n FROM t`;

test('a table with a bpchar column created now comes back unlimited after a kill -9', () => {
  let before: unknown;
  afterCrash(
    (first) => {
      first.executeScript(SCHEMA);
      first.executeScript(`INSERT INTO t VALUES (1, 'ab   '), (2, 'x')`);
      before = first.engine.execute('SELECT id, b, n FROM lens ORDER BY id')[0]?.rows;
      const stamped = first.store.db
        .prepare("SELECT COUNT(*) AS n FROM journal WHERE kind = 'ddl' AND positions IS NOT NULL")
        .get() as { n: number };
      assert.equal(stamped.n, 2, 'both DDL entries carry their rules');
    },
    (again) => {
      assert.deepEqual(again.engine.execute('SELECT id, b, n FROM lens ORDER BY id')[0]?.rows, before);
      // Still unlimited: a longer value is taken, as before the restart.
      again.executeScript(`INSERT INTO t VALUES (3, 'abcdef')`);
      assert.deepEqual(again.engine.execute('SELECT b FROM t WHERE id = 3')[0]?.rows, [{ b: 'abcdef' }]);
    },
  );
});

test('a DDL entry from before the rules were recorded replays under the older rules', () => {
  const dir = tempDir();
  try {
    const store = new SqliteStore({ dataDir: dir });
    const log = new TableLog(store, { beforeAppend: () => undefined, afterDdl: () => undefined });
    // As an older server wrote it: no rules.
    log.appendDdl({ epoch: 0, sql: 'CREATE TABLE old (id integer PRIMARY KEY, b bpchar)' });
    log.appendDdl({
      epoch: 0,
      sql: 'CREATE TABLE new (id integer PRIMARY KEY, b bpchar)',
      rules: BINDING_RULES,
    });
    store.commit();
    const entries = [...log.entries()];
    assert.deepEqual(
      entries.map((e) => (e.kind === 'ddl' ? e.rules : null)),
      [undefined, BINDING_RULES],
    );
    store.close();
    const runtime = openRuntime(dir, { checkpoint: null });
    try {
      assert.throws(() => runtime.engine.execute(`INSERT INTO old VALUES (1, 'ab')`), {
        code: 'STRING_TOO_LONG',
      });
      runtime.engine.execute(`INSERT INTO new VALUES (1, 'ab')`);
      assert.deepEqual(runtime.engine.execute('SELECT b FROM new')[0]?.rows, [{ b: 'ab' }]);
    } finally {
      runtime.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('a DDL entry whose recorded rules are damaged is refused by name, not replayed under a guess', () => {
  const dir = tempDir();
  try {
    const store = new SqliteStore({ dataDir: dir });
    const log = new TableLog(store, { beforeAppend: () => undefined, afterDdl: () => undefined });
    log.appendDdl({ epoch: 0, sql: 'CREATE TABLE t (id integer PRIMARY KEY)', rules: BINDING_RULES });
    store.commit();
    // Rewritten with a checksum over what is written (the journal's own formula, table-log.ts), as
    // a server with a bug in writing them would leave it: the rules are read, and refused.
    const positions = '{"rules":"x"}';
    const sql = 'CREATE TABLE t (id integer PRIMARY KEY)';
    const checksum = createHash('sha1')
      .update(`1\u0000ddl\u00000\u0000\u0000${positions}\u0000`)
      .update(sql)
      .digest('base64')
      .slice(0, 16);
    store.db
      .prepare('UPDATE journal SET positions = ?, checksum = ? WHERE log_offset = 1')
      .run(positions, checksum);
    assert.throws(
      () => [...log.entries()],
      (e: unknown) => /binding rules are not a positive integer/.test((e as SluiceError).detail ?? ''),
    );
    store.close();
  } finally {
    removeDir(dir);
  }
});
