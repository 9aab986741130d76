// The chunked append list against a plain array of rows: any mix of single rows, small batches
// (copied into the tail) and large ones (copied into chunks of their own), with captures taken along the way;
// every capture reads back exactly the rows of its moment, in any slices, while the table grows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Value } from '../common/types.ts';
import { AppendColumns } from './append-columns.ts';

type Step = { kind: 'row' } | { kind: 'batch'; n: number } | { kind: 'capture' };

test('captures and rows() read back the appended rows, across tail and large-batch chunks', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.constant<Step>({ kind: 'row' }),
          fc.integer({ min: 1, max: 3000 }).map((n): Step => ({ kind: 'batch', n })),
          fc.constant<Step>({ kind: 'capture' }),
        ),
        { maxLength: 30 },
      ),
      fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 5 }),
      (steps, cuts) => {
        const table = new AppendColumns(2);
        const model: Value[][] = [];
        const captures: { capture: ReturnType<AppendColumns['capture']>; rows: number }[] = [];
        const entries: { list: readonly (readonly [string, unknown])[]; from: number; rows: number }[] = [];
        let next = 0;
        for (const step of steps) {
          if (step.kind === 'row') {
            const row = [next, `r${next}`];
            next++;
            table.push(row);
            model.push(row);
          } else if (step.kind === 'batch') {
            const a: Value[] = [];
            const b: Value[] = [];
            for (let i = 0; i < step.n; i++, next++) {
              a.push(next);
              b.push(`r${next}`);
              model.push([next, `r${next}`]);
            }
            table.pushColumns([a, b]);
          } else {
            captures.push({ capture: table.capture(), rows: model.length });
            const from = Math.floor(model.length / 3);
            entries.push({ list: table.entriesFrom(from), from, rows: model.length });
          }
        }
        assert.equal(table.length, model.length);
        assert.deepEqual([...table.rows()], model);
        // Checkpoint entries read later are the rows of their moment, by index, iteration and map.
        for (const { list, from, rows } of entries) {
          const expected = model.slice(from, rows).map((row, i) => [`a${from + i}`, row]);
          assert.equal(list.length, rows - from);
          assert.deepEqual([...list], expected);
          assert.deepEqual(
            list.map(([k]) => k),
            expected.map(([k]) => k),
          );
          if (list.length > 0) assert.deepEqual(list[list.length - 1], expected[expected.length - 1]);
          assert.equal(list[list.length], undefined);
        }
        for (const { capture, rows } of captures) {
          assert.equal(capture.length, rows);
          for (const [x, y] of cuts) {
            const from = rows === 0 ? 0 : x % rows;
            const to = from + (y % 5000);
            assert.deepEqual(capture.slice(from, to).rows, model.slice(from, Math.min(to, rows)));
          }
        }
      },
    ),
    { numRuns: 150 },
  );
});

test('tail columns keep numbers typed and turn into values at the first other value, reading back exactly', () => {
  const value = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.oneof(
        fc.integer(),
        // around the one-byte form's edges (0..255 fit; -0, -1 and 256 do not)
        fc.integer({ min: -2, max: 258 }),
        fc.double(),
        fc.constantFrom(-0, NaN, 2 ** 53 - 1),
      ),
    },
    { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.string({ maxLength: 3 }), fc.bigInt()) },
  );
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.boolean(), fc.array(fc.tuple(value, value, value), { minLength: 1, maxLength: 300 })),
        {
          maxLength: 60,
        },
      ),
      (steps) => {
        const table = new AppendColumns(3);
        const model: Value[][] = [];
        const captures: { capture: ReturnType<AppendColumns['capture']>; rows: number }[] = [];
        for (const [single, rows] of steps) {
          if (single) for (const row of rows) table.push(row);
          else table.pushColumns([0, 1, 2].map((c) => rows.map((row) => row[c] as Value)));
          model.push(...rows);
          captures.push({ capture: table.capture(), rows: model.length });
        }
        // deepStrictEqual compares numbers by Object.is: -0 stays -0, NaN stays NaN.
        assert.deepStrictEqual([...table.rows()], model);
        for (const { capture, rows } of captures) {
          assert.deepStrictEqual(capture.slice(0, rows).rows, model.slice(0, rows));
        }
      },
    ),
    { numRuns: 100 },
  );
});

test('a table of numbers keeps no column of JS values, row by row or in small batches', () => {
  const table = new AppendColumns(3);
  for (let i = 0; i < 20_000; i++) table.push([i, -i, i / 2]);
  for (let b = 0; b < 100; b++) table.pushColumns([[b], [b + 0.5], [-b]]);
  assert.equal(table.length, 20_100);
  assert.equal(table.valueColumns(), 0);
  table.push([1, 'text', null]);
  // The open chunk's two columns that met a non-number hold values from then on; the rest stay typed.
  assert.equal(table.valueColumns(), 2);
  assert.deepStrictEqual([...table.rows()].at(-1), [1, 'text', null]);
  assert.deepStrictEqual([...table.rows()].at(20_000), [0, 0.5, -0]);
});

