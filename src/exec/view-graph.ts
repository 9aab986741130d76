// Every view's dataflow as one graph. Views are kept in creation order, which is topological: a view
// reads tables and views created before it. An epoch's table delta flows through the graph once —
// each view that reads a changed relation steps, and its output delta passes to the views built on
// it (handed to a plain chain view, else through the epoch's deltas by name) — so a view over a
// view (or over a join of a table with a view over that table) sees the same epoch as its inputs. A
// view created over existing data, or rebuilt at checkpoint load, is filled by one path: a first
// step over the current contents of what it reads.
import { SluiceError } from '../common/errors.ts';
import type { DataflowPlan } from '../ivm/dataflow-plan.ts';
import type { ZBatch } from '../ivm/zset.ts';
import { emptyBatch, isEmpty } from '../ivm/zset.ts';
import { EpochDeltas } from './epoch-deltas.ts';
import { backfillAllowance, backfillBudget, keylessBackfillPairs, viewTooLarge } from './backfill-bound.ts';
import type { WindowCloseOp } from '../ivm/ops/window-close-op.ts';
import { SharedArrangements } from './shared-arrangements.ts';
import type { TableSlots } from '../ivm/join-table-side.ts';
import { VALUES_INPUT, ViewRuntime } from './view-runtime.ts';
import { type EpochDelta, type WrittenRows } from './view-join-fanout.ts';
import { countingInsertions } from './epoch-insertions.ts';
import { PartitionPool, validWorkers } from './workers/partition-pool.ts';
import type { PartitionedReduce } from './workers/partitioned-reduce.ts';
import { batchSize } from './workers/partition-batch.ts';
import type { FoldSpec } from './workers/partition-protocol.ts';

export interface GraphView {
  readonly name: string;
  readonly runtime: ViewRuntime;
  /** Relations the view reads, each once. */
  readonly reads: readonly string[];
}

/**
 * Which views an epoch must look at: by relation, the positions (in creation order) of the views
 * that read it; and the views looked at every epoch (window-close and temporal ones, which step on
 * the clock or a watermark as well as on input).
 */
interface WakeIndex {
  readonly readers: ReadonlyMap<string, readonly number[]>;
  /** By position: the readers of that view's output. */
  readonly readersOfView: readonly (readonly number[])[];
  /**
   * By position: what besides a change makes the view do more than step (`LOOKED_AT_ALWAYS`,
   * `WINDOW_CLOSE`, `TEMPORAL`, `SHARED`; none for most views), so a changed view costs no loads of its
   * runtime's lists of closing Reduces, temporal filters and shared arrangements; and how its input
   * and output pass (`HANDED`, `BY_NAME`).
   */
  readonly flags: Uint8Array;
  /** The last delta name looked up in `readers`, and its readers: an epoch's table is usually the last one's. */
  lastName: string | null;
  lastReaders: readonly number[] | undefined;
  /** Whether the last name looked up has a reader that finds its delta by name (not `HANDED`). */
  lastByName: boolean;
  /** The relations some reader finds by name in the epoch's deltas (`BY_NAME`, tables included). */
  readonly readByName: ReadonlySet<string>;
  /** Whether some view has a temporal filter (its step reads the epoch's clock). */
  readonly temporal: boolean;
  /**
   * By table: the views a write to it changes, in creation order, up to the last one with a join
   * (none when no join is among them): what joinRowsBuilt walks. Filled as tables are written.
   */
  readonly joinedFrom: Map<string, readonly GraphView[]>;
  /**
   * Whether some view has a join or a semi-join: without one, a write's join count is nothing, looked
   * up nowhere.
   */
  readonly anyJoin: boolean;
}

/** `WakeIndex.flags`: the view is looked at every epoch (it has one of the two below). */
const LOOKED_AT_ALWAYS = 1;
/** It has EMIT ON WINDOW CLOSE Reduces (they step when a watermark moves). */
const WINDOW_CLOSE = 2;
/** It has temporal filters (they step when the clock reaches them). */
const TEMPORAL = 4;
/** Its joins probe shared arrangements (advanced before it steps). */
const SHARED = 8;
/** The flags that make the graph do more than step a changed view. */
const LOOKED_AT = LOOKED_AT_ALWAYS | WINDOW_CLOSE | TEMPORAL | SHARED;
/**
 * A plain chain (ViewRuntime.stepChain) with none of the flags above: it steps only when the one
 * relation it reads changed, and is handed that relation's delta as the graph stamps it, not left
 * to find it in the epoch's deltas by name.
 */
