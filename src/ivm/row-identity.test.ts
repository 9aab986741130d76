// Row identity without strings: consolidate and the counted arrangement find rows by hashRow and
// compare them with sameRow, and checkpoint entries are still named by encodeExactValues. So the
// three must agree — two rows are one exactly when their exact encodings are equal, and one row has
// one hash — and both structures must count exactly what a Map keyed by the encoding counts, also
// through deletes (the table moves rows back into freed slots) and compactions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Value } from '../common/types.ts';
import { encodeExactValues } from '../common/values.ts';
import { parseDecimal } from '../common/decimal.ts';
import { Interval } from '../common/time/interval.ts';
import { parseJsonb } from '../common/json/jsonb.ts';
import { hashRow, sameRow } from './arrangement.ts';
import { CountedArrangement } from './counted-arrangement.ts';
import { consolidate } from './zset.ts';

const VALUES: readonly Value[] = [
  null,
  0,
  -0,
  1,
  1n,
  -1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  1e21,
  10n ** 21n,
  2n ** 70n,
  '',
  'n0;',
  'a;b',
  true,
  false,
  parseDecimal('1.5'),
  parseDecimal('1.50'),
  Interval.of(0, 1, 0),
  Interval.of(0, 0, 86_400_000_000),
  parseJsonb('1'),
  parseJsonb('1.0'),
];

const row = fc.array(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 3 });

test('sameRow holds exactly when the exact encodings are equal, and then the hashes are too', () => {
  fc.assert(
    fc.property(row, row, (a, b) => {
      const same = encodeExactValues(a) === encodeExactValues(b);
      assert.equal(sameRow(a, b), same);
      if (same) assert.equal(hashRow(a), hashRow(b));
    }),
    { numRuns: 5000 },
  );
});

test('rows told apart only by a numeric, interval or jsonb value do not share a hash', () => {
  const rows = [
    parseDecimal('1.5'),
    parseDecimal('1.50'),
    parseDecimal('2'),
    Interval.of(0, 1, 0),
    parseJsonb('[1]'),
  ];
  const hashes = new Set(rows.map((v) => hashRow([7, v])));
  assert.equal(hashes.size, rows.length);
});

/** What consolidate must give: weights summed per exact encoding, first-seen order, zeros dropped. */
function consolidatedByEncoding(rows: readonly (readonly Value[])[], weights: readonly number[]): string[] {
  const sums = new Map<string, number>();
  rows.forEach((r, i) => {
    const k = encodeExactValues(r);
    sums.set(k, (sums.get(k) ?? 0) + (weights[i] as number));
  });
  return [...sums].filter(([, w]) => w !== 0).map(([k, w]) => `${k}×${w}`);
}

test('consolidate sums what the exact encodings sum, in first-seen order', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(row, fc.integer({ min: -2, max: 2 })), { maxLength: 300 }), (changes) => {
      const rows = changes.map(([r]) => r);
      const weights = changes.map(([, w]) => w);
      const out = consolidate({ rows, weights, consolidated: false });
      assert.equal(out.consolidated || changes.length === 0, true);
      const got = out.rows.map((r, i) => `${encodeExactValues(r)}×${out.weights[i] as number}`);
      assert.deepEqual(got, consolidatedByEncoding(rows, weights));
    }),
    { numRuns: 500 },
  );
});

test('consolidate of a large batch with many repeats and cancellations', () => {
  const rows: Value[][] = [];
  const weights: number[] = [];
  for (let i = 0; i < 50_000; i++) {
    rows.push([i % 7919, `t${i % 13}`, i % 2 === 0 ? parseDecimal('1.5') : parseDecimal('1.50')]);
    weights.push(i % 3 === 0 ? -1 : 1);
  }
  const out = consolidate({ rows, weights, consolidated: false });
  const got = out.rows.map((r, i) => `${encodeExactValues(r)}×${out.weights[i] as number}`);
  assert.deepEqual(got, consolidatedByEncoding(rows, weights));
});

test('the counted arrangement counts as a Map by encoding does, through deletes, compaction and export', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: -1, max: 2 })), {
        maxLength: 2000,
      }),
      (ops) => {
        const a = new CountedArrangement('test', null, true);
        a.trackChanges(true);
        a.takeDelta(true);
        const model = new Map<string, { row: Value[]; count: number }>();
        // the stored entries, kept as a checkpoint store would from each delta
        const stored = new Map<string, unknown>();
        ops.forEach(([id, w], step) => {
          const r: Value[] = [id % 3 === 0 ? parseDecimal(id % 2 === 0 ? '1.5' : '1.50') : id, `r${id}`];
          const k = encodeExactValues(r);
          const have = model.get(k)?.count ?? 0;
          if (have + w < 0) {
            assert.throws(() => a.add(r, w), /negative multiplicity/);
            return;
          }
          const entry = a.add(r, w);
          assert.equal(entry.count, have + w);
          if (have + w === 0) model.delete(k);
          else if (have === 0) model.set(k, { row: r, count: w });
          else (model.get(k) as { count: number }).count += w;
          if (step % 97 === 0) {
            const delta = a.takeDelta(false);
            for (const id of delta.deletes) stored.delete(id);
            for (const [id, v] of delta.upserts) stored.set(id, v);
          }
        });
        assert.equal(a.size, model.size);
        assert.equal(
          a.total,
          [...model.values()].reduce((s, e) => s + e.count, 0),
        );
        assert.deepEqual(
          [...a.entries()].map((e) => `${encodeExactValues(e.row)}×${e.count}`),
          [...model].map(([k, e]) => `${k}×${e.count}`),
          'arrival order, as a Map keeps it',
        );
        for (const [k, e] of model) assert.equal(a.count(e.row), e.count, k);
        const delta = a.takeDelta(false);
        for (const id of delta.deletes) stored.delete(id);
        for (const [id, v] of delta.upserts) stored.set(id, v);
        assert.deepEqual(
          [...stored].sort(([x], [y]) => (x < y ? -1 : 1)),
          [...model]
            .map(([k, e]): [string, unknown] => [k, { r: e.row, c: e.count }])
            .sort(([x], [y]) => (x < y ? -1 : 1)),
          'the changed entries, applied, are the contents',
        );
        const reloaded = new CountedArrangement('test', null, true);
        reloaded.load(stored.values());
        assert.equal(reloaded.size, model.size);
        for (const [, e] of model) assert.equal(reloaded.count(e.row), e.count);
      },
    ),
    { numRuns: 200 },
  );
});
