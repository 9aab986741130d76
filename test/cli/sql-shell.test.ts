// `sluice sql` against a real server: statements from standard input (multi-line, several per line),
// -c and -f, results as aligned tables with their epoch, errors with a caret under the reported
// column, exit statuses, --continue, meta-commands, and a server that cannot be reached.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type TestServer, removeDir, request, sqlOk, startServer, tempDir } from '../server/helpers.ts';
import { runCli } from './helpers.ts';

/** A loopback port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (address === null || typeof address !== 'object') throw new Error('no address');
  return address.port;
}

let server: TestServer;
const dir = tempDir('sluice-cli-');

before(async () => {
  server = await startServer();
});
after(async () => {
  await server.close();
  removeDir(dir);
});

test(
  'statements from standard input: multi-line, aligned tables, NULL, epoch footer',
  { timeout: 120_000 },
  async () => {
    const script = [
      'CREATE TABLE items (id BIGINT NOT NULL, name TEXT, price DOUBLE PRECISION,',
      '  PRIMARY KEY (id));',
      "INSERT INTO items VALUES (1, 'tea;', 2.5), (2, '東京', NULL),",
      '  (30, NULL, 10); -- the last row',
      'SELECT id, name, price',
      '  FROM items',
      '  WHERE id > 1; SELECT 1 AS one;',
      '',
    ].join('\n');
    const r = await runCli(['sql', '--url', server.base], script);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.equal(
      r.stdout,
      [
        'CREATE TABLE items',
        'INSERT items: 3 rows, epoch 1',
        ' id | name | price',
        '----+------+-------',
        '  2 | 東京 |  NULL',
        ' 30 | NULL |    10',
        '(2 rows, epoch 1)',
        '',
        ' one',
        '-----',
        '   1',
        '(1 row, epoch 1)',
        '',
        '',
      ].join('\n'),
    );
  },
);

test(
  'INSERT, UPDATE and DELETE with RETURNING: the rows, then the statement tag',
  { timeout: 120_000 },
  async () => {
    const script = [
      'CREATE TABLE ret (id integer PRIMARY KEY, name text);',
      "INSERT INTO ret VALUES (1, 'a'), (2, NULL) RETURNING id, name;",
      "UPDATE ret SET name = 'b' WHERE id = 2 RETURNING *;",
      'DELETE FROM ret WHERE id = 7 RETURNING id;',
      '',
    ].join('\n');
    const r = await runCli(['sql', '--url', server.base], script);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    const epoch = (tag: string): string => tag.replace(/epoch \d+$/, 'epoch N');
    assert.deepEqual(lines.map(epoch), [
      'CREATE TABLE ret',
      ' id | name',
      '----+------',
      '  1 | a',
      '  2 | NULL',
      '(2 rows)',
      '',
      'INSERT ret: 2 rows, epoch N',
      ' id | name',
      '----+------',
      '  2 | b',
      '(1 row)',
      '',
      'UPDATE ret: 1 row, epoch N',
      ' id',
      '----',
      '(0 rows)',
      '',
      'DELETE ret: 0 rows, epoch N',
      '',
    ]);
  },
);

test(
  'an error prints code, message and a caret under its column; the script stops with status 1',
  { timeout: 120_000 },
  async () => {
    const script = [
      'CREATE TABLE t1 (a INTEGER NOT NULL, b TEXT);',
      "SELECT '日本' AS x,",
      '  amout FROM t1;',
      'CREATE TABLE never (a INTEGER);',
    ].join('\n');
    const r = await runCli(['sql', '--url', server.base], script);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, 'CREATE TABLE t1\n');
    // The error is on line 3 of the input, column 3; the caret sits under the "a" of "amout".
    assert.equal(
      r.stderr,
      [
        'ERROR UNKNOWN_COLUMN: column "amout" does not exist in table "t1"',
        '<stdin>:3:   amout FROM t1;',
        '             ^',
        '',
      ].join('\n'),
    );
    const tables = await request(server.base, 'GET', '/v1/tables/never');
    assert.equal(tables.status, 404, 'nothing after the error ran');

    // --continue runs the rest; the status still says something failed.
    const c = await runCli(
      ['sql', '--url', server.base, '--continue'],
      'SELECT nope;\nCREATE TABLE later (a INTEGER);\n',
    );
    assert.equal(c.code, 1);
    assert.match(c.stderr, /^ERROR UNKNOWN_COLUMN: /);
    assert.equal(c.stdout, 'CREATE TABLE later\n');
    assert.equal((await request(server.base, 'GET', '/v1/tables/later')).status, 200);
  },
);

test(
  '-c runs its text, the caret follows wide characters, hint and detail print',
  { timeout: 120_000 },
  async () => {
    await sqlOk(
      server.base,
      "CREATE TABLE k (id INTEGER NOT NULL, email TEXT UNIQUE, PRIMARY KEY (id)); INSERT INTO k VALUES (1, 'a')",
    );
    const syntax = await runCli(['sql', '--url', server.base, '-c', "SELECT '日本😀', 1 +"]);
    assert.equal(syntax.code, 1);
    assert.equal(
      syntax.stderr,
      [
        'ERROR SYNTAX_ERROR: syntax error at end of input',
        "LINE 1: SELECT '日本😀', 1 +",
        // the three wide characters take two columns each: the caret is just past the "+"
        '                            ^',
        '',
      ].join('\n'),
    );
    const dup = await runCli(['sql', '--url', server.base, '-c', "INSERT INTO k VALUES (2, 'a')"]);
    assert.equal(dup.code, 1);
    assert.equal(
      dup.stderr,
      [
        'ERROR UNIQUE_VIOLATION: duplicate key value violates unique constraint "k_email_key"',
        "LINE 1: INSERT INTO k VALUES (2, 'a')",
        '        ^',
        'DETAIL: Key (email)=(a) already exists.',
        'HINT: in table "k"',
        '',
      ].join('\n'),
    );
    // Several -c run in order; the results of a script before its error print too.
    const several = await runCli([
      'sql',
      '--url',
      server.base,
      '-c',
      'SELECT 1 AS a',
      '-c',
      'SELECT 2 AS b; SELECT zz',
      '-c',
      'SELECT 3 AS not_run',
    ]);
    assert.equal(several.code, 1);
    assert.match(
      several.stdout,
      /^ a\n---\n 1\n\(1 row, epoch \d+\)\n\n b\n---\n 2\n\(1 row, epoch \d+\)\n\n$/,
    );
    assert.equal(
      several.stderr,
      [
        'ERROR UNKNOWN_COLUMN: column "zz" does not exist',
        'LINE 1: SELECT 2 AS b; SELECT zz',
        '                              ^',
        'HINT: the query has no FROM clause',
        '',
      ].join('\n'),
    );
  },
);

test(
  '-f runs a file and names it in error positions; a missing file is status 1',
  { timeout: 120_000 },
  async () => {
    const file = join(dir, 'setup.sql');
    writeFileSync(
      file,
      [
        '-- setup',
        'CREATE TABLE f1 (a INTEGER);',
        '',
        '/* a comment;',
        'across lines */',
        'SELECT a,',
        '  b FROM f1;',
        '',
      ].join('\r\n'),
    );
    const r = await runCli(['sql', '--url', server.base, '-f', file]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, 'CREATE TABLE f1\n');
    assert.equal(
      r.stderr,
      [
        `ERROR UNKNOWN_COLUMN: column "b" does not exist in table "f1"`,
        `${file}:7:   b FROM f1;`,
        ' '.repeat(file.length + 6) + '^',
        '',
      ].join('\n'),
    );
    const missing = await runCli(['sql', '--url', server.base, '-f', join(dir, 'nope.sql')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read .*nope\.sql/);
  },
);

