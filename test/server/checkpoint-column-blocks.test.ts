// Tables' rows in checkpoint column blocks (storage/column-block.ts): every column type round-trips
// exactly through the SQLite store into a fresh engine (keyed tables keep them as columns until first
// used), a restored engine writes the same bytes again, a file of the JSON-block layout from before
// still loads, and a damaged column block is refused instead of loaded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SluiceError } from '../../src/common/errors.ts';
import { encodeStored } from '../../src/common/json-codec.ts';
import type { Row } from '../../src/common/types.ts';
import { Engine } from '../../src/exec/engine.ts';
import { CheckpointStore } from '../../src/storage/checkpoint-store.ts';
import {
  LANE,
  entryHash,
  formatSum,
  hashBlock,
  hashEntry,
  metaChecksum,
  type MetaRow,
} from '../../src/storage/checkpoint-format.ts';
import { columnRows, decodeColumnBlock } from '../../src/storage/column-block.ts';

const COLUMNS = `s TEXT, n NUMERIC(12,2), b BIGINT, i INTEGER, f DOUBLE PRECISION, ts TIMESTAMP, tz TIMESTAMPTZ,
  d DATE, iv INTERVAL, ok BOOLEAN, j JSONB, a INTEGER[], ta TEXT[], by BYTEA, u UUID`;
const DDL = [
  `CREATE TABLE t (id BIGINT PRIMARY KEY, ${COLUMNS})`,
  `CREATE TABLE k (id BIGINT, ${COLUMNS})`,
  'CREATE MATERIALIZED VIEW by_ok AS SELECT ok, COUNT(*) AS n, SUM(i) AS si, SUM(n) AS sn FROM t GROUP BY ok',
].join(';');

/** Rows with every column type, NULLs in every column, -0, bigints next to small integers. */
function rows(count: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [
    {
      id: 1,
      s: 'héllo "q"\n\u{1F600}',
      n: '1.50',
      b: '9007199254740993',
      i: -5,
      f: -0,
      ts: '2024-01-02 03:04:05.123456',
      tz: '2024-01-02 03:04:05+02',
      d: '2024-02-29',
      iv: '1 mon 2 days 03:04:05',
      ok: true,
      j: { $a: [1, 2.5, 'x'], b: null },
      a: [1, null, 3],
      ta: ['a', 'b'],
      by: '\\x00ff',
      u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    },
    { id: 2 },
    { id: 3, b: 12, f: 1e308, i: 2147483647 },
  ];
  for (let id = 4; id < count; id++) {
    const gap = id % 7 === 0; // NULLs scattered through the numeric columns too
    out.push({
      id: id * 3 - 1_000,
      s: gap ? null : `s${id}`,
      n: gap ? null : `${id}.${id % 100}`,
      b: id % 11 === 0 ? `${2n ** 62n + BigInt(id)}` : id,
      i: gap ? null : id % 1000,
      f: id % 5 === 0 ? null : id / 7,
      ts: `2024-03-0${1 + (id % 9)} 10:00:00`,
      tz: null,
      d: gap ? null : '2023-12-31',
      iv: id % 3 === 0 ? `${id} seconds` : null,
      ok: id % 2 === 0,
      j: id % 4 === 0 ? { k: id, nested: [id, 'x'] } : null,
      a: id % 6 === 0 ? [id, id + 1] : null,
      ta: null,
      by: id % 8 === 0 ? '\\xdeadbeef' : null,
      u: null,
    });
  }
  return out;
}

function engineWith(count: number): Engine {
  const e = new Engine();
  e.setStateTracking(true);
  e.execute(DDL);
  // The rows are JSON as a client sends it (jsonb objects, arrays); the table checks them.
  const all = rows(count) as Row[];
  e.applyChanges('t', { insert: all });
  e.applyChanges('k', { insert: all });
  return e;
}

function fresh(): Engine {
  const e = new Engine();
  e.setStateTracking(true);
  e.execute(DDL);
  return e;
}

/** A table's rows in the exact stored encoding (a bigint, a decimal's scale, -0 all show). */
function tableText(e: Engine, table: string): string[] {
  return e
    .tableRows(table)
    .map((r) => encodeStored(r))
    .sort();
}

