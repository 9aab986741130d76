// The Reduce's output-column builder: a step's changes leave column by column (a ColumnBatch of
// `cols` and `weights`), each group's -old taken from its record where the record mirrors it, else
// from its old row object.
import type { Value } from '../../common/types.ts';
import type { GroupRecords } from './aggregates.ts';
import { F_KEY, F_OUT, KEY_IN_RECORD, OUT_IN_RECORD } from './reduce-record.ts';

/** Empty output columns for rows `width` wide. */
export function changeColumns(width: number): Value[][] {
  const cols: Value[][] = new Array<Value[]>(width);
  for (let c = 0; c < width; c++) cols[c] = [];
  return cols;
}

/** +row: the group's new row (`row` may be a scratch row: its values are copied). */
export function pushInsert(weights: number[], cols: Value[][], row: readonly Value[]): void {
  weights.push(1);
  for (let c = 0; c < cols.length; c++) (cols[c] as Value[]).push(row[c] as Value);
}

/**
 * -old (`old` null: the record holds the whole row), its columns from the group's record where they
 * are mirrored there.
 */
export function pushRetraction(
  records: GroupRecords,
  slot: number,
  old: readonly Value[] | null,
  flags: number,
  keyCount: number,
  weights: number[],
  cols: Value[][],
): void {
  weights.push(-1);
  const data = records.data;
  const at = slot * records.stride;
  if ((flags & KEY_IN_RECORD) !== 0) (cols[0] as Value[]).push(data[at + F_KEY] as number);
  else for (let k = 0; k < keyCount; k++) (cols[k] as Value[]).push((old as Value[])[k] as Value);
  const nAggs = cols.length - keyCount;
  if ((flags & OUT_IN_RECORD) !== 0)
    for (let a = 0; a < nAggs; a++) (cols[keyCount + a] as Value[]).push(data[at + F_OUT + a] as number);
  else
    for (let a = 0; a < nAggs; a++)
      (cols[keyCount + a] as Value[]).push((old as Value[])[keyCount + a] as Value);
}
