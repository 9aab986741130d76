// The checkpoint file's block layout against a model of the per-entry layout it replaced: random
// full and incremental checkpoints (upserts, deletes, re-inserts, replacing deltas, dropped states)
// read back with the same entries in the same order; files written the old way still load and take
// incremental writes; damaged blocks are refused; overrides trigger compaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SluiceError } from '../../src/common/errors.ts';
import { encodeStored } from '../../src/common/json-codec.ts';
import {
  CheckpointStore,
  type CheckpointInput,
  type CheckpointObjectInput,
} from '../../src/storage/checkpoint-store.ts';
import {
  COMPACT_MIN_ROWS,
  entryHash,
  formatSum,
  hashEntry,
  metaChecksum,
  LANE,
} from '../../src/storage/checkpoint-format.ts';

type Delta = { replaceAll: boolean; upserts: [string, unknown][]; deletes: string[] };

/** Today's semantics, as the per-entry layout stored them: ord order, an update keeps its ord. */
class Model {
  readonly states = new Map<string, Map<string, { ord: number; value: unknown }>>();
  private nextOrd = 0;

  apply(full: boolean, parts: Map<string, Delta>): void {
    if (full) {
      this.states.clear();
      this.nextOrd = 0;
    }
    for (const id of [...this.states.keys()]) if (!parts.has(id)) this.states.delete(id);
    for (const [id, d] of parts) {
      let s = this.states.get(id);
      if (s === undefined || d.replaceAll) {
        s = new Map();
        this.states.set(id, s);
      }
      if (!d.replaceAll) for (const k of d.deletes) s.delete(k);
      for (const [k, v] of d.upserts) {
        const old = s.get(k);
        if (old !== undefined) old.value = v;
        else s.set(k, { ord: this.nextOrd++, value: v });
      }
    }
  }

  values(id: string): unknown[] {
    const s = this.states.get(id) ?? new Map();
    return [...s.values()].sort((a, b) => a.ord - b.ord).map((e) => e.value);
  }

