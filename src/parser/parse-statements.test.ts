// Parser unit tests: every statement form, script structure, well-formed text, positions of
// nodes and errors, and WATERMARK FOR.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatements } from './parse.ts';
import { SluiceError } from '../common/errors.ts';
import {
  one,
  stmt,
  node,
  select,
  expr,
  dmlExpr,
  shape,
  throwsSluice,
  col,
  int,
  str,
  nul,
  bin,
  fn,
  type,
} from '../../test/support/parse-helpers.ts';

// ── statements ───────────────────────────────────────────────────────────────────────────────────

describe('statements', () => {
  it('CREATE TABLE with column and table constraints', () => {
    const statement = one(
      'CREATE TABLE IF NOT EXISTS Orders (id int8 PRIMARY KEY, customer text NOT NULL, note varchar(20) NULL, ' +
        'amount numeric(10, 2), PRIMARY KEY (id, customer))',
    );
    assert.deepEqual(shape(statement), {
      kind: 'createTable',
      name: 'orders',
      ifNotExists: true,
      columns: [
        { name: 'id', type: type('int8'), notNull: false, primaryKey: true },
        { name: 'customer', type: type('text'), notNull: true, primaryKey: false },
        { name: 'note', type: type('varchar', [20]), notNull: false, primaryKey: false },
        { name: 'amount', type: type('numeric', [10, 2]), notNull: false, primaryKey: false },
      ],
      primaryKey: ['id', 'customer'],
      text:
        'CREATE TABLE IF NOT EXISTS Orders (id int8 PRIMARY KEY, customer text NOT NULL, note varchar(20) NULL, ' +
        'amount numeric(10, 2), PRIMARY KEY (id, customer))',
    });
  });

  it('CREATE TABLE with DEFAULT and UNIQUE: the default as written, constraints in order', () => {
    const sql =
      "CREATE TABLE t (a int DEFAULT -1 NOT NULL UNIQUE, b text DEFAULT 'x' || 'y', c int, UNIQUE (b, c))";
    const statement = stmt(one(sql), 'createTable');
    const [a, b, c] = statement.columns;
    assert.equal(a?.default?.text, '-1');
    assert.equal(a?.notNull, true);
    assert.deepEqual(a?.unique, { line: 1, column: 43 });
    assert.equal(b?.default?.text, "'x' || 'y'");
    assert.equal(b?.default?.expr.kind, 'binary');
    assert.equal(b?.unique, undefined);
    assert.equal(c?.default, undefined);
    assert.deepEqual(statement.unique, [{ columns: ['b', 'c'], pos: { line: 1, column: 85 } }]);
    // DEFAULT takes PostgreSQL's restricted expression: a parenthesised one for AND and the like.
    const p = stmt(one('CREATE TABLE t (b boolean DEFAULT (1 > 2 AND true))'), 'createTable');
    assert.equal(p.columns[0]?.default?.text, '(1 > 2 AND true)');
    throwsSluice('CREATE TABLE t (b boolean DEFAULT 1 > 2)', 'SYNTAX_ERROR', 'syntax error at or near ">"', {
      line: 1,
      column: 37,
    });
  });

  it('INSERT: DEFAULT in VALUES and DEFAULT VALUES', () => {
    const insert = stmt(one('INSERT INTO t VALUES (1, DEFAULT)'), 'insert');
    assert.deepEqual(insert.rows[0]?.[1], { kind: 'default', pos: { line: 1, column: 26 } });
    const all = stmt(one('INSERT INTO t DEFAULT VALUES'), 'insert');
    assert.deepEqual(all.columns, []);
    assert.deepEqual(all.rows, [[]]);
    throwsSluice('INSERT INTO t (a) DEFAULT VALUES', 'SYNTAX_ERROR', 'syntax error at or near "DEFAULT"', {
      line: 1,
      column: 19,
    });
  });

  it('CREATE TABLE accepts multi-word and parameterised type names', () => {
    const statement = one(
      'create table t (a DOUBLE   PRECISION, b character varying(20), c char(3), d timestamp without time zone, ' +
        'e timestamp(3) with time zone, f float8, g int, "H" "MyType")',
    );
    assert.equal(statement.kind, 'createTable');
    assert.deepEqual(
      statement.columns.map((c) => [c.name, shape(c.type)]),
      [
        ['a', type('double precision')],
        ['b', type('character varying', [20])],
        ['c', type('char', [3])],
        ['d', type('timestamp without time zone')],
        ['e', type('timestamp with time zone', [3])],
        ['f', type('float8')],
        ['g', type('int')],
        ['H', type('MyType')],
      ],
    );
    assert.equal(statement.primaryKey, undefined);
    assert.equal(statement.ifNotExists, false);
  });

  it('CREATE MATERIALIZED VIEW keeps the query text', () => {
    const sql =
      'CREATE MATERIALIZED VIEW IF NOT EXISTS v (k, n) AS\n  SELECT a, count(*) FROM t GROUP BY a  ';
    const statement = one(sql);
    assert.equal(statement.kind, 'createView');
    assert.equal(statement.name, 'v');
    assert.equal(statement.ifNotExists, true);
    assert.deepEqual(statement.columnNames, ['k', 'n']);
    assert.equal(statement.queryText, 'SELECT a, count(*) FROM t GROUP BY a');
    assert.equal(statement.text, sql.trim());
    assert.deepEqual(shape(statement.query.items), [
      { kind: 'expr', expr: col('a') },
      { kind: 'expr', expr: fn('count', [], false, true) },
    ]);
    const plain = one('create materialized view v as select 1');
    assert.equal(plain.kind === 'createView' && plain.columnNames, undefined);
  });

  it('DROP TABLE / MATERIALIZED VIEW / VIEW', () => {
    assert.deepEqual(shape(one('DROP TABLE t')), {
      kind: 'drop',
      objectKind: 'table',
      name: 't',
      ifExists: false,
      cascade: false,
      text: 'DROP TABLE t',
    });
    assert.deepEqual(shape(one('drop materialized view if exists V cascade')), {
      kind: 'drop',
      objectKind: 'view',
      name: 'v',
      ifExists: true,
      cascade: true,
      text: 'drop materialized view if exists V cascade',
    });
    const view = one('DROP VIEW v RESTRICT');
    assert.equal(view.kind === 'drop' && view.objectKind, 'view');
    assert.equal(view.kind === 'drop' && view.cascade, false);
  });

  it('SHOW TABLES / VIEWS / MATERIALIZED VIEWS', () => {
    assert.deepEqual(shape(one('SHOW TABLES')), { kind: 'show', objectKind: 'tables', text: 'SHOW TABLES' });
    assert.deepEqual(shape(one('show views')), { kind: 'show', objectKind: 'views', text: 'show views' });
    assert.deepEqual(shape(one('SHOW MATERIALIZED VIEWS')), {
      kind: 'show',
      objectKind: 'views',
      text: 'SHOW MATERIALIZED VIEWS',
    });
  });

  it('CREATE SOURCE ... FROM KAFKA (options) keeps option values as written', () => {
    const stmt = one(
      "CREATE SOURCE IF NOT EXISTS Orders (id bigint PRIMARY KEY, source text) FROM kafka (Brokers 'h:1', max_batch_ms -5, format json, x 1.5)",
    );
    assert.equal(stmt.kind, 'createSource');
    if (stmt.kind !== 'createSource') return;
    assert.equal(stmt.name, 'orders');
    assert.equal(stmt.ifNotExists, true);
    assert.deepEqual(
      stmt.columns.map((c) => [c.name, c.primaryKey]),
      [
        ['id', true],
        ['source', false],
      ],
    );
    assert.equal(stmt.connector.connector, 'kafka');
    assert.deepEqual(stmt.connector.pos, { line: 1, column: 78 });
    assert.deepEqual(
      stmt.connector.options.map((o) => [o.name, o.valueKind, o.value, o.valuePos.column]),
      [
        ['brokers', 'string', 'h:1', 93],
        ['max_batch_ms', 'integer', '-5', 113],
        ['format', 'word', 'json', 124],
        ['x', 'number', '1.5', 132],
      ],
    );
  });

  it('CREATE SINK ... FROM view INTO KAFKA (options)', () => {
    const stmt = one("create sink s from V into kafka (topic 't')");
    assert.equal(stmt.kind === 'createSink' && stmt.from, 'v');
    assert.deepEqual(stmt.kind === 'createSink' && stmt.fromPos, { line: 1, column: 20 });
    assert.equal(stmt.kind === 'createSink' && stmt.connector.options.length, 1);
    const empty = one('CREATE SINK s FROM v INTO KAFKA ()');
    assert.equal(empty.kind === 'createSink' && empty.connector.options.length, 0);
  });

  it('DROP SOURCE / SINK, SHOW SOURCES / SINKS', () => {
    const source = one('DROP SOURCE IF EXISTS o CASCADE');
    assert.equal(source.kind === 'drop' && source.objectKind, 'source');
    assert.equal(source.kind === 'drop' && source.cascade, true);
    const sink = one('drop sink s');
    assert.equal(sink.kind === 'drop' && sink.objectKind, 'sink');
    assert.equal(
      one('SHOW SOURCES').kind === 'show' && (one('SHOW SOURCES') as { objectKind: string }).objectKind,
      'sources',
    );
    assert.equal((one('show sinks') as { objectKind: string }).objectKind, 'sinks');
  });

  it('source, sink and kafka remain usable as names', () => {
    const stmt = one('CREATE TABLE sink (source integer, sources text, kafka text, sinks integer)');
    assert.deepEqual(stmt.kind === 'createTable' && stmt.columns.map((c) => c.name), [
      'source',
      'sources',
      'kafka',
      'sinks',
    ]);
    assert.equal(one('SELECT source, kafka FROM sink').kind, 'select');
  });

  it('EXPLAIN [DATAFLOW]', () => {
    const plain = one('EXPLAIN SELECT a FROM t');
    assert.equal(plain.kind === 'explain' && plain.dataflow, false);
    const dataflow = one('explain dataflow select a from t');
    assert.equal(dataflow.kind, 'explain');
    assert.equal(dataflow.dataflow, true);
    assert.deepEqual(shape(dataflow.query.from), { kind: 'table', name: 't' });
  });

  it('INSERT with and without a column list', () => {
    assert.deepEqual(shape(one('INSERT INTO t (a, "B") VALUES (1, \'x\'), (-2, NULL)')), {
      kind: 'insert',
      table: 't',
      columns: ['a', 'B'],
      rows: [
        [int(1), str('x')],
        [int(-2), nul],
      ],
      text: 'INSERT INTO t (a, "B") VALUES (1, \'x\'), (-2, NULL)',
    });
    const noColumns = one('insert into t values (1 + 2)');
    assert.equal(noColumns.kind, 'insert');
    assert.equal(noColumns.columns, undefined);
    assert.deepEqual(shape(noColumns.rows), [[bin('+', int(1), int(2))]]);
  });

  it('UPDATE with and without WHERE', () => {
    assert.deepEqual(shape(one("UPDATE t SET a = a + 1, b = 'y' WHERE a > 0")), {
      kind: 'update',
      table: 't',
      assignments: [
        { column: 'a', value: bin('+', col('a'), int(1)) },
        { column: 'b', value: str('y') },
      ],
      where: bin('>', col('a'), int(0)),
      text: "UPDATE t SET a = a + 1, b = 'y' WHERE a > 0",
    });
    const all = one('update t set a = null');
    assert.equal(all.kind === 'update' && all.where, undefined);
  });

  it('DELETE with and without WHERE', () => {
    assert.deepEqual(shape(one('DELETE FROM t WHERE a IS NULL')), {
      kind: 'delete',
      table: 't',
      where: { kind: 'isNull', operand: col('a'), negated: false },
      text: 'DELETE FROM t WHERE a IS NULL',
    });
    assert.deepEqual(shape(one('delete from t')), { kind: 'delete', table: 't', text: 'delete from t' });
  });

  it('RETURNING after VALUES, a query, SET, WHERE and a FROM (USING) list: a select list', () => {
    type Shaped = { returning?: unknown; query?: { items: unknown[] }; where?: { kind: string } };
    const parsed = (sql: string): Shaped => shape(one(sql)) as Shaped;
    const items = [
      { kind: 'star' },
      { kind: 'expr', expr: bin('+', col('a'), int(1)), alias: 'b' },
      { kind: 'star', table: 'x' },
      { kind: 'expr', expr: col('c', 'x'), alias: 'returning' },
    ];
    const tail = ' RETURNING *, a + 1 AS b, x.*, x.c "returning"';
    assert.deepEqual(parsed('INSERT INTO t VALUES (1)' + tail).returning, items);
    assert.deepEqual(parsed('INSERT INTO t DEFAULT VALUES' + tail).returning, items);
    assert.deepEqual(parsed('UPDATE t x SET a = 1 WHERE a > 0' + tail).returning, items);
    assert.deepEqual(parsed('DELETE FROM t' + tail).returning, items);
    // the query or FROM list ends at RETURNING at its own level, not at one inside parentheses
    const query = parsed('INSERT INTO t SELECT a FROM (SELECT 1 AS a) s' + tail);
    assert.deepEqual(query.returning, items);
    assert.equal(query.query?.items.length, 1);
    const update = parsed('UPDATE t x SET a = u.b FROM u WHERE u.k IN (SELECT 1)' + tail);
    assert.deepEqual(update.returning, items);
    assert.equal(update.where?.kind, 'inList');
    assert.equal(parsed('DELETE FROM t USING u WHERE t.a = u.a').returning, undefined);
  });

  it('a full SELECT', () => {
    const query = select(
      'SELECT DISTINCT a, t.b AS x, c y, *, t.* FROM t AS tt WHERE a > 1 GROUP BY a, b HAVING count(*) > 2 ' +
        'ORDER BY a DESC NULLS LAST, b ASC, c NULLS FIRST, 2 LIMIT 10 OFFSET 5',
    );
    assert.deepEqual(shape(query), {
      kind: 'select',
      distinct: true,
      items: [
        { kind: 'expr', expr: col('a') },
        { kind: 'expr', expr: col('b', 't'), alias: 'x' },
        { kind: 'expr', expr: col('c'), alias: 'y' },
        { kind: 'star' },
        { kind: 'star', table: 't' },
      ],
      from: { kind: 'table', name: 't', alias: 'tt' },
      where: bin('>', col('a'), int(1)),
      groupBy: [col('a'), col('b')],
      having: bin('>', fn('count', [], false, true), int(2)),
      orderBy: [
        { expr: col('a'), desc: true, nulls: 'last' },
        { expr: col('b'), desc: false },
        { expr: col('c'), desc: false, nulls: 'first' },
        { expr: int(2), desc: false },
      ],
      limit: int(10),
      offset: int(5),
    });
  });

  it('OFFSET before LIMIT, LIMIT ALL, SELECT ALL, FROM-less SELECT', () => {
    const swapped = select('select a from t offset 3 rows limit 4');
    assert.deepEqual(shape([swapped.limit, swapped.offset]), [int(4), int(3)]);
    const all = select('select all a from t limit all');
    assert.equal(all.limit, undefined);
    assert.equal(all.distinct, false);
    const bare = select('SELECT 1 + 1');
    assert.equal(bare.from, undefined);
    assert.deepEqual(bare.groupBy, []);
    assert.deepEqual(bare.orderBy, []);
    assert.deepEqual(shape(select('(select 1)').items), [{ kind: 'expr', expr: int(1) }]);
  });

  it('aliases: quoted, with and without AS, non-reserved keywords', () => {
    assert.deepEqual(
      select('select a as "Total", b total, c AS key, d views from t').items.map(
        (i) => i.kind === 'expr' && i.alias,
      ),
      ['Total', 'total', 'key', 'views'],
    );
  });
});

