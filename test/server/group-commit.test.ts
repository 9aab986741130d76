// Group commit and the compact stored encodings: ingest requests that arrive together share one
// SQLite transaction (one fsync) yet keep their own epochs and atomicity; nothing is answered or
// published before the shared commit; reads commit an open group first; the stored changelog and
// journal forms read back exactly as the wire messages and rows they encode.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import WebSocket from 'ws';
import { SluiceError } from '../../src/common/errors.ts';
import type { ViewChangeSet } from '../../src/exec/api.ts';
import {
  encodeChanges,
  encodeChangesStored,
  encodeChangesWire,
  storedToWire,
  wireMessageGeneric,
} from '../../src/storage/changelog-codec.ts';
import { decodeBatchPayload, encodeBatchPayload } from '../../src/storage/table-log.ts';
import { openRuntime, removeDir, request, startServer, tempDir } from './helpers.ts';

const SCHEMA = `CREATE TABLE t (id INTEGER NOT NULL, v INTEGER NOT NULL, PRIMARY KEY (id));
CREATE MATERIALIZED VIEW s AS SELECT SUM(v) AS total, COUNT(*) AS n FROM t`;

test('requests applied together share one commit, keep their own epochs, and a bad one has no effect', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(SCHEMA);
    const before = rt.committedEpoch;
    const commitsBefore = rt.groupCommits;
    const a = rt.ingestGrouped('t', { insert: [{ id: 1, v: 10 }] });
    const bad = rt.ingestGrouped('t', { insert: [{ id: 2, v: 'not a number' }] });
    const c = rt.ingestGrouped('t', { insert: [{ id: 3, v: 30 }] });
    // Applied but not committed: nothing is durable, answered or visible as committed yet.
    assert.equal(rt.store.inTransaction, true);
    assert.equal(rt.committedEpoch, before);
    await assert.rejects(bad, (e: unknown) => e instanceof SluiceError && e.errorClass !== 'internal');
    const [ra, rc] = await Promise.all([a, c]);
    assert.equal(ra.epoch, before + 1);
    assert.equal(rc.epoch, before + 2);
    assert.equal(rt.groupCommits, commitsBefore + 1, 'one commit for the group');
    assert.equal(rt.committedEpoch, before + 2);
    assert.equal(rt.store.inTransaction, false);
    rt.close();
    // Both survive a reopen (replay), the rejected one left nothing.
    const again = openRuntime(dir);
    assert.equal(again.committedEpoch, before + 2);
    assert.deepEqual(again.engine.viewSnapshot('s').rows, [{ total: 40, n: 2 }]);
    again.close();
  } finally {
    removeDir(dir);
  }
});

test('a read or a SQL statement commits the open group first', async () => {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir);
    rt.executeScript(SCHEMA);
    const pending = rt.ingestGrouped('t', { insert: [{ id: 1, v: 5 }] });
    let answered = false;
    void pending.then(() => (answered = true));
    rt.executeScript('INSERT INTO t VALUES (2, 6)');
    // The group committed (and its answer was released) before the statement ran.
    await Promise.resolve();
    assert.equal(answered, true);
    assert.equal((await pending).epoch + 1, rt.committedEpoch);
    rt.close();
  } finally {
    removeDir(dir);
  }
});

test('over HTTP: concurrent ingests are answered after their epochs reached the subscriber', async () => {
  const dir = tempDir();
  const server = await startServer({ dataDir: dir });
  try {
    await request(server.base, 'POST', '/v1/sql', { sql: SCHEMA });
    const ws = new WebSocket(`${server.wsBase}/v1/views/s/subscribe?snapshot=false`);
    const seen = new Set<number>();
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { type: string; epoch: number };
      if (m.type === 'changes') seen.add(m.epoch);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    // wait for "subscribed" to have been processed server-side
    await request(server.base, 'GET', '/healthz');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(server.base, 'POST', '/v1/tables/t/rows', i === 3 ? [{ id: 'x', v: 1 }] : [{ id: i, v: i }]),
      ),
    );
    const ok = answers.filter((r) => r.status === 200).map((r) => r.body.epoch as number);
    assert.equal(ok.length, 7);
    assert.equal(answers[3]?.status, 400);
    assert.equal(new Set(ok).size, 7, 'distinct epochs');
    const rows = await request(server.base, 'GET', '/v1/views/s/rows');
    assert.deepEqual(rows.body.rows, [{ total: 0 + 1 + 2 + 4 + 5 + 6 + 7, n: 7 }]);
    const deadline = Date.now() + 5000;
    while (ok.some((e) => !seen.has(e)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(
      [...seen].sort((x, y) => x - y),
      [...ok].sort((x, y) => x - y),
    );
    ws.close();
  } finally {
    await server.close();
    removeDir(dir);
  }
});

