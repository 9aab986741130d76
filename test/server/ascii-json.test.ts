// The byte writers of flat value lists (src/storage/ascii-json.ts) give exactly the text of the
// array paths they stand in for — JSON.stringify of the changelog's wire values, encodeStored of a
// journal batch — and decline (null) whatever those paths must handle themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeOp } from '../../src/common/changes.ts';
import type { Value } from '../../src/common/types.ts';
import { Decimal } from '../../src/common/decimal.ts';
import { encodeStored } from '../../src/common/json-codec.ts';
import { ChangeList, lazyChangeSet, type RawChange } from '../../src/common/raw-changes.ts';
import {
  flatValuesText,
  storedValuesOf,
  wireChangesOf,
  wireWritersCompiled,
} from '../../src/storage/ascii-json.ts';
import { encodeChanges, storedToWire, wireMessageGeneric } from '../../src/storage/changelog-codec.ts';
import { stringifyWire } from '../../src/common/json-codec.ts';
import { decodeBatchPayload, encodeBatchPayload } from '../../src/storage/table-log.ts';

const PLAIN: Value[] = [
  0,
  7,
  -7,
  9,
  10,
  -10,
  99,
  100,
  123456,
  2147483647,
  -2147483647,
  -2147483648,
  2147483648,
  -2147483649,
  2 ** 53 - 1,
  -(2 ** 53 - 1),
  2 ** 53,
  1e21,
  -1e21,
  1.5,
  -0.25,
  1e-7,
  123.456,
  'a',
  '',
  'q"\\\n\t\u0001',
  '9007199254740993',
  true,
  false,
  null,
];
/** Values the journal writes with tags, or that are not ASCII text. */
const TAGGED: Value[] = [-0, NaN, Infinity, -Infinity, 2n ** 70n, 5n, Decimal.fromInt(3)];
const NON_ASCII: Value[] = ['ü', '\u2028', '\ud800'];
/**
 * A text whose JSON is not ASCII, which the changelog's writers decline ('\ud800' is written: its
 * JSON is the ASCII escape `"\ud800"`, as JSON.stringify writes it); the journal's declines any
 * character beyond ASCII.
 */
const jsonNotAscii = (v: Value): boolean => typeof v === 'string' && /[^\x00-\x7f]/.test(JSON.stringify(v));
/** Membership by Object.is: `includes` takes -0 for 0. */
const isIn = (list: readonly Value[], v: Value): boolean => list.some((x) => Object.is(x, v));

function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
    return s % n;
  };
}

/** The stored changelog's value list as the array path writes it (wire JSON values). */
function wireValueList(rows: readonly RawChange[], width: number): string {
  const c: unknown[] = [];
  for (const change of rows) {
    c.push(change.op);
    for (let k = 0; k < width; k++) {
      const v = change.row[k];
      if (typeof v === 'bigint') c.push(v.toString());
      else if (typeof v === 'number' && !Number.isFinite(v)) c.push(String(v));
      else c.push(v);
    }
  }
  return JSON.stringify(c);
}

test('a journal batch of plain values is written as encodeStored writes it', () => {
  const rand = random(11);
  let written = 0;
  for (let round = 0; round < 400; round++) {
    const width = 1 + rand(4);
    const pool = rand(4) === 0 ? [...PLAIN, ...TAGGED, ...NON_ASCII] : PLAIN;
    const rows = Array.from({ length: rand(6) }, () =>
      Array.from({ length: width }, () => pool[rand(pool.length)] as Value),
    );
    const flat = rows.flat();
    const text = flatValuesText(rows);
    const needsOther = flat.some((v) => isIn(TAGGED, v) || isIn(NON_ASCII, v));
    if (needsOther) {
      assert.equal(
        text,
        null,
        JSON.stringify(flat, (_k, v: unknown) => String(v)),
      );
    } else {
      assert.equal(text, JSON.stringify(flat));
      written++;
    }
    // The payload is the same text either way, and reads back as the rows.
    const columns = Array.from({ length: width }, (_, k) => `c${k}`);
    const clock = rand(3) === 0 ? undefined : rand(2) === 0 ? 1_764_000_000_000_000 + rand(1000) : -0;
    const reference = encodeStored({
      k: columns,
      i: flat,
      d: flat.slice(0, width),
      ...(clock !== undefined ? { c: clock } : {}),
    });
    const payload = encodeBatchPayload(columns, rows, rows.slice(0, 1), clock);
    assert.equal(payload, reference);
    const decoded = decodeBatchPayload(payload);
    assert.equal(decoded.insert.length, rows.length);
  }
  assert.ok(written > 200, `only ${written} batches took the byte writer`);
});