  /** The current entries of a state in model order (what a full checkpoint hands out). */
  entries(id: string): [string, unknown][] {
    const s = this.states.get(id) ?? new Map();
    return [...s.entries()].sort((a, b) => a[1].ord - b[1].ord).map(([k, e]) => [k, e.value]);
  }
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const OBJECTS: Record<string, string[]> = { a: ['a/0', 'a/1'], b: ['b/0'] };

function input(epoch: number, parts: Map<string, Delta>): CheckpointInput {
  const objects: CheckpointObjectInput[] = [];
  for (const [name, ids] of Object.entries(OBJECTS)) {
    const own = ids.filter((id) => parts.has(id));
    if (own.length === 0) continue;
    objects.push({
      name,
      kind: 'table',
      fingerprint: `f-${name}`,
      parts: own.map((stateId) => ({ stateId, delta: parts.get(stateId) as Delta })),
    });
  }
  return { epoch, positions: {}, objects };
}

function randomValue(r: () => number, i: number): unknown {
  const x = Math.floor(r() * 1000);
  if (x % 7 === 0) return { n: BigInt(x) * 10n ** 20n, i };
  if (x % 11 === 0) return [x, 'text "$i" here', -0];
  return { x, i };
}

function assertEqualToModel(store: CheckpointStore, model: Model, what: string): void {
  const read = store.read() ?? assert.fail('stored');
  for (const [name, ids] of Object.entries(OBJECTS)) {
    for (const id of ids) {
      const got = read.checkpoint.objects.get(name)?.parts.get(id);
      const want = model.states.has(id) ? model.values(id) : undefined;
      assert.deepEqual(got, want, `${what}: state ${id}`);
    }
  }
}

/** One random sequence of checkpoints; `db` may already hold an old-format file the model matches. */
function runSequence(
  seed: number,
  db: Database.Database,
  model: Model,
  firstEpoch: number,
  steps: number,
): number {
  const r = rng(seed);
  const store = new CheckpointStore(db);
  let epoch = firstEpoch;
  let counter = seed * 100_000;
  const live = new Set(model.states.keys());
  for (let step = 0; step < steps; step++) {
    epoch++;
    const full = store.info() === null || r() < 0.12;
    const parts = new Map<string, Delta>();
    for (const id of Object.values(OBJECTS).flat()) {
      // A state dropped for a while (its object gone), then created again by a replacing delta.
      if (!full && id === 'b/0' && r() < 0.08) {
        if (live.has(id)) {
          live.delete(id);
          continue;
        }
      }
      if (!live.has(id) && !full) {
        if (r() < 0.5) continue;
      }
      const created = !live.has(id);
      live.add(id);
      const current = model.states.has(id) ? model.entries(id) : [];
      if (full) {
        parts.set(id, { replaceAll: true, upserts: current, deletes: [] });
        continue;
      }
      if (created || r() < 0.08) {
        const n = Math.floor(r() * 40);
        const upserts: [string, unknown][] = [];
        const seen = new Set<string>();
        for (let i = 0; i < n; i++) {
          const k = `k${Math.floor(r() * 80)}`;
          if (seen.has(k)) continue;
          seen.add(k);
          upserts.push([k, randomValue(r, counter++)]);
        }
        parts.set(id, { replaceAll: true, upserts, deletes: [] });
        continue;
      }
      // Incremental: distinct changed keys; a key may be deleted and upserted (re-inserted) at once.
      const upserts = new Map<string, unknown>();
      const deletes = new Set<string>();
      const ops = Math.floor(r() * 25);
      for (let i = 0; i < ops; i++) {
        const k = `k${Math.floor(r() * 80)}`;
        const op = r();
        if (op < 0.35) {
          deletes.add(k);
          upserts.delete(k);
        } else if (op < 0.45) {
          deletes.add(k);
          upserts.set(k, randomValue(r, counter++));
        } else {
          upserts.set(k, randomValue(r, counter++));
        }
      }
      parts.set(id, { replaceAll: false, upserts: [...upserts], deletes: [...deletes] });
    }
    model.apply(full, parts);
    const stats = store.write(input(epoch, parts), epoch);
    assert.equal(stats.full, full);
    assertEqualToModel(store, model, `seed ${seed} step ${step}${full ? ' (full)' : ''}`);
    assert.ok(store.verify() !== null);
  }
  return epoch;
}

test('random full and incremental checkpoints read back equal to the per-entry model, entries and order', () => {
  for (let seed = 1; seed <= 30; seed++) {
    const db = new Database(':memory:');
    runSequence(seed, db, new Model(), 0, 40);
    db.close();
  }
});

/** Writes the model as a file of the per-entry layout, as Sluice wrote it before blocks. */
function writeOldFormat(db: Database.Database, model: Model, epoch: number): void {
  db.exec(`
CREATE TABLE checkpoint_meta (
  id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, epoch INTEGER NOT NULL,
  positions TEXT NOT NULL, journal_offset INTEGER NOT NULL, created_at INTEGER NOT NULL,
  objects TEXT NOT NULL, entry_count INTEGER NOT NULL, entry_sum TEXT NOT NULL,
  next_ord INTEGER NOT NULL, checksum TEXT NOT NULL, clock INTEGER);
CREATE TABLE checkpoint_state (
  state_id TEXT NOT NULL, entry_key TEXT NOT NULL, ord INTEGER NOT NULL, value TEXT NOT NULL,
  h1 INTEGER NOT NULL, h2 INTEGER NOT NULL, PRIMARY KEY (state_id, entry_key)) WITHOUT ROWID;`);
  const insert = db.prepare(
    'INSERT INTO checkpoint_state (state_id, entry_key, ord, value, h1, h2) VALUES (?, ?, ?, ?, ?, ?)',
  );
  let count = 0;
  let s1 = 0;
  let s2 = 0;
  let nextOrd = 0;
  for (const [id, s] of model.states) {
    for (const [k, e] of s) {
      const text = encodeStored(e.value);
      hashEntry(id, k, e.ord, text);
      insert.run(id, k, e.ord, text, entryHash[0], entryHash[1]);
      count++;
      s1 = (s1 + (entryHash[0] as number)) % LANE;
      s2 = (s2 + (entryHash[1] as number)) % LANE;
      nextOrd = Math.max(nextOrd, e.ord + 1);
    }
  }
  const objects = Object.entries(OBJECTS)
    .filter(([, ids]) => ids.some((id) => model.states.has(id)))
    .map(([name, ids]) => ({
      name,
      kind: 'table',
      fingerprint: `f-${name}`,
      parts: ids.filter((id) => model.states.has(id)),
    }));
  const meta = {
    seq: 1,
    epoch,
    positions: '{}',
    journal_offset: epoch,
    created_at: 0,
    objects: JSON.stringify(objects),
    entry_count: count,
    entry_sum: formatSum(s1, s2),
    next_ord: nextOrd,
    checksum: '',
    clock: null,
    base_entries: null,
    override_rows: null,
  };
  meta.checksum = metaChecksum(meta);
  db.prepare(
    `INSERT INTO checkpoint_meta (id, seq, epoch, positions, journal_offset, created_at, objects, entry_count, entry_sum, next_ord, checksum, clock)
     VALUES (1, @seq, @epoch, @positions, @journal_offset, @created_at, @objects, @entry_count, @entry_sum, @next_ord, @checksum, @clock)`,
  ).run(meta);
}

test('a file written in the per-entry layout loads as before and takes incremental writes', () => {
  for (let seed = 101; seed <= 115; seed++) {
    // Build a history in the model (with deletes and re-inserts, so ords have gaps), store it the
    // old way, then read and continue it with the block-writing code.
    const r = rng(seed);
    const model = new Model();
    for (let step = 0; step < 6; step++) {
      const parts = new Map<string, Delta>();
      for (const id of Object.values(OBJECTS).flat()) {
        const upserts: [string, unknown][] = [];
        const seen = new Set<string>();
        for (let i = 0; i < 15; i++) {
          const k = `k${Math.floor(r() * 40)}`;
          if (!seen.has(k)) upserts.push([k, { step, i }]);
          seen.add(k);
        }
        const deletes = [`k${Math.floor(r() * 40)}`, `k${Math.floor(r() * 40)}`];
        parts.set(id, { replaceAll: false, upserts, deletes });
      }
      model.apply(false, parts);
    }
    const db = new Database(':memory:');
    writeOldFormat(db, model, 6);
    const store = new CheckpointStore(db);
    assertEqualToModel(store, model, `seed ${seed} old file`);
    runSequence(seed, db, model, 6, 15);
    db.close();
  }
});

function isStateError(pattern: RegExp): (e: unknown) => boolean {
  return (e) => e instanceof SluiceError && e.code === 'STATE_ERROR' && pattern.test(e.message);
}

function bigState(n: number, prefix = 'k'): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (let i = 0; i < n; i++) out.push([`${prefix}${i}`, { i, s: `v${i}` }]);
  return out;
}

