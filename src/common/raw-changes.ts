// A view's change set whose rows stay value arrays until someone reads `changes`: the server's
// changelog and WebSocket encoders read the arrays by column position (rawChangesOf), so a row
// object per change is built only for a listener that asks for one.
import type { Change, ChangeOp, ErrorChange, SourcePositions, ViewChangeSet } from './changes.ts';
import { SluiceError } from './errors.ts';
import type { Row, Value } from './types.ts';

/** One change as a plain object (tests and benches; the engine gives a ChangeList). */
export interface RawChange {
  readonly op: ChangeOp;
  readonly row: readonly Value[];
  readonly n: number;
}

/** A change's kind as a ChangeList codes it: the index of its op here. */
const OPS: readonly ChangeOp[] = ['+I', '-D', '-U', '+U'];
export const KIND_INSERT = 0;
export const KIND_DELETE = 1;
export const KIND_UPDATE_BEFORE = 2;
export const KIND_UPDATE_AFTER = 3;
/** The largest delta a ChangeList codes (a row index takes the top 30 bits of an int32 code). */
const MAX_CODED_ROWS = 2 ** 29;

/** The codes of a list of `n` changes over a delta of `n` rows (each row one change at most). */
export function changeCodes(n: number): Int32Array {
  if (n >= MAX_CODED_ROWS) throw new SluiceError('INTERNAL_ERROR', `a view delta of ${n} rows`);
  return new Int32Array(n);
}

/**
 * One epoch's changes of a view as its Output pairs them, without an object per change: the
 * delta's rows as they are (an array of its own, never changed after the step), and per change its
 * row's index and kind in one int32 (index << 2 | kind). The Output's change list was 42% of what
 * the server allocated per request as one {op, row, n} object per change; this is one object and
 * at most one typed array per view per epoch. Built fresh each epoch, not reused, and holding none
 * of the delta's weights (a Reduce lends its weights array for one step only): the server holds a
 * change set until its group commit, and a listener may read `changes` epochs later.
 */
export class ChangeList {
  readonly length: number;

  /**
   * `codes`: per change, `rowIndex << 2 | kind`; null when change i is row i and an insertion (a
   * keyed view's delta with no retraction). `counts`: per change, its multiplicity; null when every
   * one is 1 (always, in a keyed view).
   */
  constructor(
    readonly rows: readonly (readonly Value[])[],
    private readonly codes: Int32Array | null,
    private readonly counts: readonly number[] | null,
  ) {
    this.length = codes === null ? rows.length : codes.length;
  }

  /** Change i as `rowIndex << 2 | kind` (its row is `rows[code >> 2]`, its kind a KIND_*): one call for both. */
  code(i: number): number {
    const codes = this.codes;
    return codes === null ? (i << 2) | KIND_INSERT : (codes[i] as number);
  }

  kind(i: number): ChangeOp {
    return OPS[this.code(i) & 3] as ChangeOp;
  }

  row(i: number): readonly Value[] {
    return this.rows[this.code(i) >> 2] as readonly Value[];
  }

  /** Change i's multiplicity (1 for every change of a keyed view). */
  count(i: number): number {
    const counts = this.counts;
    return counts === null ? 1 : (counts[i] as number);
  }

  /** The changes as objects (tests and benches). */
  toArray(): RawChange[] {
    const out: RawChange[] = [];
    for (let i = 0; i < this.length; i++) out.push({ op: this.kind(i), row: this.row(i), n: this.count(i) });
    return out;
  }

  /** A list of these changes (tests and benches; the engine's Output builds its own). */
  static of(changes: readonly RawChange[]): ChangeList {
    const codes = changeCodes(changes.length);
    for (let i = 0; i < changes.length; i++) codes[i] = (i << 2) | OPS.indexOf((changes[i] as RawChange).op);
    return new ChangeList(
      changes.map((c) => c.row),
      codes,
      changes.every((c) => c.n === 1) ? null : changes.map((c) => c.n),
    );
  }

  /**
   * A keyless view's delta as changes: +I or -D of each row, its |weight| times (the weights are
   * read now, not kept).
   */
  static ofWeighted(rows: readonly (readonly Value[])[], weights: readonly number[]): ChangeList {
    const n = rows.length;
    const codes = changeCodes(n);
    let counts: number[] | null = null;
    for (let i = 0; i < n; i++) {
      const w = weights[i] as number;
      codes[i] = (i << 2) | (w > 0 ? KIND_INSERT : KIND_DELETE);
      const m = w < 0 ? -w : w;
      if (m === 1) continue;
      if (counts === null) counts = new Array<number>(n).fill(1);
      counts[i] = m;
    }
    return new ChangeList(rows, codes, counts);
  }
}

/** Row objects built from change lists (a `changes` read), for tests: none on the server's path. */
export const changeObjectsBuilt = { count: 0 };

/** The value-array form behind a change set built by lazyChangeSet. */
export interface RawChanges {
  /** The view's column names, in the order of each row's values (all distinct). */
  readonly columns: readonly string[];
  readonly rows: ChangeList;
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
  const list = raw.rows;
  const out: Change[] = new Array(list.length);
  changeObjectsBuilt.count += list.length;
  for (let i = 0; i < list.length; i++) {
    const values = list.row(i);
    const row: Row = {};
    for (let k = 0; k < columns.length; k++) row[columns[k] as string] = values[k] as Value;
    const op = list.kind(i);
    const n = list.count(i);
    out[i] = n === 1 ? { op, row } : { op, row, n };
  }
  return out;
}
