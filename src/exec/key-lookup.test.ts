// UPDATE and DELETE whose WHERE pins the primary key read those rows by key, not the whole table:
// counted in rows examined (ScriptRun.dmlRowsRead), never timed. And they mean exactly what the
// scan meant: random statements of every WHERE shape compared with SQLite on the same rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Engine } from './engine.ts';
import type { ErrorCode } from '../common/errors.ts';
import { mulberry32 } from '../../test/support/checkpoint-workload.ts';

/** Runs `sql`; its rows examined by UPDATE/DELETE, and its error code if it failed. */
function run(engine: Engine, sql: string): { examined: number; error?: ErrorCode; rowCount?: number } {
  const script = engine.runScript(sql);
  const result = script.step(Infinity);
  assert.ok(result !== null);
  const last = result.results.at(-1);
  return {
    examined: script.dmlRowsRead,
    ...(result.error !== undefined ? { error: result.error.code } : {}),
    ...(last !== undefined && 'rowCount' in last ? { rowCount: last.rowCount } : {}),
  };
}

function rowsOf(engine: Engine, sql: string): readonly unknown[] {
  const r = engine.execute(sql)[0];
  assert.ok(r !== undefined && 'rows' in r && r.rows !== undefined);
  return r.rows;
}

test('a WHERE that pins the primary key examines only the rows it names', () => {
  const engine = new Engine();
  engine.execute(
    'CREATE TABLE t (id BIGINT PRIMARY KEY, v INT); CREATE TABLE c (a INT, b TEXT, v INT, PRIMARY KEY (a, b));' +
      'CREATE TABLE p (code CHAR(3) PRIMARY KEY, v INT)',
  );
  const N = 20_000;
  engine.applyChanges('t', { insert: Array.from({ length: N }, (_, i) => ({ id: i, v: 0 })) });
  engine.applyChanges('t', { insert: [{ id: '9007199254740993', v: 0 }] });
  engine.applyChanges('c', {
    insert: Array.from({ length: 1000 }, (_, i) => ({ a: i % 100, b: `k${Math.floor(i / 100)}`, v: 0 })),
  });
  engine.applyChanges('p', { insert: [{ code: 'ab', v: 0 }] });

  assert.deepEqual(run(engine, 'UPDATE t SET v = v + 1 WHERE id = 5'), { examined: 1, rowCount: 1 });
  assert.deepEqual(rowsOf(engine, 'SELECT v FROM t WHERE id = 5'), [{ v: 1 }]);
  assert.deepEqual(run(engine, 'UPDATE t SET v = 7 WHERE id IN (1, 2, 3, 3, 1) AND v = 0'), {
    examined: 3,
    rowCount: 3,
  });
  assert.deepEqual(run(engine, 'UPDATE t SET v = 8 WHERE 4 = id AND v = 99'), { examined: 1, rowCount: 0 });
  assert.deepEqual(run(engine, 'DELETE FROM t WHERE id = 9007199254740993'), { examined: 1, rowCount: 1 });
  assert.deepEqual(run(engine, 'DELETE FROM t WHERE id = 123456789'), { examined: 1, rowCount: 0 });
  assert.deepEqual(run(engine, 'DELETE FROM t WHERE id = NULL'), { examined: 0, rowCount: 0 });
  assert.deepEqual(run(engine, 'DELETE FROM t WHERE id = 10 + 1'), { examined: 1, rowCount: 1 });
  // Composite key: both columns pinned, or a scan.
  assert.deepEqual(run(engine, "UPDATE c SET v = 1 WHERE a = 7 AND b = 'k3'"), { examined: 1, rowCount: 1 });
  assert.deepEqual(run(engine, "UPDATE c SET v = 2 WHERE a IN (1, 2) AND b IN ('k0', 'k9', 'zz')"), {
    examined: 6,
    rowCount: 4,
  });
  assert.equal(run(engine, 'UPDATE c SET v = 3 WHERE a = 7').examined, 1000);
  // Not pinned: OR, a range, a key column under an expression, padded CHAR keys.
  assert.equal(run(engine, 'DELETE FROM t WHERE id = 5 OR id = 6').examined, N - 1);
  assert.equal(run(engine, 'UPDATE t SET v = 1 WHERE id < 3').examined, N - 3);
  assert.equal(run(engine, 'UPDATE t SET v = 1 WHERE id + 0 = 3').examined, N - 3);
  assert.deepEqual(run(engine, "UPDATE p SET v = 1 WHERE code = 'ab'"), { examined: 1, rowCount: 1 });
  // A constant that raises scans, and so raises as evaluating the WHERE row by row does; nothing changes.
  const before = rowsOf(engine, 'SELECT count(*) AS n FROM t');
  assert.equal(run(engine, 'DELETE FROM t WHERE id = 1 / 0').error, 'DIVISION_BY_ZERO');
  assert.deepEqual(rowsOf(engine, 'SELECT count(*) AS n FROM t'), before);
});

