// Randomized differential suite for the window table functions TUMBLE and HOP (support/window-tvf-
// templates.ts): per seed every template with random sizes, slides and offsets, views over them and
// windowed views over views, over a keyed bid table (NULL times and dates), a keyed ask table and a
// keyless click table whose timestamps straddle 1970 or sit elsewhere. Random batches insert, move
// (a bid's time, price or auction updated, so it changes windows) and delete rows; after EVERY epoch
// every view is compared with SQLite computing the windows with its own date functions and integer
// arithmetic; every 10 epochs each SELECT also runs ad hoc. Then everything is deleted and every view
// must be empty. SLUICE_SEED=<n> replays one seed, SLUICE_SEEDS=<k> runs k, SLUICE_EPOCHS=<e>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import type { Row } from '../src/common/types.ts';
import { formatEpochMicros } from '../src/common/time/time-window.ts';
import { Rng, deriveSeed } from './support/random-workload.ts';
import { SqliteOracle, assertViewMatchesOracle, createTableSql } from './support/sqlite-oracle.ts';
import { compareAdHoc } from './support/join-workload.ts';
import {
  WINDOW_TABLES,
  WINDOW_TEMPLATES,
  windowView,
  type WindowView,
} from './support/window-tvf-templates.ts';

const BASE_SEED = Number(process.env['SLUICE_BASE_SEED'] ?? 20261202);
const SEEDS = Number(process.env['SLUICE_SEEDS'] ?? 6);
const EPOCHS = Number(process.env['SLUICE_EPOCHS'] ?? 120);
const only = process.env['SLUICE_SEED'];
const seeds =
  only !== undefined ? [Number(only)] : Array.from({ length: SEEDS }, (_, i) => deriveSeed(BASE_SEED, i));

/** Epoch seconds the timestamps of one seed start from: around 1970, in 2024, at a leap day. */
const BASES = [-90, 1_704_067_170, 951_782_300];

interface Model {
  readonly rows: Map<string, Row>;
  nextId: number;
}