const HANDED = 16;
/**
 * Some reader finds the view's delta in the epoch's deltas by name (it is not `HANDED`: its step, or
 * its shared arrangements' advance, looks the relations it reads up there). A view none of whose
 * readers does is not written there: only the graph hands its delta on.
 */
const BY_NAME = 32;

/** What a write to a table no view joins makes the joins build. */
const NO_JOIN_ROWS = { rows: 0, view: '' } as const;

/** What a view's slot of `WakeIndex.handed` holds when no delta waits for it. */
const NONE: ZBatch = emptyBatch();

function readersOf(index: WakeIndex, name: string): readonly number[] | undefined {
  if (name === index.lastName) return index.lastReaders;
  const readers = index.readers.get(name);
  index.lastName = name;
  index.lastReaders = readers;
  index.lastByName = index.readByName.has(name);
  return readers;
}

/** Stamps the readers of a changed relation, and leaves them its delta (`HANDED` views read it). */
function wakeAll(
  positions: readonly number[] | undefined,
  wake: Int32Array,
  stamp: number,
  handed: ZBatch[],
  delta: ZBatch,
): void {
  if (positions !== undefined)
    for (let i = 0; i < positions.length; i++) {
      const v = positions[i] as number;
      wake[v] = stamp;
      handed[v] = delta;
    }
}

export class ViewGraph {
  private readonly byName = new Map<string, GraphView>();
  private order: GraphView[] = [];
  /** Built at the first epoch after the views changed (null until then). */
  private wakeIndex: WakeIndex | null = null;
  /** By position: the epoch stamp at which something the view reads changed. */
  private wake = new Int32Array(0);
  /**
   * By position: the delta of the relation that woke the view this epoch (the one a `HANDED` view
   * reads); emptied as the view steps, so no batch outlives its epoch.
   */
  private handed: ZBatch[] = [];
  private stamp = 0;
  /** The views the last epoch stepped (runEpoch's result, reused). */
  private readonly stepped: GraphView[] = [];
  /** Arrangements of relations by key that joins of every view probe (shared-arrangements.ts). */
  readonly shared: SharedArrangements;
  /**
   * The relations' deltas of the write being counted (joinRows), empty between counts. Handed to each
   * view's count as the map itself, not as a closure over it: a closure is a new function for each
   * graph, and V8's optimised count, having inlined the first graph's, is thrown away at the
   * process's second graph ("wrong call target"), whose first epochs then run it unoptimised.
   */
  private readonly countDeltas = new Map<string, EpochDelta>();
  /** The worker threads of partitioned Reduces (null: one worker, everything on this thread). */
  private pool: PartitionPool | null = null;

  /** `tableContents`: the current rows of a table (as one insert-only batch), or null for a non-table. */
  /** `watermarkOf`: a table's watermark in µs (null: none yet, or no watermark), for EMIT ON WINDOW CLOSE. */
  /** `tableSlots`: a keyed table's rows by slot (null: none), for joins reading them (join-table-side.ts). */
  /** `changed`: told when a view is added, replaced or removed (what the owner derives from them goes stale). */
  constructor(
    private readonly tableContents: (name: string) => ZBatch | null,
    private readonly watermarkOf: (table: string) => number | null = () => null,
    private readonly changed: () => void = () => undefined,
    tableSlots: (name: string) => TableSlots | null = () => null,
  ) {
    this.shared = new SharedArrangements((relation) => this.contentsOf(relation), tableSlots);
  }

