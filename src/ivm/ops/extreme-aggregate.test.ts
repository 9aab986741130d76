// MIN/MAX over an insert-only input keep one value per group (ExtremeColumn) and must answer what
// the multiset column (every value with its count) answers, value for value and text for text — of
// equal values that print differently (1.5, 1.50; -0, 0), the same one — through batches, copies,
// NULLs and a checkpoint reload; a retraction reaching one is an internal error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Value } from '../../common/types.ts';
import { encodeExactValues } from '../../common/values.ts';
import { parseDecimal } from '../../common/decimal.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import type { AggColumn } from './aggregate-column.ts';
import { ExtremeColumn } from './extreme-aggregate.ts';
import { MultisetColumn } from './multiset-aggregate.ts';

const NUMERICS: readonly Value[] = ['1.5', '1.50', '2', '2.0', '-3.25', '0', '0.00'].map(parseDecimal);
const DOUBLES: readonly Value[] = [0, -0, 1.5, -1, 7, 1e300, Number.NEGATIVE_INFINITY];

function spec(fn: 'min' | 'max', strategy: 'extreme' | 'multiset'): AggregateSpec {
  return {
    fn,
    distinct: false,
    argColumn: 0,
    argType: { kind: 'numeric' },
    outputType: { kind: 'numeric' },
    strategy,
  } as AggregateSpec;
}

/** One batch into a column: per touched group a reset, its values, a merge (touch index = order). */
function step(column: AggColumn, batch: readonly (readonly [number, Value, number])[]): void {
  const touch = new Map<number, number>();
  for (const [slot] of batch) if (!touch.has(slot)) touch.set(slot, touch.size);
  for (const [slot, p] of touch) column.resetPartial(slot, p);
  for (const [slot, value, weight] of batch)
    column.accumulate(slot, value, weight, touch.get(slot) as number);
  for (const [slot, p] of touch) column.merge(slot, p);
}

const shown = (v: Value): string => encodeExactValues([v]);

for (const fn of ['min', 'max'] as const) {
  for (const [name, values] of [
    ['numerics', NUMERICS],
    ['doubles', DOUBLES],
  ] as const) {
    test(`${fn.toUpperCase()} of ${name}: one value per group answers as the multiset does`, () => {
      const value = fc.oneof(fc.constantFrom(...values), fc.constant(null));
      const change = fc.tuple(fc.integer({ min: 0, max: 5 }), value, fc.integer({ min: 1, max: 3 }));
      fc.assert(
        fc.property(
          fc.array(fc.array(change, { maxLength: 12 }), { maxLength: 12 }),
          fc.nat(11),
          (batches, at) => {
            let extreme = new ExtremeColumn(spec(fn, 'extreme'));
            const multiset = new MultisetColumn(spec(fn, 'multiset'));
            for (let s = 0; s < 6; s++) {
              extreme.clear(s);
              multiset.clear(s);
            }
            batches.forEach((batch, b) => {
              step(extreme, batch);
              step(multiset, batch);
              if (b === at) {
                // a checkpoint reload: the entry of one value, and of a multiset's many, read back
                const reloaded = new ExtremeColumn(spec(fn, 'extreme'));
                for (let s = 0; s < 6; s++) {
                  reloaded.deserialize(s, extreme.serialize(s));
                  assert.equal(shown(reloaded.result(s)), shown(extreme.result(s)));
                  const fromMultiset = new ExtremeColumn(spec(fn, 'extreme'));
                  fromMultiset.deserialize(s, multiset.serialize(s));
                  assert.equal(shown(fromMultiset.result(s)), shown(multiset.result(s)));
                }
                extreme = reloaded;
              }
              for (let s = 0; s < 6; s++)
                assert.equal(shown(extreme.result(s)), shown(multiset.result(s)), `group ${s}`);
            });
          },
        ),
        { numRuns: 300 },
      );
    });
  }
}

test('a retraction reaching an insert-only MIN is an internal error, not a wrong answer', () => {
  const column = new ExtremeColumn(spec('min', 'extreme'));
  column.clear(0);
  step(column, [[0, parseDecimal('1'), 1]]);
  assert.throws(
    () => step(column, [[0, parseDecimal('1'), -1]]),
    /MIN over an insert-only input received a retraction/,
  );
});

test('a group holds one value however many arrive', () => {
  const extreme = new ExtremeColumn(spec('max', 'extreme'));
  const multiset = new MultisetColumn(spec('max', 'multiset'));
  extreme.clear(0);
  multiset.clear(0);
  const batch: [number, Value, number][] = [];
  for (let i = 0; i < 1000; i++) batch.push([0, parseDecimal(String(i)), 1]);
  step(extreme, batch);
  step(multiset, batch);
  assert.equal(shown(extreme.result(0)), shown(multiset.result(0)));
  assert.deepEqual((extreme.serialize(0) as { v: unknown[] }).v.length, 1);
  assert.equal((multiset.serialize(0) as { v: unknown[] }).v.length, 1000);
  assert.ok(extreme.bytes(0) * 100 < multiset.bytes(0));
});
