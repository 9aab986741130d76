// jsonb input refuses `\u0000` and unpaired surrogate escapes as PostgreSQL does, but a journal
// replay re-runs statements an older version accepted with them (a view's constant, a column's
// DEFAULT): those must run again, or the data directory would not start.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/exec/engine.ts';
import { REPLAY_SQL_LIMITS } from '../src/common/limits.ts';
import { SluiceError } from '../src/common/errors.ts';

const STATEMENTS = [
  `CREATE TABLE d (id integer PRIMARY KEY, j jsonb DEFAULT '{"k": "\\u0000"}'::jsonb)`,
  `CREATE MATERIALIZED VIEW v AS SELECT id, '"\\ud800"'::jsonb AS j FROM d`,
];

test('a statement with an untextable jsonb escape is refused, and replayed as accepted', () => {
  const fresh = new Engine();
  for (const sql of STATEMENTS) {
    assert.throws(
      () => fresh.execute(sql.replace('CREATE MATERIALIZED VIEW v', 'CREATE MATERIALIZED VIEW v0')),
      (e: unknown) => e instanceof SluiceError && e.code === 'INVALID_CAST',
      sql,
    );
    if (sql.startsWith('CREATE TABLE')) fresh.execute('CREATE TABLE d (id integer PRIMARY KEY, j jsonb)');
  }
  const replayed = new Engine();
  for (const sql of STATEMENTS) replayed.execute(sql, { limits: REPLAY_SQL_LIMITS });
  replayed.execute('INSERT INTO d (id) VALUES (1)');
  assert.deepEqual(replayed.execute('SELECT j::text AS j FROM d')[0]?.rows, [{ j: '{"k": "\\u0000"}' }]);
  assert.deepEqual(replayed.execute('SELECT j::text AS j FROM v')[0]?.rows, [{ j: '"\\ud800"' }]);
  // The next statement a user sends is held to the rule again.
  assert.throws(() => replayed.execute(`SELECT '"\\u0000"'::jsonb`), /unsupported Unicode escape sequence/);
});
