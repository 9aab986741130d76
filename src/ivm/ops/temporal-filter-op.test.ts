// Unit tests of the TemporalFilter operator without SQL: the rows a clock move emits, the work it
// does (a move crossing k bounds touches k rows, not every held row), what it frees, and a reload of
// its checkpointed state continuing exactly where the original would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { TemporalBound } from '../../common/temporal-bound.ts';
import { formatMicros } from '../../common/time/instant-micros.ts';
import type { RowErrorSink } from '../operator.ts';
import type { ZBatch } from '../zset.ts';
import { TemporalFilterOp } from './temporal-filter-op.ts';

const HOUR = 3_600_000_000;
const T0 = 1_704_067_200_000_000; // 2024-01-01 00:00 UTC
const NO_ERRORS: RowErrorSink = {
  report: (e) => {
    throw e;
  },
};

/** Rows [id, ts]: `ts > now() - 1 hour AND ts <= now()` (enter at ts, leave at ts + 1 hour). */
function lastHour(): TemporalFilterOp {
  const ts = { kind: 'col', index: 1, name: 'ts', type: T.timestamptz } as const;
  const bounds: TemporalBound[] = [
    { expr: ts, op: 'gt', offset: -HOUR },
    { expr: ts, op: 'le', offset: 0 },
  ];
  return new TemporalFilterOp(1, 'v/temporal1', bounds, [
    { name: 'id', type: T.int32 },
    { name: 'ts', type: T.timestamptz },
  ]);
}

function row(id: number, micros: number): readonly Value[] {
  return [id, formatMicros(micros)];
}

function at(
  op: TemporalFilterOp,
  clock: number,
  input: ZBatch = { rows: [], weights: [], consolidated: true },
): string[] {
  op.setClock(clock);
  const out = op.step([input], NO_ERRORS);
  return out.rows.map((r, i) => `${out.weights[i]! > 0 ? '+' : '-'}${String(r[0])}`).sort();
}

function inserts(rows: (readonly Value[])[], weight = 1): ZBatch {
  return { rows, weights: rows.map(() => weight), consolidated: true };
}

test('rows enter at their bound and leave at the other, at exact clock values', () => {
  const op = lastHour();
  assert.deepEqual(
    at(op, T0, inserts([row(1, T0 - 30 * 60e6), row(2, T0 + 10 * 60e6), row(3, T0 - 2 * HOUR)])),
    ['+1'],
  );
  assert.equal(
    op.heldRows,
    2,
    'the visible row (to leave) and the future one (to enter); the old one is not kept',
  );
  assert.equal(op.nextDue(), T0 + 10 * 60e6);
  assert.deepEqual(at(op, T0 + 10 * 60e6 - 1), []);
  assert.deepEqual(at(op, T0 + 10 * 60e6), ['+2']);
  assert.deepEqual(at(op, T0 + 30 * 60e6 - 1), []);
  assert.deepEqual(at(op, T0 + 30 * 60e6), ['-1']);
  assert.equal(op.heldRows, 1, 'a row past its window is freed');
  assert.deepEqual(at(op, T0 + 70 * 60e6), ['-2']);
  assert.equal(op.heldRows, 0);
  assert.equal(op.nextDue(), Infinity);
});

test('a delete of a row pending entry forgets it; a move crossing both bounds emits nothing', () => {
  const op = lastHour();
  assert.deepEqual(at(op, T0, inserts([row(1, T0 + HOUR), row(2, T0 + 2 * HOUR)])), []);
  assert.deepEqual(at(op, T0, inserts([row(1, T0 + HOUR)], -1)), []);
  assert.equal(op.heldRows, 1);
  assert.deepEqual(at(op, T0 + 4 * HOUR), [], 'row 2 entered and left within one move');
  assert.equal(op.heldRows, 0);
});

test('a clock move crossing k bounds touches k rows, not every held row', () => {
  const op = lastHour();
  const n = 10_000;
  const rows: (readonly Value[])[] = [];
  for (let i = 0; i < n; i++) rows.push(row(i, T0 + (i + 1) * 1_000_000)); // one entering every second
  at(op, T0, inserts(rows));
  assert.equal(op.heldRows, n);
  op.rowsTouched = 0;
  assert.deepEqual(at(op, T0 + 5 * 1_000_000), ['+0', '+1', '+2', '+3', '+4']);
  assert.equal(op.rowsTouched, 5);
  op.rowsTouched = 0;
  assert.deepEqual(at(op, T0 + 5 * 1_000_000 + 999_999), []);
  assert.equal(op.rowsTouched, 0, 'a move crossing no bound touches no row');
});

test('the checkpointed state reloads into an operator that continues identically', () => {
  const original = lastHour();
  original.trackChanges(true);
  at(original, T0, inserts([row(1, T0 - 10 * 60e6), row(2, T0 + 10 * 60e6), row(2, T0 + 10 * 60e6)]));
  const copy = lastHour();
  copy.loadState(original.takeStateDelta(true).upserts.map(([, v]) => v));
  assert.equal(copy.heldRows, 2);
  for (const clock of [T0 + 5 * 60e6, T0 + 10 * 60e6, T0 + 50 * 60e6, T0 + 2 * HOUR]) {
    original.setClock(clock);
    copy.setClock(clock);
    const a = original.step([{ rows: [], weights: [], consolidated: true }], NO_ERRORS);
    const b = copy.step([{ rows: [], weights: [], consolidated: true }], NO_ERRORS);
    assert.deepEqual(b, a, `at ${formatMicros(clock)}`);
  }
  // Both rows were freed since the full export: the next delta deletes them and records the clock.
  const delta = original.takeStateDelta(false);
  assert.equal(delta.replaceAll, false);
  assert.equal(delta.deletes.length, 2);
  assert.deepEqual(delta.upserts, [['clock', { clock: T0 + 2 * HOUR }]]);
});
