// The exact numeric SUM/AVG accumulator on its own: sums of NUMERIC(12,2) against BigInt sums done
// here, SUM(bigint) past 2^63 and back, free-scale display scales under retraction, and state that
// survives serialize/deserialize (also from the double-era checkpoint form).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { T, type SqlType, type Value } from '../../common/types.ts';
import { Decimal } from '../../common/decimal.ts';
import { decodeStored, encodeStored } from '../../common/json-codec.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import { DecimalSumColumn, usesDecimalSum } from './decimal-sum.ts';
import type { GroupRecords } from './aggregates.ts';

function column(fn: 'sum' | 'avg', argType: SqlType): DecimalSumColumn {
  const spec: AggregateSpec = {
    fn,
    distinct: false,
    argColumn: 0,
    argType,
    outputType: T.numeric,
    strategy: 'invertible',
  };
  assert.ok(usesDecimalSum(spec));
  const records: GroupRecords = { data: new Float64Array(8), stride: 4 };
  const partials: GroupRecords = { data: new Float64Array(8), stride: 4 };
  const c = new DecimalSumColumn(spec, records, 0, partials, 0);
  c.clear(0);
  return c;
}

function apply(c: DecimalSumColumn, values: [Value, number][]): void {
  c.resetPartial(0, 0);
  for (const [v, w] of values) c.accumulate(0, v, w, 0);
  c.merge(0, 0);
}

const text = (v: Value): string => (v instanceof Decimal ? v.toString() : String(v));

test('which aggregates are exact decimal sums', () => {
  const spec = (fn: AggregateSpec['fn'], argType: SqlType): AggregateSpec => ({
    fn,
    distinct: false,
    argColumn: 0,
    argType,
    outputType: T.numeric,
    strategy: 'invertible',
  });
  assert.ok(usesDecimalSum(spec('sum', T.int64)));
  assert.ok(usesDecimalSum(spec('avg', T.int32)));
  assert.ok(usesDecimalSum(spec('sum', T.numeric)));
  assert.ok(!usesDecimalSum(spec('sum', T.int32)), 'SUM(integer) stays a bigint');
  assert.ok(!usesDecimalSum(spec('avg', T.float64)));
  assert.ok(!usesDecimalSum(spec('min', T.numeric)));
});

test('SUM(bigint) goes past 2^63 and comes back exactly', () => {
  const c = column('sum', T.int64);
  const max = 2n ** 63n - 1n;
  apply(c, [
    [max, 1],
    [max, 1],
    [5, 1],
  ]);
  assert.equal(text(c.result(0)), String(2n * max + 5n));
  apply(c, [[max, -1]]);
  assert.equal(text(c.result(0)), String(max + 5n));
  apply(c, [
    [max, -1],
    [5, -1],
  ]);
  assert.equal(c.result(0), null, 'an empty group has no sum');
});

test('AVG(integer) is numeric with PostgreSQL scale; AVG(numeric) exact', () => {
  const a = column('avg', T.int32);
  apply(a, [
    [1, 1],
    [2, 1],
  ]);
  assert.equal(text(a.result(0)), '1.5000000000000000');
  const m = column('avg', { kind: 'numeric', precision: 12, scale: 2 });
  apply(m, [
    [new Decimal(10, 2), 1],
    [new Decimal(20, 2), 1],
  ]);
  assert.equal(text(m.result(0)), '0.15000000000000000000');
});

test('free-scale SUM shows the largest scale among the rows present', () => {
  const c = column('sum', T.numeric);
  apply(c, [
    [new Decimal(15, 1), 1],
    [new Decimal(1234, 3), 1],
  ]);
  assert.equal(text(c.result(0)), '2.734');
  apply(c, [[new Decimal(1234, 3), -1]]);
  assert.equal(text(c.result(0)), '1.5');
  const copy = column('sum', T.numeric);
  copy.deserialize(0, JSON.parse(JSON.stringify(c.serialize(0))) as unknown);
  assert.equal(text(copy.result(0)), '1.5');
  apply(copy, [[new Decimal(1, 2), 1]]);
  assert.equal(text(copy.result(0)), '1.51');
});

test('a checkpoint from when numeric sums were doubles loads as the decimal of its shortest text', () => {
  const c = column('sum', { kind: 'numeric', precision: 12, scale: 2 });
  // InvertibleColumn's float form: exact integer parts `s`, fractional parts' double sum `f`.
  c.deserialize(0, { n: 2, s: 0, f: 0.30000000000000004 });
  assert.equal(text(c.result(0)), '0.30');
  const free = column('sum', T.numeric);
  free.deserialize(0, { n: 1, s: 12, f: 0.5 });
  assert.equal(text(free.result(0)), '12.5');
  const ints = column('sum', T.int64);
  ints.deserialize(0, { n: 1, s: 2n ** 62n });
  assert.equal(text(ints.result(0)), String(2n ** 62n));
});

