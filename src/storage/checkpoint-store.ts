// The durable checkpoint store: the engine's operator state, source positions, epoch, journal offset
// and plan fingerprints, kept in the server's SQLite file and updated incrementally — one checkpoint
// is one transaction, so a crash (or a full disk) leaves the previous checkpoint whole.
//
// Layout (checkpoint-format.ts): a state written whole is stored as base blocks of up to 2,048
// entries a row, later incremental changes as per-key override rows (upserts, tombstones, moved
// upserts); a load reads the blocks in order and applies the overrides, giving the entries in the
// order a Map would hold them. When overrides outgrow a quarter of the base, the next checkpoint is
// full (needsFull), which rewrites everything as blocks.
//
// Integrity: every row carries a 64-bit hash (two 32-bit lanes) of (state id, key, insertion
// sequence, value); the meta row keeps the row count and the lane-wise sum of all row hashes (a
// multiset hash, maintained incrementally: an overwrite subtracts the old row's hash and adds the
// new one), and a SHA-256 checksum over itself. A read (checkpoint-read.ts) recomputes every row's hash
// from its stored text, so a corrupted or truncated value or block, a missing or extra row, or a
// tampered meta row is detected and reported as STATE_ERROR instead of being loaded as wrong state.
import type Database from 'better-sqlite3';
import { SluiceError } from '../common/errors.ts';
import type { SourcePositions } from '../common/changes.ts';
import { entryReader, type StateDelta } from '../common/state-delta.ts';
import { encodeStored as encodeValue } from '../common/json-codec.ts';
import { CHECKPOINT_SLICE_MS, openSchema, wantsCompaction, type StoredObject } from './checkpoint-format.ts';
import {
  CheckpointStatements,
  CheckpointTransaction,
  checkpointWriteError,
  type CheckpointHeader,
  type CheckpointTransactionStats,
} from './checkpoint-transaction.ts';
import { TableBlocks } from './table-blocks.ts';
import { CheckpointScanner, type CheckpointInfo, type StoredCheckpointData } from './checkpoint-read.ts';

// The shapes below mirror the engine's EngineCheckpoint / StoredCheckpoint structurally: storage
// never imports the engine.

/** One object's changed state, as `Engine.takeCheckpoint` returns it. */
export interface CheckpointObjectInput {
  readonly name: string;
  readonly kind: 'table' | 'view';
  readonly fingerprint: string;
  readonly parts: readonly { readonly stateId: string; readonly delta: StateDelta }[];
}

/** What `Engine.takeCheckpoint` returns. */
export interface CheckpointInput {
  readonly epoch: number;
  readonly positions: SourcePositions;
  /** The epoch's logical clock (µs). */
  readonly clock?: number;
  readonly objects: readonly CheckpointObjectInput[];
}

/** Anything that hands out checkpoints (the engine). */
export interface CheckpointSource {
  takeCheckpoint(full?: boolean): CheckpointInput;
}

export interface CheckpointWriteStats extends CheckpointTransactionStats {
  /** Wall time from taking the state to the commit. */
  readonly ms: number;
  /** Time the server's thread spent on it (a sliced write lets epochs run between its slices). */
  readonly busyMs: number;
  /** Of `busyMs`: taking the state (the snapshot), and the longest slice (the worst stall it caused). */
  readonly takeMs?: number;
  readonly longestSliceMs?: number;
  /** Slices of a write off the thread, and the most entries one slice handled (its work, not its time). */
  readonly slices?: number;
  readonly maxSliceEntries?: number;
  /** Slices of a write off the thread that first waited for ingest requests to be answered. */
  readonly ingestWaits?: number;
}

export interface CheckpointVerifyResult extends CheckpointInfo {
  readonly objects: number;
}

export interface CheckpointStoreHooks {
  /** Called inside the write transaction once the state entries are written, before the header. */
  beforeHeader?(): void;
  /** Called when a sliced write resumes after yielding to the event loop. */
  betweenSlices?(): void;
}

export class CheckpointStore {
  private readonly stmts: CheckpointStatements;
  private readonly scanner: CheckpointScanner;
  /** Set after a failed write: the engine's change tracking was consumed, so the next must be full. */
  private needsFullValue = false;
  private inFlight = false;
  private aborted = false;

  constructor(
    private readonly db: Database.Database,
    private readonly hooks: CheckpointStoreHooks = {},
  ) {
    openSchema(db);
    this.stmts = new CheckpointStatements(db);
    this.scanner = new CheckpointScanner(db, this.stmts);
  }

