// The exact numeric SUM/AVG accumulator on its own: sums of NUMERIC(12,2) against BigInt sums done
// here, SUM(bigint) past 2^63 and back, free-scale display scales under retraction, and state that
// survives serialize/deserialize (also from the double-era checkpoint form).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { T, type SqlType, type Value } from '../../common/types.ts';
import { Decimal } from '../../common/decimal.ts';
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
  const c = new DecimalSumColumn(spec, records, 0);
  c.clear(0);
  return c;
}

function apply(c: DecimalSumColumn, values: [Value, number][]): void {
  c.resetPartial(0);
  for (const [v, w] of values) c.accumulate(0, v, w);
  c.merge(0);
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