test('int32 columns take four bytes a row; a column that met another number starts the next tail as doubles', () => {
  const ints = new AppendColumns(3);
  for (let b = 0; b < 164; b++)
    ints.pushColumns([0, 1, 2].map((c) => Array.from({ length: 100 }, (_, i) => b * 100 + i - c)));
  // 16,400 rows: two closed tails of 8,192 rows and an open one, every column an Int32Array.
  assert.equal(ints.typedBytes(), 3 * 3 * 8192 * 4);
  assert.equal(ints.valueColumns(), 0);

  const mixed = new AppendColumns(2);
  for (let i = 0; i < 8192; i++) mixed.push([i, i === 5 ? 0.5 : i]);
  mixed.push([-0, 2 ** 31]);
  // The second column widened in the first tail; the second tail starts it as doubles. -0 and
  // 2^31 are not int32s: the first column widens in the second tail too.
  assert.equal(mixed.typedBytes(), 8192 * 4 + 8192 * 8 + 8192 * 8 + 8192 * 8);
  assert.deepStrictEqual([...mixed.rows()].at(5), [5, 0.5]);
  assert.deepStrictEqual([...mixed.rows()].at(-1), [-0, 2 ** 31]);
});

test('a large batch is copied into typed columns of its own size; the caller may then rewrite its arrays', () => {
  const table = new AppendColumns(3);
  const n = 2000;
  const ints = Array.from({ length: n }, (_, i) => i - 1000);
  const doubles = Array.from({ length: n }, (_, i) => (i === 7 ? -0 : i / 4));
  const mixed: Value[] = Array.from({ length: n }, (_, i) => (i === 1500 ? 'x' : i === 3 ? null : i));
  table.pushColumns([ints, doubles, mixed]);
  const expected = Array.from({ length: n }, (_, i) => [ints[i], doubles[i], mixed[i]]);
  // The caller's arrays hold the next batch from here on.
  ints.fill(0);
  doubles.fill(0);
  mixed.fill(0);
  assert.deepStrictEqual([...table.rows()], expected);
  // An Int32Array, a Float64Array (it met a fraction) and values (it met null first).
  assert.equal(table.typedBytes(), n * 4 + n * 8);
  assert.equal(table.valueColumns(), 1);
  // The next chunk starts the second column as doubles.
  table.pushColumns([ints, doubles, mixed]);
  assert.equal(table.typedBytes(), 2 * (n * 4 + n * 8) + n * 4);
  assert.equal(table.valueColumns(), 1);
  assert.deepStrictEqual([...table.rows()].at(-1), [0, 0, 0]);
});

test('a column of values in 0..255 takes one byte a row, and widens at the first value that is not one', () => {
  const table = new AppendColumns(3);
  const n = 2000;
  const small = Array.from({ length: n }, (_, i) => i % 256);
  // 256 is an int32: an Int32Array from there on; 1.5 a double; -0 a double (a byte would read 0)
  const wider = Array.from({ length: n }, (_, i) => (i === 1000 ? 256 : i % 200));
  const doubles = Array.from({ length: n }, (_, i) => (i === 999 ? 1.5 : i === 1999 ? -0 : 7));
  table.pushColumns([small, wider, doubles]);
  assert.equal(table.typedBytes(), n + n * 4 + n * 8);
  const rows = [...table.rows()];
  assert.deepStrictEqual(rows[1000], [1000 % 256, 256, 7]);
  assert.deepStrictEqual(rows[999], [999 % 256, 999 % 200, 1.5]);
  assert.deepStrictEqual(rows[1999], [1999 % 256, 1999 % 200, -0]);
  // The next chunk starts each column in the form the last one ended in.
  table.pushColumns([small, small, small]);
  assert.equal(table.typedBytes(), n + n * 4 + n * 8 + n + n * 4 + n * 8);
  // Row by row: the tail's columns start as bytes too, and a -1 widens the second to int32s.
  const tail = new AppendColumns(2);
  for (let i = 0; i < 64; i++) tail.push([i, i === 63 ? -1 : i]);
  assert.equal(tail.typedBytes(), 64 + 64 * 4);
  assert.deepStrictEqual([...tail.rows()].at(-1), [63, -1]);
});

test('integer columns the caller checked take the range test alone, and still widen at NULL and wider values', () => {
  const table = new AppendColumns(3);
  const n = 300; // a tail's runs (below a chunk of its own) and, below, a chunk of its own
  const bytes = Array.from({ length: n }, (_, i) => (i === 200 ? 256 : i % 100));
  const ints = Array.from({ length: n }, (_, i) => (i === 150 ? null : i === 250 ? 2 ** 40 : i - 100));
  const doubles = Array.from({ length: n }, (_, i) => (i === 10 ? -0 : i / 2));
  table.pushColumns([bytes, ints, doubles], [true, true, false]);
  assert.equal(table.intRuns, 2, 'the two integer columns took the range test alone');
  const rows = [...table.rows()];
  assert.equal(rows.length, n);
  for (let i = 0; i < n; i++) assert.deepStrictEqual(rows[i], [bytes[i], ints[i], doubles[i]]);
  // The byte column widened to int32s at 256; the other turned into values at NULL.
  assert.equal(table.valueColumns(), 1);
  const large = Array.from({ length: 2000 }, (_, i) => (i === 1999 ? -1 : i % 256));
  const wide = Array.from({ length: 2000 }, (_, i) => (i === 5 ? 2 ** 31 : i));
  table.pushColumns([large, wide, large], [true, true, false]);
  assert.equal(table.intRuns, 4);
  const all = [...table.rows()];
  for (let i = 0; i < 2000; i++) assert.deepStrictEqual(all[n + i], [large[i], wide[i], large[i]]);
  // Without the flags nothing is counted.
  table.pushColumns([bytes, bytes, bytes]);
  assert.equal(table.intRuns, 4);
});
