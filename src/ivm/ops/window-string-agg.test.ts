// STRING_AGG OVER in the Window operator: random insert/delete batches against the frame's text
// computed from the definition (each row's frame in the partition's order, NULLs skipped), and the
// row error of a value past the text limit, reported with the slot's row and retracted when a
// change brings the value back under it or removes the row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import { MAX_TEXT_LENGTH } from '../../common/limits.ts';
import { SluiceError } from '../../common/errors.ts';
import { compareRows } from '../../common/top-n.ts';
import { encodeValues } from '../../common/values.ts';
import type { WindowFn, WindowFrame } from '../../common/window.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import type { RowErrorSink } from '../operator.ts';
import { failOnRowError, integrate } from '../../../test/support/zbatches.ts';
import { Rng } from '../../../test/support/random-workload.ts';
import { WindowOp } from './window-op.ts';
import { windowOpOver } from '../../../test/support/window-op-node.ts';

type Row = readonly Value[];

const between = (start: number | null, end: number | null): WindowFrame => ({ kind: 'rows', start, end });

const agg = (frame: WindowFrame, delimiter: string): WindowFn => ({
  fn: 'string_agg',
  arg: 2,
  offset: 0,
  defaultArg: null,
  frame,
  type: T.text,
  delimiter,
});

/** Rows [p, ts, s]; the window is PARTITION BY p ORDER BY ts. */
function windowOp(functions: readonly WindowFn[]): WindowOp {
  return windowOpOver([['s', T.text]], functions);
}

/** The function's value at index j of a partition in order: its frame's non-NULL texts joined. */
function expectedAt(fn: WindowFn, rows: readonly Row[], j: number): Value {
  const peers = (a: Row, b: Row): boolean => a[1] === b[1];
  let s: number;
  let e: number;
  if (fn.frame.kind === 'range') {
    s = 0;
    e = j;
    while (e + 1 < rows.length && peers(rows[e + 1] as Row, rows[j] as Row)) e++;
  } else {
    s = fn.frame.start === null ? 0 : Math.max(0, j + fn.frame.start);
    e = fn.frame.end === null ? rows.length - 1 : Math.min(rows.length - 1, j + fn.frame.end);
  }
  const parts: string[] = [];
  for (let k = s; k <= e; k++) {
    const v = (rows[k] as Row)[2] as Value;
    if (v !== null) parts.push(v as string);
  }
  return parts.length === 0 ? null : parts.join(fn.delimiter);
}

const FUNCTIONS: readonly WindowFn[] = [
  agg({ kind: 'range' }, ','),
  agg(between(null, 0), ''),
  agg(between(-1, 1), '-'),
  agg(between(-2, null), '+'),
  agg(between(0, null), ', '),
  agg(between(1, 3), '|'),
  agg(between(-3, -2), ';'),
  agg(between(null, null), '/'),
  agg(between(null, -1), '~'),
];