test("a view's stored value list is written as the array path writes it", () => {
  const rand = random(5);
  const ops: ChangeOp[] = ['+I', '-D', '-U', '+U'];
  let written = 0;
  for (let round = 0; round < 400; round++) {
    const width = 1 + rand(3);
    const pool = rand(3) === 0 ? [...PLAIN, ...TAGGED, ...NON_ASCII] : [...PLAIN, -0, NaN, 5n];
    const rows: RawChange[] = Array.from({ length: rand(8) }, () => ({
      op: ops[rand(4)] as ChangeOp,
      row: Array.from({ length: width }, () => pool[rand(pool.length)] as Value),
      n: rand(5) === 0 ? 2 + rand(3) : 1,
    }));
    const values = storedValuesOf(ChangeList.of(rows), width);
    const declined = rows.some((r) => r.row.some((v) => v instanceof Decimal || jsonNotAscii(v)));
    if (declined) {
      assert.equal(values, null);
    } else {
      assert.ok(values !== null);
      assert.equal(values.c, wireValueList(rows, width));
      const n = rows.flatMap((r, i) => (r.n === 1 ? [] : [i, r.n]));
      assert.deepEqual(values.n, n.length === 0 ? null : n);
      written++;
    }
    // The whole entry: the same bytes as the one-pass encoder's (which also writes the wire form).
    const columns = Array.from({ length: width }, (_, k) => `col${k}`);
    const cs = lazyChangeSet(
      'v',
      round + 1,
      { t: { offset: round } },
      { columns, rows: ChangeList.of(rows) },
      [],
    );
    assert.equal(encodeChanges(cs, false).stored, encodeChanges(cs, true).stored);
  }
  assert.ok(written > 200, `only ${written} change sets took the byte writer`);
});

test("a view's wire change list is written as the generic writer writes it", () => {
  const rand = random(17);
  const ops: ChangeOp[] = ['+I', '-D', '-U', '+U'];
  const columnSets = [['bucket', 'sellers'], ['a"b', 'c\\d', 'e'], ['x'], ['naïve', 'n']];
  let written = 0;
  for (let round = 0; round < 400; round++) {
    const columns = columnSets[rand(columnSets.length)] as string[];
    const pool = rand(3) === 0 ? [...PLAIN, ...TAGGED, ...NON_ASCII] : [...PLAIN, -0, NaN, 5n];
    const rows: RawChange[] = Array.from({ length: rand(8) }, () => ({
      op: ops[rand(4)] as ChangeOp,
      row: columns.map(() => pool[rand(pool.length)] as Value),
      n: rand(5) === 0 ? 2 + rand(3) : rand(9) === 0 ? 2 ** 40 : 1,
    }));
    const list = wireChangesOf(ChangeList.of(rows), columns);
    const declined =
      columns.some((c) => /[^\x00-\x7f]/.test(c)) ||
      rows.some((r) => r.row.some((v) => v instanceof Decimal || jsonNotAscii(v)));
    const objects = rows.map((r) => ({
      op: r.op,
      row: Object.fromEntries(columns.map((c, k) => [c, r.row[k] as Value])),
      ...(r.n === 1 ? {} : { n: r.n }),
    }));
    if (declined) assert.equal(list, null);
    else {
      assert.equal(list, stringifyWire(objects).slice(1, -1));
      written++;
    }
    // The whole message: the same bytes whichever writer took it.
    const cs = lazyChangeSet(
      'v',
      round + 1,
      { t: { offset: round } },
      { columns, rows: ChangeList.of(rows) },
      [],
    );
    assert.equal(encodeChanges(cs, true).wire, wireMessageGeneric({ ...cs, changes: objects }));
  }
  assert.ok(written > 150, `only ${written} change sets took the byte writer`);
});

test('a list larger than the buffer grows it', () => {
  const long = 'x'.repeat(70_000);
  const rows: Value[][] = [[1, long, 2], [long]];
  assert.ok(flatValuesText(rows) === JSON.stringify(rows.flat()));
  const many = Array.from({ length: 20_000 }, (_, i) => [i * 1000, -i - 1]);
  assert.ok(flatValuesText(many) === JSON.stringify(many.flat()));
  const changes: RawChange[] = Array.from({ length: 20_000 }, (_, i) => ({
    op: '+U',
    row: [i * 1000, i % 3 === 0 ? long.slice(0, i % 500) : -i - 1],
    n: 1,
  }));
  const wire = changes.map((c) => ({ op: c.op, row: { k: c.row[0], v: c.row[1] } }));
  assert.ok(wireChangesOf(ChangeList.of(changes), ['k', 'v']) === JSON.stringify(wire).slice(1, -1));
});