test('a damaged block is refused: altered text, a lost block, a changed row kind', () => {
  const damages: { name: string; sql: string; pattern: RegExp }[] = [
    {
      name: 'block text altered',
      sql: "UPDATE checkpoint_state SET value = replace(value, 'v17', 'v71') WHERE state_id = 'a/0' || char(0) || 'b' AND value LIKE '%v17%'",
      pattern: /corrupted/,
    },
    {
      name: 'block lost',
      sql: "DELETE FROM checkpoint_state WHERE state_id = 'a/0' || char(0) || 'b' AND entry_key = '0000000001'",
      pattern: /holds \d+ state entries, its header records/,
    },
    {
      name: 'block entry count altered',
      sql: "UPDATE checkpoint_state SET ord = ord - 1 WHERE state_id = 'a/0' || char(0) || 'b'",
      pattern: /corrupted/,
    },
    {
      name: 'tombstone turned into an upsert',
      sql: "UPDATE checkpoint_state SET kind = 'v' WHERE kind = 't'",
      pattern: /corrupted/,
    },
    {
      name: 'unknown kind',
      sql: "UPDATE checkpoint_state SET kind = 'x' WHERE kind = 'm'",
      pattern: /unknown kind/,
    },
  ];
  for (const d of damages) {
    const db = new Database(':memory:');
    const store = new CheckpointStore(db);
    const parts = new Map<string, Delta>([
      ['a/0', { replaceAll: true, upserts: bigState(5000), deletes: [] }],
      ['a/1', { replaceAll: true, upserts: [], deletes: [] }],
    ]);
    store.write(input(1, parts), 1);
    parts.set('a/0', { replaceAll: false, upserts: [['k5', 1]], deletes: ['k3', 'k5'] });
    store.write(input(2, parts), 2);
    assert.ok(store.read() !== null);
    assert.ok(db.prepare(d.sql).run().changes > 0, `${d.name}: the damage applied`);
    assert.throws(() => store.read(), isStateError(d.pattern), d.name);
    assert.throws(() => store.verify(), isStateError(d.pattern), d.name);
    db.close();
  }
});

