// Aggregates that read their rows in an order (`STRING_AGG(x, d ORDER BY y DESC)`): per group, a
// multiset of (value, order keys) tuples with their counts, kept sorted by the keys (ties by the
// value), so a change costs a binary search and the result is rebuilt per changed group.
import { decodeStored, encodeStored } from '../../common/json-codec.ts';
import type { RowFn } from '../../common/scalar-expr.ts';
import { compareByKeys, type SortKey } from '../../common/top-n.ts';
import type { Value } from '../../common/types.ts';
import { compareExact } from '../../common/values.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import type { AggColumn } from './aggregate-column.ts';
import { orderedArrayAgg } from './array-agg.ts';

/**
 * The Reduce's argument of an ordered aggregate: the value and its order keys as one stored text
 * (a Value the Reduce passes through untouched, and the key of the group's multiset); NULL when the
 * value is NULL, which the aggregate skips.
 */
export function orderedArgument(value: RowFn, keys: readonly RowFn[]): RowFn {
  return (row) => {
    const v = value(row);
    if (v === null) return null;
    const tuple: Value[] = [v];
    for (const k of keys) tuple.push(k(row));
    return encodeStored(tuple);
  };
}

/** One distinct (value, keys) tuple of a group and how many rows hold it. */
interface Entry {
  readonly text: string;
  /** [value, key 1, key 2, …] */
  readonly tuple: readonly Value[];
  count: number;
}

export class OrderedAggColumn implements AggColumn {
  /** Per group slot: tuple text → entry, and the entries in order. */
  private readonly groups: (Map<string, Entry> | undefined)[] = [];
  private readonly sorted: (Entry[] | undefined)[] = [];
  /** A batch's tuples per touched group, summed before they fold in. */
  private readonly partial = new Map<number, Map<string, number>>();
  private readonly compare: (a: Entry, b: Entry) => number;

  constructor(readonly spec: AggregateSpec & { readonly orderBy: readonly SortKey[] }) {
    // The keys sit after the value in a tuple; equal keys: by the value (equal values that print
    // differently, 1.5 and 1.50, by their text), so the result is one whatever the arrival order.
    const byKeys = compareByKeys(spec.orderBy.map((k, i) => ({ ...k, index: i + 1 })));
    this.compare = (a, b) =>
      byKeys(a.tuple, b.tuple) || compareExact(a.tuple[0] as Value, b.tuple[0] as Value);
  }

  clear(slot: number): void {
    this.groups[slot] = undefined;
    this.sorted[slot] = undefined;
  }

  resetPartial(slot: number): void {
    this.partial.delete(slot);
  }

  accumulate(slot: number, value: Value, weight: number): void {
    if (value === null) return;
    let p = this.partial.get(slot);
    if (p === undefined) {
      p = new Map();
      this.partial.set(slot, p);
    }
    const text = value as string;
    p.set(text, (p.get(text) ?? 0) + weight);
  }

  merge(slot: number): void {
    const p = this.partial.get(slot);
    if (p === undefined) return;
    this.partial.delete(slot);
    let group = this.groups[slot];
    let sorted = this.sorted[slot];
    if (group === undefined || sorted === undefined) {
      group = new Map();
      sorted = [];
      this.groups[slot] = group;
      this.sorted[slot] = sorted;
    }
    for (const [text, delta] of p) {
      if (delta === 0) continue;
      const entry = group.get(text);
      if (entry !== undefined) {
        entry.count += delta;
        if (entry.count === 0) {
          group.delete(text);
          sorted.splice(this.indexOf(sorted, entry), 1);
        }
        continue;
      }
      const added: Entry = { text, tuple: decodeStored(text) as Value[], count: delta };
      group.set(text, added);
      sorted.splice(this.lowerBound(sorted, added), 0, added);
    }
  }

  /** The first index whose entry is not before `e`. */
  private lowerBound(sorted: readonly Entry[], e: Entry): number {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(sorted[mid] as Entry, e) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Where `e` is (entries that compare equal are distinct tuples: numerics of one value, other scales). */
  private indexOf(sorted: readonly Entry[], e: Entry): number {
    let i = this.lowerBound(sorted, e);
    while (sorted[i] !== e) i++;
    return i;
  }

  result(slot: number): Value {
    const sorted = this.sorted[slot];
    if (sorted === undefined || sorted.length === 0) return null;
    if (this.spec.fn === 'array_agg') return orderedArrayAgg(sorted, this.spec.distinct); // array-agg.ts
    const parts: string[] = [];
    for (const e of sorted) {
      const n = this.spec.distinct ? 1 : e.count;
      for (let i = 0; i < n; i++) parts.push(e.tuple[0] as string);
    }
    return parts.join(this.spec.delimiter ?? '');
  }

  serialize(slot: number): unknown {
    // Copies of the (tuple, count) pairs: counts change in place after a checkpoint is taken.
    return { n: 0, s: 0, v: (this.sorted[slot] ?? []).map((e) => [e.text, e.count]) };
  }

  deserialize(slot: number, data: unknown): void {
    const pairs = (data as { v?: readonly (readonly [string, number])[] }).v ?? [];
    const group = new Map<string, Entry>();
    const sorted: Entry[] = [];
    for (const [text, count] of pairs) {
      const e: Entry = { text, tuple: decodeStored(text) as Value[], count };
      group.set(text, e);
      sorted.push(e);
    }
    sorted.sort(this.compare);
    this.groups[slot] = group;
    this.sorted[slot] = sorted;
  }

  bytes(slot: number): number {
    let n = 16;
    for (const e of this.sorted[slot] ?? []) n += 64 + 2 * e.text.length;
    return n;
  }
}
