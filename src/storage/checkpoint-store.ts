// The durable checkpoint store: the engine's operator state, source positions, epoch, journal offset
// and plan fingerprints, kept in the server's SQLite file and updated incrementally — one checkpoint
// is one transaction, so a crash (or a full disk) leaves the previous checkpoint whole.
//
// Integrity: every state entry carries a 64-bit hash (two 32-bit lanes) of (state id, key, insertion
// sequence, value); the meta row keeps the entry count and the lane-wise sum of all entry hashes (a
// multiset hash, maintained incrementally: an overwrite subtracts the old entry's hash and adds the
// new one), and a SHA-256 checksum over itself. A read recomputes every entry's hash from its stored text, so a
// corrupted or truncated value, a missing or extra row, or a tampered meta row is detected and
// reported as STATE_ERROR instead of being loaded as wrong state.
import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { SluiceError } from '../common/errors.ts';
import type { SourcePositions } from '../common/changes.ts';
import type { StateDelta } from '../common/state-delta.ts';
import { decodeStored as decodeValue, encodeStored as encodeValue } from '../common/json-codec.ts';
import { addColumnIfMissing } from './sqlite-store.ts';

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
    { readonly fingerprint: string; readonly parts: ReadonlyMap<string, readonly unknown[]> }
  >;
}

/** Anything that hands out checkpoints (the engine). */
export interface CheckpointSource {
  takeCheckpoint(full?: boolean): CheckpointInput;
}

