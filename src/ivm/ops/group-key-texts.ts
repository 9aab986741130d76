// The key texts of a Reduce's groups, for group keys whose equal values may print differently
// (numeric 1.5 and 1.50 are one group): per group, each key text with its rows' count, so the key
// shown is one a current row holds — the first in compareExactRows' order (the smallest scale), one
// answer whatever order rows came and left in (PostgreSQL shows the first row its scan meets).
import type { Value } from '../../common/types.ts';
import { encodeExactValues } from '../../common/values.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import { compareExactRows } from '../exact-rows.ts';

/** Key column types whose equal values always print alike (a float's -0 shows as 0: alike too). */
const ALWAYS_IDENTICAL: ReadonlySet<string> = new Set([
  'bool',
  'int',
  'float',
  'text',
  'date',
  'timestamp',
  'timestamptz',
  'time',
  'uuid',
  'bytea',
  'unknown',
]);

/** Whether a Reduce over these key columns needs its groups' key texts. */
export function keyTextsNeeded(keyColumns: readonly ColumnSpec[]): boolean {
  return keyColumns.some((c) => !ALWAYS_IDENTICAL.has(c.type.kind));
}

interface KeyText {
  readonly key: readonly Value[];
  n: number;
}

export class GroupKeyTexts {
  /** slot → exact encoding of a key → that key and its rows' count (counts may pass 0 in a batch). */
  private readonly bySlot = new Map<number, Map<string, KeyText>>();

  /** Counts `weight` rows of the group in `slot` with key values `key` (copied when new). */
  add(slot: number, key: readonly Value[], weight: number): void {
    let texts = this.bySlot.get(slot);
    if (texts === undefined) {
      texts = new Map();
      this.bySlot.set(slot, texts);
    }
    const k = encodeExactValues(key);
    const at = texts.get(k);
    if (at === undefined) texts.set(k, { key: key.slice(), n: weight });
    else at.n += weight;
  }

  /**
   * After a batch: drops the texts no row holds any more and returns the group's representative key,
   * or null when the group has no rows. The same array is returned while the representative does not
   * change, so a caller can compare by reference first.
   */
  settle(slot: number): readonly Value[] | null {
    const texts = this.bySlot.get(slot);
    if (texts === undefined) return null;
    let best: KeyText | null = null;
    for (const [k, t] of texts) {
      if (t.n === 0) {
        texts.delete(k);
        continue;
      }
      if (best === null || compareExactRows(t.key, best.key) < 0) best = t;
    }
    return best === null ? null : best.key;
  }

  release(slot: number): void {
    this.bySlot.delete(slot);
  }

  /** The group's texts as a checkpoint stores them. */
  entries(slot: number): [Value[], number][] {
    const texts = this.bySlot.get(slot);
    return texts === undefined ? [] : [...texts.values()].map((t) => [[...t.key], t.n]);
  }

  load(slot: number, entries: readonly (readonly [readonly Value[], number])[]): void {
    const texts = new Map<string, KeyText>();
    for (const [key, n] of entries) texts.set(encodeExactValues(key), { key, n });
    this.bySlot.set(slot, texts);
  }
}
