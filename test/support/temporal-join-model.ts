// A from-scratch model of a processing-time temporal join, the oracle of test/temporal-join.test.ts
// and of Nexmark q13 (SQLite cannot say "as the right side was when this row arrived"): each epoch's
// left changes are summed per row (an exact row inserted and deleted in one batch is no change);
// each copy that arrives looks the right side up as it is at that epoch and keeps the output it
// gives; a retraction takes the oldest copies of the row and their outputs. The view is the multiset
// union of the outputs kept.
import type { Row } from '../../src/common/types.ts';

/** What one left row gives, given the right side's current rows (the SQL under test, in JavaScript). */
export type LookupFn = (left: Row, right: readonly Row[]) => Row[];

interface Arrival {
  count: number;
  readonly outputs: readonly Row[];
}

/** Rows as comparable text: bigints as numbers (the model computes with numbers). */
export function rowText(row: Row): string {
  return JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
}

export class TemporalJoinModel {
  private readonly arrivals = new Map<string, Arrival[]>();

  constructor(private readonly lookup: LookupFn) {}

  /** One epoch of the left side (`inserts` and `deletes` as full rows), against `right` as it is now. */
  apply(inserts: readonly Row[], deletes: readonly Row[], right: readonly Row[]): void {
    const net = new Map<string, { row: Row; count: number }>();
    for (const [rows, sign] of [
      [deletes, -1],
      [inserts, 1],
    ] as const) {
      for (const row of rows) {
        const key = rowText(row);
        const e = net.get(key) ?? { row, count: 0 };
        e.count += sign;
        net.set(key, e);
      }
    }
    for (const [key, { row, count }] of net) {
      if (count > 0) {
        const list = this.arrivals.get(key) ?? [];
        list.push({ count, outputs: this.lookup(row, right) });
        this.arrivals.set(key, list);
      } else if (count < 0) {
        let left = -count;
        const list = this.arrivals.get(key) ?? [];
        while (left > 0) {
          const first = list[0];
          if (first === undefined) throw new Error(`model: retracting absent row ${key}`);
          const k = Math.min(left, first.count);
          first.count -= k;
          left -= k;
          if (first.count === 0) list.shift();
        }
        if (list.length === 0) this.arrivals.delete(key);
      }
    }
  }

  /** The view's rows (each output once per copy of its left row). */
  rows(): Row[] {
    const out: Row[] = [];
    for (const list of this.arrivals.values())
      for (const a of list) for (let i = 0; i < a.count; i++) out.push(...a.outputs);
    return out;
  }
}

/** The multiset of `rows` as sorted text, for comparisons. */
export function multiset(rows: readonly Row[]): string[] {
  return rows.map(rowText).sort();
}
