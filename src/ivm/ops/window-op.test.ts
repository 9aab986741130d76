// Unit tests of the Window operator without SQL: the work a change does (slots whose values are
// computed, counted, not timed) is only the slots it can change, the rows it emits are only those
// whose values changed, and random insert/delete batches keep the integrated output equal to a
// from-scratch run (a fresh operator fed the current rows at once), duplicates and peers included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import { encodeValues } from '../../common/values.ts';
import { printWindowFn, rowsPreceding, type WindowFn, type WindowFrame } from '../../common/window.ts';
import type { ZBatch } from '../zset.ts';
import { WindowOp } from './window-op.ts';
import { windowOpOver } from '../../../test/support/window-op-node.ts';
import { failOnRowError, integrate } from '../../../test/support/zbatches.ts';
import { Rng } from '../../../test/support/random-workload.ts';

type Row = readonly Value[];

/** ROWS BETWEEN start AND end (offsets from the current row; null: UNBOUNDED). */
const between = (start: number | null, end: number | null): WindowFrame => ({ kind: 'rows', start, end });

const fn = (f: Partial<WindowFn> & Pick<WindowFn, 'fn'>): WindowFn => ({
  arg: null,
  offset: 0,
  defaultArg: null,
  frame: { kind: 'range' },
  type: T.int64,
  ...f,
});

/** Rows [p, ts, x]; the window is PARTITION BY p ORDER BY ts (or none). */
function windowOp(functions: readonly WindowFn[], ordered = true): WindowOp {
  return windowOpOver([['x', T.int32]], functions, ordered);
}

function batch(rows: readonly Row[], weight = 1): ZBatch {
  return { rows: [...rows], weights: rows.map(() => weight), consolidated: true };
}

function changes(out: ZBatch): string[] {
  return out.rows.map((r, i) => `${(out.weights[i] ?? 0) > 0 ? '+' : '-'}${r.join(',')}`).sort();
}

/** A partition of 1,000 rows, ts = 10, 20, …; x = ts / 10. */
function filled(op: WindowOp): void {
  const rows: Row[] = [];
  for (let i = 1; i <= 1000; i++) rows.push([1, i * 10, i]);
  rows.push([2, 5, 1]);
  op.step([batch(rows)], failOnRowError);
}

test('LAG: an insert recomputes and re-emits only the new row and the one after it', () => {
  const op = windowOp([fn({ fn: 'lag', arg: 2, offset: 1, type: T.int32 })]);
  filled(op);
  const before = op.slotsComputed;
  const out = op.step([batch([[1, 5005, 99]])], failOnRowError);
  assert.equal(op.slotsComputed - before, 2, 'slots computed for one insert');
  assert.deepEqual(changes(out), ['+1,5005,99,500', '+1,5010,501,99', '-1,5010,501,500']);
});

test('LEAD 2 and SUM over ROWS 2 PRECEDING: a delete touches its 2 neighbours on one side', () => {
  const lead = windowOp([fn({ fn: 'lead', arg: 2, offset: 2, type: T.int32 })]);
  filled(lead);
  let before = lead.slotsComputed;
  const out = lead.step([batch([[1, 5000, 500]], -1)], failOnRowError);
  assert.ok(lead.slotsComputed - before <= 3, `${lead.slotsComputed - before} slots for a LEAD 2 delete`);
  assert.deepEqual(changes(out), [
    '+1,4980,498,501',
    '+1,4990,499,502',
    '-1,4980,498,500',
    '-1,4990,499,501',
    '-1,5000,500,502',
  ]);
  const sum = windowOp([fn({ fn: 'sum', arg: 2, frame: rowsPreceding(2) })]);
  filled(sum);
  before = sum.slotsComputed;
  sum.step([batch([[1, 5000, 500]], -1)], failOnRowError);
  assert.ok(sum.slotsComputed - before <= 3, `${sum.slotsComputed - before} slots for a ROWS 2 delete`);
});

test('ranks and a running SUM: an insert at position k recomputes the rows from k on, not before', () => {
  const op = windowOp([fn({ fn: 'row_number' }), fn({ fn: 'sum', arg: 2 })]);
  filled(op);
  let before = op.slotsComputed;
  // Near the end: 1 new slot + the 10 after it.
  const out = op.step([batch([[1, 9905, 0]])], failOnRowError);
  assert.equal(op.slotsComputed - before, 11);
  // ROW_NUMBER moves for the 10 rows after it; the running SUM does not (x = 0).
  assert.equal(out.rows.length, 1 + 2 * 10);
  // At the front the whole partition is recomputed (a running aggregate's documented cost).
  before = op.slotsComputed;
  op.step([batch([[1, 1, 5]])], failOnRowError);
  assert.equal(op.slotsComputed - before, 1002);
  // Another partition is not touched.
  before = op.slotsComputed;
  op.step([batch([[2, 6, 1]])], failOnRowError);
  assert.equal(op.slotsComputed - before, 1);
});

