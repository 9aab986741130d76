// UPDATE and DELETE hand the table the rows they read from it (statementRows): an UPDATE normalises
// each new row once, a DELETE none, where each had turned every row into an object and normalised it
// again in the table's write path (an UPDATE three times a row on a keyed table, a DELETE once).
// Counted, not timed; and what they write is the same: each view equal to its SELECT, the table
// equal after a restart from the journal, the same errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { TableStore } from '../src/exec/table-store.ts';
import { SluiceError } from '../src/common/errors.ts';
import { afterCrash } from './server/helpers.ts';

const ROWS = 1000;

/** Calls of the table's row normaliser (the generated path and the general one) while `run` runs. */
function normalisations(run: () => void): number {
  const proto = TableStore.prototype;
  const fast = proto.normalizeRow;
  const general = proto.normalizeRowGeneral;
  let calls = 0;
  proto.normalizeRow = function (this: TableStore, ...args: Parameters<TableStore['normalizeRow']>) {
    calls++;
    return fast.apply(this, args);
  };
  proto.normalizeRowGeneral = function (
    this: TableStore,
    ...args: Parameters<TableStore['normalizeRowGeneral']>
  ) {
    calls++;
    return general.apply(this, args);
  };
  try {
    run();
  } finally {
    proto.normalizeRow = fast;
    proto.normalizeRowGeneral = general;
  }
  return calls;
}

function rows(engine: Engine, sql: string): unknown[] {
  return (engine.execute(sql)[0]?.rows ?? []).map((r) => JSON.parse(JSON.stringify(r, bigints)));
}

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}

const VIEWS: Record<string, string> = {
  g: 'SELECT g, count(*) AS n, sum(v) AS s, min(d) AS lo, max(name) AS hi FROM t GROUP BY g',
  j: 'SELECT t.id, t.v, dim.label FROM t JOIN dim ON t.g = dim.g',
  top: 'SELECT g, id, v FROM (SELECT g, id, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC, id) AS rn FROM t) r WHERE rn <= 3',
};

function setup(engine: Engine, keyed: boolean): void {
  const key = keyed ? ' PRIMARY KEY' : '';
  engine.execute(`CREATE TABLE t (id BIGINT${key}, g INT, v INT, d NUMERIC(10,2), name TEXT);
    CREATE TABLE dim (g INT PRIMARY KEY, label TEXT);
    INSERT INTO dim VALUES (0, 'zero'), (1, 'one'), (2, NULL)`);
  for (const [name, sql] of Object.entries(VIEWS))
    engine.execute(`CREATE MATERIALIZED VIEW ${name} AS ${sql}`);
  engine.applyChanges('t', {
    insert: Array.from({ length: ROWS }, (_, i) => ({
      id: i,
      g: i % 4 === 3 ? null : i % 3,
      v: (i * 37) % 101,
      d: i % 5 === 0 ? null : `${i}.5`,
      name: i % 7 === 0 ? '' : `n${i}`,
    })),
  });
  if (!keyed) engine.applyChanges('t', { insert: [{ id: 5, g: 1, v: 9, d: '5.5', name: 'n5' }] }); // a second copy
}

/** Every view equal to its SELECT over the tables now. */
function assertViewsExact(engine: Engine, when: string): void {
  for (const [name, sql] of Object.entries(VIEWS)) {
    const order = 'ORDER BY 1, 2, 3';
    assert.deepEqual(
      rows(engine, `SELECT * FROM ${name} ${order}`),
      rows(engine, `${sql} ${order}`),
      `${name} ${when}`,
    );
  }
}