  /**
   * A runtime for `plan` holding the result over the current contents of its inputs at `epoch`:
   * the one backfill path (CREATE MATERIALIZED VIEW over existing data, and a view rebuilt because
   * its checkpointed state does not fit its plan). Not yet part of the graph. With a finite
   * `maxRows` (a new view; not replay or a rebuild, which were accepted once) its joins may build at
   * most that many rows plus three per row its inputs hold: keyless joins are counted before anything is
   * built, every join while the step runs, and past the bound it throws VIEW_TOO_LARGE having kept
   * nothing (backfill-bound.ts).
   */
  build(plan: DataflowPlan, epoch: number, clock: number, maxRows = Infinity): ViewRuntime {
    const sources = plan.nodes.flatMap((n) => (n.kind === 'input' ? [n.source] : []));
    const contents = new Map<string, ZBatch>();
    const contentsOf = (source: string): ZBatch => {
      let batch = contents.get(source);
      if (batch === undefined) contents.set(source, (batch = this.contentsOf(source)));
      return batch;
    };
    const bound = Number.isFinite(maxRows) ? backfillAllowance(plan, contentsOf, maxRows) : null;
    if (bound !== null) {
      const { pairs } = keylessBackfillPairs(plan, contentsOf);
      if (pairs > bound.allowed) throw viewTooLarge(plan.view, pairs, { maxRows, ...bound });
    }
    const runtime = new ViewRuntime(plan, null, { registry: this.shared, epoch }, this.pool);
    const inputs = new EpochDeltas();
    for (const source of sources) inputs.set(source, contentsOf(source));
    // VALUES in FROM: its rows are part of the result from the start, and never change after.
    if (runtime.hasValuesInput()) inputs.set(VALUES_INPUT, emptyBatch());
    runtime.setWatermarks(this.watermarkOf);
    const budget = bound === null ? null : backfillBudget(bound.allowed);
    runtime.limitJoinRows(budget);
    try {
      // The shared arrangements already hold these rows: the joins take them as their new state.
      runtime.step(inputs, epoch, clock);
    } catch (error) {
      this.release(runtime);
      if (bound !== null && budget !== null && budget.remaining < 0)
        throw viewTooLarge(plan.view, null, { maxRows, inputRows: bound.inputRows });
      throw error;
    } finally {
      runtime.limitJoinRows(null);
    }
    // The backfill is state, not news: its error appearances are not an epoch's changes.
    runtime.takeErrorChanges();
    return runtime;
  }

  /** Adds a view after every view it reads (it must be newer than them: creation order). */
  add(name: string, runtime: ViewRuntime): void {
    const view: GraphView = { name, runtime, reads: [...new Set(runtime.sources())] };
    this.byName.set(name, view);
    this.order.push(view);
    this.wakeIndex = null;
    this.changed();
    this.linkFolds();
  }

  /** Swaps a view's runtime in place (same position in the graph). */
  replace(name: string, runtime: ViewRuntime): void {
    const old = this.byName.get(name);
    if (old !== undefined && old.runtime !== runtime) this.release(old.runtime);
    const at = this.order.findIndex((v) => v.name === name);
    const view: GraphView = { name, runtime, reads: [...new Set(runtime.sources())] };
    this.byName.set(name, view);
    if (at >= 0) this.order[at] = view;
    else this.order.push(view);
    this.wakeIndex = null;
    this.changed();
    this.linkFolds();
  }

  remove(name: string): void {
    const view = this.byName.get(name);
    if (view === undefined) return;
    this.byName.delete(name);
    this.release(view.runtime);
    this.order = this.order.filter((v) => v.name !== name);
    this.wakeIndex = null;
    this.changed();
    // The last epoch's list would keep the dropped view's state alive until the next epoch.
    this.stepped.length = 0;
    this.linkFolds();
  }

  /**
   * With workers: links each COUNT(*) Reduce over a view to the partitioned Reduce whose output is
   * that view's delta, which then folds its changes for it in the partitions (workers/folding-reduce.ts).
   */
  private linkFolds(): void {
    if (this.pool === null) return;
    const folds = new Map<PartitionedReduce, FoldSpec[]>();
    for (const view of this.order) {
      const upstream = view.runtime.partitionedOutput();
      if (upstream !== null && !folds.has(upstream)) folds.set(upstream, []);
      for (const folding of view.runtime.folding) {
        const from = this.byName.get(folding.source)?.runtime.partitionedOutput() ?? null;
        const specs = from === null ? undefined : folds.get(from);
        if (from === null || specs === undefined) {
          folding.link(null, -1);
          continue;
        }
        folding.link(from, specs.length);
        specs.push(folding.spec);
      }
    }
    for (const [upstream, specs] of folds) upstream.setFolds(specs);
  }

