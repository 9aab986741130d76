// The runtime's shared state: the engine and stores every part uses, and whether it still serves.
// SluiceRuntime (../runtime.ts) is one object split by concern into a chain of classes, each extending
// the last: base, feeds, commit, connector-lifecycle, checkpoints, subscriptions, recovery.
import type { SluiceError } from '../../common/errors.ts';
import type { CheckpointStore } from '../../storage/checkpoint-store.ts';
import type { ConnectorManager } from '../connectors.ts';
import type { SourceStore } from '../../storage/source-store.ts';
import type { CatalogSnapshotStore } from '../../storage/catalog-snapshot-store.ts';
import type { HighWaterMark } from '../../storage/high-water-mark.ts';
import type { ChangelogStore } from '../../storage/changelog-store.ts';
import type { EpochTimeStore } from '../../storage/epoch-time-store.ts';
import type { BudgetAccount } from '../../sink/budget-account.ts';
import type { SqliteStore } from '../../storage/sqlite-store.ts';
import type { TableLog } from '../../storage/table-log.ts';
import type { JournalRetention } from '../../storage/journal-retention.ts';
import type { Engine } from '../../index.ts';
import type { RuntimeOptions, RuntimeHooks } from './types.ts';

export abstract class RuntimeBase {
  /** Replaced only during recovery (a checkpoint that cannot be loaded falls back to a fresh one). */
  abstract engine: Engine;
  abstract readonly store: SqliteStore;
  abstract readonly log: TableLog;
  abstract readonly changelog: ChangelogStore;
  /** Deletes old table batches the checkpoint covers; knows how far it deleted (recovery refuses a full replay past it). */
  abstract readonly journalRetention: JournalRetention;
  /** Each epoch's clock and watermarks, for reads and resumed streams at a past epoch. */
  abstract readonly epochTimes: EpochTimeStore;
  /** Replaced only at start, when the checkpoint file is found damaged (set aside, started anew). */
  abstract checkpoints: CheckpointStore;
  /** Checkpoints live in a file of their own, so one can be written in slices between epochs. */
  abstract checkpointFile: SqliteStore;
  /** The last committed journal offset, outside the data file (null in memory). */
  protected abstract readonly highWater: HighWaterMark | null;
  abstract readonly sourceStore: SourceStore;
  /** The live catalog's DDL entries, what recovery from a checkpoint replays (catalog-incarnations.ts). */
  abstract readonly catalogSnapshots: CatalogSnapshotStore;
  abstract readonly connectors: ConnectorManager;
  /** The last epoch whose transaction committed (and was published). */
  abstract committedEpoch: number;
  /** The logical clock of `committedEpoch` (µs). */
  committedClock = 0;
  /** This tenant's account of the server's memory budget for subscribers' queued bytes and snapshots. */
  abstract readonly subscriberBudget: BudgetAccount;
  hooks: RuntimeHooks = {};
  /** Set when the store failed under us: the process must restart (and replay) to recover. */
  failure: SluiceError | null = null;
  protected closing = false;

  constructor(protected readonly options: RuntimeOptions) {}

  get ready(): boolean {
    return !this.closing && this.failure === null;
  }
}

/** Lets the event loop run (I/O, timers, other requests) before going on. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