  /**
   * True when the next checkpoint must be full (`takeCheckpoint(true)`): none was written, a
   * previous write failed, or the override rows outgrew the base blocks (compaction).
   */
  get needsFull(): boolean {
    if (this.needsFullValue) return true;
    const header = this.stmts.header();
    return header === undefined || wantsCompaction(header);
  }

  /** Makes the next checkpoint full: a write elsewhere (the off-thread writer) consumed a delta and failed. */
  requireFull(): void {
    this.needsFullValue = true;
  }

  /** Records that a full checkpoint was written elsewhere (the off-thread writer). */
  fullWritten(): void {
    this.needsFullValue = false;
  }

  /**
   * Takes a checkpoint from the engine (full when required) and writes it. `journalOffset` is the
   * last journal offset whose effect the engine's state includes: recovery replays from after it.
   */
  checkpoint(source: CheckpointSource, journalOffset: number): CheckpointWriteStats {
    this.assertNoTransaction();
    const full = this.needsFull;
    return this.write(source.takeCheckpoint(full), journalOffset);
  }

  /**
   * Applies one checkpoint's deltas and records its epoch, positions, journal offset and plan
   * fingerprints in one transaction. Must be called outside any open transaction (a failing write
   * must not take the journal's transaction down with it). On failure nothing is changed, the
   * previous checkpoint stays readable, and the next write must be a full checkpoint.
   */
  write(cp: CheckpointInput, journalOffset: number): CheckpointWriteStats {
    const started = performance.now();
    if (this.db.inTransaction) {
      this.needsFullValue = true; // the delta was taken and is lost
      this.assertNoTransaction();
    }
    const full = cp.objects.every((o) => o.parts.every((p) => p.delta.replaceAll));
    if (this.needsFullValue && !full) {
      throw new SluiceError(
        'STATE_ERROR',
        `cannot write an incremental checkpoint at epoch ${cp.epoch}: the previous checkpoint write failed`,
        { hint: 'take a full checkpoint (takeCheckpoint(true)) so that no change is lost' },
      );
    }
    try {
      const stats = this.db
        .transaction(() => {
          const steps = this.applySteps(cp, journalOffset, full);
          for (;;) {
            const step = steps.next();
            if (step.done === true) return step.value;
          }
        })
        .immediate();
      this.needsFullValue = false;
      const ms = performance.now() - started;
      return { ...stats, ms, busyMs: ms };
    } catch (error) {
      this.needsFullValue = true;
      throw this.wrapWriteError(error, cp.epoch);
    }
  }

  /**
   * Like `checkpoint`, but the write yields to the event loop every `sliceMs` (the delta is taken
   * at once, so it is the state of one epoch; the writing is spread out): a large checkpoint never
   * stalls the server for longer than a slice. The store's database must be one no other writer
   * uses while this runs (the server keeps checkpoints in a file of their own). `abort()` ends it.
   */
  async checkpointSliced(
    source: CheckpointSource,
    journalOffset: number,
    sliceMs = CHECKPOINT_SLICE_MS,
  ): Promise<CheckpointWriteStats> {
    this.assertNoTransaction();
    const started = performance.now();
    const full = this.needsFull;
    const cp = source.takeCheckpoint(full);
    this.aborted = false;
    this.inFlight = true;
    try {
      this.db.exec('BEGIN IMMEDIATE');
      const steps = this.applySteps(cp, journalOffset, full);
      let sliceStart = performance.now();
      let busyMs = sliceStart - started;
      for (;;) {
        const step = steps.next();
        if (step.done === true) {
          this.db.exec('COMMIT');
          this.needsFullValue = false;
          const now = performance.now();
          return { ...step.value, ms: now - started, busyMs: busyMs + (now - sliceStart) };
        }
        if (performance.now() - sliceStart >= sliceMs) {
          busyMs += performance.now() - sliceStart;
          await new Promise((resolve) => setImmediate(resolve));
          if (this.aborted) throw new SluiceError('STATE_ERROR', 'the checkpoint was abandoned (shutdown)');
          this.hooks.betweenSlices?.();
          sliceStart = performance.now();
        }
      }
    } catch (error) {
      // The delta was consumed: whatever happens next must be a full checkpoint.
      this.needsFullValue = true;
      if (this.db.open && this.db.inTransaction) this.db.exec('ROLLBACK');
      throw this.wrapWriteError(error, cp.epoch);
    } finally {
      this.inFlight = false;
    }
  }

  /** True while a sliced checkpoint is being written. */
  get writing(): boolean {
    return this.inFlight;
  }