function viewText(e: Engine, view: string): string[] {
  return e
    .viewSnapshot(view)
    .rows.map((r) => encodeStored(r))
    .sort();
}

function stateRows(db: Database.Database): unknown[] {
  return db
    .prepare('SELECT state_id, entry_key, ord, value, h1, h2, kind FROM checkpoint_state ORDER BY 1, 2')
    .raw(true)
    .all();
}

test('every column type round-trips through column blocks; a restored engine writes the same bytes', () => {
  const original = engineWith(5_000);
  const db = new Database(':memory:');
  const store = new CheckpointStore(db);
  store.checkpoint(original, 1);
  const kinds = db
    .prepare(
      "SELECT state_id, kind, COUNT(*) AS n FROM checkpoint_state WHERE state_id LIKE 'table:%' GROUP BY 1, 2",
    )
    .all() as { state_id: string; kind: string; n: number }[];
  // Both tables' rows are in column blocks (5,000 rows: more than one block each).
  assert.deepEqual(
    kinds.map((k) => [k.state_id.replace('\u0000', '\\0'), k.kind, k.n > 1]),
    [
      ['table:k\\0b', 'c', true],
      ['table:t\\0b', 'c', true],
    ],
  );

  const stored = store.read() ?? assert.fail('stored');
  const restored = fresh();
  assert.deepEqual(restored.loadCheckpoint(stored.checkpoint).rebuilt, []);
  // A full checkpoint of the restored engine (its keyed rows not built yet) is the same file
  // content: rows kept in their order.
  const again = new Database(':memory:');
  new CheckpointStore(again).checkpoint(restored, 1);
  assert.deepEqual(stateRows(again), stateRows(db));
  for (const table of ['t', 'k']) assert.deepEqual(tableText(restored, table), tableText(original, table));
  assert.deepEqual(viewText(restored, 'by_ok'), viewText(original, 'by_ok'));

  // And the restored engine goes on like the original: updates, deletes and inserts by key.
  for (const e of [original, restored]) {
    e.applyChanges('t', {
      insert: [{ id: 2, s: 'now set', i: 9, ok: false }, { id: 1_000_000 }] as Row[],
      delete: [{ id: 1 }, { id: 3 * 10 - 1_000 }],
    });
  }
  assert.deepEqual(tableText(restored, 't'), tableText(original, 't'));
  assert.deepEqual(viewText(restored, 'by_ok'), viewText(original, 'by_ok'));
});

test('a restored keyed table writes nothing until it changes, then only what changed', () => {
  const original = engineWith(3_000);
  const db = new Database(':memory:');
  const store = new CheckpointStore(db);
  store.checkpoint(original, 1);
  const restored = fresh();
  restored.loadCheckpoint((store.read() ?? assert.fail('stored')).checkpoint);
  const untouched = restored.takeCheckpoint(false);
  for (const o of untouched.objects) {
    for (const p of o.parts.filter((x) => x.stateId.startsWith('table:'))) {
      assert.equal(p.delta.replaceAll, false, p.stateId);
      assert.equal(p.delta.upserts.length + p.delta.deletes.length, 0, p.stateId);
    }
  }
  restored.applyChanges('t', { insert: [{ id: 77_777, s: 'new' }], delete: [{ id: 2 }] });
  const changed = restored.takeCheckpoint(false).objects.find((o) => o.name === 't');
  const part = changed?.parts.find((p) => p.stateId === 'table:t') ?? assert.fail('table part');
  assert.equal(part.delta.replaceAll, false);
  assert.deepEqual([part.delta.upserts.length, part.delta.deletes.length], [1, 1]);

  // Written by the store as override rows over the column blocks (a second restored engine: the
  // delta above was taken and not written), it loads back with the changes applied.
  const writer = fresh();
  writer.loadCheckpoint((store.read() ?? assert.fail('stored')).checkpoint);
  const change = {
    insert: [
      { id: 77_778, s: 'newer' },
      { id: 3, s: 'updated in place' },
    ] as Row[],
    delete: [{ id: -988 }],
  };
  writer.applyChanges('t', change);
  original.applyChanges('t', change);
  store.checkpoint(writer, 2);
  assert.ok(
    (
      db.prepare("SELECT COUNT(*) AS n FROM checkpoint_state WHERE state_id = 'table:t'").get() as {
        n: number;
      }
    ).n >= 2,
  );
  const again = fresh();
  again.loadCheckpoint((store.read() ?? assert.fail('stored')).checkpoint);
  assert.deepEqual(tableText(again, 't'), tableText(original, 't'));
  assert.deepEqual(viewText(again, 'by_ok'), viewText(original, 'by_ok'));
});

