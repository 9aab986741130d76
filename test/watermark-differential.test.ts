// Watermarks and late rows against an oracle the test computes itself: the watermark is the running
// max of inserted times minus the delay, an insert is late when below it at the start of its batch
// and not an update; SQLite holds the rows that were not late and runs each view's SELECT. Random
// batches of new rows (some behind), updates to old times, deletes and keyless UPDATEs; after every
// batch the views equal SQLite and SHOW WATERMARKS equals the model. Midway the engine checkpoints
// (incrementally), a fresh engine restores, and both must go on identically. SLUICE_SEED=<n>
// replays one seed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Engine } from '../src/exec/engine.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';

const DELAY = 7;
const DDL = [
  `CREATE TABLE ev (id INT PRIMARY KEY, k INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '${DELAY}' SECOND)`,
  `CREATE TABLE kl (k INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '${DELAY}' SECOND)`,
];
const VIEWS: Record<string, string> = {
  v_rows: 'SELECT id, k, ts FROM ev',
  v_per_k: 'SELECT k, count(*) AS n, max(ts) AS latest FROM ev GROUP BY k',
  v_kl: 'SELECT k, count(*) AS n, min(ts) AS first FROM kl GROUP BY k',
};

const BASE = Date.UTC(2024, 0, 1);

/** Seconds after 2024-01-01 00:00:00 as a timestamp. */
function at(s: number): string {
  const d = new Date(BASE + s * 1000);
  return d.toISOString().replace('T', ' ').slice(0, 19);
}

// Type aliases, not interfaces: they are rows (`Row`, an index signature) as they stand.
type EvRow = { id: number; k: number; ts: string | null };
type KlRow = { k: number; ts: string | null };
type Batch =
  | { table: 'ev'; insert: EvRow[]; delete: { id: number }[] }
  | { table: 'kl'; insert: KlRow[]; delete: KlRow[] };

/** The oracle: which inserts are late, the rows kept, in SQLite; the watermark per table. */
class Model {
  readonly db = new Database(':memory:');
  readonly ev = new Map<number, EvRow>();
  readonly kl: KlRow[] = [];
  readonly mark: Record<string, number | null> = { ev: null, kl: null };
  readonly late: Record<string, number> = { ev: 0, kl: 0 };

  constructor() {
    this.db.exec(
      'CREATE TABLE ev (id INTEGER PRIMARY KEY, k INTEGER, ts TEXT); CREATE TABLE kl (k INTEGER, ts TEXT)',
    );
  }

  private admit(table: string, rows: { ts: string | null }[], exempt: (i: number) => boolean): boolean[] {
    const start = this.mark[table] ?? null;
    let max: number | null = null;
    const keep = rows.map((r, i) => {
      const t = r.ts === null ? null : (Date.parse(`${r.ts.replace(' ', 'T')}Z`) - BASE) / 1000;
      if (!exempt(i) && start !== null && t !== null && t < start) {
        this.late[table]!++;
        return false;
      }
      if (t !== null && (max === null || t > max)) max = t;
      return true;
    });
    if (max !== null && (start === null || max - DELAY > start)) this.mark[table] = max - DELAY;
    return keep;
  }

  apply(b: Batch): void {
    if (b.table === 'ev') {
      const deleted = new Set(b.delete.map((d) => d.id));
      for (const id of deleted) {
        this.ev.delete(id);
        this.db.prepare('DELETE FROM ev WHERE id = ?').run(id);
      }
      const keep = this.admit('ev', b.insert, (i) => {
        const id = b.insert[i]!.id;
        return deleted.has(id) || this.ev.has(id);
      });
      b.insert.forEach((r, i) => {
        if (!keep[i]) return;
        this.ev.set(r.id, r);
        this.db.prepare('INSERT OR REPLACE INTO ev VALUES (?, ?, ?)').run(r.id, r.k, r.ts);
      });
    } else {
      for (const d of b.delete) {
        this.kl.splice(
          this.kl.findIndex((r) => r.k === d.k && r.ts === d.ts),
          1,
        );
        this.db
          .prepare('DELETE FROM kl WHERE rowid = (SELECT min(rowid) FROM kl WHERE k = ? AND ts IS ?)')
          .run(d.k, d.ts);
      }
      // Without a key, as many inserts as the batch deletes are updates.
      const keep = this.admit('kl', b.insert, (i) => i < b.delete.length);
      b.insert.forEach((r, i) => {
        if (!keep[i]) return;
        this.kl.push(r);
        this.db.prepare('INSERT INTO kl VALUES (?, ?)').run(r.k, r.ts);
      });
    }
  }

  rows(view: string): string[] {
    return this.db
      .prepare(VIEWS[view] as string)
      .all()
      .map((r) => JSON.stringify(r))
      .sort();
  }

  watermarks(): string[] {
    return ['ev', 'kl'].map((t) => {
      const m = this.mark[t] ?? null;
      return `${t} ${m === null ? 'null' : at(m)} ${this.late[t]}`;
    });
  }
}

