// The checkpoint file's format, shared by the store that reads and writes it on the main thread and
// the worker that writes it off the main thread: the schema, the header row and its checksum, and
// the per-row hash that makes a damaged or tampered checkpoint detectable.
//
// Rows of `checkpoint_state` (one table, primary key (state_id, entry_key)):
//  - BASE BLOCKS: a state written whole (a full checkpoint, or a replacing delta) is stored as rows
//    under `<stateId>\0b` (BLOCK_SUFFIX), entry_key the block number (zero-padded, so key order is
//    block order), ord the number of entries in the block, value `["k1","k2",…]\n[v1,v2,…]` (the keys,
//    a newline, the values as their stored JSON) in the state's insertion order. Loading a block is
//    one SQLite row and one JSON.parse of its values for up to BLOCK_ENTRIES entries instead of a
//    row each; its keys are parsed only when the state has override rows to apply.
//  - COLUMN BLOCKS: a table's base block (state `table:<name>`) whose entries are rows of one width
//    is stored the same way but as kind 'c', its value binary (column-block.ts): numbers as float64,
//    other columns as the stored JSON of their values, and the keys' JSON list. Its hash (hashBlock)
//    covers `<stateId>\0c`, the key, the entry count and the bytes. Both writers build it from the
//    rows by the same rule (table-blocks.ts), so the file is the same whichever thread wrote it.
//  - OVERRIDE rows under `<stateId>`, one per key changed by an incremental checkpoint since the
//    state's base was written, told apart by `kind`:
//      'v' an upsert: replaces the base entry of its key in place (an update keeps its position),
//          else is appended, in `ord` (insertion sequence) order;
//      't' a tombstone: the key was deleted (it may be in a base block), value '' and ord 0;
//      'm' a moved upsert: the key was deleted at an earlier checkpoint and inserted again, so it
//          leaves its base position and is appended in `ord` order, as a re-inserted Map key is.
//    A file written before blocks existed holds 'v' rows only and loads exactly as it always did.
// Hashes: a 'v' row and a block row hash (state id, key, ord, value) as entries always did; a 't'
// or 'm' row hashes with `<stateId>\0t` / `<stateId>\0m` as its state id, so changing a row's kind
// is detected. The header keeps the row count and the multiset sum of all row hashes, plus (new)
// the base entries and override rows, from which the store decides to compact (needsFull).
// An older Sluice refuses a kind 'c' row as damaged (an unknown kind), so it replays the journal.
// An older Sluice opening a new file refuses it as damaged (STATE_ERROR → journal replay): its
// checksum of the header does not cover the new columns, and block rows belong to no state it knows.
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { SluiceError } from '../common/errors.ts';

export const SCHEMA = `
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
  checksum TEXT NOT NULL,
  clock INTEGER,
  base_entries INTEGER,
  override_rows INTEGER
);
CREATE TABLE IF NOT EXISTS checkpoint_state (
  state_id TEXT NOT NULL,
  entry_key TEXT NOT NULL,
  ord INTEGER NOT NULL,
  value TEXT NOT NULL,
  h1 INTEGER NOT NULL,
  h2 INTEGER NOT NULL,
  kind TEXT NOT NULL DEFAULT 'v',
  PRIMARY KEY (state_id, entry_key)
) WITHOUT ROWID;
`;

/** Creates the tables, and adds the columns a file written by an older Sluice lacks. */
export function openSchema(db: Database.Database): void {
  db.exec(SCHEMA);
  addColumn(db, 'checkpoint_meta', 'clock', 'INTEGER');
  addColumn(db, 'checkpoint_meta', 'base_entries', 'INTEGER');
  addColumn(db, 'checkpoint_meta', 'override_rows', 'INTEGER');
  addColumn(db, 'checkpoint_state', 'kind', "TEXT NOT NULL DEFAULT 'v'");
}

function addColumn(db: Database.Database, table: string, column: string, type: string): void {
  const columns = db.pragma(`table_info(${table})`) as { name: string }[];
  if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
}

/** The state id suffix of a state's base blocks. */
export const BLOCK_SUFFIX = '\u0000b';
/** A base block holds at most this many entries, or about BLOCK_CHARS characters. */
export const BLOCK_ENTRIES = 2048;
export const BLOCK_CHARS = 64 * 1024;
/**
 * Compaction: the next checkpoint is full once override rows exceed this fraction of the base
 * entries (and COMPACT_MIN_ROWS), so loads stay block-fast and the file does not grow without bound.
 */
export const COMPACT_FRACTION = 0.25;
export const COMPACT_MIN_ROWS = 4096;
/**
 * A checkpoint is encoded on the server's thread in slices of about this many ms, epochs running
 * between them: an epoch that arrives during a slice waits for its end (`--checkpoint-slice-ms`).
 */
export const CHECKPOINT_SLICE_MS = 5;

/** True when the stored layout calls for a full checkpoint (compaction). */
export function wantsCompaction(m: MetaRow): boolean {
  const base = m.base_entries ?? 0;
  const overrides = m.override_rows ?? m.entry_count; // an old file: every row is per-entry
  return overrides > COMPACT_MIN_ROWS && overrides > base * COMPACT_FRACTION;
}

export type RowKind = 'v' | 't' | 'm';

