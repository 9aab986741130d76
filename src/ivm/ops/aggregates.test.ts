// Unit tests of the multiset aggregate columns on equal values that print differently (1.5, 1.50;
// '1 day', '24 hours'; -0, 0): the result is always a value a current row holds, the same whatever
// order rows came and left in, and it survives serialize/deserialize.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SqlType, Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import { parseDecimal } from '../../common/decimal.ts';
import { Interval } from '../../common/time/interval.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import { aggregateColumn, type AggColumn } from './aggregates.ts';

const dec = (s: string): Value => parseDecimal(s) as Value;

function column(fn: AggregateSpec['fn'], argType: SqlType = T.numeric, distinct = false): AggColumn {
  const spec: AggregateSpec = {
    fn,
    distinct,
    argColumn: 0,
    argType,
    outputType: argType,
    strategy: 'multiset',
  };
  return aggregateColumn(
    spec,
    { data: new Float64Array(16), stride: 8 },
    0,
    { data: new Float64Array(16), stride: 8 },
    0,
  );
}

/** One batch into slot 0: values with weights; the result's text, given the group's row count. */
function step(c: AggColumn, changes: [Value, number][], rows: number): string {
  c.resetPartial(0, 0);
  for (const [v, w] of changes) c.accumulate(0, v, w, 0);
  c.merge(0, 0);
  return String(c.result(0, rows));
}

test('MIN/MAX show the scale of a row still present, not of the first value inserted', () => {
  const min = column('min');
  const max = column('max');
  for (const c of [min, max]) {
    assert.equal(step(c, [[dec('1.50'), 1]], 1), '1.50');
    // both present: the smallest scale, though 1.50 came first
    assert.equal(step(c, [[dec('1.5'), 1]], 2), '1.5');
    assert.equal(step(c, [[dec('1.5'), -1]], 1), '1.50');
    assert.equal(step(c, [[dec('1.5'), 1]], 2), '1.5');
    // the row holding 1.50 leaves: only 1.5 is left (the old code kept showing 1.50)
    assert.equal(step(c, [[dec('1.50'), -1]], 1), '1.5');
  }
  // MAX of several equal largest values: the smallest scale, as MIN's smallest values
  assert.equal(
    step(
      max,
      [
        [dec('1.500'), 1],
        [dec('1.50'), 1],
        [dec('0.1'), 1],
      ],
      4,
    ),
    '1.5',
  );
  assert.equal(step(max, [[dec('1.5'), -1]], 3), '1.50');
  assert.equal(
    step(
      min,
      [
        [dec('-2.00'), 1],
        [dec('-2.0'), 1],
      ],
      3,
    ),
    '-2.0',
  );
});

test('MIN/MAX of intervals and floats: equal values that print differently', () => {
  const min = column('min', T.interval);
  assert.equal(step(min, [[new Interval(0, 0, 86_400_000_000), 1]], 1), '24:00:00');
  assert.equal(step(min, [[new Interval(0, 1, 0), 1]], 2), '1 day');
  assert.equal(step(min, [[new Interval(0, 1, 0), -1]], 1), '24:00:00');
  const max = column('max', T.float64);
  step(max, [[-0, 1]], 1);
  assert.ok(Object.is(max.result(0, 1), -0));
  step(max, [[0, 1]], 2);
  assert.ok(Object.is(max.result(0, 2), -0), '-0 sorts before 0');
  step(max, [[-0, -1]], 1);
  assert.ok(Object.is(max.result(0, 1), 0), 'the -0 row left: MAX is 0');
});

test('SUM/AVG(DISTINCT) of numerics follow the representative of each equal set; COUNT DISTINCT counts values', () => {
  const sum = column('sum', T.numeric, true);
  const count = column('count', T.numeric, true);
  for (const [c, a, b, ab, gone] of [
    [sum, '1.50', '1.50', '1.5', '1.5'],
    [count, '1', '1', '1', '1'],
  ] as const) {
    assert.equal(step(c, [[dec('1.50'), 1]], 1), a);
    assert.equal(step(c, [[dec('1.50'), 1]], 2), b);
    assert.equal(step(c, [[dec('1.5'), 1]], 3), ab);
    assert.equal(step(c, [[dec('1.50'), -2]], 1), gone);
  }
});

test('the exact values survive serialize/deserialize', () => {
  const a = column('min');
  step(
    a,
    [
      [dec('1.50'), 1],
      [dec('1.5'), 1],
      [dec('1.500'), 2],
    ],
    4,
  );
  const b = column('min');
  b.deserialize(0, a.serialize(0));
  assert.equal(String(b.result(0, 4)), '1.5');
  assert.equal(step(b, [[dec('1.5'), -1]], 3), '1.50');
  assert.equal(step(b, [[dec('1.50'), -1]], 2), '1.500');
  const s = column('sum', T.numeric, true);
  step(
    s,
    [
      [dec('2.50'), 1],
      [dec('2.5'), 1],
    ],
    2,
  );
  const t = column('sum', T.numeric, true);
  t.deserialize(0, s.serialize(0));
  assert.equal(String(t.result(0, 2)), '2.5');
  assert.equal(step(t, [[dec('2.5'), -1]], 1), '2.50');
});
