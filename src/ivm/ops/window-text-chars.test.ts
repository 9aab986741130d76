// A STRING_AGG window's characters per partition (what a write's bound weighs its rows by) against
// the partition's rows summed from scratch, through random insert/delete batches and a reload from
// the checkpointed arrangement (the sums are never stored: recomputed on load); and its state size
// counting the texts it holds, two bytes a character.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { WindowFn } from '../../common/window.ts';
import { failOnRowError } from '../../../test/support/zbatches.ts';
import { WindowOp } from './window-op.ts';
import { windowOpOver } from '../../../test/support/window-op-node.ts';
import { textWeight } from './window-text-chars.ts';

type Row = readonly Value[];

const stringAgg = (delimiter: string, arg: number): WindowFn => ({
  fn: 'string_agg',
  arg,
  offset: 0,
  defaultArg: null,
  frame: { kind: 'range' },
  type: T.text,
  delimiter,
});

/** Rows [p, ts, s, u]; PARTITION BY p ORDER BY ts. */
function windowOp(functions: readonly WindowFn[]): WindowOp {
  return windowOpOver(
    [
      ['s', T.text],
      ['u', T.text],
    ],
    functions,
  );
}

/** Each row's characters: s with its ', ' and u with its '' (NULLs nothing). */
function charsOf(row: Row): number {
  const s = row[2] as string | null;
  const u = row[3] as string | null;
  return (s === null ? 0 : s.length + 2) + (u === null ? 0 : u.length);
}

test('per partition, the characters held equal the rows summed, after random batches and a reload', () => {
  let seed = 7;
  const draw = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const fns = [stringAgg(', ', 2), stringAgg('', 3)];
  const op = windowOp(fns);
  op.trackChanges(true);
  const held: Row[] = [];
  for (let step = 0; step < 80; step++) {
    const rows: Row[] = [];
    const weights: number[] = [];
    for (let j = 1 + draw(6); j > 0; j--) {
      const at = draw(Math.max(held.length, 1));
      if (draw(3) === 0 && held[at] !== undefined) {
        rows.push(held[at] as Row);
        weights.push(-1);
        held.splice(at, 1);
        continue;
      }
      const text = (): string | null => (draw(5) === 0 ? null : 'z'.repeat(draw(40)));
      const row: Row = [draw(4), step * 10 + j, text(), text()];
      rows.push(row);
      weights.push(1);
      held.push(row);
    }
    op.step([{ rows, weights, consolidated: false }], failOnRowError);
    const text = op.text;
    assert.ok(text !== null);
    let total = 0;
    for (let p = 0; p < 4; p++) {
      const expected = held.filter((r) => r[0] === p).reduce((n, r) => n + charsOf(r), 0);
      assert.equal(text.held(p), expected, `step ${step}, partition ${p}`);
      total += expected;
    }
    assert.equal(text.total, total);
  }
  const restored = windowOp(fns);
  restored.loadState(op.takeStateDelta(true).upserts.map(([, v]) => v));
  for (let p = 0; p < 4; p++) assert.equal(restored.text?.held(p), op.text?.held(p));
  assert.equal(restored.text?.total, op.text?.total);
  assert.equal(restored.stateSize(), op.stateSize());
});

test('a window without STRING_AGG keeps no characters', () => {
  const rowNumber: WindowFn = {
    fn: 'row_number',
    arg: null,
    offset: 0,
    defaultArg: null,
    frame: { kind: 'range' },
    type: T.int64,
  };
  assert.equal(windowOp([rowNumber]).text, null);
});

test('the state size counts the texts the slots hold, two bytes a character', () => {
  // One partition of n rows of 100 characters: the running texts hold ≈ 100 × n² / 2 characters,
  // which the rows alone (the arrangement, the slots) do not show.
  const sizeOf = (fns: readonly WindowFn[], n: number): number => {
    const op = windowOp(fns);
    const rows: Row[] = Array.from({ length: n }, (_, i) => [0, i, 'y'.repeat(100), null]);
    op.step([{ rows, weights: rows.map(() => 1), consolidated: false }], failOnRowError);
    return op.stateSize();
  };
  const lag: WindowFn = {
    fn: 'lag',
    arg: 2,
    offset: 1,
    defaultArg: null,
    frame: { kind: 'range' },
    type: T.text,
  };
  const held = ((200 * 201) / 2) * 100; // the texts joined, their delimiters aside
  // A LAG of the same text: its values are the rows' own texts (shared, not built).
  assert.ok(sizeOf([stringAgg(', ', 2)], 200) - sizeOf([lag], 200) >= 2 * held);
  assert.equal(textWeight(3, 64), 6);
  assert.equal(textWeight(3, 65), 9);
  assert.equal(textWeight(0, 1e9), 0);
});