describe('script structure', () => {
  it('splits on semicolons, ignores empty statements and comments', () => {
    const statements = parseStatements(
      ';; -- leading comment\nSHOW TABLES; /* block /* nested */ comment */ ;\nSELECT 1;\n-- trailing\n',
    );
    assert.deepEqual(
      statements.map((s) => [s.kind, s.text]),
      [
        ['show', 'SHOW TABLES'],
        ['select', 'SELECT 1'],
      ],
    );
    assert.deepEqual(parseStatements(''), []);
    assert.deepEqual(parseStatements('  ;  -- nothing\n'), []);
  });

  it('a semicolon inside a string or comment does not split', () => {
    const statements = parseStatements("SELECT 'a;b' /* ; */ -- ;\n, 2");
    assert.equal(statements.length, 1);
    assert.equal(statements[0]!.text, "SELECT 'a;b' /* ; */ -- ;\n, 2");
  });

  it('statement text keeps inner comments but not surrounding ones', () => {
    const [statement] = parseStatements('/* c */ select /* inner */ 1 -- end\n;');
    assert.equal(statement!.text, 'select /* inner */ 1');
  });

  it('splits as the lexer reads: quotes doubled inside literals, nested and unterminated comments', () => {
    const statements = parseStatements(
      `SELECT 'it''s; here' AS "a"";b"; SELECT 2 /* x /* ; */ ; */; SELECT 3 --;\r; SELECT 4`,
    );
    assert.deepEqual(
      statements.map((s) => s.text),
      [`SELECT 'it''s; here' AS "a"";b"`, 'SELECT 2', 'SELECT 3', 'SELECT 4'],
    );
    throwsSluice("SELECT 1;\n  SELECT 'a; b", 'SYNTAX_ERROR', 'unterminated quoted string', {
      line: 2,
      column: 10,
    });
    throwsSluice('SELECT 1; SELECT 2 /* ; SELECT 3', 'SYNTAX_ERROR', 'unterminated /* comment', {
      line: 1,
      column: 20,
    });
  });

  it('errors in later statements point into the whole text (CR, LF and CRLF line ends)', () => {
    throwsSluice('SELECT 1;\r\nSELECT 2;\rSELECT\n  3 ?', 'NOT_SUPPORTED', 'operator ? is not supported', {
      line: 4,
      column: 5,
    });
    throwsSluice('SELECT 1; SELECT \\', 'SYNTAX_ERROR', 'syntax error at or near "\\"', {
      line: 1,
      column: 18,
    });
  });
});

