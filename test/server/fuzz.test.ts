// Bad-input fuzz of the ingest and SQL endpoints: seeded random and mutated requests (bounded count).
// The server never answers 5xx to bad input, never crashes, and never applies part of a rejected
// request (table contents and the epoch are checked after every rejection).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestServer, request, sqlOk, startServer } from './helpers.ts';

const SEED = Number(process.env.SLUICE_SEED ?? 20_241_111);
const INGEST_CASES = Number(process.env.SLUICE_FUZZ_CASES ?? 300);
const SQL_CASES = Number(process.env.SLUICE_FUZZ_CASES ?? 300);

class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  next(): number {
    this.s ^= this.s << 13;
    this.s ^= this.s >>> 17;
    this.s ^= this.s << 5;
    return (this.s >>> 0) / 0x1_0000_0000;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length - 1)] as T;
  }
}

const SCHEMA = `CREATE TABLE items (id BIGINT NOT NULL, name VARCHAR(8) NOT NULL, score DOUBLE PRECISION, ok BOOLEAN, day DATE, PRIMARY KEY (id));
CREATE TABLE bag (k INTEGER, v TEXT);
CREATE MATERIALIZED VIEW item_stats AS SELECT ok, COUNT(*) AS n, SUM(score) AS total FROM items GROUP BY ok;
CREATE MATERIALIZED VIEW bag_counts AS SELECT k, COUNT(*) AS n FROM bag GROUP BY k`;

const WEIRD_VALUES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53,
  '',
  'x',
  'abcdefghijk',
  '2024-02-30',
  '2024-01-01',
  '12345678901234567890123',
  '-9223372036854775809',
  { a: 1 },
  [1, 2],
  'NaN',
  'Infinity',
  '\u0000',
  '💧',
  ' 5 ',
];

function validItem(rng: Rng, id: number): Record<string, unknown> {
  return {
    id,
    name: rng.pick(['a', 'bb', 'ccc', 'dddd']),
    score: rng.int(-100, 100) / 4,
    ok: rng.pick([true, false, null]),
    day: rng.pick(['2024-01-01', '2024-12-31', null]),
  };
}

/** A mutation of a valid body: every one of these should be rejected as a whole, or be valid. */
function mutateBody(rng: Rng, nextId: () => number): string {
  const rows = Array.from({ length: rng.int(1, 5) }, () => validItem(rng, nextId()));
  const target = rows[rng.int(0, rows.length - 1)] as Record<string, unknown>;
  switch (rng.int(0, 11)) {
    case 0:
      target[rng.pick(['id', 'name', 'score', 'ok', 'day'])] = rng.pick(WEIRD_VALUES);
      break;
    case 1:
      delete target[rng.pick(['id', 'name'])];
      break;
    case 2:
      target[rng.pick(['colour', '__proto__', 'constructor', 'ID', ''])] = 1;
      break;
    case 3:
      return JSON.stringify({ delete: [{ id: 10_000_000 + rng.int(0, 1000) }], insert: rows });
    case 4:
      return JSON.stringify({ insert: rows, upsert: rows });
    case 5:
      return JSON.stringify(
        rng.pick([rows[0], 5, 'rows', null, true, [[1, 2]], { insert: 'x' }, { delete: [1] }]),
      );
    case 6: {
      const text = JSON.stringify(rows);
      const at = rng.int(0, text.length - 1);
      return text.slice(0, at) + text.slice(at + 1); // drop a character
    }
    case 7: {
      const text = JSON.stringify(rows);
      const at = rng.int(0, text.length - 1);
      return (
        text.slice(0, at) +
        rng.pick(['{', '}', '"', ',', ':', '[', ']', '\\', 'x', '9', ' ', '\u0001']) +
        text.slice(at)
      );
    }
    case 8:
      return JSON.stringify(rows).replace(/"id":(\d+)/, '"id":123456789012345678901234567890');
    case 9:
      return JSON.stringify(rows).slice(0, rng.int(0, 20));
    case 10:
      target.id = 'not a number';
      break;
    default: {
      // random bytes
      const n = rng.int(0, 64);
      let s = '';
      for (let i = 0; i < n; i++) s += String.fromCharCode(rng.int(0, 255));
      return s;
    }
  }
  return JSON.stringify(rows);
}

const VALID_SQL: readonly string[] = [
  "INSERT INTO bag VALUES (1, 'a'), (2, 'b')",
  "INSERT INTO items VALUES (900001, 'zz', 1.5, true, '2024-01-01')",
  'UPDATE bag SET v = 5 WHERE k = 1',
  "DELETE FROM bag WHERE v = 'a'",
  'SELECT k, COUNT(*) FROM bag GROUP BY k',
  'SELECT * FROM item_stats WHERE n > 1',
  'CREATE MATERIALIZED VIEW fz AS SELECT k, SUM(k) AS s FROM bag GROUP BY k',
  "SELECT name || 'x' FROM items WHERE score / 0 > 1",
  'SELECT CAST(name AS INTEGER) FROM items',
  'EXPLAIN SELECT k FROM bag',
  'SHOW TABLES',
  'DROP TABLE items',
];

