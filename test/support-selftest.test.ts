// Tests of the test machinery itself (no engine needed): the oracle's normalisation, the generator's
// determinism, validity and feature coverage, the table model against SQLite, and the .slt parser.
// A randomized suite is only as good as these: a generator that never emits HAVING tests nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng, TableModel, deriveSeed, randomBatch, randomBatchSize } from './support/random-workload.ts';
import { randomScenario } from './support/random-views.ts';
import { SqliteOracle, canonicalRows, canonicalValue, multisetDiff } from './support/sqlite-oracle.ts';
import { formatChanges, parseRow, parseSlt } from './support/slt.ts';
import { batchUnits, changeUnits } from './support/properties.ts';

test('canonicalValue normalises by the Sluice column type', () => {
  assert.equal(canonicalValue('boolean', 1n), 'true');
  assert.equal(canonicalValue('boolean', 0), 'false');
  assert.equal(canonicalValue('boolean', true), 'true');
  assert.match(canonicalValue('boolean', 2), /^bad-bool/);
  assert.equal(canonicalValue('bigint', 9223372036854775807n), '9223372036854775807');
  assert.equal(canonicalValue('integer', 3), '3');
  assert.equal(canonicalValue('integer', 3.0), canonicalValue('integer', 3n));
  assert.equal(canonicalValue('integer', 3.5), 'float:3.5');
  assert.equal(canonicalValue('double precision', 0.1 + 0.2), canonicalValue('double precision', 0.3));
  assert.notEqual(canonicalValue('double precision', 0.3001), canonicalValue('double precision', 0.3));
  assert.equal(canonicalValue('numeric', -0), 'int:0');
  // Over HTTP a numeric arrives as its exact decimal string.
  assert.equal(canonicalValue('numeric', '205'), canonicalValue('numeric', 205));
  assert.equal(canonicalValue('numeric', '-12.0000000000000000'), canonicalValue('numeric', -12));
  assert.equal(canonicalValue('numeric', '0.30'), canonicalValue('numeric', 0.3));
  assert.match(canonicalValue('numeric', 'x1'), /^bad-numeric/);
  assert.equal(canonicalValue('numeric', 5n), canonicalValue('numeric', 5));
  assert.equal(canonicalValue('double precision', 1e-12), '0');
  assert.equal(canonicalValue('text', 'NULL'), '"NULL"');
  assert.equal(canonicalValue('text', null), 'NULL');
  assert.equal(canonicalValue('character varying(16)', 'a'), '"a"');
  assert.equal(canonicalValue('date', '2024-01-01'), '"2024-01-01"');
  assert.match(canonicalValue('text', 5), /^bad-text/);
});

test('multisetDiff reports missing and extra copies', () => {
  assert.deepEqual(multisetDiff(['a', 'a', 'b'], ['a', 'b', 'c']), { missing: ['a'], extra: ['c'] });
  assert.deepEqual(multisetDiff(['x'], ['x']), { missing: [], extra: [] });
});

test('the generator is deterministic per seed and its SQL runs in SQLite', () => {
  for (let i = 0; i < 30; i++) {
    const seed = deriveSeed(7, i);
    const a = randomScenario(new Rng(seed));
    const b = randomScenario(new Rng(seed));
    assert.deepEqual(a, b);
    const o = new SqliteOracle();
    for (const t of a.tables) o.createTable(t);
    for (const v of a.views) {
      o.createView(v.name, v.select);
      o.query(`SELECT * FROM ${v.name}`);
    }
    assert.ok(a.views.length >= 3 && a.views.length <= 8);
    assert.ok(
      a.views.some((v) => v.depth >= 2),
      'every scenario has a view over a view',
    );
    o.close();
  }
});

test('the generated views cover every supported feature', () => {
  const sql: string[] = [];
  let maxDepth = 0;
  const templates = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const s = randomScenario(new Rng(deriveSeed(99, i)));
    for (const v of s.views) {
      sql.push(v.select);
      maxDepth = Math.max(maxDepth, v.depth);
      templates.add(v.template);
    }
  }
  const all = sql.join('\n');
  assert.ok(!all.includes('--'), 'generated SQL must never contain `--` (a comment)');
  // MOD() is left to the golden tests: SQLite's mod() returns a REAL (see random-workload.ts).
  const features = [
    'WHERE',
    'GROUP BY',
    'HAVING',
    'SELECT DISTINCT',
    'COUNT(*)',
    'COUNT(DISTINCT',
    'SUM(',
    'AVG(',
    'MIN(',
    'MAX(',
    ' + ',
    ' - ',
    ' * ',
    ' / ',
    ' % ',
    ' = ',
    ' <> ',
    ' < ',
    ' <= ',
    ' > ',
    ' >= ',
    ' AND ',
    ' OR ',
    'NOT ',
    'IS NULL',
    'IS NOT NULL',
    'BETWEEN',
    'NOT BETWEEN',
    ' IN (',
    'NOT IN (',
    'LIKE',
    'NOT LIKE',
    'CASE WHEN',
    'CAST(',
    'AS DOUBLE PRECISION)',
    'AS TEXT)',
    'AS INTEGER)',
    'COALESCE(',
    'NULLIF(',
    'ABS(',
    'FLOOR(',
    'CEIL(',
    'ROUND(',
    'LOWER(',
    'UPPER(',
    'LENGTH(',
    'SUBSTRING(',
    ' || ',
    '= TRUE',
    'FROM v',
  ];
  for (const f of features) assert.ok(all.includes(f), `no generated view uses ${f}`);
  assert.ok(/SELECT (?:(?!GROUP BY).)*COUNT\(\*\)(?:(?!GROUP BY).)*$/m.test(all), 'a global aggregate');
  assert.ok(/^SELECT \* FROM/m.test(all), 'SELECT *');
  assert.ok(/^SELECT DISTINCT .* GROUP BY /m.test(all), 'DISTINCT over a grouped result');
  assert.ok(/^(?:(?!GROUP BY).)* HAVING /m.test(all), 'HAVING without GROUP BY');
  assert.ok(/^SELECT (?!DISTINCT)(?:(?!AS g0).)* GROUP BY /m.test(all), 'GROUP BY keys not selected');
  assert.ok(maxDepth >= 3, `views nest at most ${maxDepth} deep`);
  for (const t of ['project', 'distinct', 'group', 'global', 'sum-per-key', 'histogram']) {
    assert.ok(templates.has(t), `template ${t} never chosen`);
  }
});