test('UPDATE and DELETE by key mean what the scan meant (random statements against SQLite)', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const r = mulberry32(seed);
    const int = (n: number): number => Math.floor(r() * n);
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
    const engine = new Engine();
    const db = new Database(':memory:');
    const ddl = [
      'CREATE TABLE s (id INT PRIMARY KEY, v INT)',
      'CREATE TABLE m (a INT, b TEXT, v INT, PRIMARY KEY (a, b))',
    ];
    engine.execute(ddl.join(';'));
    for (const d of ddl) db.exec(d);
    const key = (): string => String(int(40) - 5);
    const text = (): string => pick(["'x'", "'y'", "'z'", 'NULL']);
    const where = (table: 's' | 'm'): string => {
      const pinS = (): string =>
        pick([
          `id = ${key()}`,
          `${key()} = id`,
          `id IN (${key()}, ${key()}, ${key()})`,
          'id = NULL',
          `id = ${key()} + 1`,
        ]);
      const pinM = (): string =>
        pick([
          `a = ${key()} AND b = ${text()}`,
          `b = ${text()} AND a IN (${key()}, ${key()})`,
          `a = ${key()}`,
        ]);
      const pin = table === 's' ? pinS() : pinM();
      return pick([pin, `${pin} AND v > ${int(10)}`, `${pin} OR v = ${int(10)}`, `v < ${int(10)}`]);
    };
    for (let step = 0; step < 300; step++) {
      const table = pick(['s', 'm'] as const);
      let sql: string;
      const choice = int(3);
      if (choice === 0) {
        sql =
          table === 's'
            ? `INSERT INTO s VALUES (${key()}, ${int(10)})`
            : `INSERT INTO m VALUES (${key()}, ${pick(["'x'", "'y'", "'z'"])}, ${int(10)})`;
      } else if (choice === 1) {
        sql = `UPDATE ${table} SET v = v + ${1 + int(3)} WHERE ${where(table)}`;
      } else sql = `DELETE FROM ${table} WHERE ${where(table)}`;
      const ours = run(engine, sql);
      let theirs: { changes: number } | { error: true };
      try {
        // An INSERT on an existing key replaces the row in Sluice (README, applyChanges).
        theirs = { changes: db.prepare(sql.replace(/^INSERT/, 'INSERT OR REPLACE')).run().changes };
      } catch {
        theirs = { error: true };
      }
      if ('error' in theirs)
        assert.ok(ours.error !== undefined, `seed ${seed}: ${sql} failed in SQLite only`);
      else {
        assert.equal(ours.error, undefined, `seed ${seed}: ${sql}`);
        if (!sql.startsWith('INSERT')) assert.equal(ours.rowCount, theirs.changes, `seed ${seed}: ${sql}`);
      }
      for (const t of ['s', 'm']) {
        const order = t === 's' ? 'id' : 'a, b';
        assert.deepEqual(
          rowsOf(engine, `SELECT * FROM ${t} ORDER BY ${order}`),
          db.prepare(`SELECT * FROM ${t} ORDER BY ${order}`).all(),
          `seed ${seed}, after ${sql}`,
        );
      }
    }
  }
});

test('a uuid or bytea primary key pinned in any input form examines only its row', () => {
  const engine = new Engine();
  engine.execute('CREATE TABLE u (id UUID PRIMARY KEY, v INT); CREATE TABLE b (k BYTEA PRIMARY KEY, v INT)');
  const uuid = (i: number): string => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
  engine.applyChanges('u', { insert: Array.from({ length: 500 }, (_, i) => ({ id: uuid(i), v: 0 })) });
  engine.applyChanges('b', {
    insert: Array.from({ length: 500 }, (_, i) => ({ k: `\\x${i.toString(16).padStart(4, '0')}`, v: 0 })),
  });
  assert.deepEqual(run(engine, `UPDATE u SET v = 1 WHERE id = '{${uuid(7).toUpperCase()}}'`), {
    examined: 1,
    rowCount: 1,
  });
  assert.deepEqual(rowsOf(engine, `SELECT v FROM u WHERE id = '${uuid(7)}'`), [{ v: 1 }]);
  assert.deepEqual(run(engine, `DELETE FROM u WHERE id IN ('${uuid(1)}', '${uuid(2).replace(/-/g, '')}')`), {
    examined: 2,
    rowCount: 2,
  });
  assert.deepEqual(run(engine, "UPDATE b SET v = 2 WHERE k = '\\X01F3'"), { examined: 1, rowCount: 1 });
  assert.deepEqual(run(engine, "UPDATE b SET v = 3 WHERE k = decode('01f2', 'hex')"), {
    examined: 1,
    rowCount: 1,
  });
  assert.deepEqual(run(engine, "UPDATE b SET v = 4 WHERE k || '\\x00'::bytea = '\\x01f000'"), {
    examined: 500,
    rowCount: 1,
  });
});
