// The checkpoint file's format, shared by the store that reads and writes it on the main thread and
// the worker that writes it off the main thread: the schema, the header row and its checksum, and
// the per-entry hash that makes a damaged or tampered checkpoint detectable.
import { createHash } from 'node:crypto';
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

export function hashEntry(stateId: string, key: string, ord: number, value: string): void {
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
  entryHash[0] = h1 >>> 0;
  entryHash[1] = h2 >>> 0;
}