test('ROWS 500 PRECEDING: integer SUM and MIN cost O(1) a slot, not a fold of 500 rows', () => {
  const op = windowOp([
    fn({ fn: 'sum', arg: 2, frame: rowsPreceding(500) }),
    fn({ fn: 'min', arg: 2, frame: rowsPreceding(500), type: T.int32 }),
  ]);
  filled(op);
  const before = op.slotsComputed;
  const folded = op.rowsFolded;
  op.step([batch([[1, 2005, 7]])], failOnRowError);
  // The new slot and the 500 after it; no frame folded row by row.
  assert.equal(op.slotsComputed - before, 501);
  assert.equal(op.rowsFolded - folded, 0);
});

test('SUM over ROWS 2 PRECEDING stays exact after changes further apart than its frame', () => {
  // Regression: frames were once the difference of running sums that a change updated only
  // within its reach, so a later change past it subtracted a sum that had the first one from one
  // that had not (85's frame summed to 915, not 7 + 8 + 1000).
  const op = windowOp([fn({ fn: 'sum', arg: 2, frame: rowsPreceding(2) })]);
  const rows: Row[] = [];
  for (let i = 1; i <= 20; i++) rows.push([1, i * 10, i]);
  op.step([batch(rows)], failOnRowError);
  op.step([batch([[1, 55, 100]])], failOnRowError);
  const out = op.step([batch([[1, 85, 1000]])], failOnRowError);
  assert.deepEqual(changes(out), [
    '+1,100,10,1019',
    '+1,85,1000,1015',
    '+1,90,9,1017',
    '-1,100,10,27',
    '-1,90,9,24',
  ]);
});

test('ROWS BETWEEN 2 PRECEDING AND 3 FOLLOWING: an insert recomputes the 3 slots before it and the 2 after', () => {
  const op = windowOp([
    fn({ fn: 'sum', arg: 2, frame: between(-2, 3) }),
    fn({ fn: 'max', arg: 2, frame: between(-2, 3), type: T.int32 }),
    fn({ fn: 'last_value', arg: 2, frame: between(-2, 3), type: T.int32 }),
  ]);
  filled(op);
  const before = op.slotsComputed;
  const folded = op.rowsFolded;
  const out = op.step([batch([[1, 5005, 7]])], failOnRowError);
  assert.equal(op.slotsComputed - before, 6);
  assert.equal(op.rowsFolded - folded, 0);
  // The new row, and 5 rows whose frame now holds it: each retracted and re-emitted.
  assert.equal(out.rows.length, 11);
});

test('frames to UNBOUNDED FOLLOWING reach back to the partition start, and no further ahead than the frame start', () => {
  const op = windowOp([fn({ fn: 'sum', arg: 2, frame: between(-1, null), type: T.numeric })]);
  filled(op);
  const before = op.slotsComputed;
  op.step([batch([[1, 5005, 7]])], failOnRowError);
  // Slots 0..500 (before it and itself) and the one after it, whose frame starts at it.
  assert.equal(op.slotsComputed - before, 502);
  // LAST_VALUE over a frame ending at UNBOUNDED FOLLOWING reads the last slot: a change elsewhere reaches only itself.
  const last = windowOp([fn({ fn: 'last_value', arg: 2, frame: between(0, null), type: T.int32 })]);
  filled(last);
  const computed = last.slotsComputed;
  last.step([batch([[1, 5005, 7]])], failOnRowError);
  assert.equal(last.slotsComputed - computed, 1);
  const out = last.step([batch([[1, 99999, 7]])], failOnRowError);
  assert.equal(out.rows.length, 1 + 2 * 1001);
});

test('NTILE, PERCENT_RANK and CUME_DIST read the partition size: a change recomputes it whole but emits only changed values', () => {
  const op = windowOp([fn({ fn: 'ntile', offset: 4, type: T.int32 })]);
  filled(op);
  const before = op.slotsComputed;
  // 1,000 rows in 4 buckets of 250; one more makes the first bucket 251 rows long, the others 250.
  const out = op.step([batch([[1, 99999, 0]])], failOnRowError);
  assert.equal(op.slotsComputed - before, 1001);
  // Rows 251, 501 and 751 move to the bucket before: 3 pairs, plus the new row.
  assert.equal(out.rows.length, 7);
  assert.ok(changes(out).includes('+1,99999,0,4'));
  assert.ok(changes(out).includes('+1,2510,251,1'));
  const ranks = windowOp([
    fn({ fn: 'percent_rank', type: T.float64 }),
    fn({ fn: 'cume_dist', type: T.float64 }),
  ]);
  ranks.step(
    [
      batch([
        [1, 10, 1],
        [1, 20, 2],
        [1, 20, 3],
        [1, 30, 4],
      ]),
    ],
    failOnRowError,
  );
  const moved = ranks.step([batch([[1, 30, 4]], -1)], failOnRowError);
  assert.deepEqual(changes(moved), [
    '+1,10,1,0,0.3333333333333333',
    '+1,20,2,0.5,1',
    '+1,20,3,0.5,1',
    '-1,10,1,0,0.25',
    '-1,20,2,0.3333333333333333,0.75',
    '-1,20,3,0.3333333333333333,0.75',
    '-1,30,4,1,1',
  ]);
});

