// What an epoch tells its listeners: each stepped view's change set to its subscribers, then the
// epoch's end to the epoch listeners, queued in epoch order so a listener that writes (a nested epoch) is heard after.
import type { Catalog, ViewDef } from '../planner/catalog.ts';
import { lazyChangeSet } from '../common/raw-changes.ts';
import type { ErrorChange, SourcePositions, ViewChangeSet, ViewListener } from './api.ts';
import type { GraphView } from './view-graph.ts';

/** A stepped view's error changes when it has none (shared: nobody changes a change set's errors). */
const NO_ERRORS: readonly ErrorChange[] = [];

/**
 * Each view definition's column names, one array for as long as the definition lives: every epoch's
 * change set of a view hands its encoders the same array, so what they derive from a column list
 * (changelog-codec.ts, ascii-json.ts) is found by the array rather than rebuilt or looked up by text.
 */
const columnNames = new WeakMap<ViewDef, readonly string[]>();

function columnNamesOf(def: ViewDef): readonly string[] {
  let names = columnNames.get(def);
  if (names === undefined) {
    names = def.columns.map((c) => c.name);
    columnNames.set(def, names);
  }
  return names;
}

interface Subscription {
  readonly listener: ViewListener;
  readonly onClose: ((reason: string) => void) | undefined;
}

/** What an epoch tells its listeners: a view's change set to its subscribers, or the epoch's end. */
type Delivery =
  | { readonly subs: Set<Subscription>; readonly set: ViewChangeSet }
  | { readonly subs: null; readonly epoch: number };

export class EpochDeliveries {
  private readonly subscribers = new Map<string, Set<Subscription>>();
  /** Told of every epoch once its views ran (the server records each epoch's time for past reads). */
  private readonly epochListeners = new Set<(epoch: number) => void>();
  /**
   * Deliveries not yet made, in epoch order. A listener may write, which runs a nested epoch at
   * once; its deliveries wait here until the outer epoch's are made (see deliver).
   */
  private readonly deliveries: Delivery[] = [];
  private delivering = false;

  /** `positions`: the latest epoch's, built when a change set is (the engine's epochPositions). */
  constructor(
    private readonly catalog: Catalog,
    private readonly positions: () => SourcePositions,
  ) {}

  /**
   * Builds the change sets of the views epoch `epoch` stepped, queues them and the epoch's end, and
   * delivers (unless a delivery is under way: then the outer call delivers them after its own).
   */
  epochRan(stepped: readonly GraphView[], epoch: number): void {
    // Every view's change set is built before any listener runs: a listener that writes runs a
    // nested epoch, which steps the views again (and reuses the graph's list of stepped views).
    for (let i = 0; i < stepped.length; i++) {
      const cs = stepped[i] as GraphView;
      // Taken every epoch (the view forgets them), listened to or not; no empty list per view.
      const errors: readonly ErrorChange[] = cs.runtime.hasErrorChanges()
        ? cs.runtime.takeErrorChanges()
        : NO_ERRORS;
      if (this.subscribers.size === 0) continue;
      const subs = this.subscribers.get(cs.name);
      if (subs === undefined || subs.size === 0) continue;
      const rows = cs.runtime.output.lastChanges();
      if (rows.length === 0 && errors.length === 0) continue;
      // Row objects only for a listener that reads `changes` (the server encodes the value arrays).
      const columns = columnNamesOf(this.catalog.get(cs.name) as ViewDef);
      const set = lazyChangeSet(cs.name, epoch, this.positions(), { columns, rows }, errors);
      this.deliveries.push({ subs, set });
    }
    if (this.epochListeners.size > 0) this.deliveries.push({ subs: null, epoch });
    if (this.deliveries.length > 0) this.deliver();
  }

  /**
   * Makes the pending deliveries in order. Called inside a delivery (a listener wrote), it returns
   * at once: the outer call makes the nested epoch's deliveries after the outer epoch's, so every
   * subscriber hears of epochs in order. A listener that throws ends the round; what was still
   * pending is dropped (the caller of the write sees the error).
   */
  private deliver(): void {
    if (this.delivering) return;
    this.delivering = true;
    try {
      for (let i = 0; i < this.deliveries.length; i++) {
        const d = this.deliveries[i] as Delivery;
        if (d.subs === null) for (const listener of this.epochListeners) listener(d.epoch);
        else for (const s of [...d.subs]) s.listener(d.set);
      }
    } finally {
      this.deliveries.length = 0;
      this.delivering = false;
    }
  }

  /** Listens to every epoch, after its views ran and their listeners heard of it. */
  onEpoch(listener: (epoch: number) => void): () => void {
    this.epochListeners.add(listener);
    return () => {
      this.epochListeners.delete(listener);
    };
  }

  /** Listens to view `view`'s per-epoch changes (the caller checked it exists). */
  subscribe(view: string, listener: ViewListener, onClose?: (reason: string) => void): () => void {
    let subs = this.subscribers.get(view);
    if (subs === undefined) {
      subs = new Set();
      this.subscribers.set(view, subs);
    }
    const s: Subscription = { listener, onClose };
    subs.add(s);
    return () => {
      this.subscribers.get(view)?.delete(s);
    };
  }

  /** View `name` was dropped or replaced: its subscribers are told (`onClose`) and forgotten. */
  close(name: string, reason: string): void {
    const subs = this.subscribers.get(name);
    this.subscribers.delete(name);
    for (const s of subs ?? []) s.onClose?.(`materialized view "${name}" was ${reason}`);
  }
}
