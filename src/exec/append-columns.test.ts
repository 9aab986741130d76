// The chunked append list against a plain array of rows: any mix of single rows, small batches
// (copied into the tail) and large ones (adopted as chunks), with captures taken along the way;
// every capture reads back exactly the rows of its moment, in any slices, while the table grows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Value } from '../common/types.ts';
import { AppendColumns } from './append-columns.ts';

type Step = { kind: 'row' } | { kind: 'batch'; n: number } | { kind: 'capture' };

test('captures and rows() read back the appended rows, across tail and adopted chunks', () => {
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