test('no ORDER BY: the whole partition is one peer group, every row gets the total', () => {
  const op = windowOp([fn({ fn: 'sum', arg: 2 }), fn({ fn: 'count_star' })], false);
  op.step(
    [
      batch([
        [1, 1, 10],
        [1, 2, 20],
        [2, 1, 7],
      ]),
    ],
    failOnRowError,
  );
  const out = op.step([batch([[1, 3, 5]])], failOnRowError);
  assert.deepEqual(changes(out), [
    '+1,1,10,35,3',
    '+1,2,20,35,3',
    '+1,3,5,35,3',
    '-1,1,10,30,2',
    '-1,2,20,30,2',
  ]);
});

test('no ORDER BY over 20,000 rows: a backfill and a batch of scattered changes walk each slot once', () => {
  const op = windowOp([fn({ fn: 'last_value', arg: 2, type: T.int32 }), fn({ fn: 'count_star' })], false);
  const rows: Row[] = [];
  for (let i = 0; i < 20_000; i++) rows.push([1, i, i % 7]);
  op.step([batch(rows)], failOnRowError);
  assert.equal(op.slotsComputed, 20_000);
  assert.ok(op.slotsWalked <= 20_000, `${op.slotsWalked} slots walked for the backfill`);
  const computed = op.slotsComputed;
  const walked = op.slotsWalked;
  const scattered: Row[] = [];
  for (let i = 0; i < 50; i++) scattered.push([1, i * 400 + 1, 3]);
  op.step([batch(scattered)], failOnRowError);
  assert.equal(op.slotsComputed - computed, 20_050);
  assert.ok(op.slotsWalked - walked <= 20_050, `${op.slotsWalked - walked} slots walked for 50 changes`);
});

const ALL: readonly WindowFn[] = [
  fn({ fn: 'row_number' }),
  fn({ fn: 'rank' }),
  fn({ fn: 'dense_rank' }),
  fn({ fn: 'lag', arg: 2, offset: 1, type: T.int32 }),
  fn({ fn: 'lag', arg: 2, offset: 2, defaultArg: 1, type: T.int32 }),
  fn({ fn: 'lead', arg: 2, offset: 1, type: T.int32 }),
  fn({ fn: 'lead', arg: 2, offset: 3, type: T.int32 }),
  fn({ fn: 'first_value', arg: 2, type: T.int32 }),
  fn({ fn: 'first_value', arg: 2, frame: rowsPreceding(1), type: T.int32 }),
  fn({ fn: 'last_value', arg: 2, type: T.int32 }),
  fn({ fn: 'last_value', arg: 2, frame: rowsPreceding(null), type: T.int32 }),
  fn({ fn: 'sum', arg: 2 }),
  fn({ fn: 'sum', arg: 2, frame: rowsPreceding(2) }),
  fn({ fn: 'count', arg: 2, frame: rowsPreceding(null) }),
  fn({ fn: 'count_star' }),
  fn({ fn: 'min', arg: 2, type: T.int32 }),
  fn({ fn: 'max', arg: 2, frame: rowsPreceding(1), type: T.int32 }),
  fn({ fn: 'avg', arg: 2, type: T.numeric }),
  fn({ fn: 'min', arg: 2, frame: rowsPreceding(2), type: T.int32 }),
  fn({ fn: 'avg', arg: 2, frame: rowsPreceding(1), type: T.numeric }),
  fn({ fn: 'count_star', frame: rowsPreceding(3) }),
  fn({ fn: 'sum', arg: 2, frame: rowsPreceding(2), type: T.float64 }),
  fn({ fn: 'ntile', offset: 3, type: T.int32 }),
  fn({ fn: 'percent_rank', type: T.float64 }),
  fn({ fn: 'cume_dist', type: T.float64 }),
  fn({ fn: 'nth_value', arg: 2, offset: 2, type: T.int32 }),
  fn({ fn: 'nth_value', arg: 2, offset: 2, frame: between(-1, 1), type: T.int32 }),
  fn({ fn: 'nth_value', arg: 2, offset: 3, frame: between(null, 1), type: T.int32 }),
  fn({ fn: 'sum', arg: 2, frame: between(-2, 1) }),
  fn({ fn: 'sum', arg: 2, frame: between(-1, null), type: T.numeric }),
  fn({ fn: 'sum', arg: 2, frame: between(null, 2) }),
  fn({ fn: 'sum', arg: 2, frame: between(null, null) }),
  fn({ fn: 'sum', arg: 2, frame: between(1, 3), type: T.float64 }),
  fn({ fn: 'count', arg: 2, frame: between(-3, -1) }),
  fn({ fn: 'count_star', frame: between(2, null) }),
  fn({ fn: 'avg', arg: 2, frame: between(-1, 1), type: T.numeric }),
  fn({ fn: 'min', arg: 2, frame: between(-1, 2), type: T.int32 }),
  fn({ fn: 'max', arg: 2, frame: between(0, null), type: T.int32 }),
  fn({ fn: 'max', arg: 2, frame: between(null, -1), type: T.int32 }),
  fn({ fn: 'first_value', arg: 2, frame: between(1, 2), type: T.int32 }),
  fn({ fn: 'first_value', arg: 2, frame: between(null, -2), type: T.int32 }),
  fn({ fn: 'last_value', arg: 2, frame: between(-1, 1), type: T.int32 }),
  fn({ fn: 'last_value', arg: 2, frame: between(0, null), type: T.int32 }),
  fn({ fn: 'last_value', arg: 2, frame: between(2, null), type: T.int32 }),
];

