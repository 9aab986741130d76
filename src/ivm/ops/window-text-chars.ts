// What bounds the size of a STRING_AGG window's output: its values are texts as long as the arguments
// joined over their frames, so a row re-emitted by a write into a long partition can carry millions of
// characters. A write's epoch bound (view-join-fanout.ts) and a view's first build (the backfill
// budget) weigh each row such a window emits as 1 + ⌈C / 64⌉ rows, where C is a bound of its
// characters: those the rows of its partition give every STRING_AGG of the window (each non-NULL
// argument's and one delimiter's), which no frame of the partition can exceed. The sums are kept per
// partition as the arranged rows change and rebuilt from them on load: derived, never stored, so the
// checkpointed state is the arrangement's as before.
import type { Value } from '../../common/types.ts';
import type { WindowFn } from '../../common/window.ts';
import type { PartitionKey } from './partitioned-rows.ts';
import { chargeBudget, type JoinBudget } from './join-output-size.ts';

/** Characters of a STRING_AGG value that weigh as one more row emitted (2,000,000 rows ≈ 128 Mi). */
export const CHARS_PER_ROW = 64;

/** What `rows` emitted rows weigh when each value holds at most `chars` characters. */
export function textWeight(rows: number, chars: number): number {
  return rows === 0 ? 0 : rows * (1 + Math.ceil(chars / CHARS_PER_ROW));
}

/** A window's STRING_AGG characters per partition (present only when it has a STRING_AGG). */
export class WindowTextChars {
  private readonly byPartition = new Map<PartitionKey, number>();
  /** The sum over every partition: a bound for a partition a count cannot name. */
  total = 0;

  private constructor(private readonly texts: readonly WindowFn[]) {}

  /** Null for a window with no STRING_AGG: its rows weigh one each. */
  static of(functions: readonly WindowFn[]): WindowTextChars | null {
    const texts = functions.filter((f) => f.fn === 'string_agg' && f.arg !== null);
    return texts.length === 0 ? null : new WindowTextChars(texts);
  }

  /** The characters `row` adds to its partition's values: each non-NULL argument and a delimiter. */
  charsOf(row: readonly Value[]): number {
    let n = 0;
    for (const f of this.texts) {
      const v = row[f.arg as number];
      if (v === null || v === undefined) continue;
      n += (typeof v === 'string' ? v.length : String(v).length) + (f.delimiter?.length ?? 0);
    }
    return n;
  }

  /** `copies` copies of `row` into partition `key` (negative: out of it). */
  add(key: PartitionKey, row: readonly Value[], copies: number): void {
    const chars = copies * this.charsOf(row);
    if (chars === 0) return;
    const now = (this.byPartition.get(key) ?? 0) + chars;
    if (now === 0) this.byPartition.delete(key);
    else this.byPartition.set(key, now);
    this.total += chars;
  }

  held(key: PartitionKey): number {
    return this.byPartition.get(key) ?? 0;
  }

  clear(): void {
    this.byPartition.clear();
    this.total = 0;
  }

  /** Takes from a first build's budget what `slots` rows of partition `key` weigh (WindowOp.limitRows). */
  charge(budget: JoinBudget, key: PartitionKey, slots: number): void {
    const hint =
      'partition the window more finely or narrow the WHERE; a view may be created before its table is loaded';
    chargeBudget(budget, textWeight(slots, this.held(key)), 'STRING_AGG windows', hint);
  }

  /** Characters of rows `rows` (a write's, before it lands: a bound of what they add). */
  charsOfRows(rows: readonly (readonly Value[])[]): number {
    let n = 0;
    for (const row of rows) n += this.charsOf(row);
    return n;
  }
}

/** Characters of the texts among a slot's values (null: none yet), for its state's size. */
export function textChars(values: readonly Value[] | null): number {
  let n = 0;
  if (values !== null) for (const v of values) if (typeof v === 'string') n += v.length;
  return n;
}
