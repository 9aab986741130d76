// NOT IN's part of a semi-join (semi-join-op.ts). `x NOT IN (S)` is true when S is empty, UNKNOWN
// when S holds a NULL or x is NULL, and otherwise true exactly when S lacks x: so beside the match
// counts by probe key (the operator's) it counts, per correlation group, the subquery's rows and its
// NULL values, holds the left rows whose value is NULL by group, and knows each group's probe keys.
// A right delta that moves a group's rows or NULLs across zero re-evaluates every left row of the
// group, other touched keys only theirs. A NULL correlation key meets no subquery row: NOT IN is true.
import type { Value } from '../../common/types.ts';
import type { RowFn } from '../../common/scalar-expr.ts';
import { Arrangement } from '../arrangement.ts';
import { JoinArrangement } from '../join-arrangement.ts';
import { NO_SLOT } from '../group-index.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import type { RowErrorSink } from '../operator.ts';
import type { ZBatch } from '../zset.ts';
import { keyEntryId, type JoinKey, type KeyFn } from '../join-key.ts';
import type { MatchCounts } from './semi-join-counts.ts';
import { type Emitted, emitBucket } from './semi-join-emit.ts';

/** Per correlation group, entries keyed by a small tag (ROWS, NULLS). */
type Counts = Arrangement<JoinKey, number, readonly Value[]>;

/** Tags of a group's two counts. */
const ROWS = 0;
const NULLS = 1;

const NO_KEYS: ReadonlySet<JoinKey> = new Set();

/** Where a left row stands: passed whatever the right side holds, or arranged under a key. */
type Placement =
  | { readonly kind: 'static'; readonly pass: boolean }
  | { readonly kind: 'keyed'; readonly key: JoinKey; readonly group: JoinKey }
  | { readonly kind: 'nullValue'; readonly group: JoinKey };

/** What NOT IN reads of its operator: its left rows, its match counts and its key functions. */
export interface NotInOperator {
  readonly nodeId: number;
  readonly correlated: number;
  readonly leftColumns: readonly ColumnSpec[];
  /** Left rows by probe key (correlation keys, then the value), shared with the operator. */
  readonly left: JoinArrangement;
  readonly right: MatchCounts;
  readonly leftKey: KeyFn;
  readonly leftGroup: KeyFn;
  readonly leftValue: RowFn;
  readonly rightKey: KeyFn;
  readonly rightGroup: KeyFn;
  /** The right row's key columns: the correlation keys, then the value. */
  readonly rightColumns: readonly number[];
  /** A probe key's match count as the right side is now. */
  matches(key: JoinKey): number;
}

/** Whether a left row passes, by its key's match count and its group's rows and NULL values. */
function passes(matches: number, rows: number, nulls: number): boolean {
  return rows === 0 || (nulls === 0 && matches === 0);
}

export class NotInGroups {
  /** Left rows whose value is NULL, by correlation group. */
  readonly leftNull: JoinArrangement;
  /** Per correlation group, its right rows and its NULL values. */
  readonly groups: Counts;
  /** The probe keys of the left rows of each group (derived from `left`, never stored). */
  private readonly byGroup = new Map<JoinKey, Set<JoinKey>>();

  constructor(private readonly op: NotInOperator) {
    const label = (what: string): string => `semi-join n${op.nodeId} ${what}`;
    const groupWidth = op.correlated;
    this.leftNull = new JoinArrangement(label('left NULL values'), 'N', (k) => keyEntryId(k, groupWidth));
    this.groups = new Arrangement<JoinKey, number, readonly Value[]>(label('group counts'), 'G', (k) =>
      keyEntryId(k, groupWidth),
    );
  }

  /** A group's right rows and NULL values. */
  groupCounts(group: JoinKey): readonly [number, number] {
    const bucket = this.groups.get(group);
    return [bucket?.rows.get(ROWS)?.count ?? 0, bucket?.rows.get(NULLS)?.count ?? 0];
  }

  /** The probe keys of a group's left rows. */
  keysOf(group: JoinKey): ReadonlySet<JoinKey> {
    return this.byGroup.get(group) ?? NO_KEYS;
  }

  /** The left delta (consolidated), by the right side as it is now: its passing rows go to `out`. */
  passLeft(delta: ZBatch, out: Emitted, errors: RowErrorSink): void {
    for (let i = 0; i < delta.rows.length; i++) {
      const row = delta.rows[i] as readonly Value[];
      const w = delta.weights[i] as number;
      let placed: Placement;
      try {
        placed = this.place(row);
      } catch (error) {
        errors.report(error, row, this.op.leftColumns, w);
        continue;
      }
      let pass: boolean;
      if (placed.kind === 'static') pass = placed.pass;
      else if (placed.kind === 'nullValue') {
        pass = this.groupCounts(placed.group)[0] === 0;
        this.leftNull.add(placed.group, row, w, 0);
      } else {
        const [groupRows, nulls] = this.groupCounts(placed.group);
        pass = passes(this.op.matches(placed.key), groupRows, nulls);
        this.addLeft(placed.key, placed.group, row, w);
      }
      if (pass) {
        out.rows.push(row);
        out.weights.push(w);
      }
    }
  }

