// The SQL front end on hostile shapes, through the engine: every statement kind answers a chain or
// nesting of 10,000 terms with a limit's code and a position (never INTERNAL_ERROR), long AND/OR
// chains and long IN lists work, and the passes that used to be quadratic (select-list names,
// grouped binding, the catalog listing) stay linear. The HTTP side is in test/server/sql-limits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, REPLAY_SQL_LIMITS, SluiceError } from '../src/index.ts';
import type { ErrorCode } from '../src/common/errors.ts';
import { uniqueColumnNames } from '../src/planner/bind-select.ts';

const list = (n: number, item: (i: number) => string, sep = ', '): string =>
  Array.from({ length: n }, (_, i) => item(i)).join(sep);

/** `wide`: the SQL library may be handed SELECTs far past the default token limit (chains' own tests). */
function engineWithTable(wide = false): Engine {
  const engine = new Engine(wide ? { limits: { maxSelectTokens: 1_000_000 } } : {});
  engine.execute('CREATE TABLE t (a INT, b TEXT, c BOOLEAN)');
  engine.execute("INSERT INTO t VALUES (1, 'x', true), (2, 'y', false), (3, NULL, NULL)");
  return engine;
}

function fails(engine: Engine, sql: string, code: ErrorCode | readonly ErrorCode[]): SluiceError {
  const codes: readonly ErrorCode[] = typeof code === 'string' ? [code] : code;
  const { error } = engine.executeScript(sql);
  assert.ok(error instanceof SluiceError, `expected ${codes.join('/')} for ${sql.slice(0, 60)}`);
  assert.ok(codes.includes(error.code), `${sql.slice(0, 60)}: ${error.code} ${error.message}`);
  assert.ok(error.position !== undefined, `no position for ${sql.slice(0, 60)}`);
  assert.ok(error.position.line > 1 || error.position.column > 1, `position 1:1 for ${sql.slice(0, 60)}`);
  return error;
}

describe('chains and nesting of 10,000 terms', () => {
  const chains: Record<string, string> = {
    plus: list(10_000, () => 'a', ' + '),
    concat: list(10_000, () => 'b', ' || '),
    casts: `a${'::int'.repeat(10_000)}`,
    parens: `${'('.repeat(10_000)}a${')'.repeat(10_000)}`,
    calls: `${'round('.repeat(10_000)}a${')'.repeat(10_000)}`,
    cases: `${'CASE WHEN c THEN '.repeat(5_000)}a${' END'.repeat(5_000)}`,
    nots: `${'NOT '.repeat(10_000)}c`,
    signs: `${'- '.repeat(10_000)}a`,
  };
  for (const [name, expr] of Object.entries(chains)) {
    it(`${name}: a limit's code with a position in every statement kind`, () => {
      const engine = engineWithTable();
      for (const sql of [
        `SELECT ${expr} FROM t`,
        `SELECT a FROM t WHERE (${expr}) IS NULL`,
        `CREATE MATERIALIZED VIEW v AS SELECT ${expr} AS x FROM t`,
        `EXPLAIN SELECT ${expr} FROM t`,
        `INSERT INTO t (a) VALUES (${expr.replaceAll('a', '1').replaceAll('c', 'true').replaceAll('b', "'s'")})`,
        `UPDATE t SET a = ${expr}`,
        `DELETE FROM t WHERE (${expr}) IS NULL`,
      ]) {
        // A SELECT this long is refused first by the tokens it would hand the SQL library.
        const viaSelect = /^(SELECT|CREATE|EXPLAIN)/.test(sql);
        const error = fails(
          engine,
          sql,
          viaSelect ? ['NESTING_TOO_DEEP', 'STATEMENT_TOO_LARGE'] : 'NESTING_TOO_DEEP',
        );
        assert.match(error.message, error.code === 'NESTING_TOO_DEEP' ? /too deep/ : /too large/);
      }
      // Nothing took effect.
      assert.deepEqual(engine.catalog().views, []);
      assert.equal(engine.epoch, 1);
    });
  }

  it('AND and OR chains of 10,000 terms are flat: they bind, maintain and evaluate', () => {
    const engine = engineWithTable(true);
    const ors = list(10_000, (i) => `a = ${i + 2}`, ' OR ');
    const ands = list(10_000, (i) => `a <> ${i + 2}`, ' AND ');
    assert.deepEqual(engine.execute(`SELECT a FROM t WHERE ${ors} ORDER BY a`)[0]?.rows, [
      { a: 2 },
      { a: 3 },
    ]);
    engine.execute(`CREATE MATERIALIZED VIEW only_one AS SELECT a FROM t WHERE ${ands}`);
    assert.deepEqual(engine.viewSnapshot('only_one').rows, [{ a: 1 }]);
    engine.execute('INSERT INTO t (a) VALUES (20000), (10001)');
    assert.deepEqual(
      engine.viewSnapshot('only_one').rows.map((r) => r['a']),
      [1, 20000],
    );
    assert.equal(engine.execute(`DELETE FROM t WHERE ${ors}`)[0]?.rowCount, 3);
  });

  it("NOT a = NOT b = ... (DML grammar) nests as deep as it is long: a limit, not the stack's end", () => {
    const engine = engineWithTable();
    fails(engine, `UPDATE t SET c = ${list(5_000, () => 'c', ' = NOT ')}`, 'NESTING_TOO_DEEP');
  });
});

