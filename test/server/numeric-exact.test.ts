// Exact NUMERIC end to end over the real HTTP server and real SQLite files: ingest as JSON strings
// or JSON numbers (read exactly from their text, even past a double's 15 digits), exact decimal
// strings in REST rows, SELECT results, WebSocket and NDJSON changelogs, filters that match 1.5 to
// 1.50, and clear 400s for bad values. Then a property: random decimals survive the journal, a
// checkpoint, restart and the stored changelog unchanged, digit for digit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Decimal } from '../../src/common/decimal.ts';
import { decodeStored, encodeStored, parseJsonExact, stringifyWire } from '../../src/common/json-codec.ts';
import { coerceIngest } from '../../src/common/cast.ts';
import { T } from '../../src/common/types.ts';
import {
  type Message,
  WsClient,
  openRuntime,
  removeDir,
  request,
  sqlOk,
  startServer,
  tempDir,
} from './helpers.ts';

const SCHEMA = `CREATE TABLE ledger (id INTEGER NOT NULL, acct TEXT NOT NULL, amount NUMERIC(12,2), exact NUMERIC, PRIMARY KEY (id));
CREATE MATERIALIZED VIEW balances AS SELECT acct, SUM(amount) AS total, AVG(amount) AS mean, SUM(exact) AS big, COUNT(*) AS n FROM ledger GROUP BY acct`;

async function ndjson(base: string, path: string, until: (m: Message) => boolean): Promise<Message[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 20_000);
  const res = await fetch(base + path, { signal: controller.signal });
  assert.equal(res.status, 200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const out: Message[] = [];
  let buffer = '';
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() !== '') {
          const m = JSON.parse(line) as Message;
          out.push(m);
          if (until(m)) return out;
        }
        nl = buffer.indexOf('\n');
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return out;
}

test('decimals are exact strings on every wire and JSON numbers are read from their text', async () => {
  const dir = tempDir();
  let server = await startServer({ dataDir: dir });
  const ws: WsClient[] = [];
  try {
    await sqlOk(server.base, SCHEMA);
    const sub = new WsClient(`${server.wsBase}/v1/views/balances/subscribe?snapshot=false`);
    ws.push(sub);
    await sub.waitFor((m) => m.type === 'subscribed');
    // Raw text: 12345678901234567.89 is not a double; it must arrive as written.
    const body =
      '[{"id":1,"acct":"a","amount":0.1,"exact":12345678901234567.89},' +
      '{"id":2,"acct":"a","amount":"0.2","exact":"0.01"},' +
      '{"id":3,"acct":"b","amount":"1.005","exact":1.50}]';
    const ingest = await request(server.base, 'POST', '/v1/tables/ledger/rows?wait=true', undefined, body);
    assert.equal(ingest.status, 200, ingest.text);

    const rows = await request(server.base, 'GET', '/v1/views/balances/rows');
    assert.equal(rows.status, 200, rows.text);
    assert.deepEqual(
      (rows.body.rows as Record<string, unknown>[]).sort((x, y) =>
        String(x.acct).localeCompare(String(y.acct)),
      ),
      [
        { acct: 'a', total: '0.30', mean: '0.15000000000000000000', big: '12345678901234567.90', n: 2 },
        { acct: 'b', total: '1.01', mean: '1.01000000000000000000', big: '1.5', n: 1 },
      ],
    );
    // A filter on a numeric column compares as decimals: 0.3 finds 0.30.
    const filtered = await request(server.base, 'GET', '/v1/views/balances/rows?total=0.3');
    assert.deepEqual(
      (filtered.body.rows as Record<string, unknown>[]).map((r) => r.acct),
      ['a'],
    );
    const select = await sqlOk(
      server.base,
      'SELECT amount * 3 AS x, exact / 3 AS y FROM ledger WHERE id = 2',
    );
    const result = (select.body.results as { rows: Record<string, unknown>[] }[])[0];
    assert.deepEqual(result?.rows, [{ x: '0.60', y: '0.00333333333333333333' }]);

    const changes = await sub.waitFor((m) => m.type === 'changes');
    const rowsSent = (changes.changes as { op: string; row: Record<string, unknown> }[]).map((c) => c.row);
    assert.ok(
      rowsSent.some((r) => r.total === '0.30' && r.big === '12345678901234567.90'),
      JSON.stringify(rowsSent),
    );

    // Bad values: a clear 400 naming the column, and nothing applied.
    for (const bad of [
      '{"id":9,"acct":"z","amount":"abc"}',
      '{"id":9,"acct":"z","amount":123456789012}',
      `{"id":9,"acct":"z","exact":"1e999999"}`,
    ]) {
      const r = await request(server.base, 'POST', '/v1/tables/ledger/rows', undefined, `[${bad}]`);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error?.code, 'INVALID_VALUE', r.text);
      assert.match(r.body.error?.message ?? '', /column "(amount|exact)"/);
    }
    const after = await request(server.base, 'GET', '/v1/views/balances/rows');
    assert.equal((after.body.rows as unknown[]).length, 2, 'no bad row was applied');

    // Restart on the same files: the journal (and the shutdown checkpoint) give the same digits,
    // and the stored changelog replays them as strings.
    for (const c of ws) c.close();
    await server.close();
    server = await startServer({ dataDir: dir });
    const again = await request(server.base, 'GET', '/v1/views/balances/rows');
    assert.deepEqual(
      (again.body.rows as Record<string, unknown>[]).sort((x, y) =>
        String(x.acct).localeCompare(String(y.acct)),
      ),
      (rows.body.rows as Record<string, unknown>[]).sort((x, y) =>
        String(x.acct).localeCompare(String(y.acct)),
      ),
    );
    const replay = await ndjson(
      server.base,
      `/v1/views/balances/changes?snapshot=false&resumeFrom=${(ingest.body.epoch as number) - 1}`,
      (m) => m.type === 'changes',
    );
    const replayed = replay.find((m) => m.type === 'changes');
    assert.ok(replayed !== undefined, JSON.stringify(replay));
    assert.ok(
      (replayed.changes as { row: Record<string, unknown> }[]).some(
        (c) => c.row.big === '12345678901234567.90',
      ),
      JSON.stringify(replayed),
    );
  } finally {
    for (const c of ws) c.close();
    await server.close();
    removeDir(dir);
  }
});

