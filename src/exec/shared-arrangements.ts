// Arrangements shared by views: one per relation and key columns, holding that relation's rows with
// a non-NULL key, for every join (of any view) whose side reads the relation directly by that key.
// The graph folds the relation's delta into it once per epoch, before the first view that uses it
// steps, so every join probing it sees the epoch's new state (join-op.ts takes such a side's delta
// first). It is checkpointed as a part of its relation's object (rows with their arrival order, so
// a restored join emits an epoch's changes in the uninterrupted run's order); one missing from a
// checkpoint is refilled from the relation's rows.
import type { StateDelta } from '../common/state-delta.ts';
import type { Value } from '../common/types.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { compileKey, keyEntryId, type JoinKey, type KeyFn } from '../ivm/join-key.ts';
import { JoinArrangement, WARM_MAX_ROWS } from '../ivm/join-arrangement.ts';
import type { ZBatch } from '../ivm/zset.ts';
import { consolidate } from '../ivm/zset.ts';
import type { DeltaReader } from './epoch-deltas.ts';
import { TableJoinSide, type TableSlots } from '../ivm/join-table-side.ts';

interface Entry {
  readonly name: string;
  readonly relation: string;
  /** The key of a row, as the joins probing it compute theirs (plain columns: it never fails). */
  readonly keyOf: KeyFn;
  readonly arrangement: JoinArrangement;
  /** The epoch whose delta was folded in last. */
  epoch: number;
  users: number;
  /** Set at a checkpoint load: the rows are refilled from the relation before the next use. */
  stale: boolean;
}

export interface SharedArrangementInfo {
  /** `relation(columns)`, as EXPLAIN DATAFLOW names it. */
  readonly name: string;
  readonly relation: string;
  /** Joins (in all views) probing it. */
  readonly users: number;
  /** Distinct rows arranged. */
  readonly rows: number;
  readonly stateBytes: number;
}

export class SharedArrangements {
  private readonly byName = new Map<string, Entry>();
  private tracking = false;
  /** `fold`'s scratch: a small batch's keys. */
  private readonly keys: (JoinKey | null)[] = [];

  /**
   * `contentsOf`: a relation's current rows, as one insert-only batch. `tableSlotsOf`: a keyed
   * table's rows by slot (null: not a keyed table), for joins that read them (`tableSide`).
   */
  constructor(
    private readonly contentsOf: (relation: string) => ZBatch,
    private readonly tableSlotsOf: (relation: string) => TableSlots | null = () => null,
  ) {}

  /**
   * A join side reading the keyed table `relation`'s own rows (join-table-side.ts), or null when it
   * is not a keyed table (the join then arranges the side itself). It holds nothing: no user count.
   */
  tableSide(relation: string, side: 0 | 1): TableJoinSide | null {
    if (this.tableSlotsOf(relation) === null) return null;
    return new TableJoinSide(() => this.tableSlotsOf(relation) as TableSlots, side === 0 ? 'L' : 'R');
  }

  /**
   * The keyed table `relation`'s rows by slot, read afresh at each call (a reload replaces them), or
   * null when it is not a keyed table: for a semi-join whose match counts are the table's keys.
   */
  tableRows(relation: string): (() => TableSlots) | null {
    if (this.tableSlotsOf(relation) === null) return null;
    return () => this.tableSlotsOf(relation) as TableSlots;
  }

  /** The arrangement `name` of `relation` by `key`, filled from the relation's rows if new. */
  acquire(name: string, relation: string, key: readonly ScalarExpr[], epoch: number): JoinArrangement {
    let entry = this.byName.get(name);
    if (entry === undefined) {
      entry = {
        name,
        relation,
        keyOf: compileKey(key),
        arrangement: new JoinArrangement(`shared arrangement ${name}`, 'S', (k) => keyEntryId(k, key.length)),
        epoch,
        users: 0,
        stale: true,
      };
      entry.arrangement.trackChanges(this.tracking);
      this.byName.set(name, entry);
    }
    if (entry.stale) this.refill(entry, epoch);
    entry.users += 1;
    return entry.arrangement;
  }