  /** Gives back what a built runtime that will not join the graph holds (its statement failed). */
  discard(runtime: ViewRuntime): void {
    this.release(runtime);
  }

  /**
   * Gives back the shared arrangements a runtime probes (the last user's goes with it) and its
   * partitions in the worker threads.
   */
  private release(runtime: ViewRuntime): void {
    for (const name of runtime.sharedArrangements) this.shared.release(name);
    runtime.close();
  }

  /**
   * The `workers` setting (1 by default): with more, the Reduces that can be partitioned run in that
   * many hash partitions on worker threads (workers/). Set before the first view is built: views
   * already built keep the form they were built in.
   */
  setWorkers(workers: number): void {
    const n = validWorkers(workers);
    if (n === (this.pool?.partitions ?? 1)) return;
    if (this.order.length > 0)
      throw new SluiceError('INTERNAL_ERROR', 'the worker count is set before the first view is built');
    this.pool?.close();
    this.pool = n === 1 ? null : new PartitionPool(n);
  }

  /** How many workers run the partitioned Reduces (1: none, all on this thread). */
  get workers(): number {
    return this.pool?.partitions ?? 1;
  }

  /** Ends the worker threads (the engine is closed); the graph is not used after. */
  close(): void {
    for (const view of this.order) view.runtime.close();
    this.pool?.close();
  }

