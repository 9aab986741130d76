// MIN and MAX over an insert-only input: per group only the extreme value so far. A value can leave
// a group only with a retraction, and an insert-only input (src/planner/plan-insert-only.ts) sends
// none, so the values behind the extreme can never be needed again — where the multiset column
// (multiset-aggregate.ts) keeps every distinct value with its count, and a sorted copy, per group.
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { compareExact, compareValues } from '../../common/values.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import type { AggColumn, SerializedAgg } from './aggregate-column.ts';

/** No value yet (a group whose arguments so far were all NULL, or a partial nothing reached). */
const NONE: unique symbol = Symbol('none');
type Held = Value | typeof NONE;

/**
 * MIN/MAX keeping one value per group. It answers what the multiset column answers: MIN the
 * smallest value in compareExact's order (of equal values that print differently, the smallest
 * scale: 1.5 before 1.50), MAX the first in that order of the largest equal values.
 */
export class ExtremeColumn implements AggColumn {
  private readonly best: Held[] = [];
  /** A batch's extreme per touched group, by touch index, folded into `best` by merge. */
  private readonly partial: Held[] = [];
  private readonly max: boolean;

  constructor(readonly spec: AggregateSpec) {
    this.max = spec.fn === 'max';
  }

  /** Whether `v` replaces `held` as the extreme. */
  private beats(v: Value, held: Held): boolean {
    if (held === NONE) return true;
    if (!this.max) return compareExact(v, held) < 0;
    const c = compareValues(v, held);
    return c > 0 || (c === 0 && compareExact(v, held) < 0);
  }

  clear(slot: number): void {
    this.best[slot] = NONE;
  }

  resetPartial(_slot: number, p: number): void {
    this.partial[p] = NONE;
  }

  accumulate(_slot: number, value: Value, weight: number, p: number): void {
    if (value === null || weight === 0) return;
    if (weight < 0)
      throw new SluiceError(
        'INTERNAL_ERROR',
        `${this.spec.fn.toUpperCase()} over an insert-only input received a retraction`,
      );
    const held = this.partial[p] ?? NONE;
    if (this.beats(value, held)) this.partial[p] = value;
  }

  merge(slot: number, p: number): void {
    const candidate = this.partial[p] ?? NONE;
    this.partial[p] = NONE;
    if (candidate !== NONE && this.beats(candidate, this.best[slot] ?? NONE)) this.best[slot] = candidate;
  }

  result(slot: number): Value {
    const held = this.best[slot] ?? NONE;
    return held === NONE ? null : held;
  }

  serialize(slot: number): unknown {
    // The multiset column's shape (value, count) pairs: the one value held
    const held = this.best[slot] ?? NONE;
    return { n: 0, s: 0, v: held === NONE ? [] : [[held, 1]] };
  }

  deserialize(slot: number, data: unknown): void {
    let held: Held = NONE;
    // any number of values (a multiset column's entry holds them all): the extreme of them
    for (const [value] of (data as SerializedAgg).v ?? [])
      if (value !== null && this.beats(value, held)) held = value;
    this.best[slot] = held;
  }

  bytes(slot: number): number {
    return (this.best[slot] ?? NONE) === NONE ? 8 : 24;
  }
}