test('changelog encodings: wire and stored-then-wire equal the generic message for every value kind', () => {
  const sets: ViewChangeSet[] = [
    {
      view: 'v',
      epoch: 7,
      positions: { t: { offset: 3 } },
      changes: [
        { op: '-U', row: { k: 1, s: 'a "quoted" \\ ünï\n', b: true, f: 0.1, z: -0 } },
        { op: '+U', row: { k: 1, s: null, b: false, f: Number.NaN, z: 2n ** 70n } },
        { op: '+I', row: { k: 2, s: '', b: null, f: Infinity, z: -(2n ** 63n) }, n: 3 },
        { op: '-D', row: { k: 3, s: '1e5', b: true, f: -Infinity, z: 1e21 }, n: 2 },
      ],
    },
    { view: 'v', epoch: 8, positions: {}, changes: [] },
    {
      view: 'v',
      epoch: 9,
      positions: { t: { offset: 4 } },
      changes: [{ op: '+I', row: { q: 1 } }],
      errors: [
        {
          op: '+E',
          error: { code: 'DIVISION_BY_ZERO', message: 'x', row: { q: 2n ** 64n }, epoch: 9, count: 1 },
        },
      ],
    } as unknown as ViewChangeSet,
    // Rows of different shapes: the generic path.
    {
      view: 'v',
      epoch: 10,
      positions: {},
      changes: [
        { op: '+I', row: { a: 1 } },
        { op: '+I', row: { b: 2 } },
      ],
    },
    {
      view: 'v',
      epoch: 11,
      positions: {},
      changes: [
        { op: '+I', row: { a: 1, b: 2 } },
        { op: '+I', row: { a: 1 } },
      ],
    },
    // The epoch's clock and the view's watermarks ("t" and "w" stored), on both paths.
    {
      view: 'v',
      epoch: 12,
      positions: { t: { offset: 5 } },
      clock: '2024-06-01 00:00:00+00',
      watermarks: { bids: '2024-01-01 10:00:07', asks: null },
      changes: [{ op: '+I', row: { a: 1 } }],
    },
    {
      view: 'v',
      epoch: 13,
      positions: {},
      clock: '2024-06-01 00:00:01+00',
      changes: [
        { op: '+I', row: { a: 1 } },
        { op: '+I', row: { b: 2 } },
      ],
    },
  ];
  for (const cs of sets) {
    const expected = wireMessageGeneric(cs);
    assert.equal(encodeChangesWire(cs), expected);
    const stored = encodeChangesStored(cs);
    assert.equal(storedToWire(cs.epoch, stored), expected);
    assert.deepEqual(JSON.parse(expected), JSON.parse(encodeChangesWire(cs)));
  }
  // Compact: the stored form of a typical epoch is much smaller than the wire message.
  const big: ViewChangeSet = {
    view: 'v',
    epoch: 1,
    positions: { t: { offset: 1 } },
    changes: Array.from({ length: 100 }, (_, i) => ({
      op: '+I' as const,
      row: { seller_id: i, total: i * 10 },
    })),
  };
  assert.ok(encodeChangesStored(big).length * 2 < encodeChangesWire(big).length);
  // Entries stored as wire messages (earlier versions) are read back unchanged.
  assert.equal(storedToWire(1, '{"type":"changes","epoch":1}'), '{"type":"changes","epoch":1}');
});

