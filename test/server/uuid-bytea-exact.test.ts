// UUID and BYTEA end to end: REST rows, ad-hoc SELECT and WebSocket changes show the canonical text,
// a REST filter takes any input form; Kafka records carry the values exactly; and a property: random
// uuids and byte strings in random input spellings survive journal replay, checkpoint and restart,
// with equal values (other spellings) one group.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { coerceIngest } from '../../src/common/cast.ts';
import { parseJsonExact, parseWireForRewrite, stringifyWire } from '../../src/common/json-codec.ts';
import { T, type Value } from '../../src/common/types.ts';
import { formatEpoch } from '../../src/sink/kafka-sink.ts';
import { RecordDecoder } from '../../src/source/kafka/record-decoder.ts';
import { WsClient, openRuntime, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

const SCHEMA = `CREATE TABLE items (id INTEGER PRIMARY KEY, u UUID, b BYTEA);
CREATE MATERIALIZED VIEW by_value AS SELECT u, b, COUNT(*) AS n FROM items GROUP BY u, b`;

const U = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';

test('uuid and bytea are canonical text on REST, SQL and WebSocket; filters read any input form', async () => {
  const dir = tempDir();
  const server = await startServer({ dataDir: dir });
  const ws: WsClient[] = [];
  try {
    await sqlOk(server.base, SCHEMA);
    const sub = new WsClient(`${server.wsBase}/v1/views/by_value/subscribe?snapshot=false`);
    ws.push(sub);
    await sub.waitFor((m) => m.type === 'subscribed');
    const body = JSON.stringify([
      { id: 1, u: U.toUpperCase(), b: '\\xDEADBEEF' },
      { id: 2, u: `{${U.replace(/-/g, '')}}`, b: '\\xdeadbeef' },
    ]);
    const ingest = await request(server.base, 'POST', '/v1/tables/items/rows?wait=true', undefined, body);
    assert.equal(ingest.status, 200, ingest.text);
    const rows = await request(server.base, 'GET', '/v1/tables/items/rows');
    assert.equal(rows.status, 200, rows.text);
    assert.equal(rows.text.split(`"u":"${U}"`).length, 3, rows.text);
    assert.equal(rows.text.split('"b":"\\\\xdeadbeef"').length, 3, rows.text);

    const view = await request(server.base, 'GET', '/v1/views/by_value/rows');
    const groups = (parseJsonExact(view.text) as { rows: { n: number }[] }).rows;
    assert.deepEqual(
      groups.map((g) => g.n),
      [2],
      'two spellings of one value are one group',
    );

    await sqlOk(
      server.base,
      `INSERT INTO items VALUES (3, '${U.toUpperCase()}', decode('3q2+7w==', 'base64'))`,
    );
    const select = await sqlOk(
      server.base,
      "SELECT u, b, encode(b, 'base64') AS b64, length(b) AS len, u::text AS t FROM items WHERE id = 3",
    );
    assert.match(select.text, new RegExp(`"u":"${U}"`));
    assert.match(select.text, /"b":"\\\\xdeadbeef"/);
    assert.match(select.text, /"b64":"3q2\+7w=="/);
    assert.match(select.text, /"len":4/);

    const filtered = await request(
      server.base,
      'GET',
      `/v1/tables/items/rows?u=${encodeURIComponent(U.toUpperCase())}&b=${encodeURIComponent('\\xDEADBEEF')}`,
    );
    assert.equal(filtered.status, 200, filtered.text);
    assert.equal((filtered.body as { rows: unknown[] }).rows.length, 3, 'a filter matches by value');
    const badFilter = await request(server.base, 'GET', '/v1/tables/items/rows?u=not-a-uuid');
    assert.equal(badFilter.status, 400, badFilter.text);

    const change = await sub.waitFor((m) => m.type === 'changes');
    assert.match(JSON.stringify(change), new RegExp(`"u":"${U}","b":"\\\\\\\\xdeadbeef"`));
  } finally {
    for (const c of ws) c.close();
    await server.close();
    removeDir(dir);
  }
});

test('Kafka records carry uuid and bytea as their canonical text, in every sink format and back', () => {
  const spec = {
    format: 'json',
    columns: ['id', 'u', 'b'],
    primaryKey: null,
    maxMessageBytes: 10_000,
    checkRow: () => null,
  } as const;
  const [change] = new RecordDecoder(spec).decode({
    offsetNumber: 0,
    key: null,
    value: Buffer.from(JSON.stringify({ id: 1, u: U.toUpperCase(), b: '\\x00FF' })),
  });
  assert.ok(change !== undefined && change.kind === 'upsert');
  const u = coerceIngest(change.row.u, T.uuid);
  const b = coerceIngest(change.row.b, T.bytea);
  assert.ok(u.ok && b.ok);
  assert.equal(u.value, U);
  assert.equal(b.value, '\\x00ff');
  const row: Record<string, Value> = { id: 1, u: u.value, b: b.value };
  const reread = parseWireForRewrite(stringifyWire({ changes: [{ op: '+I', row }] })) as {
    changes: { op: '+I'; row: Record<string, unknown> }[];
  };
  for (const changes of [[{ op: '+I' as const, row }], reread.changes]) {
    for (const format of ['changelog', 'upsert', 'debezium'] as const) {
      const message = formatEpoch(format, 3, changes, ['id']).find((m) => m.value !== null);
      assert.ok(message !== undefined, format);
      const text = String(message.value);
      assert.ok(text.includes(`"u":"${U}"`), `${format}: ${text}`);
      assert.ok(text.includes('"b":"\\\\x00ff"'), `${format}: ${text}`);
    }
  }
});

// A uuid or byte string, with one of its input spellings.
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const uuidInput = fc
  .tuple(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.constantFrom('canon', 'upper', 'bare', 'braces'))
  .map(([bytes, form]) => {
    const h = hex(bytes);
    const canon = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    const text =
      form === 'upper' ? canon.toUpperCase() : form === 'bare' ? h : form === 'braces' ? `{${canon}}` : canon;
    return { canon, text };
  });
// few distinct byte strings, so that equal values in other spellings recur in one group
const byteaInput = fc
  .tuple(
    fc.uint8Array({ maxLength: 3 }).map((b) => b.map((x) => x % 4)),
    fc.constantFrom('hex', 'upper', 'escape'),
  )
  .map(([bytes, form]) => {
    const canon = `\\x${hex(bytes)}`;
    const text =
      form === 'hex'
        ? canon
        : form === 'upper'
          ? `\\x${hex(bytes).toUpperCase()}`
          : [...bytes].map((x) => `\\${x.toString(8).padStart(3, '0')}`).join('');
    return { canon, text };
  });

function snapshot(engine: {
  execute(sql: string): readonly { rows?: readonly Record<string, unknown>[] }[];
}): string[] {
  return (engine.execute('SELECT id, u, b FROM items')[0]?.rows ?? [])
    .map((r) => `${String(r.id)}|${String(r.u)}|${String(r.b)}`)
    .sort();
}

const groupsOf = (rt: ReturnType<typeof openRuntime>): string[] =>
  rt.engine
    .viewSnapshot('by_value')
    .rows.map((r) => `${String(r.u)}|${String(r.b)}|${String(r.n)}`)
    .sort();

test('property: uuid and bytea values survive journal replay, checkpoint and restart exactly', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom(0, 1, 2), uuidInput, byteaInput), {
        minLength: 1,
        maxLength: 16,
      }),
      fc.boolean(),
      (items, checkpoint) => {
        const dir = tempDir();
        try {
          const rt = openRuntime(dir);
          rt.executeScript(SCHEMA);
          // a few uuids only (the first three), so groups hold several rows
          const us = items.map(([k, u]) => (k === 0 ? u : (items[k % items.length]?.[1] ?? u)));
          items.forEach(([, , b], i) => {
            const u = us[i]!;
            // half through SQL text, half as ingested JSON strings
            if (i % 2 === 0) rt.executeScript(`INSERT INTO items VALUES (${i}, '${u.text}', '${b.text}')`);
          });
          rt.ingest('items', {
            insert: items.flatMap(([, , b], i) =>
              i % 2 === 1 ? [{ id: i, u: us[i]!.text, b: b.text }] : [],
            ),
          });
          if (checkpoint) assert.ok(rt.checkpoint() !== null);
          const before = snapshot(rt.engine);
          assert.deepEqual(before, items.map(([, , b], i) => `${i}|${us[i]!.canon}|${b.canon}`).sort());
          const groups = groupsOf(rt);
          assert.equal(
            groups.length,
            new Set(items.map(([, , b], i) => `${us[i]!.canon}|${b.canon}`)).size,
            'one group per value',
          );
          rt.close();
          const again = openRuntime(dir);
          try {
            assert.deepEqual(snapshot(again.engine), before, 'table rows keep their values');
            assert.deepEqual(groupsOf(again), groups, 'the view is the same after restart');
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
