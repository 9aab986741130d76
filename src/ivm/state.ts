// Operator state as data, for checkpoints. Each stateful operator exports the entries that changed
// since its last export (or all of them, when new or asked to), keyed by a stable string, and can
// reload from entries. Values are plain JSON-able data except for bigint, which the codec handles.
import type { StateDelta } from '../common/state-delta.ts';

export type { StateDelta } from '../common/state-delta.ts';

export interface Stateful {
  /** Stable id: "<view>/<node kind><node index>" or "table:<name>". */
  readonly stateId: string;
  /** Starts (or stops) remembering which entries change; off by default so in-memory use pays nothing. */
  trackChanges(on: boolean): void;
  /**
   * Entries changed since the last call (everything if `full` or never exported), then forgets them.
   * The delta is a value: the operator never mutates an object it put into it afterwards (copy what
   * the next epoch updates in place), because a checkpoint is written in slices while epochs go on
   * and must hold the state of the epoch it was taken at. A large keyed state's entries may be a
   * copy-on-write snapshot (cow-snapshot.ts) instead of a copy: read them once, as they come (or
   * index them, which reads them whole into an array), before the next delta of the state is taken.
   */
  takeStateDelta(full: boolean): StateDelta;
  /** Replaces the whole state with these entry values. */
  loadState(values: Iterable<unknown>): void;
}

export function isStateful(x: unknown): x is Stateful {
  return typeof x === 'object' && x !== null && 'takeStateDelta' in x && 'loadState' in x;
}