test('meta-commands list and describe tables and views', { timeout: 120_000 }, async () => {
  await sqlOk(
    server.base,
    'CREATE TABLE m_orders (id BIGINT NOT NULL, seller INTEGER NOT NULL, amount INTEGER, PRIMARY KEY (id)); ' +
      'CREATE MATERIALIZED VIEW m_totals AS SELECT seller, SUM(amount) AS total FROM m_orders GROUP BY seller; ' +
      'INSERT INTO m_orders VALUES (1, 7, 5), (2, 7, 6), (3, 8, 1)',
  );
  const r = await runCli(
    ['sql', '--url', server.base],
    '\\d m_totals\n\\dv\n\\d M_ORDERS\n\\q\nCREATE TABLE not_run (a INTEGER);\n',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      'Materialized view "m_totals"',
      ' column | type    | nullable',
      '--------+---------+----------',
      ' seller | integer | not null',
      ' total  | bigint  |',
      'Key: seller',
      'Reads: m_orders',
      '2 rows, epoch ' + r.stdout.match(/2 rows, epoch (\d+)/)?.[1],
      'Definition: CREATE MATERIALIZED VIEW m_totals AS SELECT seller, SUM(amount) AS total FROM m_orders GROUP BY seller',
      '',
      ' name     | kind              | rows',
      '----------+-------------------+------',
      ' m_totals | materialized view |    2',
      '(1 row)',
      '',
      'Table "m_orders"',
      ' column | type    | nullable',
      '--------+---------+----------',
      ' id     | bigint  | not null',
      ' seller | integer | not null',
      ' amount | integer |',
      'Primary key: id',
      'Read by: m_totals',
      '3 rows',
      'Definition: CREATE TABLE m_orders (id BIGINT NOT NULL, seller INTEGER NOT NULL, amount INTEGER, PRIMARY KEY (id))',
      '',
      '',
    ].join('\n'),
  );
  assert.equal((await request(server.base, 'GET', '/v1/tables/not_run')).status, 404, '\\q ends the script');
  const unknown = await runCli(['sql', '--url', server.base, '-c', '\\d nothing_here']);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, 'ERROR UNKNOWN_TABLE: relation "nothing_here" does not exist\n');
  const bad = await runCli(['sql', '--url', server.base, '-c', '\\x']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /unknown meta-command "\\x"/);
});

test(
  'an unreachable server is status 1 with the reason; bad arguments are status 2',
  { timeout: 120_000 },
  async () => {
    const port = await freePort();
    const down = await runCli(['sql', '--url', `http://127.0.0.1:${port}`, '-c', 'SELECT 1']);
    assert.equal(down.code, 1);
    assert.equal(
      down.stderr,
      `sluice: cannot reach the server at http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
    for (const args of [
      ['sql', '--bogus'],
      ['sql', '--url', 'ftp://x', '-c', 'SELECT 1'],
      ['sql', '-c', 'SELECT 1', '-f', 'x.sql'],
    ]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^sluice sql: .*\n\nUsage: sluice sql/);
    }
    const help = await runCli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: sluice start[^\n]*\n\s+sluice sql [^\n]*\n\s+sluice subscribe <view>/);
  },
);
