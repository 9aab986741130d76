// Reading the durable checkpoint back (checkpoint-store.ts writes it): one scan of checkpoint_state
// in key order that verifies every row's hash and the header's count and sum, then assembles each
// state's entries from its base blocks and override rows (layout: checkpoint-format.ts).
import type Database from 'better-sqlite3';
import { SluiceError } from '../common/errors.ts';
import type { SourcePositions } from '../common/changes.ts';
import { decodeStored as decodeValue } from '../common/json-codec.ts';
import {
  BLOCK_SUFFIX,
  LANE,
  checkMeta,
  damaged,
  entryHash,
  formatSum,
  hashBlock,
  hashRow,
  parseObjects,
  type RowKind,
} from './checkpoint-format.ts';
import type { CheckpointStatements } from './checkpoint-transaction.ts';
import { columnRows, decodeColumnBlock, type DecodedColumnBlock } from './column-block.ts';

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

export interface CheckpointInfo {
  readonly seq: number;
  readonly epoch: number;
  readonly journalOffset: number;
  readonly createdAt: number;
  readonly entries: number;
}

/** Reads and verifies the stored checkpoint of one database (CheckpointStore.read and verify). */
export class CheckpointScanner {
  private readonly scanStmt;

  constructor(
    private readonly db: Database.Database,
    private readonly stmts: CheckpointStatements,
  ) {
    this.scanStmt = db
      // In key order (the primary key's b-tree, no sort): a state's override rows (`<stateId>`) come
      // before its base blocks (`<stateId>\0b`), which come in block order — the load relies on both.
      .prepare(
        'SELECT state_id, entry_key, ord, value, h1, h2, kind FROM checkpoint_state ORDER BY state_id, entry_key',
      )
      .raw(true);
  }

  scan(decode: boolean): {
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