// Random decimal text: up to 30 digits before the point and `maxScale` after, either sign.
const decimalTextUpTo = (maxScale: number) =>
  fc
    .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: maxScale }))
    .map(([neg, u, s]) => new Decimal(neg ? -u : u, s).toString());
// The sums below are modelled in units of 10^-12.
const decimalText = decimalTextUpTo(12);

test('property: decimal values survive the codecs exactly', () => {
  fc.assert(
    fc.property(decimalTextUpTo(20), (t) => {
      const d = coerceIngest(t, T.numeric);
      assert.ok(d.ok);
      const v = d.value as Decimal;
      assert.equal(v.toString(), t);
      const stored = decodeStored(encodeStored([v, { x: v }])) as [Decimal, { x: Decimal }];
      assert.ok(stored[0] instanceof Decimal);
      assert.equal(stored[0].toString(), t, 'storage codec keeps the scale');
      assert.equal(stored[1].x.toString(), t);
      assert.equal(stringifyWire({ v }), JSON.stringify({ v: t }), 'wire: the exact text as a string');
      // As a JSON number in a request: read from the text, not through a double.
      const parsed = parseJsonExact(`{"v":${t}}`) as { v: unknown };
      const n = coerceIngest(parsed.v, T.numeric);
      assert.ok(n.ok);
      assert.equal((n.value as Decimal).key(), v.key(), `${t} as a JSON number`);
    }),
    { numRuns: 500 },
  );
});

test('JSON numbers with an exponent past 2^53 arrive with all their digits', () => {
  // Few significant digits, so the JSON parser hands over a double; String(1e21) is '1e+21'.
  for (const [json, want] of [
    ['1e21', '1000000000000000000000'],
    ['1.5e20', '150000000000000000000'],
    ['-2E+22', '-20000000000000000000000'],
    ['9007199254740993', '9007199254740993'],
  ] as const) {
    const parsed = parseJsonExact(`{"v":${json}}`) as { v: unknown };
    const n = coerceIngest(parsed.v, T.numeric);
    assert.ok(n.ok);
    assert.equal((n.value as Decimal).toString(), want, json);
    assert.equal(typeof (n.value as Decimal).unscaled, 'bigint', `${json}: a bigint past 2^53`);
  }
});

/** A decimal text as an integer count of 10^-12, by string work alone (the model of the sums). */
function at12(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(`${whole}${fraction.padEnd(12, '0')}`.replace(/^(-?)0+(?=\d)/, '$1'));
}

function tableValues(engine: {
  execute(sql: string): readonly { rows?: readonly Record<string, unknown>[] }[];
}): string[] {
  return (engine.execute('SELECT v FROM t')[0]?.rows ?? []).map((r) => String(r.v));
}

test('property: random decimals survive journal replay, checkpoint and restart digit for digit', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(decimalText, fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 40 }),
      fc.boolean(),
      (values, checkpoint) => {
        const dir = tempDir();
        try {
          const rt = openRuntime(dir);
          rt.executeScript(
            'CREATE TABLE t (id INTEGER NOT NULL, g INTEGER NOT NULL, v NUMERIC, PRIMARY KEY (id)); ' +
              'CREATE MATERIALIZED VIEW s AS SELECT g, SUM(v) AS total, MIN(v) AS lo, MAX(v) AS hi FROM t GROUP BY g',
          );
          rt.ingest('t', { insert: values.map(([v, g], id) => ({ id, g, v })) });
          // exact sums per group, from BigInt at a common scale
          const expected = new Map<number, bigint>();
          for (const [v, g] of values) expected.set(g, (expected.get(g) ?? 0n) + at12(v));
          if (checkpoint) assert.ok(rt.checkpoint() !== null);
          const before = tableValues(rt.engine);
          const sums = rt.engine.viewSnapshot('s').rows;
          rt.close();
          const again = openRuntime(dir);
          try {
            assert.deepEqual(
              tableValues(again.engine).sort(),
              [...before].sort(),
              'table rows keep their text',
            );
            assert.deepEqual(values.map(([v]) => v).sort(), [...before].sort(), 'as ingested');
            const after = again.engine.viewSnapshot('s').rows;
            assert.deepEqual(
              after.map((r) => `${String(r.g)}:${String(r.total)}:${String(r.lo)}:${String(r.hi)}`).sort(),
              sums.map((r) => `${String(r.g)}:${String(r.total)}:${String(r.lo)}:${String(r.hi)}`).sort(),
            );
            for (const r of after) {
              const total = r.total as Decimal;
              assert.equal(
                total.withScale(12).big(),
                expected.get(r.g as number),
                `sum of group ${String(r.g)}`,
              );
            }
          } finally {
            again.close();
          }
        } finally {
          removeDir(dir);
        }
      },
    ),
    { numRuns: 12 },
  );
});