  /** Abandons a sliced checkpoint in progress now (rolled back; the previous one stays). */
  abort(): void {
    if (!this.inFlight) return;
    this.aborted = true;
    this.needsFullValue = true;
    if (this.db.open && this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  private assertNoTransaction(): void {
    if (this.db.inTransaction) {
      throw new SluiceError('INTERNAL_ERROR', 'a checkpoint must be written outside an open transaction', {
        hint: 'commit the journal transaction first',
      });
    }
  }

  /** The write as steps: it yields every few hundred entries so a caller can spread it out. */
  private *applySteps(
    cp: CheckpointInput,
    journalOffset: number,
    full: boolean,
  ): Generator<void, CheckpointTransactionStats> {
    const txn = new CheckpointTransaction(this.stmts, checkpointHeader(cp, journalOffset, full));
    txn.start();
    let n = 0;
    const keys: string[] = [];
    const values: unknown[] = [];
    for (const o of cp.objects) {
      for (const { stateId, delta } of o.parts) {
        txn.part(stateId, delta.replaceAll);
        if (!delta.replaceAll) {
          for (const key of delta.deletes) {
            txn.remove(stateId, key);
            if ((++n & 255) === 0) yield;
          }
        }
        // A table written whole goes as column blocks built from its rows (table-blocks.ts).
        let blocks = TableBlocks.of(stateId, delta.replaceAll);
        // Read a batch at a time (a snapshot's rows with no tuple or generator step per entry).
        const reader = entryReader(delta.upserts);
        try {
          for (let got = reader.read(keys, values, 256); got > 0; got = reader.read(keys, values, 256)) {
            for (let r = 0; r < got; r++) {
              const key = keys[r] as string;
              const value = values[r];
              if (blocks !== null && !blocks.add(key, value)) {
                const last = blocks.finish();
                if (last !== null) txn.columnBlock(last);
                blocks = null;
              }
              if (blocks === null) txn.upsert(stateId, key, encodeValue(value));
              else {
                const block = blocks.ready();
                if (block !== null) txn.columnBlock(block);
              }
            }
            yield;
          }
        } finally {
          reader.close();
          values.fill(undefined);
        }
        const last = blocks?.finish() ?? null;
        if (last !== null) txn.columnBlock(last);
      }
    }
    this.hooks.beforeHeader?.();
    return txn.finish();
  }

  private wrapWriteError(error: unknown, epoch: number): unknown {
    return checkpointWriteError(error, epoch, this.safeInfo()?.epoch ?? null);
  }

  private safeInfo(): CheckpointInfo | null {
    try {
      return this.info();
    } catch {
      return null;
    }
  }

  /** The stored checkpoint's header, unverified (for logs and metrics); null when none. */
  info(): CheckpointInfo | null {
    const meta = this.stmts.header();
    if (meta === undefined) return null;
    return {
      seq: meta.seq,
      epoch: meta.epoch,
      journalOffset: meta.journal_offset,
      createdAt: meta.created_at,
      entries: meta.entry_count,
    };
  }

  /**
   * The stored checkpoint, fully verified, ready for `Engine.loadCheckpoint`; null when none was
   * written. Throws STATE_ERROR when the stored checkpoint is damaged.
   */
  read(): { checkpoint: StoredCheckpointData; journalOffset: number } | null {
    const result = this.scanner.scan(true);
    if (result === null) return null;
    return { checkpoint: result.checkpoint, journalOffset: result.info.journalOffset };
  }

  /** Checks the stored checkpoint end to end without decoding it; null when none. */
  verify(): CheckpointVerifyResult | null {
    const result = this.scanner.scan(false);
    return result === null ? null : { ...result.info, objects: result.objectCount };
  }

  /** Forgets the stored checkpoint (e.g. after it was found damaged); the next write must be full. */
  clear(): void {
    this.db.transaction(() => {
      this.db.exec('DELETE FROM checkpoint_state');
      this.db.exec('DELETE FROM checkpoint_meta');
    })();
    this.needsFullValue = true;
  }
}

/** The header of a checkpoint the engine handed out, in the stored encoding. */
export function checkpointHeader(
  cp: CheckpointInput,
  journalOffset: number,
  full: boolean,
): CheckpointHeader {
  const objects: StoredObject[] = cp.objects.map((o) => ({
    name: o.name,
    kind: o.kind,
    fingerprint: o.fingerprint,
    parts: o.parts.map((p) => p.stateId),
  }));
  return {
    epoch: cp.epoch,
    full,
    journalOffset,
    positions: encodeValue(cp.positions),
    clock: cp.clock ?? null,
    objects,
  };
}
