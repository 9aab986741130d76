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
// new one), and a SHA-256 checksum over itself. A read recomputes every row's hash from its stored text, so a
// corrupted or truncated value or block, a missing or extra row, or a tampered meta row is detected and
// reported as STATE_ERROR instead of being loaded as wrong state.
import type Database from 'better-sqlite3';
import { SluiceError } from '../common/errors.ts';
import type { SourcePositions } from '../common/changes.ts';
import type { StateDelta } from '../common/state-delta.ts';
import { decodeStored as decodeValue, encodeStored as encodeValue } from '../common/json-codec.ts';
import {
  BLOCK_SUFFIX,
  LANE,
  checkMeta,
  damaged,
  entryHash,
  formatSum,
  hashBlock,
  hashRow,
  openSchema,
  parseObjects,
  wantsCompaction,
  type RowKind,
  type StoredObject,
} from './checkpoint-format.ts';
import {
  CheckpointStatements,
  CheckpointTransaction,
  checkpointWriteError,
  type CheckpointHeader,
  type CheckpointTransactionStats,
} from './checkpoint-transaction.ts';
import { columnRows, decodeColumnBlock, type DecodedColumnBlock } from './column-block.ts';

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

/** What `Engine.loadCheckpoint` accepts: every stored entry value per state id. */
export interface StoredCheckpointData {
  readonly epoch: number;
  readonly positions: SourcePositions;
  readonly clock?: number;
  readonly objects: ReadonlyMap<
    string,
    // A table's rows loaded from column blocks are a ColumnRows (common/column-rows.ts).
    { readonly fingerprint: string; readonly parts: ReadonlyMap<string, Iterable<unknown>> }
  >;
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
}