  get(name: string): ViewRuntime | undefined {
    return this.byName.get(name)?.runtime;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** EMIT ON WINDOW CLOSE views, in creation order, with their window-close Reduces. */
  closingViews(): { readonly name: string; readonly ops: readonly WindowCloseOp[] }[] {
    return this.order
      .filter((v) => v.runtime.closing.length > 0)
      .map((v) => ({ name: v.name, ops: v.runtime.closing }));
  }

  /** Runtimes in graph (creation) order. */
  runtimes(): IterableIterator<ViewRuntime> {
    return this.order.map((v) => v.runtime).values();
  }

  /** The earliest clock value at which some view's temporal filter changes (Infinity: none). */
  nextDue(): number {
    let due = Infinity;
    for (const v of this.order) if (v.runtime.temporal.length > 0) due = Math.min(due, v.runtime.nextDue());
    return due;
  }

  /** Whether some view has a temporal filter (only then do clock ticks matter, or epochs read the clock). */
  hasTemporal(): boolean {
    return (this.wakeIndex ?? this.buildWakeIndex()).temporal;
  }

  /**
   * Rows the views' joins would build at most in an epoch that writes `rows` rows to `table`,
   * reading no row (counts alone down each view, view-join-fanout.ts): cheap, and at least what
   * joinRowsBuilt counts.
   */
  joinRowsCeiling(table: string, rows: number): number {
    return this.joinRows(table, rows, false).rows;
  }

  /**
   * Rows the views' joins would build in an epoch that writes `written` to `table`, summed, and
   * the view whose joins build the most: known before the epoch changes anything. The written rows
   * go down every view the write changes (a view's output delta into the views over it), and each
   * join probes the other side by key where its side's key is known (view-join-fanout.ts).
   */
  joinRowsBuilt(table: string, written: WrittenRows): { readonly rows: number; readonly view: string } {
    const { deletes, inserts } = written;
    const rows = deletes.length === 0 ? inserts : inserts.length === 0 ? deletes : [...deletes, ...inserts];
    const count = (): { readonly rows: number; readonly view: string } =>
      this.joinRows(table, { rows, known: null }, true);
    // Signs marked only for a view whose count reads them (a semi-join's, a ranked Top-N's).
    if (!this.joinedFrom(table).some((v) => v.runtime.readsSigns)) return count();
    // The rows as read once here: a columnar batch builds new row objects at each read of `inserts`.
    return countingInsertions({ deletes, inserts }, count);
  }

  private joinRows(
    table: string,
    written: EpochDelta,
    exact: boolean,
  ): { readonly rows: number; readonly view: string } {
    // Every write asks (the canonical pipeline's one-row epochs too): a graph without a join answers
    // from one flag, not a look-up by the table's name.
    if (!(this.wakeIndex ?? this.buildWakeIndex()).anyJoin) return NO_JOIN_ROWS;
    const views = this.joinedFrom(table);
    if (views.length === 0) return NO_JOIN_ROWS;
    // One map and one look-up function for every write (the row-free pass runs on each one).
    const deltas = this.countDeltas;
    deltas.set(table, written);
    let rows = 0;
    let most = -1;
    let view = '';
    try {
      for (let i = 0; i < views.length; i++) {
        const graphView = views[i] as GraphView;
        // A view after this one in the list has a join, and may read this one's output.
        const bound = graphView.runtime.epochDeltaBound(deltas, exact, i < views.length - 1);
        if (bound.output !== 0) deltas.set(graphView.name, bound.output);
        rows += bound.built;
        if (bound.built > most) {
          most = bound.built;
          view = graphView.name;
        }
      }
    } finally {
      deltas.clear();
    }
    return { rows, view };
  }

  /** The views a write to `table` changes, up to the last with a join (WakeIndex.joinedFrom). */
  private joinedFrom(table: string): readonly GraphView[] {
    const index = this.wakeIndex ?? this.buildWakeIndex();
    let views = index.joinedFrom.get(table);
    if (views !== undefined) return views;
    const reached = new Set<number>();
    const pending = [...(index.readers.get(table) ?? [])];
    while (pending.length > 0) {
      const v = pending.pop() as number;
      if (reached.has(v)) continue;
      reached.add(v);
      for (const r of index.readersOfView[v] ?? []) pending.push(r);
    }
    const positions = [...reached].sort((x, y) => x - y);
    // A semi-join counts only when the write reaches its subquery side (its outer side passes rows).
    const changed = new Set([table, ...positions.map((v) => (this.order[v] as GraphView).name)]);
    const counts = (runtime: GraphView['runtime']): boolean =>
      runtime.hasJoin || [...runtime.subquerySources].some((source) => changed.has(source));
    let last = -1;
    positions.forEach((v, i) => {
      if (counts((this.order[v] as GraphView).runtime)) last = i;
    });
    views = positions.slice(0, last + 1).map((v) => this.order[v] as GraphView);
    index.joinedFrom.set(table, views);
    return views;
  }

  /**
   * Runs one epoch at logical clock `clock`: `deltas` holds the changed tables' deltas and receives
   * the delta of every stepped view that a reader looks up by name (`BY_NAME`; a `HANDED` reader is
   * given it instead). A view steps when it reads a change or its temporal filter is due.
   * Returns the views that stepped, in order (their changes are ready to read): one list reused by
   * every epoch, valid until the next call.
   */
  runEpoch(
    deltas: EpochDeltas,
    epoch: number,
    clock: number,
    written: string | null = null,
    writtenDelta: ZBatch = NONE,
  ): readonly GraphView[] {
    // Allocates nothing of its own: at batch size 1 this loop runs once per event.
    const stepped = this.stepped;
    // With workers a view's delta may be a partitioned Reduce's changes, counted without merging them.
    const unmerged = this.pool !== null;
    // Written by index and cut once at the end: `length = 0` first would free the slots, and the
    // next store would allocate them again.
    let count = 0;
    const order = this.order;
    // A view none of whose inputs changed, with no clock or watermark to wait for, is passed over
    // on one load: with many views, most have nothing to do in a small epoch.
    const index = this.wakeIndex ?? this.buildWakeIndex();
    if (++this.stamp > 0x3fffffff) {
      this.wake.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    const wake = this.wake;
    const handed = this.handed;
    // Only the readers of a delta with rows are stamped (a table's may be empty: its late rows
    // dropped), and a view's delta is passed on only when it has rows: so a view is stamped
    // exactly when it reads a change, and that needs no look through the deltas by name.
    // The written table's delta is handed to its readers, and joins `deltas` only for one that reads
    // it by name (no scan and append of the epoch's deltas for the canonical views' one-row epoch).
    if (written !== null && !isEmpty(writtenDelta)) {
      wakeAll(readersOf(index, written), wake, stamp, handed, writtenDelta);
      if (index.lastByName) deltas.set(written, writtenDelta);
    }
    for (let i = 0; i < deltas.size; i++) {
      const delta = deltas.batchAt(i);
      const name = deltas.nameAt(i);
      if (name !== written && !isEmpty(delta)) wakeAll(readersOf(index, name), wake, stamp, handed, delta);
    }
    const flagsOf = index.flags;
    for (let v = 0; v < order.length; v++) {
      const changed = wake[v] === stamp;
      const flags = flagsOf[v] as number;
      if (!changed && (flags & LOOKED_AT_ALWAYS) === 0) continue;
      const view = order[v] as GraphView;
      const runtime = view.runtime;
      let delta: ZBatch;
      if ((flags & HANDED) !== 0) {
        delta = runtime.stepChain(handed[v] as ZBatch, epoch);
      } else {
        if ((flags & LOOKED_AT) !== 0) {
          // A window-close view also steps when its table's watermark reaches an open window's end.
          const closes = (flags & WINDOW_CLOSE) !== 0 && runtime.setWatermarks(this.watermarkOf);
          if (!closes && !changed && ((flags & TEMPORAL) === 0 || runtime.nextDue() > clock)) continue;
          if ((flags & SHARED) !== 0) this.shared.advance(runtime.sharedArrangements, deltas, epoch);
        }
        delta = runtime.step(deltas, epoch, clock);
      }
      // Every stamped view steps this epoch (a change always steps it): its slot is emptied here.
      handed[v] = NONE;
      if (unmerged ? batchSize(delta) !== 0 : !isEmpty(delta)) {
        if ((flags & BY_NAME) !== 0) deltas.set(view.name, delta);
        wakeAll(index.readersOfView[v], wake, stamp, handed, delta);
      }
      stepped[count++] = view;
    }
    if (stepped.length !== count) stepped.length = count; // even an unchanged length is a runtime call
    return stepped;
  }

  private buildWakeIndex(): WakeIndex {
    const readers = new Map<string, number[]>();
    const flags = new Uint8Array(this.order.length);
    this.order.forEach((view, v) => {
      for (const name of view.reads) {
        const list = readers.get(name);
        if (list === undefined) readers.set(name, [v]);
        else list.push(v);
      }
      const { closing, temporal, sharedArrangements } = view.runtime;
      let f = 0;
      if (closing.length > 0) f |= LOOKED_AT_ALWAYS | WINDOW_CLOSE;
      if (temporal.length > 0) f |= LOOKED_AT_ALWAYS | TEMPORAL;
      if (sharedArrangements.length > 0) f |= SHARED;
      if (f === 0 && view.runtime.chained) f |= HANDED;
      flags[v] = f;
    });
    // Second pass: every view's readers are known, and whether each is handed its input.
    const readByName = new Set<string>();
    for (const [name, list] of readers)
      if (list.some((r) => ((flags[r] as number) & HANDED) === 0)) readByName.add(name);
    this.order.forEach((view, v) => {
      if (readByName.has(view.name)) flags[v] = (flags[v] as number) | BY_NAME;
    });
    const index: WakeIndex = {
      readers,
      readersOfView: this.order.map((view) => readers.get(view.name) ?? []),
      flags,
      lastName: null,
      lastReaders: undefined,
      lastByName: false,
      readByName,
      temporal: flags.some((f) => (f & TEMPORAL) !== 0),
      joinedFrom: new Map(),
      anyJoin: this.order.some((view) => view.runtime.hasJoin || view.runtime.subquerySources.size > 0),
    };
    this.wakeIndex = index;
    this.wake = new Int32Array(this.order.length);
    this.handed = new Array<ZBatch>(this.order.length).fill(NONE);
    this.stamp = 0;
    return index;
  }

  /** The current rows of a table or view, as one batch. */
  contentsOf(name: string): ZBatch {
    const view = this.byName.get(name);
    if (view !== undefined) return view.runtime.output.contents();
    const table = this.tableContents(name);
    if (table === null) throw new SluiceError('UNKNOWN_TABLE', `relation "${name}" does not exist`);
    return table;
  }
}