describe('wide shapes stay linear', () => {
  it('select-list names: suffixes in one pass, however many items share a name', () => {
    assert.deepEqual(uniqueColumnNames(['a', 'a', 'a_2', 'a', 'b', 'a_3']), [
      'a',
      'a_2',
      'a_2_2',
      'a_3',
      'b',
      'a_3_2',
    ]);
    // 200,000 items named "?column?": quadratic naming took minutes; linear takes milliseconds.
    const started = performance.now();
    const names = uniqueColumnNames(Array<string>(200_000).fill('?column?'));
    assert.equal(names[199_999], '?column?_200000');
    assert.equal(new Set(names).size, 200_000);
    assert.ok(performance.now() - started < 5_000, 'naming 200,000 columns took over 5 s');
  });

  it('a select list up to the limit is named like PostgreSQL; one more is TOO_MANY_ITEMS at it', () => {
    const engine = new Engine();
    const [result] = engine.execute(`SELECT ${list(1_664, () => '1')}`);
    const names = result?.columns?.map((c) => c.name) ?? [];
    assert.equal(names.length, 1_664);
    assert.deepEqual(names.slice(0, 3), ['?column?', '?column?_2', '?column?_3']);
    const error = fails(engine, `SELECT ${list(12_500, () => '1', ',')}`, 'TOO_MANY_ITEMS');
    assert.equal(error.message, 'select list has more than 1664 entries');
    assert.deepEqual(error.position, { line: 1, column: 8 + 2 * 1_664 });
  });

  it('* counts the columns it stands for', () => {
    const engine = new Engine({ limits: { maxSelectItems: 5 } });
    engine.execute('CREATE TABLE w (a INT, b INT, c INT)');
    assert.equal(engine.execute('SELECT *, a, b FROM w')[0]?.columns?.length, 5);
    const error = fails(engine, 'SELECT a, b, c, * FROM w', 'TOO_MANY_ITEMS');
    assert.deepEqual(error.position, { line: 1, column: 17 });
  });

  it('a grouped query with an 8,000-term OR chain in HAVING binds once per node', () => {
    const engine = engineWithTable(true);
    const having = list(8_000, (i) => `a = ${i + 2}`, ' OR ');
    const started = performance.now();
    const [result] = engine.execute(`SELECT a, count(*) FROM t GROUP BY a HAVING ${having} ORDER BY a`);
    assert.deepEqual(result?.rows, [
      { a: 2, count: 1 },
      { a: 3, count: 1 },
    ]);
    // Binding every node of the chain again for each of its subtrees took minutes.
    assert.ok(performance.now() - started < 10_000, 'binding took over 10 s');
    // A group key that is itself such a chain is still recognised.
    const key = `(${list(2, (i) => `a = ${i + 1}`, ' OR ')})`;
    const [grouped] = engine.execute(`SELECT ${key} AS k, count(*) FROM t GROUP BY ${key} ORDER BY k`);
    assert.deepEqual(grouped?.rows, [
      { k: false, count: 1 },
      { k: true, count: 2 },
    ]);
  });

  it('an IN list of 24,000 constants: parsed without the SQL library, evaluated as a set', () => {
    const engine = engineWithTable();
    const values = list(24_000, (i) => String(i * 2 + 1));
    const [result] = engine.execute(`SELECT a FROM t WHERE a IN (${values}) ORDER BY a`);
    assert.deepEqual(result?.rows, [{ a: 1 }, { a: 3 }]);
    engine.execute(`CREATE MATERIALIZED VIEW odd AS SELECT a FROM t WHERE a NOT IN (${values}, NULL)`);
    // NOT IN with a NULL in the list is never true (PostgreSQL's three-valued IN).
    assert.deepEqual(engine.viewSnapshot('odd').rows, []);
    const [texts] = engine.execute(
      `SELECT b, b IN (${list(20, (i) => `'${'xyz'[i % 3]!}${i > 2 ? i : ''}'`)}) AS hit FROM t ORDER BY b`,
    );
    assert.deepEqual(texts?.rows, [
      { b: 'x', hit: true },
      { b: 'y', hit: true },
      { b: null, hit: null },
    ]);
  });

  it('600 views in one script, and the catalog listing after each', () => {
    const engine = engineWithTable();
    const script = list(
      600,
      (i) => `CREATE MATERIALIZED VIEW v${i} AS SELECT a, count(*) FROM t GROUP BY a`,
      ';\n',
    );
    const started = performance.now();
    assert.equal(engine.execute(script).length, 600);
    for (let i = 0; i < 600; i++) engine.catalog();
    const { tables } = engine.catalog();
    assert.equal(tables[0]?.dependents.length, 600);
    assert.ok(performance.now() - started < 20_000, '600 views and 600 catalog listings took over 20 s');
  });
});