/**
 * Rewrites every column block of the file as a JSON block, the layout before column blocks
 * (`keys \n values`, kind 'v', hashed as text), with the header's sum and checksum to match.
 */
function toJsonBlocks(db: Database.Database): number {
  const blocks = db
    .prepare("SELECT state_id, entry_key, ord, value FROM checkpoint_state WHERE kind = 'c'")
    .raw(true)
    .all() as [string, string, number, Uint8Array][];
  const rewrite = db.prepare(
    "UPDATE checkpoint_state SET value = ?, h1 = ?, h2 = ?, kind = 'v' WHERE state_id = ? AND entry_key = ?",
  );
  for (const [stateId, key, n, bytes] of blocks) {
    const decoded = decodeColumnBlock(bytes, n);
    const text = `${decoded.keysJson()}\n${encodeStored([...columnRows([decoded])])}`;
    hashEntry(stateId, key, n, text);
    rewrite.run(text, entryHash[0], entryHash[1], stateId, key);
  }
  const [s1, s2] = db
    .prepare(`SELECT SUM(h1) % ${LANE}, SUM(h2) % ${LANE} FROM checkpoint_state`)
    .raw(true)
    .get() as [number, number];
  const meta = db.prepare('SELECT * FROM checkpoint_meta').get() as MetaRow;
  meta.entry_sum = formatSum(s1, s2);
  meta.checksum = metaChecksum(meta);
  db.prepare('UPDATE checkpoint_meta SET entry_sum = ?, checksum = ?').run(meta.entry_sum, meta.checksum);
  return blocks.length;
}

test('a checkpoint in the JSON-block layout of before still loads and takes incremental writes', () => {
  const original = engineWith(4_000);
  const db = new Database(':memory:');
  new CheckpointStore(db).checkpoint(original, 1);
  assert.ok(toJsonBlocks(db) > 2);
  assert.equal(
    (db.prepare("SELECT COUNT(*) AS n FROM checkpoint_state WHERE kind = 'c'").get() as { n: number }).n,
    0,
  );
  const store = new CheckpointStore(db);
  const restored = fresh();
  restored.loadCheckpoint((store.read() ?? assert.fail('stored')).checkpoint);
  for (const table of ['t', 'k']) assert.deepEqual(tableText(restored, table), tableText(original, table));
  assert.deepEqual(viewText(restored, 'by_ok'), viewText(original, 'by_ok'));
  // Incremental writes go on over the old blocks and load back.
  restored.applyChanges('t', { insert: [{ id: 5, s: 'five' }], delete: [{ id: 1 }] });
  original.applyChanges('t', { insert: [{ id: 5, s: 'five' }], delete: [{ id: 1 }] });
  store.checkpoint(restored, 2);
  const again = fresh();
  again.loadCheckpoint((store.read() ?? assert.fail('stored')).checkpoint);
  assert.deepEqual(tableText(again, 't'), tableText(original, 't'));
});

function isStateError(pattern: RegExp): (e: unknown) => boolean {
  return (e) => e instanceof SluiceError && e.code === 'STATE_ERROR' && pattern.test(e.message);
}