test('random insert/delete batches anywhere in a partition: every row holds its frame’s texts joined in order', () => {
  const compare = compareRows([
    { index: 1, desc: false, nullsFirst: false },
    { index: 2, desc: false, nullsFirst: false },
  ]);
  for (let seed = 1; seed <= 30; seed++) {
    const source = new Rng(seed);
    const random = (): number => source.next();
    const op = windowOp(FUNCTIONS);
    const view = new Map<string, number>();
    // Distinct rows: (p, ts) unique, so the order is total and the definition's is the operator's.
    const current = new Map<string, Row>();
    for (let epoch = 0; epoch < 30; epoch++) {
      const rows: Row[] = [];
      const weights: number[] = [];
      const size = 1 + Math.floor(random() * (random() < 0.2 ? 25 : 4));
      const seen = new Set<string>();
      for (let i = 0; i < size; i++) {
        const p = Math.floor(random() * 3);
        const ts = Math.floor(random() * 12);
        const k = `${p}/${ts}`;
        if (seen.has(k)) continue;
        seen.add(k);
        const had = current.get(k);
        if (had !== undefined) {
          rows.push(had);
          weights.push(-1);
          current.delete(k);
          if (random() < 0.5) continue; // a delete; else an update in place
        }
        const s = random() < 0.2 ? null : 'abcdefgh'.slice(0, 1 + Math.floor(random() * 3)) + String(ts);
        const row: Row = [p, ts, s];
        rows.push(row);
        weights.push(1);
        current.set(k, row);
      }
      integrate(view, op.step([{ rows, weights, consolidated: false }], failOnRowError));
      const expected = new Map<string, number>();
      const byP = new Map<number, Row[]>();
      for (const row of current.values()) {
        const list = byP.get(row[0] as number) ?? [];
        list.push(row);
        byP.set(row[0] as number, list);
      }
      for (const list of byP.values()) {
        list.sort(compare);
        list.forEach((row, j) => {
          const out = [...row, ...FUNCTIONS.map((f) => expectedAt(f, list, j))];
          expected.set(encodeValues(out), 1);
        });
      }
      assert.deepEqual(
        [...view.entries()].sort(),
        [...expected.entries()].sort(),
        `seed ${seed}, epoch ${epoch}`,
      );
    }
  }
});

/** A sink that keeps the errors' weights by error code and row. */
function sink(): RowErrorSink & { held: Map<string, number> } {
  const held = new Map<string, number>();
  return {
    held,
    report(error: unknown, row: readonly Value[], columns: readonly ColumnSpec[], weight: number): void {
      assert.equal(columns.length, 3);
      assert.ok(error instanceof SluiceError);
      const k = `${error.code} p=${String(row[0])} ts=${String(row[1])}`;
      const n = (held.get(k) ?? 0) + weight;
      if (n === 0) held.delete(k);
      else held.set(k, n);
    },
  };
}

test('a value past the text limit: a row error of its slot instead of a row, retracted when the value fits again or the row goes', () => {
  const big = 'x'.repeat(Math.floor(MAX_TEXT_LENGTH / 2) + 10);
  const op = windowOp([agg({ kind: 'range' }, ','), agg(between(-1, 0), '')]);
  const errors = sink();
  const view = new Map<string, number>();
  integrate(
    view,
    op.step(
      [
        {
          rows: [
            [1, 1, big],
            [1, 2, big],
            [1, 3, 'z'],
            [2, 1, big],
          ],
          weights: [1, 1, 1, 1],
          consolidated: false,
        },
      ],
      errors,
    ),
  );
  // ts 2 and 3: the running text passes the limit; ts 2's pair too. The rows of ts 1 are whole.
  assert.deepEqual([...errors.held.entries()].sort(), [
    ['STRING_TOO_LONG p=1 ts=2', 1],
    ['STRING_TOO_LONG p=1 ts=3', 1],
  ]);
  assert.deepEqual(
    [...view.keys()].map((k) => k.length > 100),
    [true, true],
    'the rows of p=1 ts=1 and p=2 ts=1 only',
  );
  // The first row goes: ts 2's running text fits, ts 3's too (big + ',z').
  integrate(view, op.step([{ rows: [[1, 1, big]], weights: [-1], consolidated: false }], errors));
  assert.deepEqual([...errors.held.entries()], []);
  assert.equal(view.size, 3);
  // It comes back: the errors again; then the failed row ts 3 goes, and with it its error.
  integrate(view, op.step([{ rows: [[1, 1, big]], weights: [1], consolidated: false }], errors));
  assert.equal(errors.held.size, 2);
  integrate(view, op.step([{ rows: [[1, 3, 'z']], weights: [-1], consolidated: false }], errors));
  assert.deepEqual([...errors.held.keys()], ['STRING_TOO_LONG p=1 ts=2']);
  assert.equal(view.size, 2);
});