export interface CheckpointInfo {
  readonly seq: number;
  readonly epoch: number;
  readonly journalOffset: number;
  readonly createdAt: number;
  readonly entries: number;
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
  private readonly scanStmt;
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
    this.scanStmt = db
      // In key order (the primary key's b-tree, no sort): a state's override rows (`<stateId>`) come
      // before its base blocks (`<stateId>\0b`), which come in block order — the load relies on both.
      .prepare(
        'SELECT state_id, entry_key, ord, value, h1, h2, kind FROM checkpoint_state ORDER BY state_id, entry_key',
      )
      .raw(true);
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
    sliceMs = 10,
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
    for (const o of cp.objects) {
      for (const { stateId, delta } of o.parts) {
        txn.part(stateId, delta.replaceAll);
        if (!delta.replaceAll) {
          for (const key of delta.deletes) {
            txn.remove(stateId, key);
            if ((++n & 255) === 0) yield;
          }
        }
        for (const [key, value] of delta.upserts) {
          txn.upsert(stateId, key, encodeValue(value));
          if ((++n & 255) === 0) yield;
        }
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
    const result = this.scan(true);
    if (result === null) return null;
    return { checkpoint: result.checkpoint, journalOffset: result.info.journalOffset };
  }

  /** Checks the stored checkpoint end to end without decoding it; null when none. */
  verify(): CheckpointVerifyResult | null {
    const result = this.scan(false);
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

  private scan(decode: boolean): {
    checkpoint: StoredCheckpointData;
    info: CheckpointInfo;
    objectCount: number;
  } | null {
    try {
      return this.db.transaction(() => this.scanInTransaction(decode))();
    } catch (error) {
      if (error instanceof SluiceError) throw error;
      throw damaged(`cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private scanInTransaction(decode: boolean): {
    checkpoint: StoredCheckpointData;
    info: CheckpointInfo;
    objectCount: number;
  } | null {
    const meta = this.stmts.header();
    if (meta === undefined) {
      const stray = this.db.prepare('SELECT COUNT(*) AS n FROM checkpoint_state').get() as { n: number };
      if (stray.n > 0) throw damaged(`has ${stray.n} state entries but no header row`);
      return null;
    }
    checkMeta(meta);
    const stored = parseObjects(meta.objects);
    const owner = new Map<string, Map<string, Iterable<unknown>>>();
    const pending = new Map<string, PendingState>();
    const objects = new Map<string, { fingerprint: string; parts: Map<string, Iterable<unknown>> }>();
    for (const o of stored) {
      const parts = new Map<string, Iterable<unknown>>();
      for (const id of o.parts) {
        parts.set(id, []);
        owner.set(id, parts);
      }
      objects.set(o.name, { fingerprint: o.fingerprint, parts });
    }
    let count = 0;
    let s1 = 0;
    let s2 = 0;
    let lastId = '';
    let last: PendingState | undefined;
    for (const row of this.scanStmt.iterate() as Iterable<
      [string, string, number, string | Uint8Array, number, number, string]
    >) {
      const [rowId, key, ord, value, h1, h2, kind] = row;
      const isBlock = rowId.endsWith(BLOCK_SUFFIX);
      let text = '';
      let bytes: Uint8Array | null = null;
      if (kind === 'c') {
        // A column block (column-block.ts): binary, a base block only.
        if (!isBlock || typeof value === 'string') {
          throw damaged(`entry "${key}" of state "${rowId}" is not the column block its kind says`);
        }
        bytes = value;
        hashBlock(rowId, key, ord, bytes);
      } else {
        if (kind !== 'v' && (isBlock || (kind !== 't' && kind !== 'm'))) {
          throw damaged(`entry "${key}" of state "${rowId}" has an unknown kind "${kind}"`);
        }
        if (typeof value !== 'string') throw damaged(`entry "${key}" of state "${rowId}" is not text`);
        text = value;
        hashRow(rowId, kind, key, ord, text);
      }
      if (entryHash[0] !== h1 || entryHash[1] !== h2) {
        throw damaged(`entry "${key}" of state "${rowId}" is corrupted (its hash does not match its value)`);
      }
      count++;
      s1 = (s1 + h1) % LANE;
      s2 = (s2 + h2) % LANE;
      const stateId = isBlock ? rowId.slice(0, -BLOCK_SUFFIX.length) : rowId;
      if (stateId !== lastId || last === undefined) {
        if (!owner.has(stateId)) throw damaged(`holds entries of state "${stateId}", which no object owns`);
        last = pending.get(stateId);
        if (last === undefined) {
          const parts = owner.get(stateId) as Map<string, Iterable<unknown>>;
          last = {
            stateId,
            blocks: [],
            overrides: [],
            parts,
            out: parts.get(stateId) as unknown[],
            columns: [],
            eager: 0,
          };
          pending.set(stateId, last);
        }
        lastId = stateId;
      }
      if (!decode) continue;
      if (isBlock) {
        const block = { key, n: ord, text, bytes };
        if (last.overrides.length > 0) last.blocks.push(block);
        else {
          // No override applies to this state (they would have come first): its values go straight
          // to the state's list, and the block's text dies young instead of being kept (and copied
          // by the young-generation GC) until the end of the scan.
          appendBlock(last, block);
        }
      } else {
        if (last.eager > 0)
          throw damaged(`holds an override row of state "${stateId}" after its base blocks`);
        let value: unknown = undefined;
        if (kind !== 't') {
          try {
            value = decodeValue(text);
          } catch (error) {
            throw damaged(
              `entry "${key}" of state "${stateId}" cannot be decoded: ${error instanceof Error ? error.message : String(error)}`,
            );
          }
        }
        last.overrides.push({ key, ord, kind: kind as RowKind, value });
      }
    }
    if (count !== meta.entry_count) {
      throw damaged(`holds ${count} state entries, its header records ${meta.entry_count}`);
    }
    if (formatSum(s1, s2) !== meta.entry_sum) {
      throw damaged('state entries do not match the header (an entry was lost, added or altered)');
    }
    for (const state of pending.values()) assemble(state);
    let positions: SourcePositions;
    try {
      positions = decodeValue(meta.positions) as SourcePositions;
    } catch {
      throw damaged('its source positions cannot be decoded');
    }
    return {
      checkpoint: {
        epoch: meta.epoch,
        positions,
        objects,
        ...(meta.clock !== null ? { clock: meta.clock } : {}),
      },
      info: {
        seq: meta.seq,
        epoch: meta.epoch,
        journalOffset: meta.journal_offset,
        createdAt: meta.created_at,
        entries: count,
      },
      objectCount: stored.length,
    };
  }
}

/** One state's rows as read: its base blocks in order (decoded at the end), and its override rows. */
interface PendingState {
  readonly stateId: string;
  readonly blocks: StoredBlock[];
  readonly overrides: { key: string; ord: number; kind: RowKind; value: unknown }[];
  /** The parts of the state's object (the state's entries are set there). */
  readonly parts: Map<string, Iterable<unknown>>;
  /** The state's entries, as Engine.loadCheckpoint receives them. */
  readonly out: unknown[];
  /**
   * Leading column blocks of a state without overrides, not yet turned into rows: when the state
   * has nothing else, they are handed over as they are (a ColumnRows), built into rows by its user.
   */
  readonly columns: DecodedColumnBlock[];
  /** Blocks already decoded into `out` (a state without overrides: `blocks` stays empty). */
  eager: number;
}

/** A base block as read: JSON text (`keys \n values`), or a column block's bytes. */
interface StoredBlock {
  readonly key: string;
  readonly n: number;
  readonly text: string;
  readonly bytes: Uint8Array | null;
}

function columnBlock(state: PendingState, block: StoredBlock): DecodedColumnBlock {
  try {
    return decodeColumnBlock(block.bytes as Uint8Array, block.n);
  } catch (error) {
    throw damaged(
      `block "${block.key}" of state "${state.stateId}" cannot be decoded: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** Decodes one part of a base block (`keys \n values`, or a column block): a list of `n` items. */
function blockPart(state: PendingState, block: StoredBlock, keys: boolean): unknown[] {
  if (block.bytes !== null) {
    const decoded = columnBlock(state, block);
    if (!keys) return [...columnRows([decoded])];
    return blockList(state, block, () => JSON.parse(decoded.keysJson()) as unknown);
  }
  const cut = block.text.indexOf('\n');
  return blockList(state, block, () => {
    if (cut < 0) throw new Error('no key list');
    return keys ? (JSON.parse(block.text.slice(0, cut)) as unknown) : decodeValue(block.text.slice(cut + 1));
  });
}

function blockList(state: PendingState, block: StoredBlock, parse: () => unknown): unknown[] {
  let list: unknown;
  try {
    list = parse();
  } catch (error) {
    throw damaged(
      `block "${block.key}" of state "${state.stateId}" cannot be decoded: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!Array.isArray(list) || list.length !== block.n) {
    throw damaged(
      `block "${block.key}" of state "${state.stateId}" does not hold the ${block.n} entries it records`,
    );
  }
  return list;
}

/** Decodes a block of a state without overrides straight into its entries. */
function appendBlock(state: PendingState, block: StoredBlock): void {
  state.eager++;
  if (block.bytes !== null) {
    const decoded = columnBlock(state, block);
    const first = state.columns[0];
    // Column blocks stay columns while all the state has are column blocks of one width.
    if (state.out.length === 0 && (first === undefined || first.width === decoded.width)) {
      state.columns.push(decoded);
      return;
    }
    flushColumns(state);
    columnRows([decoded]).forEachRow((row) => state.out.push(row));
    return;
  }
  flushColumns(state);
  const values = blockPart(state, block, false);
  const out = state.out;
  for (let i = 0; i < values.length; i++) out.push(values[i]);
}

/** Turns the state's pending column blocks into rows of its entry list (a JSON block follows them). */
function flushColumns(state: PendingState): void {
  if (state.columns.length === 0) return;
  columnRows(state.columns).forEachRow((row) => state.out.push(row));
  state.columns.length = 0;
}

/**
 * One state's entries in insertion order: the base entries with the overrides applied — an upsert
 * of a base key replaces it in place, a tombstone or a moved upsert removes it — then the other
 * upserts and the moved ones appended in `ord` order. This is the order the per-entry layout gave
 * (ord order, an update keeping its ord): every override's ord is above every base entry's.
 * Keys are decoded only for a state that has overrides.
 */
function assemble(state: PendingState): void {
  const { blocks, overrides, out } = state;
  if (overrides.length === 0) {
    // Its blocks were decoded as they were read; column blocks alone are handed over as they are.
    if (state.columns.length > 0) state.parts.set(state.stateId, columnRows(state.columns));
    return;
  }
  const byKey = new Map<string, PendingState['overrides'][number]>();
  for (const o of overrides) byKey.set(o.key, o);
  const placed = new Set<string>();
  for (const block of blocks) {
    const keys = blockPart(state, block, true);
    const values = blockPart(state, block, false);
    for (let i = 0; i < keys.length; i++) {
      const o = byKey.get(keys[i] as string);
      if (o === undefined) out.push(values[i]);
      else if (o.kind === 'v') {
        out.push(o.value);
        placed.add(o.key);
      }
    }
  }
  const appended = overrides.filter((o) => o.kind !== 't' && !placed.has(o.key));
  appended.sort((a, b) => a.ord - b.ord);
  for (const o of appended) out.push(o.value);
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
