// A view's change set whose rows stay value arrays until someone reads `changes`: the server's
// changelog and WebSocket encoders read the arrays by column position (rawChangesOf), so a row
// object per change is built only for a listener that asks for one.
import type { Change, ChangeOp, ErrorChange, SourcePositions, ViewChangeSet } from './changes.ts';
import type { Row, Value } from './types.ts';

/** One change as the engine's output operator gives it (multiplicity 1 when not a multiset change). */
export interface RawChange {
  readonly op: ChangeOp;
  readonly row: readonly Value[];
  readonly n: number;
}

/** The value-array form behind a change set built by lazyChangeSet. */
export interface RawChanges {
  /** The view's column names, in the order of each row's values (all distinct). */
  readonly columns: readonly string[];
  readonly rows: readonly RawChange[];
}

const rawForms = new WeakMap<ViewChangeSet, RawChanges>();

/**
 * A change set equal to { view, epoch, positions, changes, errors? } with `changes` built (once)
 * from `raw` on first read: `{op, row}` per change, with `n` when it is not 1.
 */
export function lazyChangeSet(
  view: string,
  epoch: number,
  positions: SourcePositions,
  raw: RawChanges,
  errors: readonly ErrorChange[],
): ViewChangeSet {
  let built: Change[] | null = null;
  const set: ViewChangeSet = {
    view,
    epoch,
    positions,
    get changes(): readonly Change[] {
      return (built ??= toChanges(raw));
    },
    ...(errors.length > 0 ? { errors } : {}),
  };
  rawForms.set(set, raw);
  return set;
}

/**
 * The same change set with its epoch's clock and the view's watermarks (the server's stored and
 * sent form), still lazy: its `changes` are the given set's.
 */
export function withTimeFields(
  given: ViewChangeSet,
  clock: string,
  watermarks: Readonly<Record<string, string | null>> | null,
): ViewChangeSet {
  const set: ViewChangeSet = {
    view: given.view,
    epoch: given.epoch,
    positions: given.positions,
    clock,
    ...(watermarks !== null ? { watermarks } : {}),
    get changes(): readonly Change[] {
      return given.changes;
    },
    ...(given.errors !== undefined ? { errors: given.errors } : {}),
  };
  const raw = rawForms.get(given);
  if (raw !== undefined) rawForms.set(set, raw);
  return set;
}

/** The value arrays behind a lazy change set (undefined for any other change set). */
export function rawChangesOf(set: ViewChangeSet): RawChanges | undefined {
  return rawForms.get(set);
}

function toChanges(raw: RawChanges): Change[] {
  const columns = raw.columns;
  const out: Change[] = new Array(raw.rows.length);
  for (let i = 0; i < raw.rows.length; i++) {
    const c = raw.rows[i] as RawChange;
    const row: Row = {};
    for (let k = 0; k < columns.length; k++) row[columns[k] as string] = c.row[k] as Value;
    out[i] = c.n === 1 ? { op: c.op, row } : { op: c.op, row, n: c.n };
  }
  return out;
}
