// One big SQL request against a real server (a child process, so that its event loop is not this
// test's): the shapes that used to freeze it (an unnamed select list of 25,000 items took 46 s, an
// IN list of 1M items 31 s, a 10,000-term chain ended in a 500) are answered with a 4xx code and a
// position, the largest accepted shapes run, and meanwhile a second client's /healthz is answered.
// Bounds are an order of magnitude above what each shape takes, so a loaded machine cannot fail it.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type ChildServer, removeDir, spawnServer, tempDir } from './helpers.ts';

/**
 * Bounds far above the shapes' normal time (well under a second unloaded, a few seconds on a
 * machine loaded five times over) and, for the refused shapes, far below the old ones (46 s and
 * more for the select list, 31 s for the IN list).
 */
const REFUSED_MS = 20_000;
const ACCEPTED_MS = 30_000;

/** One request on its own connection (no keep-alive: a pooled socket could be closed under us). */
function send(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      {
        method,
        agent: false,
        headers: payload === undefined ? {} : { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: text === '' ? null : (JSON.parse(text) as unknown) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface Outcome {
  readonly status: number;
  readonly error: { code: string; message: string; position?: { line: number; column: number } } | undefined;
  readonly requestMs: number;
  /** The slowest /healthz answer while the request ran. */
  readonly healthzMs: number;
  readonly healthzCount: number;
}

/** POSTs `sql` while a second client polls /healthz until the answer arrives. */
async function whilePolling(base: string, sql: string): Promise<Outcome> {
  const started = performance.now();
  let done = false;
  const answer = send(base, 'POST', '/v1/sql', { sql }).finally(() => {
    done = true;
  });
  let healthzMs = 0;
  let healthzCount = 0;
  while (!done) {
    const t = performance.now();
    const health = await send(base, 'GET', '/healthz');
    assert.equal(health.status, 200);
    healthzMs = Math.max(healthzMs, performance.now() - t);
    healthzCount++;
    await new Promise((r) => setTimeout(r, 5));
  }
  const { status, json } = await answer;
  const body = json as { error?: Outcome['error'] };
  return { status, error: body.error, requestMs: performance.now() - started, healthzMs, healthzCount };
}

const list = (n: number, item: (i: number) => string, sep = ','): string =>
  Array.from({ length: n }, (_, i) => item(i)).join(sep);

describe('one big SQL request does not hold the server', { timeout: 300_000 }, () => {
  let dir: string;
  let server: ChildServer;

  before(async () => {
    dir = tempDir();
    server = await spawnServer(dir);
    const created = await send(server.base, 'POST', '/v1/sql', {
      sql: "CREATE TABLE t (a INT, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')",
    });
    assert.equal(created.status, 200);
  });

  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    removeDir(dir);
  });

  const rejected: [string, string, string, { line: number; column: number } | null][] = [
    // 25,000 items: the 1,665th is where the limit is crossed (each item is "1," = 2 columns).
    [
      'a select list of 25,000 unnamed items',
      `SELECT ${list(25_000, () => '1')}`,
      'TOO_MANY_ITEMS',
      { line: 1, column: 8 + 2 * 1_664 },
    ],
    [
      'an IN list of 1,000,000 items',
      `SELECT 1 IN (${list(1_000_000, () => '1')})`,
      'STATEMENT_TOO_LARGE',
      { line: 1, column: 1_048_577 },
    ],
    // A SELECT is refused by the tokens it would hand the SQL library before that library runs;
    // the 12,001st is where the limit is crossed.
    ['a 10,000-term 1+1+… chain', `SELECT ${list(10_000, () => '1', '+')}`, 'STATEMENT_TOO_LARGE', null],
    [
      'a 10,000-term a||a||… chain',
      `SELECT ${list(10_000, () => 'b', '||')} FROM t`,
      'STATEMENT_TOO_LARGE',
      null,
    ],
    [
      'an OR chain of 12,000 terms',
      `SELECT a FROM t WHERE ${list(12_000, (i) => `a = ${i}`, ' OR ')}`,
      'STATEMENT_TOO_LARGE',
      null,
    ],
    // Statements the SQL library does not parse are bounded by depth.
    [
      'a 10,000-term 1+1+… chain in an UPDATE',
      `UPDATE t SET a = ${list(10_000, () => '1', '+')}`,
      'NESTING_TOO_DEEP',
      null,
    ],
    [
      'a 10,000-cast x::int::int… chain in an UPDATE',
      `UPDATE t SET a = a${'::int'.repeat(10_000)}`,
      'NESTING_TOO_DEEP',
      null,
    ],
    [
      '10,000 nested parentheses',
      `SELECT ${'('.repeat(10_000)}1${')'.repeat(10_000)}`,
      'NESTING_TOO_DEEP',
      { line: 1, column: 108 },
    ],
    [
      '5,000 nested CASE',
      `SELECT ${'CASE WHEN true THEN '.repeat(5_000)}1${' END'.repeat(5_000)}`,
      'NESTING_TOO_DEEP',
      { line: 1, column: 2_008 },
    ],
    [
      '10,000 nested calls in an UPDATE',
      `UPDATE t SET a = ${'abs('.repeat(10_000)}1${')'.repeat(10_000)}`,
      'NESTING_TOO_DEEP',
      { line: 1, column: 421 },
    ],
  ];
  for (const [what, sql, code, position] of rejected) {
    it(`${what}: 400 ${code} with a position, /healthz answered meanwhile`, async () => {
      const outcome = await whilePolling(server.base, sql);
      assert.equal(outcome.status, 400, JSON.stringify(outcome.error));
      assert.equal(outcome.error?.code, code, outcome.error?.message);
      assert.ok(outcome.error?.position !== undefined, 'no position');
      if (position !== null) assert.deepEqual(outcome.error?.position, position);
      else assert.notDeepEqual(outcome.error?.position, { line: 1, column: 1 });
      assert.ok(outcome.requestMs < REFUSED_MS, `answered after ${Math.round(outcome.requestMs)} ms`);
      assert.ok(outcome.healthzMs < REFUSED_MS, `/healthz waited ${Math.round(outcome.healthzMs)} ms`);
    });
  }

  const accepted: [string, string][] = [
    ['a select list of 1,664 unnamed items (the limit)', `SELECT ${list(1_664, () => '1')}`],
    ['an IN list of 24,000 integers', `SELECT a FROM t WHERE a IN (${list(24_000, (i) => String(i))})`],
    ['an OR chain of 2,900 terms', `SELECT a FROM t WHERE ${list(2_900, (i) => `a = ${i}`, ' OR ')}`],
    [
      'an AND chain of 2,900 terms in a view',
      `CREATE MATERIALIZED VIEW v_and AS SELECT a FROM t WHERE ${list(2_900, (i) => `a <> ${i + 10}`, ' AND ')}`,
    ],
    ['a CASE of 1,400 arms', `SELECT CASE ${list(1_400, (i) => `WHEN a = ${i} THEN ${i}`, ' ')} END FROM t`],
    [
      '600 views in one script',
      list(600, (i) => `CREATE MATERIALIZED VIEW v${i} AS SELECT a, count(*) FROM t GROUP BY a`, ';\n'),
    ],
    // Into a table no view reads: this is about the statement, not the epoch it makes.
    [
      'an INSERT of 8,000 rows',
      `CREATE TABLE bulk (a INT, b TEXT); INSERT INTO bulk VALUES ${list(8_000, (i) => `(${i}, 'r')`)}`,
    ],
  ];
  for (const [what, sql] of accepted) {
    it(`the largest accepted shapes run: ${what}, /healthz answered meanwhile`, async () => {
      const outcome = await whilePolling(server.base, sql);
      assert.equal(outcome.status, 200, JSON.stringify(outcome.error));
      assert.ok(outcome.requestMs < ACCEPTED_MS, `answered after ${Math.round(outcome.requestMs)} ms`);
      assert.ok(outcome.healthzMs < ACCEPTED_MS, `/healthz waited ${Math.round(outcome.healthzMs)} ms`);
    });
  }

  // Counted, not timed: a script that ran in one go could not see rows ingested while it ran.
  it('a long script runs in slices: ingest sent meanwhile lands between its statements', async () => {
    const script = [
      'SELECT COUNT(*) AS n FROM t',
      ...Array.from(
        { length: 300 },
        (_, i) =>
          `CREATE MATERIALIZED VIEW s${i} AS SELECT a, b, COUNT(*) AS n FROM t WHERE a > ${i} GROUP BY a, b`,
      ),
      'SELECT COUNT(*) AS n FROM t',
    ].join(';\n');
    let done = false;
    const answer = send(server.base, 'POST', '/v1/sql', { sql: script }).finally(() => (done = true));
    let next = 1_000_000;
    let ingested = 0;
    while (!done) {
      const r = await send(server.base, 'POST', '/v1/tables/t/rows', [{ a: next++, b: 'during' }]);
      assert.equal(r.status, 200);
      ingested++;
    }
    const { status, json } = await answer;
    assert.equal(status, 200, JSON.stringify(json));
    const results = (json as { results: { rows?: { n: number }[] }[] }).results;
    assert.equal(results.length, 302);
    const first = results[0]?.rows?.[0]?.n ?? -1;
    const last = results[301]?.rows?.[0]?.n ?? -1;
    assert.ok(ingested > 0);
    assert.ok(
      last > first,
      `rows ingested while the script ran were seen by its last statement (${first} → ${last})`,
    );
    const dropped = await send(server.base, 'POST', '/v1/sql', {
      sql: Array.from({ length: 300 }, (_, i) => `DROP MATERIALIZED VIEW s${i}`).join(';'),
    });
    assert.equal(dropped.status, 200);
  });

  it('the longest name a statement may create is readable in URLs; one more character is NAME_TOO_LONG', async () => {
    // 128 code points outside the BMP: 256 UTF-16 code units, 512 bytes of UTF-8 in the URL.
    const longest = '😀'.repeat(128);
    const longer = await send(server.base, 'POST', '/v1/sql', {
      sql: `CREATE TABLE "${longest}x" (k INT PRIMARY KEY)`,
    });
    assert.equal(longer.status, 400);
    const error = (longer.json as { error: Outcome['error'] }).error;
    assert.equal(error?.code, 'NAME_TOO_LONG', error?.message);
    assert.deepEqual(error?.position, { line: 1, column: 14 });
    const created = await send(server.base, 'POST', '/v1/sql', {
      sql:
        `CREATE TABLE "${longest}" (k INT PRIMARY KEY, v INT);` +
        `CREATE MATERIALIZED VIEW "${longest}v" AS SELECT v, count(*) AS n FROM "${longest}" GROUP BY v`,
    });
    assert.equal(created.status, 400, 'the view name has 129 characters');
    const ok = await send(server.base, 'POST', '/v1/sql', {
      sql:
        `CREATE TABLE "${longest}" (k INT PRIMARY KEY, v INT);` +
        `CREATE MATERIALIZED VIEW "v${'😀'.repeat(127)}" AS SELECT v, count(*) AS n FROM "${longest}" GROUP BY v`,
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const table = encodeURIComponent(longest);
    const view = encodeURIComponent(`v${'😀'.repeat(127)}`);
    const ingested = await send(server.base, 'POST', `/v1/tables/${table}/rows?wait=true`, {
      insert: [{ k: 1, v: 7 }],
    });
    assert.equal(ingested.status, 200, JSON.stringify(ingested.json));
    assert.equal((await send(server.base, 'GET', `/v1/tables/${table}`)).status, 200);
    const rows = await send(server.base, 'GET', `/v1/views/${view}/rows`);
    assert.equal(rows.status, 200, JSON.stringify(rows.json));
    assert.deepEqual((rows.json as { rows: unknown[] }).rows, [{ v: 7, n: 1 }]);
    const dropped = await send(server.base, 'POST', '/v1/sql', {
      sql: `DROP MATERIALIZED VIEW "v${'😀'.repeat(127)}"; DROP TABLE "${longest}"`,
    });
    assert.equal(dropped.status, 200);
  });

  it('a lone surrogate in DDL is 400 INVALID_TEXT at it, stores nothing, and a restart still starts', async () => {
    // JSON.stringify writes the lone half as the escape "\ud800", as the attacking client did.
    for (const [sql, position] of [
      ['CREATE TABLE "\ud800" (x INT)', { line: 1, column: 15 }],
      ["INSERT INTO t VALUES (1, 'a\udc00')", { line: 1, column: 28 }],
      ["CREATE MATERIALIZED VIEW lone AS SELECT a, 'x\ud83d' AS s FROM t", { line: 1, column: 46 }],
    ] as const) {
      const outcome = await whilePolling(server.base, sql);
      assert.equal(outcome.status, 400);
      assert.equal(outcome.error?.code, 'INVALID_TEXT', outcome.error?.message);
      assert.deepEqual(outcome.error?.position, position);
    }
    // Well-formed text outside the BMP is fine, and survives the restart byte for byte.
    const emoji = await send(server.base, 'POST', '/v1/sql', {
      sql: 'CREATE TABLE "😀" (x TEXT); INSERT INTO "😀" VALUES (\'😀x\')',
    });
    assert.equal(emoji.status, 200);
    server.child.kill('SIGTERM');
    await server.exited;
    server = await spawnServer(dir);
    const tables = await send(server.base, 'GET', '/v1/tables');
    const names = (tables.json as { tables: { name: string }[] }).tables.map((t) => t.name);
    assert.deepEqual(names.sort(), ['bulk', 't', '😀'].sort());
    const rows = await send(server.base, 'POST', '/v1/sql', { sql: 'SELECT x, length(x) AS n FROM "😀"' });
    assert.deepEqual((rows.json as { results: { rows: unknown[] }[] }).results[0]?.rows, [
      { x: '😀x', n: 2 },
    ]);
  });
});