test('a damaged column block is refused: an altered byte, a bad layout under a good hash, a changed kind', () => {
  const db = new Database(':memory:');
  new CheckpointStore(db).checkpoint(engineWith(3_000), 1);
  const [stateId, key, n, bytes] = db
    .prepare("SELECT state_id, entry_key, ord, value FROM checkpoint_state WHERE kind = 'c' LIMIT 1")
    .raw(true)
    .get() as [string, string, number, Uint8Array];
  const put = db.prepare(
    'UPDATE checkpoint_state SET value = ?, h1 = ?, h2 = ?, kind = ? WHERE state_id = ? AND entry_key = ?',
  );
  const check = (): void => {
    new CheckpointStore(db).read();
  };
  const restore = (): void => {
    hashBlock(stateId, key, n, bytes);
    put.run(bytes, entryHash[0], entryHash[1], 'c', stateId, key);
  };
  restore();
  check(); // intact: reads

  // One number changed in the last column section, the hash left as it was.
  const altered = Uint8Array.from(bytes);
  altered[altered.length - 3] = (altered[altered.length - 3] as number) ^ 0x10;
  db.prepare('UPDATE checkpoint_state SET value = ? WHERE state_id = ? AND entry_key = ?').run(
    Buffer.from(altered),
    stateId,
    key,
  );
  assert.throws(check, isStateError(/is corrupted/));

  // A well-hashed block whose first column claims an unknown encoding: refused, not misread.
  const layout = Uint8Array.from(bytes);
  new DataView(layout.buffer).setUint32(16, 99, true);
  hashBlock(stateId, key, n, layout);
  put.run(Buffer.from(layout), entryHash[0], entryHash[1], 'c', stateId, key);
  assert.throws(check, isStateError(/cannot be decoded: column 0 has an unknown encoding 99/));

  // A block that claims more rows than it holds.
  hashBlock(stateId, key, n + 1, bytes);
  db.prepare(
    'UPDATE checkpoint_state SET ord = ?, h1 = ?, h2 = ?, kind = ? WHERE state_id = ? AND entry_key = ?',
  ).run(n + 1, entryHash[0], entryHash[1], 'c', stateId, key);
  assert.throws(check, (e) => e instanceof SluiceError && e.code === 'STATE_ERROR');
  db.prepare('UPDATE checkpoint_state SET ord = ? WHERE state_id = ? AND entry_key = ?').run(n, stateId, key);

  // The kind changed to a JSON block: its hash no longer matches (and binary is no text).
  restore();
  db.prepare("UPDATE checkpoint_state SET kind = 'v' WHERE state_id = ? AND entry_key = ?").run(stateId, key);
  assert.throws(check, isStateError(/is not text/));
  restore();
  check();
});

test('deferred rows built slice by slice while idle equal a build at once, and a change mid-way finishes it', () => {
  const original = engineWith(5_000);
  const db = new Database(':memory:');
  new CheckpointStore(db).checkpoint(original, 1);
  const stored = new CheckpointStore(db).read() ?? assert.fail('stored');

  const sliced = fresh();
  sliced.loadCheckpoint(stored.checkpoint);
  let calls = 1;
  while (!sliced.buildDeferredRows(1_000)) calls++;
  assert.equal(calls, 5, 'the keyed table 5,000 rows in slices of 1,000 (the keyless one was not deferred)');
  const untouched = sliced.takeCheckpoint(false).objects.find((o) => o.name === 't');
  const part = untouched?.parts.find((p) => p.stateId === 'table:t') ?? assert.fail('table part');
  assert.deepEqual(
    [part.delta.replaceAll, part.delta.upserts.length, part.delta.deletes.length],
    [false, 0, 0],
  );
  assert.deepEqual(tableText(sliced, 't'), tableText(original, 't'));
  const again = new Database(':memory:');
  new CheckpointStore(again).checkpoint(sliced, 1);
  assert.deepEqual(stateRows(again), stateRows(db));

  const midway = fresh();
  midway.loadCheckpoint(stored.checkpoint);
  assert.equal(midway.buildDeferredRows(1_500), false);
  const change = { insert: [{ id: 3 * 4_000 - 1_000, s: 'replaced' }] as Row[], delete: [{ id: 2 }] };
  midway.applyChanges('t', change);
  original.applyChanges('t', change);
  assert.equal(midway.buildDeferredRows(1_000), true, 'the change built the rest');
  assert.deepEqual(tableText(midway, 't'), tableText(original, 't'));
  assert.deepEqual(viewText(midway, 'by_ok'), viewText(original, 'by_ok'));
});