test('override rows past a quarter of the base entries make the next checkpoint full, which compacts', () => {
  const db = new Database(':memory:');
  const store = new CheckpointStore(db);
  const model = new Model();
  const base = 4 * COMPACT_MIN_ROWS + 400;
  let parts = new Map<string, Delta>([['a/0', { replaceAll: true, upserts: bigState(base), deletes: [] }]]);
  model.apply(true, parts);
  const first = store.write(input(1, parts), 1);
  assert.equal(first.baseEntries, base);
  assert.ok(first.entries < base / 500, `${first.entries} rows hold ${base} entries`);
  assert.equal(store.needsFull, false);
  // Updates, deletes and new keys: a row each, until they pass a quarter of the base.
  let epoch = 1;
  let written = 0;
  while (written <= base / 4) {
    epoch++;
    const upserts: [string, unknown][] = [];
    for (let i = 0; i < 300; i++) upserts.push([`k${written + i}`, { updated: epoch }]);
    upserts.push([`new${epoch}`, epoch]);
    parts = new Map([['a/0', { replaceAll: false, upserts, deletes: [`k${base - epoch}`] }]]);
    model.apply(false, parts);
    const stats = store.write(input(epoch, parts), epoch);
    written = stats.overrideRows;
    assert.equal(store.needsFull, written > base / 4, `after ${written} override rows`);
  }
  assertEqualToModel(store, model, 'before compaction');
  epoch++;
  parts = new Map([['a/0', { replaceAll: true, upserts: model.entries('a/0'), deletes: [] }]]);
  model.apply(true, parts);
  const compacted = store.write(input(epoch, parts), epoch);
  assert.equal(compacted.overrideRows, 0);
  assert.equal(store.needsFull, false);
  assertEqualToModel(store, model, 'after compaction');
  db.close();
});

test('a file in the per-entry layout with many rows is rewritten as blocks at the next checkpoint', () => {
  const model = new Model();
  model.apply(
    false,
    new Map([['a/0', { replaceAll: false, upserts: bigState(COMPACT_MIN_ROWS + 1), deletes: [] }]]),
  );
  const db = new Database(':memory:');
  writeOldFormat(db, model, 1);
  const store = new CheckpointStore(db);
  assert.equal(store.needsFull, true);
  assertEqualToModel(store, model, 'old file');
  db.close();
});
