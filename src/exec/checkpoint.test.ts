// Checkpoint round trips: an engine that takes incremental checkpoints while a seeded workload runs
// must be restorable from them (catalog by DDL replay, state from the checkpoint, the rest by
// replaying later batches) into an engine whose views and changelogs equal the original's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../types.ts';
import type { ViewChangeSet } from './api.ts';
import type { EngineCheckpoint, StoredCheckpoint } from './engine.ts';
import { Engine } from './engine.ts';

const DDL = [
  'CREATE TABLE orders (id BIGINT PRIMARY KEY, seller_id INT NOT NULL, amount INT NOT NULL, tag TEXT)',
  'CREATE TABLE events (kind TEXT, v DOUBLE PRECISION)',
  'CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total, MIN(amount) AS lo, MAX(tag) AS hi, COUNT(DISTINCT tag) AS tags FROM orders GROUP BY seller_id',
  'CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)',
  'CREATE MATERIALIZED VIEW kinds AS SELECT DISTINCT kind FROM events',
  'CREATE MATERIALIZED VIEW big_events AS SELECT kind, v FROM events WHERE v > 0.5',
  'CREATE MATERIALIZED VIEW everything AS SELECT COUNT(*) AS n, SUM(v) AS s FROM events',
  'CREATE MATERIALIZED VIEW ratios AS SELECT id, 100 / (amount - 50) AS r FROM orders',
];

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Step = { table: string; insert: Row[]; delete: Row[] };

function workload(seed: number, epochs: number): Step[] {
  const rnd = mulberry32(seed);
  const live = new Map<number, Row>();
  const events: Row[] = [];
  let nextId = 1;
  const steps: Step[] = [];
  for (let e = 0; e < epochs; e++) {
    if (rnd() < 0.6) {
      const insert: Row[] = [];
      const del: Row[] = [];
      const n = 1 + Math.floor(rnd() * 20);
      const before = [...live.keys()];
      for (let i = 0; i < n; i++) {
        if (before.length > 0 && rnd() < 0.3) {
          const ids = before.filter((id) => live.has(id));
          if (ids.length === 0) continue;
          const id = ids[Math.floor(rnd() * ids.length)] as number;
          if (del.some((r) => r.id === id)) continue;
          del.push({ id });
          live.delete(id);
        } else {
          const existing = before.filter((x) => live.has(x));
          const id = rnd() < 0.2 && existing.length > 0 ? (existing[0] as number) : nextId++;
          if (del.some((r) => r.id === id) || insert.some((r) => r.id === id)) continue;
          const row = {
            id,
            seller_id: Math.floor(rnd() * 8),
            amount: Math.floor(rnd() * 100),
            tag: rnd() < 0.2 ? null : `t${Math.floor(rnd() * 5)}`,
          };
          insert.push(row);
          live.set(id, row);
        }
      }
      steps.push({ table: 'orders', insert, delete: del });
    } else {
      const insert: Row[] = [];
      const del: Row[] = [];
      const n = 1 + Math.floor(rnd() * 10);
      for (let i = 0; i < n; i++) {
        if (events.length > 0 && rnd() < 0.35)
          del.push(events.splice(Math.floor(rnd() * events.length), 1)[0] as Row);
        else insert.push({ kind: `k${Math.floor(rnd() * 4)}`, v: Math.floor(rnd() * 8) / 8 });
      }
      events.push(...insert);
      steps.push({ table: 'events', insert, delete: del });
    }
  }
  return steps;
}

/** A stand-in for the SQLite checkpoint store: applies deltas and round-trips values through JSON. */
class MemoryCheckpointStore {
  private epoch = 0;
  private positions = {};
  private readonly objects = new Map<
    string,
    { fingerprint: string; parts: Map<string, Map<string, string>> }
  >();

  write(cp: EngineCheckpoint): void {
    const live = new Set(cp.objects.map((o) => o.name));
    for (const name of [...this.objects.keys()]) if (!live.has(name)) this.objects.delete(name);
    for (const o of cp.objects) {
      let obj = this.objects.get(o.name);
      if (obj === undefined || obj.fingerprint !== o.fingerprint) {
        obj = { fingerprint: o.fingerprint, parts: new Map() };
        this.objects.set(o.name, obj);
      }
      for (const p of o.parts) {
        let entries = obj.parts.get(p.stateId);
        if (entries === undefined || p.delta.replaceAll) {
          entries = new Map();
          obj.parts.set(p.stateId, entries);
        }
        for (const k of p.delta.deletes) entries.delete(k);
        for (const [k, v] of p.delta.upserts) entries.set(k, encode(v));
      }
    }
    this.epoch = cp.epoch;
    this.positions = cp.positions;
  }