function mutateSql(rng: Rng): string {
  let s = rng.pick(VALID_SQL);
  const edits = rng.int(1, 3);
  for (let i = 0; i < edits; i++) {
    const at = rng.int(0, s.length);
    switch (rng.int(0, 4)) {
      case 0:
        s = s.slice(0, at) + s.slice(at + 1);
        break;
      case 1:
        s =
          s.slice(0, at) +
          rng.pick([
            '(',
            ')',
            "'",
            '"',
            ',',
            ';',
            '*',
            '--',
            '/*',
            'NULL',
            ' SELECT ',
            '99999999999999999999',
            '\u0000',
            'é',
          ]) +
          s.slice(at);
        break;
      case 2:
        s = s.replace(
          rng.pick(['bag', 'items', 'k', 'v', 'score', 'COUNT', 'SUM']),
          rng.pick(['nope', 'bagg', 'x.y', '"bag"', '1']),
        );
        break;
      case 3:
        s = s.toLowerCase();
        break;
      default:
        s = s.slice(0, at);
    }
  }
  return s;
}

describe('bad-input fuzz', () => {
  let server: TestServer;
  const rng = new Rng(SEED);
  let id = 1;
  const nextId = (): number => id++;

  before(async () => {
    server = await startServer({ bodyLimit: 64 * 1024 });
    await sqlOk(server.base, SCHEMA);
    const seed = Array.from({ length: 20 }, () => validItem(rng, nextId()));
    const r = await request(server.base, 'POST', '/v1/tables/items/rows', seed);
    assert.equal(r.status, 200, r.text);
  });
  after(async () => {
    await server.close();
  });

  const contents = async (): Promise<string> => {
    const items = await sqlOk(server.base, 'SELECT * FROM items ORDER BY id');
    const bag = await sqlOk(server.base, 'SELECT * FROM bag ORDER BY k, v');
    const stats = await request(server.base, 'GET', '/v1/views/item_stats/rows');
    return `${items.text}\n${bag.text}\n${JSON.stringify(stats.body.rows)}\nepoch ${server.app.sluice.committedEpoch}`;
  };

  test(`ingest: ${INGEST_CASES} random and mutated bodies (seed ${SEED})`, async () => {
    let state = await contents();
    let rejected = 0;
    for (let i = 0; i < INGEST_CASES; i++) {
      const body = mutateBody(rng, nextId);
      const table =
        rng.int(0, 9) === 0 ? rng.pick(['bag', 'nope', 'item_stats', '%00', 'items%2Fx']) : 'items';
      const res = await fetch(`${server.base}/v1/tables/${table}/rows`, {
        method: 'POST',
        body,
        headers: {
          'content-type': rng.pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded']),
        },
      });
      const text = await res.text();
      assert.ok(
        res.status < 500,
        `case ${i} (seed ${SEED}): ${res.status} for ${table} ${JSON.stringify(body)} → ${text}`,
      );
      if (res.status === 200) {
        state = await contents();
        continue;
      }
      rejected++;
      const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
      assert.equal(typeof parsed.error?.code, 'string', `a stable code: ${text}`);
      assert.equal(typeof parsed.error?.message, 'string');
      assert.equal(
        await contents(),
        state,
        `case ${i} (seed ${SEED}) was rejected but changed state: ${JSON.stringify(body)}`,
      );
    }
    assert.ok(rejected > INGEST_CASES / 3, `most cases are rejections (${rejected})`);
    assert.equal((await request(server.base, 'GET', '/healthz')).status, 200);
  });

  test(`sql: ${SQL_CASES} mutated statements (seed ${SEED})`, async () => {
    let state = await contents();
    let rejected = 0;
    for (let i = 0; i < SQL_CASES; i++) {
      const text =
        rng.int(0, 9) === 0
          ? String.fromCharCode(...Array.from({ length: rng.int(0, 40) }, () => rng.int(1, 127)))
          : mutateSql(rng);
      const res = await request(server.base, 'POST', '/v1/sql', { sql: text });
      assert.ok(
        res.status < 500,
        `case ${i} (seed ${SEED}): ${res.status} for ${JSON.stringify(text)} → ${res.text}`,
      );
      const results = (res.body.results ?? []) as unknown[];
      if (res.status !== 200 && results.length === 0) {
        rejected++;
        assert.equal(typeof res.body.error?.code, 'string', res.text);
        assert.equal(
          await contents(),
          state,
          `case ${i} (seed ${SEED}) was rejected but changed state: ${JSON.stringify(text)}`,
        );
      } else {
        state = await contents();
      }
      if (/DROP TABLE items/i.test(text) && res.status === 200) {
        // put the fixture back so later cases keep exercising it
        await sqlOk(server.base, 'DROP TABLE IF EXISTS items CASCADE');
        await sqlOk(
          server.base,
          SCHEMA.split(';\n')
            .filter((s) => /items/.test(s))
            .join(';\n'),
        );
        state = await contents();
      }
    }
    assert.ok(rejected > 0);
    const bad = [
      ['{"sql": 5}', 'INVALID_REQUEST'],
      ['{"sql": "SELECT 1", "extra": true}', 'INVALID_REQUEST'],
      ['{}', 'INVALID_REQUEST'],
      ['[]', 'INVALID_REQUEST'],
      ['{"sql": "SELECT 1"', 'INVALID_JSON'],
    ] as const;
    for (const [raw, code] of bad) {
      const r = await request(server.base, 'POST', '/v1/sql', undefined, raw);
      assert.equal(r.status, 400, raw);
      assert.equal(r.body.error?.code, code, raw);
    }
    assert.equal((await request(server.base, 'GET', '/healthz')).status, 200);
  });
});