describe('well-formed text', () => {
  it('an unpaired UTF-16 surrogate anywhere is INVALID_TEXT at its position', () => {
    const message = (unit: string): string => `invalid Unicode text: unpaired surrogate U+${unit}`;
    throwsSluice('CREATE TABLE "\ud800" (x INT)', 'INVALID_TEXT', message('D800'), { line: 1, column: 15 });
    throwsSluice("SELECT 1;\nINSERT INTO t VALUES ('a\udc00')", 'INVALID_TEXT', message('DC00'), {
      line: 2,
      column: 25,
    });
    throwsSluice('SELECT 1 -- \ud83d', 'INVALID_TEXT', message('D83D'), { line: 1, column: 13 });
    // The wrong order is two unpaired halves.
    throwsSluice("SELECT '\ude00\ud83d'", 'INVALID_TEXT', message('DE00'), { line: 1, column: 9 });
  });

  it('surrogate pairs are characters like any other', () => {
    const statements = parseStatements(`CREATE TABLE "😀" (x INT); SELECT '😀x' AS "a😀"`);
    assert.equal(stmt(statements[0], 'createTable').name, '😀');
    const item = stmt(statements[1], 'select').query.items[0];
    assert.deepEqual(shape(item), { kind: 'expr', expr: str('😀x'), alias: 'a😀' });
  });
});