  read(): StoredCheckpoint {
    return {
      epoch: this.epoch,
      positions: this.positions,
      objects: new Map(
        [...this.objects].map(([name, o]) => [
          name,
          {
            fingerprint: o.fingerprint,
            parts: new Map([...o.parts].map(([id, entries]) => [id, [...entries.values()].map(decode)])),
          },
        ]),
      ),
    };
  }
}

function encode(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? { $big: x.toString() } : x));
}

function decode(s: string): unknown {
  return JSON.parse(s, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && '$big' in x ? BigInt((x as { $big: string }).$big) : x,
  );
}

function snapshotAll(engine: Engine): string {
  return engine
    .catalog()
    .views.map((v) => {
      try {
        return `${v.name}: ${JSON.stringify(
          engine
            .viewSnapshot(v.name)
            .rows.map((r) => JSON.stringify(r, big))
            .sort(),
        )}`;
      } catch (e) {
        return `${v.name}: error ${(e as Error).message} ${JSON.stringify(engine.viewErrors(v.name), big)}`;
      }
    })
    .join('\n');
}

function big(_k: string, x: unknown): unknown {
  return typeof x === 'bigint' ? `${x}n` : x;
}

for (const seed of [1, 2, 3, 4, 5, 6]) {
  test(`restore from incremental checkpoints equals the uninterrupted run (seed ${seed})`, () => {
    const steps = workload(seed, 120);
    const original = new Engine();
    original.setStateTracking(true);
    original.execute(DDL.join(';'));
    const store = new MemoryCheckpointStore();
    const rnd = mulberry32(seed * 7919);
    const restoreAt = 30 + Math.floor(rnd() * 60);
    let checkpointAfter = 0;
    for (let i = 0; i < restoreAt; i++) {
      const s = steps[i] as Step;
      original.applyChanges(s.table, { insert: s.insert, delete: s.delete });
      if (rnd() < 0.2) {
        store.write(original.takeCheckpoint());
        checkpointAfter = i + 1;
      }
    }
    store.write(original.takeCheckpoint());
    checkpointAfter = restoreAt;

    const restored = new Engine();
    restored.setStateTracking(true);
    restored.execute(DDL.join(';'));
    const { rebuilt } = restored.loadCheckpoint(store.read());
    assert.deepEqual(rebuilt, []);
    assert.equal(restored.epoch, original.epoch);
    assert.equal(snapshotAll(restored), snapshotAll(original), `seed ${seed}: state right after restore`);

    const seen = (e: Engine): ViewChangeSet[] => {
      const out: ViewChangeSet[] = [];
      for (const v of e.catalog().views) e.subscribe(v.name, (c) => out.push(c));
      return out;
    };
    const a = seen(original);
    const b = seen(restored);
    for (let i = checkpointAfter; i < steps.length; i++) {
      const s = steps[i] as Step;
      original.applyChanges(s.table, { insert: s.insert, delete: s.delete });
      restored.applyChanges(s.table, { insert: s.insert, delete: s.delete });
      if (i % 17 === 0) store.write(restored.takeCheckpoint());
    }
    assert.equal(JSON.stringify(b, big), JSON.stringify(a, big), `seed ${seed}: changelogs after restore`);
    assert.equal(snapshotAll(restored), snapshotAll(original));
  });
}

test('a view whose plan fingerprint changed is rebuilt from its inputs, not restored', () => {
  const original = new Engine();
  original.execute(DDL.slice(0, 4).join(';'));
  for (const s of workload(9, 40).filter((x) => x.table === 'orders'))
    original.applyChanges(s.table, { insert: s.insert, delete: s.delete });
  const store = new MemoryCheckpointStore();
  store.write(original.takeCheckpoint(true));
  const stored = store.read();
  const tampered: StoredCheckpoint = {
    ...stored,
    objects: new Map(
      [...stored.objects].map(([n, o]) => [
        n,
        n === 'total_histogram' ? { ...o, fingerprint: 'other-plan' } : o,
      ]),
    ),
  };
  const restored = new Engine();
  restored.execute(DDL.slice(0, 4).join(';'));
  assert.deepEqual(restored.loadCheckpoint(tampered).rebuilt, ['total_histogram']);
  assert.equal(snapshotAll(restored), snapshotAll(original));
});
