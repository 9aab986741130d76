// An opt-in mode of the stateful operators for a one-off evaluation (an ad-hoc SELECT), whose output
// is read once, at the end. Fed its input a slice per step, an operator that emits its changes every
// step recomputes each changed group's aggregate (STRING_AGG, ARRAY_AGG, COUNT(DISTINCT) read the
// whole group) or partition (a window from its first changed row) once per slice: work that grows
// with the square of the input. Deferring, it absorbs the slices and only marks what changed; once
// the input is exhausted it emits the marked groups or partitions, a bounded number per step.

/** A stateful operator that can defer its output (see above). */
export interface DeferredOutput {
  /** Starts deferring (before the first step); false: the operator does not (its output is cheap). */
  deferOutput(): boolean;
  /** From the next step on, each step also emits a bounded part of what was deferred. */
  startDrain(): void;
  /** Whether deferred changes are still to be emitted (after which the operator emits as usual). */
  readonly draining: boolean;
}

export function isDeferredOutput(op: unknown): op is DeferredOutput {
  return (
    typeof op === 'object' && op !== null && typeof (op as Partial<DeferredOutput>).deferOutput === 'function'
  );
}

/** Groups a draining Reduce emits per step (each computes its aggregates once). */
export const DRAIN_GROUPS = 4096;
/** Slots a draining window recomputes per step, at least one whole partition. */
export const DRAIN_SLOTS = 65_536;