  private place(row: readonly Value[]): Placement {
    const group = this.op.leftGroup(row);
    // A NULL correlation key: no subquery row meets it, so NOT IN is true.
    if (group === null) return { kind: 'static', pass: true };
    if (this.op.leftValue(row) === null) return { kind: 'nullValue', group };
    return { kind: 'keyed', key: this.op.leftKey(row) as JoinKey, group };
  }

  /**
   * The right delta (consolidated) counted by key and by correlation group (its rows, its NULL
   * values); a group whose rows or NULLs crossed zero re-evaluates all its left rows, other touched
   * keys only theirs. The flipped rows go to `out`.
   */
  foldRight(delta: ZBatch, out: Emitted): void {
    const op = this.op;
    const touchedKeys = new Map<JoinKey, { before: number; group: JoinKey }>();
    const touchedGroups = new Map<JoinKey, readonly [number, number]>();
    op.right.beginFold();
    const columns = op.rightColumns;
    const correlated = op.correlated;
    for (let i = 0; i < delta.rows.length; i++) {
      const row = delta.rows[i] as readonly Value[];
      const w = delta.weights[i] as number;
      const group = op.rightGroup(row);
      if (group === null) continue;
      const isNull = row[columns[correlated] as number] === null;
      if (!touchedGroups.has(group)) touchedGroups.set(group, this.groupCounts(group));
      const groupRow: Value[] = [];
      for (let c = 0; c < correlated; c++) groupRow.push(row[columns[c] as number] as Value);
      this.groups.add(group, ROWS, [...groupRow, ROWS], w, 0);
      if (isNull) {
        this.groups.add(group, NULLS, [...groupRow, NULLS], w, 0);
        continue;
      }
      const key = op.rightKey(row) as JoinKey;
      if (!touchedKeys.has(key)) touchedKeys.set(key, { before: op.matches(key), group });
      op.right.add(key, row, w);
    }
    const done = new Set<JoinKey>();
    for (const [group, [rows0, nulls0]] of touchedGroups) {
      const [rows1, nulls1] = this.groupCounts(group);
      if ((rows0 === 0) === (rows1 === 0) && (nulls0 === 0) === (nulls1 === 0)) continue;
      // The group's status changed: every left row of the group is evaluated again.
      if ((rows0 === 0) !== (rows1 === 0)) emitBucket(out, this.leftNull, group, rows1 === 0 ? 1 : -1);
      for (const key of this.inArrivalOrder(this.byGroup.get(group))) {
        done.add(key);
        const now = op.matches(key);
        const before = touchedKeys.get(key)?.before ?? now;
        const was = passes(before, rows0, nulls0);
        const is = passes(now, rows1, nulls1);
        if (was !== is) emitBucket(out, op.left, key, is ? 1 : -1);
      }
    }
    for (const [key, { before, group }] of touchedKeys) {
      if (done.has(key)) continue;
      const [groupRows, nulls] = this.groupCounts(group);
      const was = passes(before, groupRows, nulls);
      const is = passes(op.matches(key), groupRows, nulls);
      if (was !== is) emitBucket(out, op.left, key, is ? 1 : -1);
    }
    op.right.endFold();
  }

  /**
   * A group's keys by the arrival of their oldest arranged row: the order a checkpoint restores
   * (rows keep their arrival numbers), so a restored view emits a flip's changes in the same order
   * as the uninterrupted one.
   */
  private inArrivalOrder(keys: ReadonlySet<JoinKey> | undefined): JoinKey[] {
    if (keys === undefined) return [];
    const left = this.op.left;
    const firstSeq = (key: JoinKey): number => {
      const slot = left.slotOf(key);
      return slot === NO_SLOT ? 0 : left.seq(left.head(slot));
    };
    return [...keys]
      .map((key) => ({ key, seq: firstSeq(key) }))
      .sort((a, b) => a.seq - b.seq)
      .map((e) => e.key);
  }

  /** Arranges a left row under its key, noting the key under its group when the key comes or goes. */
  private addLeft(key: JoinKey, group: JoinKey, row: readonly Value[], w: number): void {
    const left = this.op.left;
    const had = left.slotOf(key) !== NO_SLOT;
    left.add(key, row, w, 0);
    const has = left.slotOf(key) !== NO_SLOT;
    if (had === has) return;
    let keys = this.byGroup.get(group);
    if (has) {
      if (keys === undefined) this.byGroup.set(group, (keys = new Set()));
      keys.add(key);
    } else if (keys !== undefined) {
      keys.delete(key);
      if (keys.size === 0) this.byGroup.delete(group);
    }
  }

  /**
   * Loads the NULL-valued left rows and the group counts from checkpoint entries (`storedGroup`: a
   * stored group entry's group), then the groups' keys from the operator's left rows, loaded first.
   */
  load(nullEntries: readonly unknown[], groupEntries: readonly unknown[], storedGroup: KeyFn): void {
    const op = this.op;
    this.leftNull.load(nullEntries, (row) => op.leftGroup(row) as JoinKey);
    this.groups.load(
      groupEntries,
      (row) => storedGroup(row) as JoinKey,
      (row) => row[op.correlated] as number,
    );
    this.byGroup.clear();
    const left = op.left;
    for (const key of left.keys()) {
      const first = left.row(left.head(left.slotOf(key)));
      const group = op.leftGroup(first) as JoinKey;
      let keys = this.byGroup.get(group);
      if (keys === undefined) this.byGroup.set(group, (keys = new Set()));
      keys.add(key);
    }
  }
}