// ── positions ────────────────────────────────────────────────────────────────────────────────────

describe('positions', () => {
  it('are absolute across lines and statements', () => {
    const sql =
      'SELECT 1;\n\nCREATE MATERIALIZED VIEW v AS\n  SELECT a,\n         b + 1\n  FROM t\n  WHERE c = 2';
    const [first, second] = parseStatements(sql);
    assert.deepEqual(first!.pos, { line: 1, column: 1 });
    const view = stmt(second, 'createView');
    assert.deepEqual(view.pos, { line: 3, column: 1 });
    const query = view.query;
    assert.deepEqual(query.pos, { line: 4, column: 3 });
    const [a, b] = query.items;
    assert.deepEqual(a!.pos, { line: 4, column: 10 });
    assert.deepEqual(b!.pos, { line: 5, column: 10 });
    const sum = node(b!.kind === 'expr' ? b!.expr : undefined, 'binary');
    assert.deepEqual(sum.pos, { line: 5, column: 10 });
    assert.deepEqual(sum.right.pos, { line: 5, column: 14 });
    assert.deepEqual(query.from!.pos, { line: 6, column: 8 });
    const where = node(query.where, 'binary');
    assert.deepEqual(where.pos, { line: 7, column: 9 });
    assert.deepEqual(where.right.pos, { line: 7, column: 13 });
  });

  it('point at the first token; a parenthesised operand starts at its parenthesis', () => {
    const e = node(expr('(a + b) * -c'), 'binary');
    assert.deepEqual(e.pos, { line: 1, column: 8 });
    assert.deepEqual(node(e.left, 'binary').pos, { line: 1, column: 9 });
    assert.deepEqual(node(e.right, 'unary').pos, { line: 1, column: 18 });
    const c = node(expr("CAST(x AS int) || CASE WHEN y THEN 'a' END"), 'binary');
    const cast = node(c.left, 'cast');
    assert.deepEqual(cast.pos, { line: 1, column: 8 });
    assert.deepEqual(cast.type.pos, { line: 1, column: 18 });
    assert.deepEqual(node(c.right, 'case').pos, { line: 1, column: 26 });
    const postfix = node(dmlExpr('(a)::int'), 'cast');
    assert.deepEqual(postfix.pos, { line: 1, column: 18 });
    assert.deepEqual(postfix.operand.pos, { line: 1, column: 19 });
  });

  it('of DDL and DML parts', () => {
    const [create, insert, update] = parseStatements(
      "create table t (\n  id int primary key,\n  name text\n);\ninsert into t values\n  (1, upper('x'));\nupdate t set\n  name = name || '!' where id = 1",
    );
    const table = stmt(create, 'createTable');
    assert.deepEqual(table.columns[1]!.pos, { line: 3, column: 3 });
    assert.deepEqual(table.columns[1]!.type.pos, { line: 3, column: 8 });
    const rows = stmt(insert, 'insert');
    assert.deepEqual(rows.pos, { line: 5, column: 1 });
    assert.deepEqual(rows.rows[0]![1]!.pos, { line: 6, column: 7 });
    const change = stmt(update, 'update');
    assert.deepEqual(change.assignments[0]!.pos, { line: 8, column: 3 });
    assert.deepEqual(change.assignments[0]!.value.pos, { line: 8, column: 10 });
    assert.deepEqual(change.where!.pos, { line: 8, column: 28 });
  });
});

