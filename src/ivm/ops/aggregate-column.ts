// The contract between a Reduce and its aggregates (aggregates.ts builds them): a column of one
// aggregate's per-group state, and the shared Float64Array records the numeric ones live in.
import type { Value } from '../../common/types.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';

export interface AggColumn {
  readonly spec: AggregateSpec;
  /** Empties a slot's state (a new group). */
  clear(slot: number): void;
  /**
   * Empties a group's partial before the Reduce stage first touches it in a batch. `p` is the
   * group's touch index in the batch: partials kept in the Reduce's dense per-batch array (rather
   * than beside the state in the group record) live at `p`; columns keeping partials elsewhere
   * key them by `slot`.
   */
  resetPartial(slot: number, p: number): void;
  /** Reduce stage: adds one input value with a weight into the group's partial. */
  accumulate(slot: number, value: Value, weight: number, p: number): void;
  /** Merge stage: folds the group's partial (touch index `p`) into its state. */
  merge(slot: number, p: number): void;
  /** The aggregate's value for a group holding `groupCount` rows. Throws on overflow. */
  result(slot: number, groupCount: number): Value;
  serialize(slot: number): unknown;
  deserialize(slot: number, data: unknown): void;
  bytes(slot: number): number;
}

/**
 * The Reduce's per-group numeric records: `stride` doubles per slot, row-major. The same shape holds
 * a batch's partials, `stride` doubles per touch index.
 */
export interface GroupRecords {
  data: Float64Array;
  readonly stride: number;
}

/** An aggregate's checkpointed state (invertible and multiset columns). */
export interface SerializedAgg {
  readonly n: number;
  readonly s: number | bigint;
  /** Float sums: the sum of the fractional parts (`s` then holds the integer parts' exact sum). */
  readonly f?: number;
  /** Float sums: how many +Infinity, -Infinity and NaN inputs the group holds. */
  readonly x?: readonly [number, number, number];
  /** Float SUMs: how many -0 inputs the group holds (its sum is -0 when all are). */
  readonly z?: number;
  readonly v?: readonly (readonly [Value, number])[];
}