for (const keyed of [true, false]) {
  const kind = keyed ? 'keyed' : 'keyless';

  test(`${kind}: an UPDATE normalises each new row once, a DELETE none; views stay exact`, () => {
    const engine = new Engine();
    setup(engine, keyed);
    let result: ReturnType<Engine['execute']> = [];
    const updated = normalisations(() => {
      result = engine.execute(`UPDATE t SET v = v + 1, d = d * 2, name = name || 'x' WHERE id < 600`);
    });
    const changed = keyed ? 600 : 601;
    assert.equal(result[0]?.rowCount, changed);
    assert.equal(updated, changed, 'normalisations of an UPDATE');
    assertViewsExact(engine, 'after the UPDATE');
    const deleted = normalisations(() => {
      result = engine.execute('DELETE FROM t WHERE v % 2 = 0 OR g IS NULL');
    });
    assert.ok((result[0]?.rowCount ?? 0) > 300);
    assert.equal(deleted, 0, 'normalisations of a DELETE');
    assertViewsExact(engine, 'after the DELETE');
  });
}

test('keyed: an UPDATE of the key moves rows; one colliding with a kept key is refused, nothing changed', () => {
  const engine = new Engine();
  setup(engine, true);
  const [moved] = engine.execute('UPDATE t SET id = id + 100000 WHERE id < 500');
  assert.equal(moved?.rowCount, 500);
  assertViewsExact(engine, 'after the key change');
  assert.deepEqual(rows(engine, 'SELECT min(id) AS lo, count(*) AS n FROM t'), [{ lo: 500, n: ROWS }]);
  const epoch = engine.epoch;
  // 100450 - 99500 = 950, a key the table keeps.
  assert.throws(
    () => engine.execute('UPDATE t SET id = id - 99500 WHERE id = 100450'),
    (error: unknown) => error instanceof SluiceError && error.code === 'UNIQUE_VIOLATION',
  );
  // Swapping two keys in one statement is no collision: both old keys are deleted by it.
  engine.execute('UPDATE t SET id = 1100 - id WHERE id IN (500, 600)');
  assert.deepEqual(rows(engine, 'SELECT id FROM t WHERE id IN (500, 600) ORDER BY id'), [
    { id: 500 },
    { id: 600 },
  ]);
  assert.equal(engine.epoch, epoch + 1);
  assertViewsExact(engine, 'after the swap');
});

test('NOT NULL and CHECK-like failures of an UPDATE still refuse it whole, named as before', () => {
  const engine = new Engine();
  engine.execute(`CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, s VARCHAR(3));
    INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b')`);
  const epoch = engine.epoch;
  const refused = (sql: string): string => {
    try {
      engine.execute(sql);
    } catch (error) {
      assert.ok(error instanceof SluiceError);
      return error.code;
    }
    return 'accepted';
  };
  assert.equal(refused('UPDATE t SET v = NULL WHERE id = 2'), 'NOT_NULL_VIOLATION');
  assert.equal(refused(`UPDATE t SET s = 'long' WHERE id = 1`), 'STRING_TOO_LONG');
  assert.equal(refused('UPDATE t SET v = 2147483647 + v'), 'NUMERIC_OVERFLOW');
  assert.equal(engine.epoch, epoch);
  assert.deepEqual(rows(engine, 'SELECT * FROM t ORDER BY id'), [
    { id: 1, v: 1, s: 'a' },
    { id: 2, v: 2, s: 'b' },
  ]);
});

test('a restart from the journal holds what the UPDATE and DELETE wrote', () => {
  const expected: Record<string, unknown[]> = {};
  afterCrash(
    (first) => {
      setup(first.engine, true);
      first.engine.execute(`UPDATE t SET v = v * 3, name = upper(name) WHERE g = 1`);
      first.engine.execute('UPDATE t SET id = id + 5000 WHERE id % 10 = 0');
      first.engine.execute('DELETE FROM t WHERE v > 200');
      for (const name of ['t', ...Object.keys(VIEWS)])
        expected[name] = rows(first.engine, `SELECT * FROM ${name} ORDER BY 1, 2, 3`);
    },
    (again) => {
      for (const name of Object.keys(expected))
        assert.deepEqual(rows(again.engine, `SELECT * FROM ${name} ORDER BY 1, 2, 3`), expected[name], name);
    },
  );
});
