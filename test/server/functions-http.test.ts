// The new scalar functions over the real HTTP server (in-process fastify on a loopback port): an
// ad-hoc SELECT answers with their values; a bad argument is a 400 with a code, a message and the
// position of the offending call or pattern, and the failed statement changes nothing; in a view a
// bad argument is a row error that REST reads report (VIEW_ERROR) until the row is fixed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request, sql, sqlOk, startServer } from './helpers.ts';

test('functions over HTTP: values, 400 errors with positions, row errors in a view', async () => {
  const server = await startServer();
  try {
    const { base } = server;
    const ok = await sqlOk(
      base,
      "SELECT split_part('a,b', ',', 2) AS f, 'thomas' ~* 'T.*ma' AS m, regexp_replace('foobarbaz', 'b(..)', 'X\\1Y', 'g') AS r, width_bucket(5.35, 0.024, 10.06, 5) AS w",
    );
    const results = ok.body['results'] as { rows: Record<string, unknown>[] }[];
    assert.deepEqual(results[0]?.rows, [{ f: 'b', m: true, r: 'fooXarYXazY', w: 3 }]);

    const negative = await sql(base, 'SELECT 1 AS one,\n  sqrt(-1) AS s');
    assert.equal(negative.status, 400);
    assert.equal(negative.body.error?.code, 'INVALID_VALUE');
    assert.equal(negative.body.error?.message, 'cannot take square root of a negative number');
    assert.deepEqual(negative.body.error?.position, { line: 2, column: 3 });

    const backref = await sql(base, "CREATE TABLE t1 (a TEXT); SELECT a ~ '(x)\\1' FROM t1");
    assert.equal(backref.status, 400);
    assert.equal(backref.body.error?.code, 'INVALID_REGEX');
    assert.deepEqual(backref.body.error?.position, { line: 1, column: 38 });

    const view = await sql(
      base,
      "CREATE MATERIALIZED VIEW bad AS SELECT repeat(a, 3) AS r FROM t1 WHERE a ~ '(?=x)'",
    );
    assert.equal(view.status, 400);
    assert.equal(view.body.error?.code, 'INVALID_REGEX');
    const views = await request(base, 'GET', '/v1/views');
    assert.ok(!JSON.stringify(views.body).includes('"bad"'), 'the refused view was not created');

    await sqlOk(
      base,
      "CREATE TABLE p (id INT PRIMARY KEY, email TEXT, score DOUBLE PRECISION); CREATE MATERIALIZED VIEW d AS SELECT id, split_part(email, '@', 2) AS domain, ln(score) AS l FROM p",
    );
    const ins = await request(base, 'POST', '/v1/tables/p/rows?wait=true', [
      { id: 1, email: 'a@x.org', score: 1 },
      { id: 2, email: 'b@y.org', score: 0 },
    ]);
    assert.equal(ins.status, 200, ins.text);
    const failing = await request(base, 'GET', '/v1/views/d/rows');
    assert.equal(failing.status, 400);
    assert.equal(failing.body.error?.code, 'VIEW_ERROR');
    assert.match(failing.body.error?.message ?? '', /cannot take logarithm of zero/);
    const errors = await request(base, 'GET', '/v1/views/d/errors');
    assert.equal(errors.status, 200, errors.text);
    assert.match(errors.text, /cannot take logarithm of zero/);

    const fix = await request(base, 'POST', '/v1/tables/p/rows?wait=true', [
      { id: 2, email: 'b@y.org', score: 1 },
    ]);
    assert.equal(fix.status, 200, fix.text);
    const rows = await request(base, 'GET', '/v1/views/d/rows');
    assert.equal(rows.status, 200, rows.text);
    const sorted = (rows.body['rows'] as Record<string, unknown>[]).sort(
      (x, y) => Number(x['id']) - Number(y['id']),
    );
    assert.deepEqual(sorted, [
      { id: 1, domain: 'x.org', l: 0 },
      { id: 2, domain: 'y.org', l: 0 },
    ]);
  } finally {
    await server.close();
  }
});