test('the table model and the SQLite oracle agree on table contents across random batches', () => {
  for (let i = 0; i < 6; i++) {
    const rng = new Rng(deriveSeed(3, i));
    const s = randomScenario(rng);
    const o = new SqliteOracle();
    for (const t of s.tables) o.createTable(t);
    const models = s.tables.map((t) => new TableModel(t));
    let sizes = 0;
    for (let e = 0; e < 80; e++) {
      const m = rng.pick(models);
      const b = randomBatch(rng, m, randomBatchSize(rng), 200);
      o.apply(m.table.name, b);
      m.apply(b);
      sizes += m.rows.length;
    }
    for (const m of models) {
      const cols = m.table.columns.map((c) => ({ name: c.name, type: c.sqlType, nullable: c.nullable }));
      const diff = multisetDiff(
        canonicalRows(cols, o.query(`SELECT * FROM ${m.table.name}`)),
        canonicalRows(cols, m.rows),
      );
      assert.deepEqual(diff, { missing: [], extra: [] });
    }
    assert.ok(sizes > 0);
    o.close();
  }
});

test('batchUnits only merges units whose merged batch means the same', () => {
  for (let i = 0; i < 10; i++) {
    const { scenario, units } = changeUnits(deriveSeed(5, i), 80);
    for (const cut of [() => true, () => false]) {
      const o = new SqliteOracle();
      for (const t of scenario.tables) o.createTable(t);
      const models = new Map(scenario.tables.map((t) => [t.name, new TableModel(t)] as const));
      const batches = batchUnits(units, cut);
      // Every merged batch applies (deletes first) without deleting a missing row.
      for (const b of batches) {
        o.apply(b.table, b.changes);
        models.get(b.table)!.apply(b.changes);
      }
      const unitCount = units.reduce(
        (n, u) => n + (u.changes.insert?.length ?? 0) + (u.changes.delete?.length ?? 0),
        0,
      );
      const batchCount = batches.reduce(
        (n, b) => n + (b.changes.insert?.length ?? 0) + (b.changes.delete?.length ?? 0),
        0,
      );
      assert.equal(batchCount, unitCount);
      o.close();
    }
  }
});

test('slt: records, blocks, comments and exact bigint rows', () => {
  const recs = parseSlt(
    [
      '# comment',
      'statement ok',
      'CREATE TABLE t (a int)',
      '',
      'statement error SYNTAX_ERROR',
      'SELEC 1',
      '----',
      'syntax error',
      'at line 1, column 1',
      '',
      'insert t',
      '{"a": 9223372036854775807, "s": "12345678901234567890"}',
      '',
      'query v',
      '----',
      '',
      'changes v',
      '----',
      '(none)',
    ].join('\n'),
  );
  assert.deepEqual(
    recs.map((r) => r.verb),
    ['statement', 'statement', 'insert', 'query', 'changes'],
  );
  const err = recs[1]!;
  assert.ok(
    err.verb === 'statement' &&
      err.expectError === 'SYNTAX_ERROR' &&
      err.block?.text === 'syntax error\nat line 1, column 1',
  );
  const q = recs[3]!;
  assert.ok(q.verb === 'query' && q.block.text === '' && q.block.start === q.block.end);
  const row = parseRow(
    '{"a": 9223372036854775807, "b": -9007199254740993, "c": 1.5e300, "s": "12345678901234567890"}',
  );
  assert.equal(row['a'], 9223372036854775807n);
  assert.equal(row['b'], -9007199254740993n);
  assert.equal(row['c'], 1.5e300);
  assert.equal(row['s'], '12345678901234567890');
  assert.throws(() => parseSlt('frobnicate x'));
});

test('slt: change sets print sorted by key then -D -U +U +I', () => {
  const text = formatChanges(
    [
      { name: 'k', type: 'integer', nullable: false },
      { name: 'v', type: 'bigint', nullable: true },
    ],
    ['k'],
    {
      view: 'v',
      epoch: 3,
      positions: {},
      changes: [
        { op: '+I', row: { k: 2, v: 1n } },
        { op: '+U', row: { k: 1, v: 5 } },
        { op: '-U', row: { k: 1, v: 4 } },
        { op: '-D', row: { k: 0, v: 9007199254740993n } },
      ],
    },
  );
  assert.equal(
    text,
    ['-D {"k":0,"v":9007199254740993}', '-U {"k":1,"v":4}', '+U {"k":1,"v":5}', '+I {"k":2,"v":1}'].join(
      '\n',
    ),
  );
});
