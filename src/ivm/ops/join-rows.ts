// The rows a join builds per match, as generated functions returning one array literal: V8 allocates
// a literal of known length inline and packed, where a sized `new Array(n)` filled in a loop was the
// join's largest self cost on the bids ⋈ auctions benchmark (a third of its time per match).
import type { Value } from '../../common/types.ts';
import { generatedFunction } from '../../common/generated-function.ts';

/** Builds the joined row of an arranged-side row and a delta row (or the delta row's pick of both). */
export type PairBuilder = (row: readonly Value[], other: readonly Value[]) => Value[];
/** Picks columns of one row. */
export type RowPicker = (row: readonly Value[]) => Value[];
/** Appends the picked columns of a pair to the output's column arrays (no row array is built). */
export type PairColumns = (row: readonly Value[], other: readonly Value[], cols: Value[][]) => void;

/** `PairColumns` with the arranged row given by its id in an arrangement's kept columns. */
export type PairKeptColumns = (
  row: readonly Value[],
  id: number,
  kept: readonly (readonly Value[])[],
  cols: Value[][],
) => void;

/** Longer rows are built by a loop (a literal of hundreds of elements gains nothing). */
const MAX_GENERATED = 64;

/**
 * The row of picked joined columns (`pick`: indexes into left then right, `leftWidth` columns on the
 * left) of a pair: `row` is the delta row, on the left when `deltaLeft`, `other` the arranged one.
 */
export function pairPicker(pick: Int32Array, leftWidth: number, deltaLeft: boolean): PairBuilder {
  const leftName = deltaLeft ? 'row' : 'other';
  const rightName = deltaLeft ? 'other' : 'row';
  if (pick.length > MAX_GENERATED) {
    return (row, other) => {
      const left = deltaLeft ? row : other;
      const right = deltaLeft ? other : row;
      const out = new Array<Value>(pick.length);
      for (let i = 0; i < pick.length; i++) {
        const j = pick[i] as number;
        out[i] = (j < leftWidth ? left[j] : right[j - leftWidth]) as Value;
      }
      return out;
    };
  }
  const cells = Array.from(pick, (j) =>
    j < leftWidth ? `${leftName}[${j}]` : `${rightName}[${j - leftWidth}]`,
  );
  return generated(['row', 'other'], cells) as PairBuilder;
}

/** `pairPicker`'s values appended to column arrays, one per picked column. */
export function pairColumns(pick: Int32Array, leftWidth: number, deltaLeft: boolean): PairColumns {
  if (pick.length > MAX_GENERATED) {
    const build = pairPicker(pick, leftWidth, deltaLeft);
    return (row, other, cols) => appendRow(build(row, other), cols);
  }
  const leftName = deltaLeft ? 'row' : 'other';
  const rightName = deltaLeft ? 'other' : 'row';
  const body = Array.from(
    pick,
    (j, i) => `cols[${i}].push(${j < leftWidth ? `${leftName}[${j}]` : `${rightName}[${j - leftWidth}]`});`,
  );
  // The text holds only the parameter names and integer positions.
  return generatedFunction('row', 'other', 'cols', body.join('\n')) as PairColumns;
}

/**
 * `pairColumns` reading the arranged side's values from its arrangement's kept columns (`kept[k][id]`)
 * instead of from its row: `row` is the delta row, `id` the arranged row's id. `keep` is given the
 * arranged side's picked columns and returns each one's k, or null when they cannot be kept; then
 * (or when too wide) this returns null.
 */
export function pairKeptColumns(
  pick: Int32Array,
  leftWidth: number,
  deltaLeft: boolean,
  keep: (columns: readonly number[]) => readonly number[] | null,
): PairKeptColumns | null {
  const cells = keptCells(pick, leftWidth, deltaLeft, keep);
  if (cells === null) return null;
  const body = cells.map((cell, i) => `cols[${i}].push(${cell});`);
  // The text holds only the parameter names and integer positions.
  return generatedFunction('row', 'id', 'kept', 'cols', body.join('\n')) as PairKeptColumns;
}

/**
 * The code of each picked column's value for the kept-column builders: `row[i]` on the delta's side,
 * `kept[k][id]` on the arranged side (k from `keep`); null when not kept or too wide.
 */
function keptCells(
  pick: Int32Array,
  leftWidth: number,
  deltaLeft: boolean,
  keep: (columns: readonly number[]) => readonly number[] | null,
): string[] | null {
  if (pick.length > MAX_GENERATED) return null;
  const theirs = (j: number): boolean => j < leftWidth !== deltaLeft;
  const at = (j: number): number => (j < leftWidth ? j : j - leftWidth);
  const arranged = Array.from(pick).filter(theirs).map(at);
  const ks = arranged.length === 0 ? [] : keep(arranged);
  if (ks === null) return null;
  let n = 0;
  return Array.from(pick, (j) => (theirs(j) ? `kept[${ks[n++] as number}][id]` : `row[${at(j)}]`));
}

/** `PairBuilder` with the arranged row given by its id in an arrangement's kept columns. */
export type PairKeptBuilder = (
  row: readonly Value[],
  id: number,
  kept: readonly (readonly Value[])[],
) => Value[];

/**
 * `pairPicker` reading the arranged side's values from its arrangement's kept columns (`kept[k][id]`),
 * as `pairKeptColumns` does for columns: a step of a few delta rows emits rows, and each match then
 * reads one kept cell instead of the arranged row array and its element (two dependent cache misses
 * once the arrangement outgrows the cache). `keep` as for `pairKeptColumns`; null when not kept.
 */
export function pairKeptPicker(
  pick: Int32Array,
  leftWidth: number,
  deltaLeft: boolean,
  keep: (columns: readonly number[]) => readonly number[] | null,
): PairKeptBuilder | null {
  const cells = keptCells(pick, leftWidth, deltaLeft, keep);
  return cells === null ? null : (generated(['row', 'id', 'kept'], cells) as PairKeptBuilder);
}

/** Appends a row's values to column arrays (one per value). */
export function appendRow(row: readonly Value[], cols: Value[][]): void {
  for (let c = 0; c < cols.length; c++) (cols[c] as Value[]).push(row[c] as Value);
}

/** The joined row of a pair (left columns, then right). */
export function pairJoiner(leftWidth: number, rightWidth: number, deltaLeft: boolean): PairBuilder {
  const pick = Int32Array.from({ length: leftWidth + rightWidth }, (_, i) => i);
  return pairPicker(pick, leftWidth, deltaLeft);
}

/** The row of `pick`'s columns of one row. */
export function rowPicker(pick: Int32Array): RowPicker {
  if (pick.length > MAX_GENERATED) {
    return (row) => {
      const out = new Array<Value>(pick.length);
      for (let i = 0; i < pick.length; i++) out[i] = row[pick[i] as number] as Value;
      return out;
    };
  }
  return generated(
    ['row'],
    Array.from(pick, (j) => `row[${j}]`),
  ) as RowPicker;
}

function generated(params: readonly string[], cells: readonly string[]): unknown {
  // The text holds only the parameter names and integer positions.
  return generatedFunction(...params, `return [${cells.join(', ')}];`);
}
