// The key texts of a Reduce's groups, for group keys whose equal values may print differently
// (numeric 1.5 and 1.50 are one group): per group, each key text with its rows' count, so the key
// shown is one a current row holds — the first in compareExactRows' order (the smallest scale), one
// answer whatever order rows came and left in (PostgreSQL shows the first row its scan meets).
// A group almost always has one text: it is found by comparing values, with no string built; a
// group of many texts (a hostile input) is indexed by their exact encodings instead.
import type { Value } from '../../common/types.ts';
import { encodeExactValues, identicalValues } from '../../common/values.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import { compareExactRows, identicalRows } from '../exact-rows.ts';

/**
 * Key column types whose equal values always print alike — but for a float's 0 and -0 (`0`, `-0`):
 * one float key's zero group counts its -0 rows instead (zero-sign.ts, no texts kept), and a float
 * among several keys keeps the texts (such a Reduce has key arrays and the interpreted merge anyway).
 */
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
  return keyColumns.some(
    (c) => !ALWAYS_IDENTICAL.has(c.type.kind) || (c.type.kind === 'float' && keyColumns.length > 1),
  );
}

interface KeyText {
  readonly key: readonly Value[];
  /** Rows of the group with this text (may pass through 0 within a batch). */
  n: number;
}

interface Texts {
  readonly list: KeyText[];
  /** By exact encoding, once the list is longer than SCAN_LIMIT. */
  index: Map<string, KeyText> | null;
}

/** Texts a group holds before they are indexed rather than scanned. */
const SCAN_LIMIT = 8;

export class GroupKeyTexts {
  private readonly bySlot: (Texts | undefined)[] = [];

  /** Counts `weight` rows of the group in `slot` whose one key value is `value`. */
  addOne(slot: number, value: Value, weight: number): void {
    const texts = this.bySlot[slot];
    if (texts !== undefined && texts.index === null) {
      for (const t of texts.list) {
        if (identicalValues(t.key[0] as Value, value)) {
          t.n += weight;
          return;
        }
      }
    }
    this.add(slot, [value], weight);
  }

  /** Counts `weight` rows of the group in `slot` with key values `key` (kept, never changed). */
  add(slot: number, key: readonly Value[], weight: number): void {
    let texts = this.bySlot[slot];
    if (texts === undefined) {
      texts = { list: [], index: null };
      this.bySlot[slot] = texts;
    }
    if (texts.index === null) {
      for (const t of texts.list) {
        if (identicalRows(t.key, key)) {
          t.n += weight;
          return;
        }
      }
      const added: KeyText = { key, n: weight };
      texts.list.push(added);
      if (texts.list.length > SCAN_LIMIT)
        texts.index = new Map(texts.list.map((t) => [encodeExactValues(t.key), t]));
      return;
    }
    const k = encodeExactValues(key);
    const at = texts.index.get(k);
    if (at !== undefined) {
      at.n += weight;
      return;
    }
    const added: KeyText = { key, n: weight };
    texts.list.push(added);
    texts.index.set(k, added);
  }

  /**
   * After a batch: drops the texts no row holds any more and returns the group's representative key,
   * or null when the group has no rows. The same array is returned while the representative does not
   * change, so a caller can compare by reference first.
   */
  settle(slot: number): readonly Value[] | null {
    const texts = this.bySlot[slot];
    if (texts === undefined) return null;
    const list = texts.list;
    if (list.length === 1) return (list[0] as KeyText).n === 0 ? null : (list[0] as KeyText).key;
    let best: KeyText | null = null;
    let kept = 0;
    for (const t of list) {
      if (t.n === 0) {
        texts.index?.delete(encodeExactValues(t.key));
        continue;
      }
      list[kept++] = t;
      if (best === null || compareExactRows(t.key, best.key) < 0) best = t;
    }
    list.length = kept;
    if (kept <= SCAN_LIMIT) texts.index = null;
    return best === null ? null : best.key;
  }

  release(slot: number): void {
    this.bySlot[slot] = undefined;
  }

  /** The group's texts as a checkpoint stores them. */
  entries(slot: number): [Value[], number][] {
    return (this.bySlot[slot]?.list ?? []).map((t) => [[...t.key], t.n]);
  }

  load(slot: number, entries: readonly (readonly [readonly Value[], number])[]): void {
    this.release(slot);
    for (const [key, n] of entries) this.add(slot, key, n);
  }
}