/** The hash of one override row (a 'v' row hashes as entries always did). */
export function hashRow(stateId: string, kind: string, key: string, ord: number, value: string): void {
  hashEntry(kind === 'v' ? stateId : `${stateId}\u0000${kind}`, key, ord, value);
}

export interface MetaRow {
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
  /** Entries in base blocks and override rows; NULL in a file written before blocks existed. */
  base_entries: number | null;
  override_rows: number | null;
}

export interface StoredObject {
  readonly name: string;
  readonly kind: 'table' | 'view';
  readonly fingerprint: string;
  readonly parts: readonly string[];
}

export const LANE = 4294967296;

export function damaged(what: string): SluiceError {
  return new SluiceError('STATE_ERROR', `the stored checkpoint is damaged: it ${what}`, {
    hint: 'recover by replaying the journal from the start (discard the checkpoint with clear()), or restore the data directory from a backup',
  });
}

export function sqliteCode(error: unknown): string | undefined {
  if (error !== null && typeof error === 'object' && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

// ---- meta ---------------------------------------------------------------------------------------

export function metaChecksum(m: MetaRow): string {
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
        // Likewise the block layout's counts (an older reader's checksum then fails: it refuses).
        ...(m.base_entries === null || m.base_entries === undefined ? [] : [m.base_entries, m.override_rows]),
      ]),
    )
    .digest('hex')
    .slice(0, 32);
}

export function checkMeta(m: MetaRow): void {
  if (metaChecksum(m) !== m.checksum) throw damaged('has a header row whose checksum does not match');
}

export function parseObjects(text: string): StoredObject[] {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) throw new Error('not a list');
    return parsed as StoredObject[];
  } catch {
    throw damaged('has an unreadable object list');
  }
}

export function formatSum(s1: number, s2: number): string {
  return s1.toString(16).padStart(8, '0') + s2.toString(16).padStart(8, '0');
}

export function parseSum(text: string): [number, number] {
  return [parseInt(text.slice(0, 8), 16), parseInt(text.slice(8, 16), 16)];
}

// ---- entry hash ---------------------------------------------------------------------------------

// Two 32-bit lanes (cyrb53-style mixing) over the insertion sequence and "stateId \x01 key \x01
// value"; results in `entryHash[0]`, `entryHash[1]` so the hot path allocates nothing.
export const entryHash = new Uint32Array(2);

/** The two lanes while a hash is taken (int32, as Math.imul leaves them). */
const lanes = new Int32Array(2);

function startLanes(ord: number): void {
  lanes[0] = 0xdeadbeef ^ (ord | 0);
  lanes[1] = 0x41c6ce57 ^ ((ord / LANE) | 0);
}

/** Mixes a string's UTF-16 code units into the lanes, then a separator. */
function mixText(s: string): void {
  let h1 = lanes[0] as number;
  let h2 = lanes[1] as number;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  lanes[0] = Math.imul(h1 ^ 1, 2654435761);
  lanes[1] = Math.imul(h2 ^ 1, 1597334677);
}

/** The final avalanche of the lanes into `entryHash`. */
function finishLanes(): void {
  let h1 = lanes[0] as number;
  let h2 = lanes[1] as number;
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  entryHash[0] = h1 >>> 0;
  entryHash[1] = h2 >>> 0;
}

export function hashEntry(stateId: string, key: string, ord: number, value: string): void {
  startLanes(ord);
  mixText(stateId);
  mixText(key);
  mixText(value);
  finishLanes();
}

/**
 * The hash of a column block ('c' row): like `hashEntry` over `<stateId>\0c`, the key and the block
 * number of entries, then the bytes four at a time (a million rows' numbers hash in a few ms).
 */
export function hashBlock(stateId: string, key: string, ord: number, bytes: Uint8Array): void {
  startLanes(ord);
  mixText(stateId);
  mixText(COLUMN_BLOCK_TAG);
  mixText(key);
  let h1 = lanes[0] as number;
  let h2 = lanes[1] as number;
  const words = bytes.length >> 2;
  // An aligned view reads the words in place; a stored blob that is not aligned is read byte-wise.
  const aligned = bytes.byteOffset % 4 === 0 ? new Int32Array(bytes.buffer, bytes.byteOffset, words) : null;
  for (let w = 0; w < words; w++) {
    const x =
      aligned !== null
        ? (aligned[w] as number)
        : (bytes[w * 4] as number) |
          ((bytes[w * 4 + 1] as number) << 8) |
          ((bytes[w * 4 + 2] as number) << 16) |
          ((bytes[w * 4 + 3] as number) << 24);
    h1 = Math.imul(h1 ^ x, 2654435761);
    h2 = Math.imul(h2 ^ x, 1597334677);
  }
  for (let i = words * 4; i < bytes.length; i++) {
    const x = bytes[i] as number;
    h1 = Math.imul(h1 ^ x, 2654435761);
    h2 = Math.imul(h2 ^ x, 1597334677);
  }
  lanes[0] = Math.imul(h1 ^ bytes.length, 2654435761);
  lanes[1] = Math.imul(h2 ^ bytes.length, 1597334677);
  finishLanes();
}

const COLUMN_BLOCK_TAG = '\u0000c';