describe('WATERMARK FOR', () => {
  it('parses in CREATE TABLE and CREATE SOURCE, with its text and positions', () => {
    const table = stmt(
      one("CREATE TABLE t (id int, ts timestamp,\n  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)"),
      'createTable',
    );
    assert.equal(table.columns.length, 2);
    assert.equal(table.watermark?.column, 'ts');
    assert.equal(table.watermark?.text, "ts - INTERVAL '5' SECOND");
    assert.deepEqual(table.watermark?.pos, { line: 2, column: 3 });
    assert.deepEqual(table.watermark?.columnPos, { line: 2, column: 17 });
    assert.equal(table.watermark?.expr.kind, 'binary');
    const source = stmt(
      one("CREATE SOURCE s (at timestamptz, WATERMARK FOR at AS at) FROM KAFKA (brokers 'h:1', topic 't')"),
      'createSource',
    );
    assert.equal(source.watermark?.text, 'at');
  });

  it('leaves watermark usable as a name, and refuses two watermarks', () => {
    const table = stmt(
      one('CREATE TABLE watermark (watermark timestamp, WATERMARK FOR watermark AS watermark)'),
      'createTable',
    );
    assert.deepEqual(
      table.columns.map((c) => c.name),
      ['watermark'],
    );
    assert.throws(
      () => one('CREATE TABLE t (ts timestamp, WATERMARK FOR ts AS ts, WATERMARK FOR ts AS ts)'),
      (e: unknown) => e instanceof SluiceError && e.code === 'INVALID_DEFINITION',
    );
  });

  it('SHOW WATERMARKS', () => {
    assert.equal(stmt(one('show watermarks'), 'show').objectKind, 'watermarks');
  });

  it("takes EMIT ON WINDOW CLOSE off a view's query, with its position", () => {
    const v = stmt(
      one('CREATE MATERIALIZED VIEW v AS SELECT a FROM t GROUP BY a EMIT ON WINDOW CLOSE'),
      'createView',
    );
    assert.deepEqual(v.emitOnWindowClose, { line: 1, column: 58 });
    assert.equal(v.queryText, 'SELECT a FROM t GROUP BY a');
    assert.equal(
      stmt(one('CREATE MATERIALIZED VIEW v AS SELECT a FROM t'), 'createView').emitOnWindowClose,
      undefined,
    );
  });

  it('takes ALLOWED LATENESS after EMIT ON WINDOW CLOSE, with the interval and its position', () => {
    const v = stmt(
      one(
        "CREATE MATERIALIZED VIEW v AS SELECT a FROM t GROUP BY a EMIT ON WINDOW CLOSE ALLOWED LATENESS INTERVAL '10' SECOND",
      ),
      'createView',
    );
    assert.deepEqual(v.allowedLateness, { text: '10', unit: 'second', pos: { line: 1, column: 96 } });
    assert.equal(v.queryText, 'SELECT a FROM t GROUP BY a');
    const words = stmt(
      one(
        "CREATE MATERIALIZED VIEW v AS SELECT a FROM t GROUP BY a EMIT ON WINDOW CLOSE ALLOWED LATENESS INTERVAL '1 minute'",
      ),
      'createView',
    );
    assert.deepEqual(words.allowedLateness, { text: '1 minute', pos: { line: 1, column: 96 } });
  });

  it('names EMIT ON WINDOW CLOSE in a query or EXPLAIN as not supported', () => {
    for (const [sql, column] of [
      ['SELECT a FROM t GROUP BY a EMIT ON WINDOW CLOSE', 28],
      ['EXPLAIN SELECT a FROM t GROUP BY a EMIT ON WINDOW CLOSE', 36],
    ] as const) {
      assert.throws(
        () => one(sql),
        (e: unknown) =>
          e instanceof SluiceError && e.code === 'NOT_SUPPORTED' && e.position?.column === column,
      );
    }
  });
});