function runSeed(seed: number): { checks: number; adHoc: number; peakRows: number } {
  const rng = new Rng(seed);
  const base = rng.pick(BASES);
  // A share of every seed's times straddles 1970, where floor and truncation toward zero differ.
  const ts = (): string =>
    formatEpochMicros(((rng.chance(0.3) ? -120 : base) + rng.int(0, 240)) * 1_000_000, false);
  const day = (): string | null =>
    rng.chance(0.1)
      ? null
      : formatEpochMicros((base + rng.int(-5, 20) * 86_400) * 1_000_000, false).slice(0, 10);
  const engine = new Engine();
  const oracle = new SqliteOracle();
  for (const t of WINDOW_TABLES) {
    engine.execute(createTableSql(t));
    oracle.createTable(t);
  }
  const views: WindowView[] = WINDOW_TEMPLATES.map((t, i) => windowView(rng, t, `w${i}`));
  const created: string[] = [];
  const create = (v: { name: string; sql: string; sqlite: string }): void => {
    engine.execute(`CREATE MATERIALIZED VIEW ${v.name} AS ${v.sql}`);
    oracle.createView(v.name, v.sqlite);
    created.push(v.name);
  };
  const models: Record<string, Model> = {
    bid: { rows: new Map(), nextId: 1 },
    ask: { rows: new Map(), nextId: 1 },
    click: { rows: new Map(), nextId: 1 },
  };
  const fresh = (table: string, id: number): Row => {
    const auction = rng.int(1, 4);
    if (table === 'click') return { auction, ts: ts() };
    const row: Row = {
      id,
      auction,
      price: rng.int(1, 60),
      ts: table === 'bid' && rng.chance(0.1) ? null : ts(),
    };
    return table === 'bid' ? { ...row, day: day() } : row;
  };
  let checks = 0;
  let adHoc = 0;
  let peakRows = 0;
  const context = (e: number): string =>
    `seed ${seed} epoch ${e}; replay: SLUICE_SEED=${seed} SLUICE_EPOCHS=${EPOCHS} node --import tsx --test test/window-tvf-differential.test.ts`;
  const checkAll = (e: number): void => {
    for (const name of created) {
      assertViewMatchesOracle(engine, oracle, name, () => context(e));
      checks++;
    }
  };
  const apply = (table: string, insert: Row[], del: Row[]): void => {
    engine.applyChanges(table, { insert, delete: del });
    oracle.apply(table, { insert, delete: del });
  };

  for (let e = 1; e <= EPOCHS; e++) {
    // Half the views exist from the start, the rest are created over existing data (backfill).
    if (e === 1 || e === Math.floor(EPOCHS / 3)) {
      const half = e === 1 ? views.filter((_, i) => i % 2 === 0) : views.filter((_, i) => i % 2 === 1);
      for (const v of half) {
        if (v.base !== undefined) create(v.base);
        create(v);
      }
    }
    const table = rng.pick(['bid', 'bid', 'ask', 'click']);
    const model = models[table]!;
    const insert: Row[] = [];
    const del: Row[] = [];
    const n = rng.int(1, 12);
    const keys = [...model.rows.keys()];
    const touched = new Set<string>();
    for (let i = 0; i < n; i++) {
      const r = rng.next();
      const key = keys.length > 0 ? rng.pick(keys) : undefined;
      if (key !== undefined && !touched.has(key) && r < 0.25) {
        touched.add(key);
        del.push(model.rows.get(key)!);
        model.rows.delete(key);
      } else if (key !== undefined && !touched.has(key) && r < 0.5 && table !== 'click') {
        // A move: the same id with a new time, price or auction (deletes apply first).
        touched.add(key);
        const old = model.rows.get(key)!;
        const moved = { ...fresh(table, old['id'] as number) };
        del.push(old);
        insert.push(moved);
        model.rows.set(key, moved);
      } else {
        const id = model.nextId++;
        const row = fresh(table, id);
        // The keyless table gets exact duplicates now and then.
        const present = [...model.rows.values()];
        const dup = table === 'click' && present.length > 0 && rng.chance(0.2) ? rng.pick(present) : row;
        const key = String(id);
        insert.push(dup);
        model.rows.set(key, dup);
        touched.add(key);
      }
    }
    apply(table, insert, del);
    checkAll(e);
    peakRows = Math.max(peakRows, ...created.map((v) => engine.viewSnapshot(v).rows.length));
    if (e % 10 === 0) {
      for (const v of views) {
        if (!created.includes(v.name)) continue;
        compareAdHoc(
          engine,
          oracle,
          v.sql,
          () => `ad-hoc of ${v.name} (${v.template})\n${context(e)}`,
          v.sqlite,
        );
        adHoc++;
      }
    }
  }
  // Retraction: deleting every row empties every view.
  for (const [table, model] of Object.entries(models)) apply(table, [], [...model.rows.values()]);
  checkAll(EPOCHS + 1);
  for (const name of created) {
    assert.equal(engine.viewSnapshot(name).rows.length, 0, `${name} not empty after deleting everything`);
  }
  oracle.close();
  return { checks, adHoc, peakRows };
}

let total = 0;
for (const seed of seeds) {
  test(`window table functions differential seed ${seed}`, () => {
    const r = runSeed(seed);
    total += r.checks;
    console.log(
      `seed ${seed}: ${r.checks} view comparisons, ${r.adHoc} ad hoc, largest view ${r.peakRows} rows`,
    );
    assert.ok(r.peakRows > 0, 'the views stayed empty: the comparison means nothing');
    assert.ok(r.adHoc > 0);
  });
}

test('window table functions differential totals', () => {
  console.log(`window differential: ${seeds.length} seeds × ${EPOCHS} epochs, ${total} view comparisons`);
  assert.ok(total >= seeds.length * EPOCHS);
});