export interface CheckpointWriteStats {
  /** Checkpoints written into this file so far, this one included. */
  readonly seq: number;
  readonly epoch: number;
  readonly journalOffset: number;
  /** True when the whole state was rewritten (a full checkpoint). */
  readonly full: boolean;
  readonly upserts: number;
  readonly deletes: number;
  /** Characters of keys and values written (≈ bytes for ASCII state). */
  readonly bytes: number;
  /** Entries held after the write. */
  readonly entries: number;
  /** Wall time from taking the state to the commit. */
  readonly ms: number;
  /** Time spent writing (a sliced write lets epochs run between its slices). */
  readonly busyMs: number;
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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS checkpoint_meta (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  positions TEXT NOT NULL,
  journal_offset INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  objects TEXT NOT NULL,
  entry_count INTEGER NOT NULL,
  entry_sum TEXT NOT NULL,
  next_ord INTEGER NOT NULL,
  checksum TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoint_state (
  state_id TEXT NOT NULL,
  entry_key TEXT NOT NULL,
  ord INTEGER NOT NULL,
  value TEXT NOT NULL,
  h1 INTEGER NOT NULL,
  h2 INTEGER NOT NULL,
  PRIMARY KEY (state_id, entry_key)
) WITHOUT ROWID;
`;

interface MetaRow {
  seq: number;
  epoch: number;
  positions: string;
  journal_offset: number;
  created_at: number;
  objects: string;
  entry_count: number;
  entry_sum: string;
  next_ord: number;
  checksum: string;
  /** The logical clock (µs); NULL in a checkpoint written before the clock existed. */
  clock: number | null;
}

interface StoredObject {
  readonly name: string;
  readonly kind: 'table' | 'view';
  readonly fingerprint: string;
  readonly parts: readonly string[];
}

export interface CheckpointStoreHooks {
  /** Called inside the write transaction once the state entries are written, before the header. */
  beforeHeader?(): void;
  /** Called when a sliced write resumes after yielding to the event loop. */
  betweenSlices?(): void;
}

const LANE = 4294967296;

export class CheckpointStore {
  private readonly metaStmt;
  private readonly metaWriteStmt;
  private readonly oldHashStmt;
  private readonly insertNewStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly partSumStmt;
  private readonly partClearStmt;
  private readonly scanStmt;
  /** Set after a failed write: the engine's change tracking was consumed, so the next must be full. */
  private needsFullValue = false;
  private inFlight = false;
  private aborted = false;

  constructor(
    private readonly db: Database.Database,
    private readonly hooks: CheckpointStoreHooks = {},
  ) {
    db.exec(SCHEMA);
    addColumnIfMissing(db, 'checkpoint_meta', 'clock', 'INTEGER');
    this.metaStmt = db.prepare('SELECT * FROM checkpoint_meta WHERE id = 1');
    this.metaWriteStmt = db.prepare(
      `INSERT INTO checkpoint_meta (id, seq, epoch, positions, journal_offset, created_at, objects, entry_count, entry_sum, next_ord, checksum, clock)
       VALUES (1, @seq, @epoch, @positions, @journal_offset, @created_at, @objects, @entry_count, @entry_sum, @next_ord, @checksum, @clock)
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, epoch = excluded.epoch, positions = excluded.positions,
         journal_offset = excluded.journal_offset, created_at = excluded.created_at, objects = excluded.objects,
         entry_count = excluded.entry_count, entry_sum = excluded.entry_sum, next_ord = excluded.next_ord,
         checksum = excluded.checksum, clock = excluded.clock`,
    );
    this.oldHashStmt = db
      .prepare('SELECT h1, h2, ord FROM checkpoint_state WHERE state_id = ? AND entry_key = ?')
      .raw(true);
    // `ord` is the entry's insertion sequence and an update keeps it, so entries load back in the
    // order a Map would hold them (an append-only table's rows a0, a1, … stay in sequence).
    this.insertNewStmt = db.prepare(
      'INSERT OR IGNORE INTO checkpoint_state (state_id, entry_key, ord, value, h1, h2) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.updateStmt = db.prepare(
      'UPDATE checkpoint_state SET value = ?, h1 = ?, h2 = ? WHERE state_id = ? AND entry_key = ?',
    );
    this.deleteStmt = db
      .prepare('DELETE FROM checkpoint_state WHERE state_id = ? AND entry_key = ? RETURNING h1, h2')
      .raw(true);
    this.partSumStmt = db
      .prepare(
        `SELECT COUNT(*), COALESCE(SUM(h1) % ${LANE}, 0), COALESCE(SUM(h2) % ${LANE}, 0)
         FROM checkpoint_state WHERE state_id = ?`,
      )
      .raw(true);
    this.partClearStmt = db.prepare('DELETE FROM checkpoint_state WHERE state_id = ?');
    this.scanStmt = db
      .prepare('SELECT state_id, entry_key, ord, value, h1, h2 FROM checkpoint_state')
      .raw(true);
  }

  /** True when the next checkpoint must be full (`takeCheckpoint(true)`): a previous write failed. */
  get needsFull(): boolean {
    return this.needsFullValue;
  }

  /**
   * Takes a checkpoint from the engine (full when required) and writes it. `journalOffset` is the
   * last journal offset whose effect the engine's state includes: recovery replays from after it.
   */
  checkpoint(source: CheckpointSource, journalOffset: number): CheckpointWriteStats {
    this.assertNoTransaction();
    const full = this.needsFullValue || this.metaStmt.get() === undefined;
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
    const full = this.needsFullValue || this.metaStmt.get() === undefined;
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
  ): Generator<void, Omit<CheckpointWriteStats, 'ms' | 'busyMs'>> {
    let count: number;
    let s1: number;
    let s2: number;
    let seq: number;
    let nextOrd = 0;
    if (full) {
      // A full checkpoint trusts nothing stored: it starts from an empty state table.
      this.db.exec('DELETE FROM checkpoint_state');
      count = 0;
      s1 = 0;
      s2 = 0;
      const previous = this.metaStmt.get() as MetaRow | undefined;
      seq = (previous?.seq ?? 0) + 1;
    } else {
      const previous = this.metaStmt.get() as MetaRow | undefined;
      if (previous === undefined) {
        throw new SluiceError(
          'STATE_ERROR',
          `cannot write an incremental checkpoint at epoch ${cp.epoch}: there is no previous checkpoint`,
          { hint: 'the first checkpoint of a data file must be full' },
        );
      }
      checkMeta(previous);
      count = previous.entry_count;
      [s1, s2] = parseSum(previous.entry_sum);
      seq = previous.seq + 1;
      nextOrd = previous.next_ord;
      const live = new Set<string>();
      for (const o of cp.objects) for (const p of o.parts) live.add(p.stateId);
      for (const o of parseObjects(previous.objects)) {
        for (const stateId of o.parts)
          if (!live.has(stateId)) [count, s1, s2] = this.clearPart(stateId, count, s1, s2);
      }
    }
    let upserts = 0;
    let deletes = 0;
    let bytes = 0;
    for (const o of cp.objects) {
      for (const { stateId, delta } of o.parts) {
        if (delta.replaceAll && !full) [count, s1, s2] = this.clearPart(stateId, count, s1, s2);
        if (!delta.replaceAll) {
          for (const key of delta.deletes) {
            const old = this.deleteStmt.get(stateId, key) as [number, number] | undefined;
            if (old === undefined) continue;
            count--;
            s1 = (s1 - old[0] + LANE) % LANE;
            s2 = (s2 - old[1] + LANE) % LANE;
            deletes++;
            if ((deletes & 255) === 0) yield;
          }
        }
        for (const [key, value] of delta.upserts) {
          const text = encodeValue(value);
          // Most changed entries of a growing state are new (a source's new rows): try the insert
          // first, one statement; an existing key falls through to the update path.
          hashEntry(stateId, key, nextOrd, text);
          if (this.insertNewStmt.run(stateId, key, nextOrd, text, hashOut1, hashOut2).changes === 1) {
            nextOrd++;
            count++;
          } else {
            const old = this.oldHashStmt.get(stateId, key) as [number, number, number];
            hashEntry(stateId, key, old[2], text);
            this.updateStmt.run(text, hashOut1, hashOut2, stateId, key);
            s1 = (s1 - old[0] + LANE) % LANE;
            s2 = (s2 - old[1] + LANE) % LANE;
          }
          s1 = (s1 + hashOut1) % LANE;
          s2 = (s2 + hashOut2) % LANE;
          upserts++;
          bytes += key.length + text.length;
          if ((upserts & 255) === 0) yield;
        }
      }
    }
    const objects: StoredObject[] = cp.objects.map((o) => ({
      name: o.name,
      kind: o.kind,
      fingerprint: o.fingerprint,
      parts: o.parts.map((p) => p.stateId),
    }));
    const meta: MetaRow = {
      seq,
      epoch: cp.epoch,
      positions: encodeValue(cp.positions),
      journal_offset: journalOffset,
      created_at: Date.now(),
      objects: JSON.stringify(objects),
      entry_count: count,
      entry_sum: formatSum(s1, s2),
      next_ord: nextOrd,
      checksum: '',
      clock: cp.clock ?? null,
    };
    meta.checksum = metaChecksum(meta);
    this.hooks.beforeHeader?.();
    this.metaWriteStmt.run(meta);
    bytes += meta.positions.length + meta.objects.length;
    return { seq, epoch: cp.epoch, journalOffset, full, upserts, deletes, bytes, entries: count };
  }

  private clearPart(stateId: string, count: number, s1: number, s2: number): [number, number, number] {
    const [n, p1, p2] = this.partSumStmt.get(stateId) as [number, number, number];
    if (n === 0) return [count, s1, s2];
    this.partClearStmt.run(stateId);
    return [count - n, (s1 - p1 + LANE) % LANE, (s2 - p2 + LANE) % LANE];
  }

  private wrapWriteError(error: unknown, epoch: number): unknown {
    if (error instanceof SluiceError) return error;
    const code = sqliteCode(error);
    const message = error instanceof Error ? error.message : String(error);
    const previous = this.safeInfo();
    const kept =
      previous === null
        ? 'no checkpoint was stored before'
        : `the previous checkpoint (epoch ${previous.epoch}) is intact`;
    if (code === 'SQLITE_FULL') {
      return new SluiceError('STATE_ERROR', `disk full: the checkpoint at epoch ${epoch} was not written`, {
        detail: `${message}; ${kept}`,
        hint: 'free disk space; the next checkpoint will be a full one',
      });
    }
    return new SluiceError('STATE_ERROR', `the checkpoint at epoch ${epoch} was not written`, {
      detail: `${code ?? 'error'}: ${message}; ${kept}`,
    });
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
    const meta = this.metaStmt.get() as MetaRow | undefined;
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
    const meta = this.metaStmt.get() as MetaRow | undefined;
    if (meta === undefined) {
      const stray = this.db.prepare('SELECT COUNT(*) AS n FROM checkpoint_state').get() as { n: number };
      if (stray.n > 0) throw damaged(`has ${stray.n} state entries but no header row`);
      return null;
    }
    checkMeta(meta);
    const stored = parseObjects(meta.objects);
    const owner = new Map<string, Map<string, unknown[]>>();
    const pending = new Map<string, { ords: number[]; values: unknown[] }>();
    const objects = new Map<string, { fingerprint: string; parts: Map<string, unknown[]> }>();
    for (const o of stored) {
      const parts = new Map<string, unknown[]>();
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
    let lastList: { ords: number[]; values: unknown[] } | undefined;
    for (const row of this.scanStmt.iterate() as Iterable<[string, string, number, string, number, number]>) {
      const [stateId, key, ord, text, h1, h2] = row;
      hashEntry(stateId, key, ord, text);
      if (hashOut1 !== h1 || hashOut2 !== h2) {
        throw damaged(
          `entry "${key}" of state "${stateId}" is corrupted (its hash does not match its value)`,
        );
      }
      count++;
      s1 = (s1 + h1) % LANE;
      s2 = (s2 + h2) % LANE;
      if (stateId !== lastId || lastList === undefined) {
        if (!owner.has(stateId)) throw damaged(`holds entries of state "${stateId}", which no object owns`);
        lastList = pending.get(stateId);
        if (lastList === undefined) {
          lastList = { ords: [], values: [] };
          pending.set(stateId, lastList);
        }
        lastId = stateId;
      }
      if (decode) {
        try {
          lastList.ords.push(ord);
          lastList.values.push(decodeValue(text));
        } catch (error) {
          throw damaged(
            `entry "${key}" of state "${stateId}" cannot be decoded: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    }
    if (count !== meta.entry_count) {
      throw damaged(`holds ${count} state entries, its header records ${meta.entry_count}`);
    }
    if (formatSum(s1, s2) !== meta.entry_sum) {
      throw damaged('state entries do not match the header (an entry was lost, added or altered)');
    }
    // Rows were read in key order; entries go back in insertion order.
    for (const [stateId, { ords, values }] of pending) {
      const order = ords.map((_, i) => i).sort((a, b) => (ords[a] as number) - (ords[b] as number));
      const list = owner.get(stateId)?.get(stateId) as unknown[];
      for (const i of order) list.push(values[i]);
    }
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

function damaged(what: string): SluiceError {
  return new SluiceError('STATE_ERROR', `the stored checkpoint is damaged: it ${what}`, {
    hint: 'recover by replaying the journal from the start (discard the checkpoint with clear()), or restore the data directory from a backup',
  });
}

function sqliteCode(error: unknown): string | undefined {
  if (error !== null && typeof error === 'object' && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

// ---- meta ---------------------------------------------------------------------------------------

function metaChecksum(m: MetaRow): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        m.seq,
        m.epoch,
        m.positions,
        m.journal_offset,
        m.created_at,
        m.objects,
        m.entry_count,
        m.entry_sum,
        m.next_ord,
        // Only a checkpoint with a clock checksums it, so older headers still verify.
        ...(m.clock === null || m.clock === undefined ? [] : [m.clock]),
      ]),
    )
    .digest('hex')
    .slice(0, 32);
}