test('integers of every digit count are written as JSON.stringify writes them', () => {
  const edges: number[] = [];
  for (let p = 1; p <= 1e9; p *= 10) edges.push(p - 1, p, p + 1, -(p - 1), -p, -(p + 1));
  edges.push(2147483647, -2147483648, 2 ** 31, -(2 ** 31) - 1, 10_999_999_999, 2 ** 53 - 1, -(2 ** 53 - 1));
  const rand = random(23);
  for (let i = 0; i < 5_000; i++) edges.push((rand(2) === 0 ? 1 : -1) * rand(10 ** (1 + rand(9))));
  // No -0 (the journal leaves it to its tagged encoder; its own test is above).
  for (let i = 0; i < edges.length; i++) if (edges[i] === 0) edges[i] = 0;
  const rows = edges.map((v) => [v]);
  assert.equal(flatValuesText(rows), JSON.stringify(edges));
  const changes = ChangeList.of(edges.map((v) => ({ op: '+I' as const, row: [v, -v], n: 1 })));
  assert.equal(storedValuesOf(changes, 2)?.c, JSON.stringify(edges.flatMap((v) => ['+I', v, -v])));
});

test("the generated writers write any column list's names and values as the generic writers", () => {
  // Its per-change text is generated from each list's names: none, one, names that need escapes, a
  // wide row of long names (a long run of constant stores), a name that looks like code.
  const wide = Array.from({ length: 40 }, (_, k) => `column_${'w'.repeat(k)}_${k}`);
  const lists = [[], ['x'], ['"', '\\', '\n\t', ''], wide, ['"); throw 1; ("', 'buf[at] = 0;']];
  const rand = random(31);
  const ops: ChangeOp[] = ['+I', '-D', '-U', '+U'];
  for (const columns of lists) {
    const rows: RawChange[] = Array.from({ length: 50 }, () => ({
      op: ops[rand(4)] as ChangeOp,
      row: columns.map(() => PLAIN[rand(PLAIN.length)] as Value),
      n: rand(4) === 0 ? 2 + rand(5) : 1,
    }));
    const objects = rows.map((r) => ({
      op: r.op,
      row: Object.fromEntries(columns.map((c, k) => [c, r.row[k] as Value])),
      ...(r.n === 1 ? {} : { n: r.n }),
    }));
    // Twice: the second call reuses the list's writer (and the stored writer of its width).
    for (let round = 0; round < 2; round++) {
      assert.equal(wireChangesOf(ChangeList.of(rows), columns), stringifyWire(objects).slice(1, -1));
      assert.equal(
        storedValuesOf(ChangeList.of(rows), columns.length)?.c,
        wireValueList(rows, columns.length),
      );
    }
    // A row shorter than its columns is not for these writers.
    const short = [...rows, { op: '+I' as const, row: rows[0]?.row.slice(1) ?? [], n: 1 }];
    if (columns.length > 0) {
      assert.equal(wireChangesOf(ChangeList.of(short), columns), null);
      assert.equal(storedValuesOf(ChangeList.of(short), columns.length), null);
    }
  }
});

test('a wire writer is generated once per column list, not once per change set', () => {
  // Each change set carries its own array of the same names, as a caller other than the engine may.
  const rows = ChangeList.of([{ op: '+I', row: [1, 2], n: 1 }]);
  const before = wireWritersCompiled.count;
  for (let epoch = 0; epoch < 100; epoch++) {
    const cs = lazyChangeSet('v', epoch + 1, {}, { columns: ['gen_a', 'gen_b'], rows }, []);
    assert.ok(encodeChanges(cs, true).wire?.includes('"row":{"gen_a":1,"gen_b":2}'));
  }
  assert.equal(wireWritersCompiled.count - before, 1);
});

test('a view too wide for a generated writer is encoded by the general encoder, to the same bytes', () => {
  // 200 columns of 100-character names: a writer of ~20,000 constant stores if generated.
  const columns = Array.from({ length: 200 }, (_, k) => `${'n'.repeat(96)}${String(k).padStart(4, '0')}`);
  const rows = ChangeList.of([
    { op: '+I', row: columns.map((_, k) => k), n: 1 },
    { op: '-D', row: columns.map((_, k) => -k), n: 3 },
  ]);
  const before = wireWritersCompiled.count;
  assert.equal(wireChangesOf(rows, columns), null);
  assert.equal(storedValuesOf(rows, columns.length), null);
  const cs = lazyChangeSet('wide', 1, {}, { columns, rows }, []);
  const encoded = encodeChanges(cs, true);
  assert.equal(encoded.wire, wireMessageGeneric(cs));
  assert.equal(storedToWire(1, encoded.stored ?? ''), wireMessageGeneric(cs));
  assert.ok(wireWritersCompiled.count - before <= 1);
});