test('property: random NUMERIC(12,2) inserts and deletes sum exactly (BigInt model)', () => {
  const cents = fc.bigInt({ min: -(10n ** 12n) + 1n, max: 10n ** 12n - 1n });
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.tuple(cents, fc.integer({ min: -3, max: 3 })), { maxLength: 20 }), {
        maxLength: 10,
      }),
      (batches) => {
        const c = column('sum', { kind: 'numeric', precision: 12, scale: 2 });
        const avg = column('avg', { kind: 'numeric', precision: 12, scale: 2 });
        let total = 0n;
        let n = 0;
        for (const b of batches) {
          const values: [Value, number][] = b.map(([u, w]) => [new Decimal(u, 2), w]);
          apply(c, values);
          apply(avg, values);
          for (const [u, w] of b) {
            total += u * BigInt(w);
            n += w;
          }
          if (n === 0) assert.equal(c.result(0), null);
          else {
            assert.equal((c.result(0) as Decimal).big(), total);
            const a = avg.result(0) as Decimal;
            // avg × n is the sum within half a unit of avg's last place times n
            const err = a.big() * BigInt(n) - total * 10n ** BigInt(a.scale - 2);
            assert.ok(2n * (err < 0n ? -err : err) <= BigInt(Math.abs(n)));
          }
        }
      },
    ),
  );
});

/** PostgreSQL's select_div_scale on digit text, and a / n at it, on bigints: AVG's reference. */
function refAvg(sum: bigint, scale: number, n: number): { unscaled: bigint; scale: number } {
  const lead = (u: bigint, s: number): [number, number] => {
    if (u === 0n) return [0, 0];
    const digits = (u < 0n ? -u : u).toString();
    const e10 = digits.length - s - 1;
    const weight = Math.floor(e10 / 4);
    const count = e10 - weight * 4 + 1;
    return [weight, Number(digits.slice(0, count).padEnd(count, '0'))];
  };
  const [w1, f1] = lead(sum, scale);
  const [w2, f2] = lead(BigInt(n), 0);
  const qweight = w1 - w2 - (f1 <= f2 ? 1 : 0);
  const rscale = Math.min(Math.max(16 - qweight * 4, scale, 0), 1000);
  const num = sum * 10n ** BigInt(rscale - scale);
  const den = BigInt(n);
  let q = num / den;
  const rem = num - q * den;
  if (2n * (rem < 0n ? -rem : rem) >= (den < 0n ? -den : den)) q += num < 0n === den < 0n ? 1n : -1n;
  return { unscaled: q, scale: rscale };
}

test('property: free-scale SUM/AVG across 2^53, mixed scales and signs, back to zero and NULL (seeded)', () => {
  // Unscaled values up to 10^15 at scales 0..6: the working-scale sum passes 2^53 and comes back.
  const valueArb = fc.tuple(
    fc.oneof(
      fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }),
      fc.bigInt({ min: -1000n, max: 1000n }),
      fc.constantFrom(9007199254740991n, -9007199254740991n, 4503599627370496n),
    ),
    fc.integer({ min: 0, max: 6 }),
  );
  // Each step inserts a value or deletes one present (by index): sums go up and back down to zero.
  const stepArb = fc.oneof(
    valueArb.map(([u, s]) => ({ insert: [u, s] as const })),
    fc.nat().map((i) => ({ remove: i })),
  );
  fc.assert(
    fc.property(
      fc.array(fc.array(stepArb, { maxLength: 12 }), { maxLength: 12 }),
      fc.nat({ max: 11 }),
      (batches, checkpointAt) => {
        let sum = column('sum', T.numeric);
        let avg = column('avg', T.numeric);
        const present: (readonly [bigint, number])[] = [];
        batches.forEach((batch, bi) => {
          const values: [Value, number][] = [];
          for (const step of batch) {
            if ('insert' in step) {
              present.push(step.insert);
              values.push([new Decimal(step.insert[0], step.insert[1]), 1]);
            } else if (present.length > 0) {
              const [gone] = present.splice(step.remove % present.length, 1);
              const [u, s] = gone as readonly [bigint, number];
              values.push([new Decimal(u, s), -1]);
            }
          }
          apply(sum, values);
          apply(avg, values);
          if (bi === checkpointAt) {
            // A checkpoint and restart in the middle keeps the exact state (the stored codec).
            const s2 = column('sum', T.numeric);
            s2.deserialize(0, decodeStored(encodeStored(sum.serialize(0))));
            const a2 = column('avg', T.numeric);
            a2.deserialize(0, decodeStored(encodeStored(avg.serialize(0))));
            sum = s2;
            avg = a2;
          }
          if (present.length === 0) {
            assert.equal(sum.result(0), null, 'no rows: SUM is NULL');
            assert.equal(avg.result(0), null, 'no rows: AVG is NULL');
            return;
          }
          const scale = Math.max(...present.map(([, s]) => s));
          let total = 0n;
          for (const [u, s] of present) total += u * 10n ** BigInt(scale - s);
          const got = sum.result(0) as Decimal;
          assert.equal(got.big(), total);
          assert.equal(got.scale, scale, 'the largest scale among the rows present');
          assert.equal(
            typeof got.unscaled === 'number',
            total <= 9007199254740991n && total >= -9007199254740991n,
          );
          const want = refAvg(total, scale, present.length);
          const a = avg.result(0) as Decimal;
          assert.equal(a.scale, want.scale);
          assert.equal(a.big(), want.unscaled);
        });
      },
    ),
    { seed: 53, numRuns: 400 },
  );
});