/** Random insert/delete batches into `functions`' window: the output always equals a from-scratch run. */
function randomRuns(functions: readonly WindowFn[], ordered: boolean, seeds: number, label: string): void {
  for (let seed = 1; seed <= seeds; seed++) {
    const source = new Rng(seed);
    const random = (): number => source.next();
    const op = windowOp(functions, ordered);
    const view = new Map<string, number>();
    const current = new Map<string, { row: Row; n: number }>();
    for (let epoch = 0; epoch < 40; epoch++) {
      const rows: Row[] = [];
      const weights: number[] = [];
      const size = 1 + Math.floor(random() * (random() < 0.2 ? 30 : 4));
      const touched = new Map<string, number>();
      for (let i = 0; i < size; i++) {
        const have = [...current.values()];
        if (have.length > 0 && random() < 0.4) {
          const pick = have[Math.floor(random() * have.length)] as { row: Row; n: number };
          const k = encodeValues(pick.row);
          const already = touched.get(k) ?? 0;
          if (pick.n + already <= 0) continue;
          touched.set(k, already - 1);
          rows.push(pick.row);
          weights.push(-1);
        } else {
          const x = random() < 0.15 ? null : Math.floor(random() * 5);
          const row: Row = [Math.floor(random() * 3), Math.floor(random() * 6), x];
          const k = encodeValues(row);
          touched.set(k, (touched.get(k) ?? 0) + 1);
          rows.push(row);
          weights.push(1);
        }
      }
      for (let i = 0; i < rows.length; i++) {
        const k = encodeValues(rows[i] as Row);
        const e = current.get(k) ?? { row: rows[i] as Row, n: 0 };
        e.n += weights[i] as number;
        if (e.n === 0) current.delete(k);
        else current.set(k, e);
      }
      integrate(view, op.step([{ rows, weights, consolidated: false }], failOnRowError));
      const fresh = windowOp(functions, ordered);
      const expected = new Map<string, number>();
      const all: Row[] = [];
      const counts: number[] = [];
      for (const { row, n } of current.values()) {
        all.push(row);
        counts.push(n);
      }
      integrate(expected, fresh.step([{ rows: all, weights: counts, consolidated: true }], failOnRowError));
      assert.deepEqual(
        [...view.entries()].sort(),
        [...expected.entries()].sort(),
        `${label}: seed ${seed}, epoch ${epoch}`,
      );
    }
  }
}

for (const ordered of [true, false]) {
  test(`random batches (${ordered ? 'ORDER BY ts' : 'no ORDER BY'}): the output equals a from-scratch run, duplicates and peers included`, () => {
    randomRuns(ALL, ordered, 25, 'all functions');
  });
}

test('random batches, each function alone: a change recomputes every slot it reaches (none is masked by a wider reach)', () => {
  // NTILE, PERCENT_RANK and CUME_DIST recompute whole partitions: beside them a reach that is too
  // short would go unseen, so each function also runs on its own.
  for (const f of ALL)
    randomRuns([f], true, 6, printWindowFn(f, [{ name: 'p' }, { name: 'ts' }, { name: 'x' }]));
});