function checkMeta(m: MetaRow): void {
  if (metaChecksum(m) !== m.checksum) throw damaged('has a header row whose checksum does not match');
}

function parseObjects(text: string): StoredObject[] {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) throw new Error('not a list');
    return parsed as StoredObject[];
  } catch {
    throw damaged('has an unreadable object list');
  }
}

function formatSum(s1: number, s2: number): string {
  return s1.toString(16).padStart(8, '0') + s2.toString(16).padStart(8, '0');
}

function parseSum(text: string): [number, number] {
  return [parseInt(text.slice(0, 8), 16), parseInt(text.slice(8, 16), 16)];
}

// ---- entry hash ---------------------------------------------------------------------------------

// Two 32-bit lanes (cyrb53-style mixing) over the insertion sequence and "stateId \x01 key \x01
// value"; results in hashOut1/2 so the hot path allocates nothing.
let hashOut1 = 0;
let hashOut2 = 0;

function hashEntry(stateId: string, key: string, ord: number, value: string): void {
  let h1 = 0xdeadbeef ^ (ord | 0);
  let h2 = 0x41c6ce57 ^ ((ord / LANE) | 0);
  for (const s of [stateId, key, value]) {
    for (let i = 0; i < s.length; i++) {
      const ch = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ 1, 2654435761);
    h2 = Math.imul(h2 ^ 1, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  hashOut1 = h1 >>> 0;
  hashOut2 = h2 >>> 0;
}