/** The stored form as the encoder before the one-pass generated one wrote it (the on-disk reference). */
function storedReference(cs: ViewChangeSet): string {
  const keys = cs.changes.length === 0 ? [] : Object.keys(cs.changes[0]!.row);
  const flat: unknown[] = [];
  let n: number[] | undefined;
  cs.changes.forEach((c, i) => {
    flat.push(c.op);
    for (const k of keys) {
      const v = (c.row as Record<string, unknown>)[k];
      flat.push(typeof v === 'bigint' || (typeof v === 'number' && !Number.isFinite(v)) ? String(v) : v);
    }
    if (c.n !== undefined) (n ??= []).push(i, c.n);
  });
  let s = `{"k":${JSON.stringify(keys)},"p":${JSON.stringify(cs.positions)}`;
  if (cs.clock !== undefined) s += `,"t":${JSON.stringify(cs.clock)}`;
  if (cs.watermarks !== undefined) s += `,"w":${JSON.stringify(cs.watermarks)}`;
  s += `,"c":${JSON.stringify(flat)}`;
  if (n !== undefined) s += `,"n":${JSON.stringify(n)}`;
  return `${s}}`;
}

test('changelog encodings: one pass gives the stored text written before and the generic wire message', () => {
  let seed = 11;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed % n;
  };
  const values: unknown[] = [
    0,
    -0,
    1.5,
    -7,
    1e21,
    2 ** 53,
    NaN,
    Infinity,
    -Infinity,
    'a',
    'q"\\\n',
    '\u2028ü',
    '',
    null,
    true,
    false,
    2n ** 70n,
  ];
  const ops = ['+I', '-D', '-U', '+U'] as const;
  const columnSets = [
    ['seller_id', 'total'],
    ['a"b', '__x', 'ü', '1'],
    ['bucket', 'sellers', 'x'],
  ];
  for (let round = 0; round < 300; round++) {
    const keys = columnSets[rand(columnSets.length)]!;
    const changes = Array.from({ length: rand(20) }, () => {
      const row: Record<string, unknown> = {};
      for (const k of keys) row[k] = values[rand(values.length)];
      return rand(4) === 0 ? { op: ops[rand(4)]!, row, n: 1 + rand(5) } : { op: ops[rand(4)]!, row };
    });
    const cs = {
      view: 'v',
      epoch: round,
      positions: { t: { offset: round } },
      ...(rand(2) === 0 ? { clock: '2024-06-01 00:00:00+00' } : {}),
      changes,
    } as unknown as ViewChangeSet;
    const both = encodeChanges(cs, true);
    assert.equal(both.stored, storedReference(cs));
    assert.equal(both.wire, wireMessageGeneric(cs));
    assert.equal(encodeChanges(cs, false).wire, null);
    assert.equal(storedToWire(cs.epoch, both.stored), both.wire);
  }
});

test('journal batch payloads are column-positional, exact, and the earlier row-object form still reads', () => {
  const inserts = [
    { a: 1, b: 2n ** 64n, c: 'x', d: Number.NaN },
    { a: 2, b: null, c: '', d: -Infinity },
  ];
  const deletes = [{ a: 3, b: -(2n ** 63n), c: 'y', d: 0.5 }];
  const columns = ['a', 'b', 'c', 'd'];
  const values = (rows: typeof inserts) =>
    rows.map((r) => columns.map((c) => r[c as keyof typeof r] ?? null));
  const text = encodeBatchPayload(columns, values(inserts), values(deletes));
  assert.ok(text.startsWith('{"k":'));
  assert.deepEqual(decodeBatchPayload(text), { insert: inserts, delete: deletes });
  assert.deepEqual(decodeBatchPayload(encodeBatchPayload(columns, [], [])), { insert: [], delete: [] });
  // Row objects of different shapes, as earlier versions could store them, still read back.
  const mixed = '{"insert":[{"a":1},{"a":1,"b":2}],"delete":[]}';
  assert.deepEqual(decodeBatchPayload(mixed), { insert: [{ a: 1 }, { a: 1, b: 2 }], delete: [] });
  assert.deepEqual(decodeBatchPayload('{"insert":[{"a":{"$i":"18446744073709551616"}}],"delete":[]}'), {
    insert: [{ a: 2n ** 64n }],
    delete: [],
  });
});