function nextBatch(rng: Rng, model: Model, now: { t: number; id: number }): Batch {
  now.t += rng.int(0, 4);
  const time = (): string | null => (rng.chance(0.05) ? null : at(now.t + rng.int(-15, 3)));
  const ids = [...model.ev.keys()];
  const roll = rng.int(0, 9);
  if (roll <= 3 || ids.length === 0) {
    const n = rng.int(1, 4);
    return {
      table: 'ev',
      insert: Array.from({ length: n }, () => ({ id: now.id++, k: rng.int(0, 3), ts: time() })),
      delete: [],
    };
  }
  if (roll === 4) {
    // An update to a time far behind the watermark: never late.
    const id = rng.pick(ids);
    return { table: 'ev', insert: [{ id, k: rng.int(0, 3), ts: at(now.t - 100) }], delete: [] };
  }
  if (roll === 5) {
    // A delete, and a new row behind in the same batch (late: its key is new).
    const id = rng.pick(ids);
    return { table: 'ev', insert: [{ id: now.id++, k: 1, ts: at(now.t - 30) }], delete: [{ id }] };
  }
  if (roll === 6 && model.kl.length > 0) {
    const old = rng.pick(model.kl);
    return {
      table: 'kl',
      insert: [
        { k: old.k, ts: at(now.t - 50) },
        { k: 9, ts: time() },
      ],
      delete: [{ ...old }],
    };
  }
  // Now and then 70 rows: an insert-only batch this large goes column by column (table-store.ts).
  return {
    table: 'kl',
    insert: Array.from({ length: roll === 9 && rng.chance(0.3) ? 70 : rng.int(1, 3) }, () => ({
      k: rng.int(0, 2),
      ts: time(),
    })),
    delete: [],
  };
}

function engineRows(e: Engine, view: string): string[] {
  return e
    .viewSnapshot(view)
    .rows.map((r) => JSON.stringify(r))
    .sort();
}

function engineWatermarks(e: Engine): string[] {
  const rows = e.execute('SHOW WATERMARKS')[0]?.rows ?? [];
  return rows.map((r) => `${String(r['name'])} ${String(r['watermark'])} ${String(r['late_rows'])}`);
}

function setup(): Engine {
  const e = new Engine();
  e.setStateTracking(true);
  for (const sql of DDL) e.execute(sql);
  for (const [name, sql] of Object.entries(VIEWS)) e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${sql}`);
  return e;
}

function runSeed(seed: number): { late: number; kept: number } {
  const rng = new Rng(seed);
  const model = new Model();
  const now = { t: 0, id: 1 };
  let engine = setup();
  const store = new MemoryCheckpointStore();
  const restoreAt = rng.int(30, 90);
  let shadow: Engine | null = null;
  for (let i = 0; i < 120; i++) {
    const b = nextBatch(rng, model, now);
    const where = `seed ${seed}, batch ${i}: ${JSON.stringify(b)}`;
    for (const e of shadow === null ? [engine] : [engine, shadow])
      e.applyChanges(b.table, { insert: b.insert, delete: b.delete });
    model.apply(b);
    for (const e of shadow === null ? [engine] : [engine, shadow]) {
      for (const view of Object.keys(VIEWS))
        assert.deepEqual(engineRows(e, view), model.rows(view), `${where}\nview ${view}`);
      assert.deepEqual(engineWatermarks(e), model.watermarks(), `${where}\nSHOW WATERMARKS`);
    }
    if (shadow === null && rng.chance(0.2)) store.write(engine.takeCheckpoint(rng.chance(0.1)));
    if (i === restoreAt) {
      // The restored engine goes on beside the original: both must match the model from now on.
      store.write(engine.takeCheckpoint());
      const restored = setup();
      assert.deepEqual(restored.loadCheckpoint(store.read()).rebuilt, [], `${where}\nviews rebuilt`);
      assert.deepEqual(
        engineWatermarks(restored),
        model.watermarks(),
        `${where}\nwatermarks after the restore`,
      );
      shadow = engine;
      engine = restored;
    }
  }
  return { late: model.late['ev']! + model.late['kl']!, kept: model.ev.size + model.kl.length };
}

test('watermarks and late rows equal the oracle, and survive a checkpoint restore', (t) => {
  const only = process.env['SLUICE_SEED'];
  const seeds =
    only !== undefined ? [Number(only)] : Array.from({ length: 12 }, (_, i) => deriveSeed(4242, i));
  let late = 0;
  let kept = 0;
  for (const seed of seeds) {
    const r = runSeed(seed);
    late += r.late;
    kept += r.kept;
  }
  // The workload must exercise both sides, or the comparison checks little.
  assert.ok(late > 50 && kept > 100, `late ${late}, kept ${kept}`);
  t.diagnostic(`${seeds.length} seeds: ${late} late rows dropped, ${kept} rows kept`);
});