  release(name: string): void {
    const entry = this.byName.get(name);
    if (entry === undefined) return;
    entry.users -= 1;
    if (entry.users <= 0) this.byName.delete(name);
  }

  /**
   * Brings the arrangements a view probes to `epoch` before it steps: folds each relation's delta
   * of this epoch in, once (`deltas` holds the epoch's deltas of tables and of the views stepped).
   */
  advance(names: readonly string[], deltas: DeltaReader, epoch: number): void {
    for (const name of names) {
      const entry = this.byName.get(name);
      if (entry === undefined || entry.epoch >= epoch) continue;
      if (entry.stale) this.refill(entry, epoch - 1);
      const delta = deltas.get(entry.relation);
      if (delta !== undefined) this.fold(entry, consolidate(delta));
      entry.epoch = epoch;
    }
  }

  trackChanges(on: boolean): void {
    this.tracking = on;
    for (const entry of this.byName.values()) entry.arrangement.trackChanges(on);
  }

  /** The checkpoint parts of the arrangements of `relation` (stored with its object). */
  parts(relation: string): { readonly stateId: string; takeStateDelta(full: boolean): StateDelta }[] {
    const out: { stateId: string; takeStateDelta(full: boolean): StateDelta }[] = [];
    for (const entry of this.byName.values()) {
      if (entry.relation !== relation) continue;
      out.push({
        stateId: stateIdOf(entry.name),
        // The arrangement's first delta (and its first after a refill) replaces everything.
        takeStateDelta: (full) => entry.arrangement.takeDelta(full),
      });
    }
    return out;
  }

  /**
   * At a checkpoint load: each arrangement takes its stored part (`stored(relation, stateId)`), or,
   * when there is none to take (the checkpoint lacks it, or its relation is rebuilt, so the stored
   * rows may not be the relation's), is refilled from its relation before its next use.
   */
  load(stored: (relation: string, stateId: string) => readonly unknown[] | undefined): void {
    for (const entry of this.byName.values()) {
      const entries = stored(entry.relation, stateIdOf(entry.name));
      if (entries === undefined) {
        entry.stale = true;
        entry.arrangement.clear();
        continue;
      }
      const keyOf = entry.keyOf;
      entry.arrangement.load(entries, (row) => keyOf(row) as JoinKey);
      entry.stale = false;
    }
  }

  /** Refills what `invalidate` marked, now (the relations hold the loaded state). */
  refillStale(epoch: number): void {
    for (const entry of this.byName.values()) if (entry.stale) this.refill(entry, epoch);
  }

  list(): SharedArrangementInfo[] {
    return [...this.byName.values()].map((e) => ({
      name: e.name,
      relation: e.relation,
      users: e.users,
      rows: e.arrangement.size,
      stateBytes: e.arrangement.stateBytes,
    }));
  }

  private refill(entry: Entry, epoch: number): void {
    // Clearing also marks what the store held of it as no longer applying.
    entry.arrangement.clear();
    this.fold(entry, this.contentsOf(entry.relation));
    entry.epoch = epoch;
    entry.stale = false;
  }

  private fold(entry: Entry, batch: ZBatch): void {
    const n = batch.rows.length;
    const keys = this.keys;
    // A small batch: keys first, then their records read in one pass (`warm`), then the adds.
    const warmed = n > 1 && n <= WARM_MAX_ROWS;
    if (warmed) {
      for (let i = 0; i < n; i++) keys[i] = entry.keyOf(batch.rows[i] as readonly Value[]);
      entry.arrangement.warm(keys, n);
    }
    for (let i = 0; i < n; i++) {
      const row = batch.rows[i] as readonly Value[];
      const key = warmed ? (keys[i] as JoinKey | null) : entry.keyOf(row);
      // NULL keys never match: such rows are not arranged (as in a join's own arrangement).
      if (key === null) continue;
      entry.arrangement.add(key, row, batch.weights[i] as number, 0);
    }
    if (warmed) keys.length = 0;
  }
}

/** The checkpoint state id of the shared arrangement `name` (`relation(columns)`). */
function stateIdOf(name: string): string {
  return `shared:${name}`;
}