describe('limits are options of the engine', () => {
  it('each limit can be lowered (or raised) per engine; the defaults are documented', () => {
    const engine = new Engine({ limits: { maxListItems: 2, maxStatementLength: 40 } });
    engine.execute('CREATE TABLE t (a INT)');
    fails(engine, 'SELECT a FROM t WHERE a IN (1, 2, 3)', 'TOO_MANY_ITEMS');
    fails(engine, `SELECT a FROM t WHERE a = ${list(20, () => '1', '+')}`, 'STATEMENT_TOO_LARGE');
    assert.equal(engine.limits.maxSelectItems, 1_664);
    assert.throws(() => new Engine({ limits: { maxColumns: 0 } }), /maxColumns must be a positive integer/);
  });

  it('a journal replay runs statements accepted under older limits (REPLAY_SQL_LIMITS)', () => {
    const engine = engineWithTable();
    const wide = `CREATE MATERIALIZED VIEW wide AS SELECT ${list(1_000, (i) => `a AS x${i}`)}, *, ${list(1_000, (i) => `b AS y${i}`)} FROM t`;
    const long = `CREATE MATERIALIZED VIEW long AS SELECT ${list(600, () => 'a', ' + ')} AS s FROM t`;
    fails(engine, wide, 'TOO_MANY_ITEMS');
    fails(engine, long, 'NESTING_TOO_DEEP');
    engine.execute(`${wide};\n${long}`, { limits: REPLAY_SQL_LIMITS });
    assert.equal(engine.catalog().views.find((v) => v.name === 'wide')?.columns.length, 2_003);
    const sums = engine.viewSnapshot('long').rows.map((r) => Number(r['s']));
    assert.deepEqual(
      sums.sort((x, y) => x - y),
      [600, 1_200, 1_800],
    );
    // The engine's own limits apply again to the next call.
    fails(engine, wide.replace('wide', 'wide2'), 'TOO_MANY_ITEMS');
  });
});
