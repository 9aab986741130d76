// Unit tests of the FlatMap operator without SQL: each row with its weight once per generated tuple
// (a retraction yields exactly the rows its insertion did), row errors reported with the row's
// weight, and an ad-hoc evaluation's row budget failing early rather than filling memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SluiceError } from '../../common/errors.ts';
import type { HopGenerator } from '../../common/expand.ts';
import { Interval } from '../../common/time/interval.ts';
import { T, type Value } from '../../common/types.ts';
import type { RowErrorSink } from '../operator.ts';
import { FlatMapOp } from './flat-map-op.ts';

const sec = (n: number): Interval => Interval.of(0, 0, n * 1_000_000);
const hop = (slide: number, size: number): HopGenerator => ({
  kind: 'hop',
  time: { kind: 'col', index: 1, name: 'ts', type: T.timestamp },
  slide: sec(slide),
  size: sec(size),
  offset: sec(0),
  tz: false,
});
const columns = [
  { name: 'id', type: T.int32 },
  { name: 'ts', type: T.timestamp },
];

function sink(): RowErrorSink & { reported: [string, number][] } {
  const reported: [string, number][] = [];
  return {
    reported,
    report: (error, row, _columns, weight) =>
      reported.push([`${String(row[0])}: ${(error as Error).message}`, weight]),
  };
}

test('each row once per window, with its weight; a retraction yields the same rows negated', () => {
  const op = new FlatMapOp(1, hop(5, 15), columns);
  const rows: Value[][] = [
    [1, '2024-01-01 00:00:07'],
    [2, null],
  ];
  const errors = sink();
  const inserted = op.step([{ rows, weights: [1, 1], consolidated: true }], errors);
  assert.deepEqual(inserted.rows, [
    [1, '2024-01-01 00:00:07', '2023-12-31 23:59:55', '2024-01-01 00:00:10'],
    [1, '2024-01-01 00:00:07', '2024-01-01 00:00:00', '2024-01-01 00:00:15'],
    [1, '2024-01-01 00:00:07', '2024-01-01 00:00:05', '2024-01-01 00:00:20'],
  ]);
  assert.deepEqual(inserted.weights, [1, 1, 1]);
  const retracted = op.step([{ rows, weights: [-2, -1], consolidated: true }], errors);
  assert.deepEqual(retracted.rows, inserted.rows);
  assert.deepEqual(retracted.weights, [-2, -2, -2]);
  assert.deepEqual(errors.reported, []);
});

test('a window past the timestamp range is the row error, with the row weight', () => {
  const op = new FlatMapOp(1, hop(5, 10), columns);
  const errors = sink();
  const out = op.step([{ rows: [[9, '9999-12-31 23:59:58']], weights: [3], consolidated: true }], errors);
  assert.equal(out.rows.length, 0);
  assert.deepEqual(errors.reported, [['9: timestamp out of range', 3]]);
});

test('an ad-hoc row budget stops the expansion early with RESULT_TOO_LARGE', () => {
  const budget = { remaining: 250, limit: 250 };
  const op = new FlatMapOp(1, hop(1, 100), columns, budget);
  const rows: Value[][] = Array.from({ length: 10 }, (_, i) => [i, '2024-01-01 00:00:00']);
  assert.throws(
    () => op.step([{ rows, weights: rows.map(() => 1), consolidated: true }], sink()),
    (e: unknown) => e instanceof SluiceError && e.code === 'RESULT_TOO_LARGE',
  );
  // It stopped at the third row: no more than the budget plus one row's windows was built.
  assert.ok(budget.remaining >= -100 && budget.remaining < 0, `remaining ${budget.remaining}`);
});
