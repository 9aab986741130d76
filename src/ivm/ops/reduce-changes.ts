// The Reduce's output-column builder: a step's changes leave column by column (a ColumnBatch of
// columns and weights), each group's -old taken from its record where the record mirrors it, else
// from its old row object. The changes are written into scratch columns kept between steps and
// copied out at exactly their length: a one-row step no longer allocates a 16-slot array per column
// (grown by a first push), most of the garbage of an epoch at batch 1.
import type { Value } from '../../common/types.ts';
import { ColumnBatch } from '../zset.ts';
import type { GroupRecords } from './aggregates.ts';
import { F_KEY, F_OUT, KEY_IN_RECORD, OUT_IN_RECORD } from './reduce-record.ts';

/** Scratch kept between steps, in changes (a larger step's is dropped after it). */
const MAX_KEPT_CHANGES = 1 << 16;

export class ChangeBuffer {
  private readonly weights: number[] = [];
  private readonly cols: Value[][];
  private n = 0;

  constructor(private readonly width: number) {
    this.cols = Array.from({ length: width }, () => []);
  }

  /** +row: the group's new row (`row` may be a scratch row: its values are copied). */
  insert(row: readonly Value[]): void {
    const i = this.n++;
    this.weights[i] = 1;
    const cols = this.cols;
    for (let c = 0; c < cols.length; c++) (cols[c] as Value[])[i] = row[c] as Value;
  }

  /**
   * -old (`old` null: the record holds the whole row), its columns from the group's record where
   * they are mirrored there.
   */
  retract(
    records: GroupRecords,
    slot: number,
    old: readonly Value[] | null,
    flags: number,
    keyCount: number,
  ): void {
    const i = this.n++;
    this.weights[i] = -1;
    const cols = this.cols;
    const data = records.data;
    const at = slot * records.stride;
    if ((flags & KEY_IN_RECORD) !== 0) (cols[0] as Value[])[i] = data[at + F_KEY] as number;
    else for (let k = 0; k < keyCount; k++) (cols[k] as Value[])[i] = (old as Value[])[k] as Value;
    const nAggs = cols.length - keyCount;
    if ((flags & OUT_IN_RECORD) !== 0)
      for (let a = 0; a < nAggs; a++) (cols[keyCount + a] as Value[])[i] = data[at + F_OUT + a] as number;
    else
      for (let a = 0; a < nAggs; a++)
        (cols[keyCount + a] as Value[])[i] = (old as Value[])[keyCount + a] as Value;
  }

  /** The changes written since the last take, as a batch of their own arrays; the buffer empties. */
  take(): ColumnBatch {
    const n = this.n;
    this.n = 0;
    const width = this.width;
    const cols = new Array<Value[]>(width);
    for (let c = 0; c < width; c++) cols[c] = copy(this.cols[c] as Value[], n);
    const weights = copy(this.weights, n);
    if (n > MAX_KEPT_CHANGES) {
      this.weights.length = 0;
      for (const col of this.cols) col.length = 0;
    }
    return new ColumnBatch(cols, weights);
  }

  /** Drops the changes of a step that threw. */
  clear(): void {
    this.n = 0;
  }
}

/**
 * The first n values of `from`, as an array of exactly that length. One or two changes (a step of
 * batch 1: a group's -old/+new) are array literals, allocated inline, where `slice` is a call into
 * the runtime that cost more than the copy.
 */
function copy<V>(from: readonly V[], n: number): V[] {
  if (n === 2) return [from[0] as V, from[1] as V];
  if (n === 1) return [from[0] as V];
  return from.slice(0, n);
}
