// The Nexmark queries (support/nexmark-queries.ts) as a differential suite: per seed, a deterministic
// Nexmark generator (support/nexmark.ts) feeds person, auction and bid batches with inserts, updates,
// deletes and late event times; after EVERY epoch every query's view is compared with SQLite computing
// the same query over the same current rows, and every 10 steps each query also runs ad hoc. Half the
// views exist from the start, the rest are created over existing data (backfill). Then everything is
// deleted and every view must be empty. Two thirds in, the engine restarts from a checkpoint (every
// view restored, none rebuilt) and the comparisons go on. The queries Sluice refuses are asserted
// with their exact error. q13, RisingWave's processing-time temporal join, is compared after every
// epoch with a from-scratch model (support/temporal-join-model.ts: each bid meets the side input as it
// is when the bid arrives), and its ad-hoc form (one epoch: the plain join) with SQLite.
// SLUICE_SEED=<n> replays one seed, SLUICE_SEEDS=<k> runs k, SLUICE_STEPS=<s> steps per seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import { SluiceError } from '../src/common/errors.ts';
import { deriveSeed } from './support/random-workload.ts';
import { SqliteOracle, assertViewMatchesOracle, createTableSql } from './support/sqlite-oracle.ts';
import { compareAdHoc } from './support/join-workload.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import {
  NEXMARK_TABLES,
  NexmarkGenerator,
  START_TIMES,
  TEST_OPTIONS,
  timestampMs,
  type TableBatch,
} from './support/nexmark.ts';
import {
  COUNT_CHAR_FUNCTION,
  NEXMARK_Q13,
  NEXMARK_QUERIES,
  NEXMARK_REFUSED,
  SIDE_INPUT_TABLE,
} from './support/nexmark-queries.ts';
import { TemporalJoinModel, multiset } from './support/temporal-join-model.ts';
import type { Row } from '../src/common/types.ts';

const BASE_SEED = Number(process.env['SLUICE_BASE_SEED'] ?? 20261202);
const SEEDS = Number(process.env['SLUICE_SEEDS'] ?? 4);
const STEPS = Number(process.env['SLUICE_STEPS'] ?? 40);
const only = process.env['SLUICE_SEED'];
const seeds =
  only !== undefined ? [Number(only)] : Array.from({ length: SEEDS }, (_, i) => deriveSeed(BASE_SEED, i));

/** PostgreSQL's split_part for SQLite (which has none): 1-based, '' past the last field. */
function splitPart(s: unknown, delimiter: unknown, n: unknown): string | null {
  if (s === null || delimiter === null || n === null) return null;
  const parts = String(s).split(String(delimiter));
  return parts[Number(n) - 1] ?? '';
}

/** SQLite's `x REGEXP p` (which calls regexp(p, x)), by JavaScript's RegExp. */
function sqliteRegexp(pattern: unknown, value: unknown): number | null {
  if (pattern === null || value === null) return null;
  return new RegExp(String(pattern)).test(String(value)) ? 1 : 0;
}

/** PostgreSQL's regexp_replace(s, p, r) without flags: the first match, `\n` for group n. */
function regexpReplace(s: unknown, pattern: unknown, replacement: unknown): string | null {
  if (s === null || pattern === null || replacement === null) return null;
  const r = String(replacement)
    .replace(/\$/g, '$$$$')
    .replace(/\\(\d)/g, '$$$1');
  return String(s).replace(new RegExp(String(pattern)), r);
}

interface SeedResult {
  epochs: number;
  checks: number;
  adHoc: number;
  /** Largest row count each view reached (a view that stays empty proves nothing). */
  peak: Map<string, number>;
  late: number;
  restarts: number;
}

function runSeed(seed: number, index: number): SeedResult {
  const startMs = START_TIMES[index % START_TIMES.length] ?? TEST_OPTIONS.startMs;
  const gen = new NexmarkGenerator(seed, { ...TEST_OPTIONS, startMs });
  let engine = new Engine();
  engine.setStateTracking(true);
  // Every DDL in order, to rebuild the catalog of the engine restored from a checkpoint.
  const ddl: string[] = [];
  const execute = (sql: string): void => {
    engine.execute(sql);
    ddl.push(sql);
  };
  const oracle = new SqliteOracle();
  oracle.db.function('split_part', { deterministic: true }, splitPart);
  oracle.db.function('regexp', { deterministic: true }, sqliteRegexp);
  oracle.db.function('regexp_replace', { deterministic: true }, regexpReplace);
  for (const t of [...NEXMARK_TABLES, SIDE_INPUT_TABLE]) {
    execute(createTableSql(t));
    oracle.createTable(t);
  }
  execute(COUNT_CHAR_FUNCTION);
  const side = Array.from({ length: 80 }, (_, i) => ({ key: 1000 + i * 2, value: `side-${i}` }));
  engine.applyChanges('side_input', { insert: side });
  oracle.apply('side_input', { insert: side });
  // q13 and its model: the side input's rows now, and what each bid met when it arrived.
  const sideRows = new Map<number, Row>(side.map((s) => [s.key, s]));
  const q13 = new TemporalJoinModel((b, right) =>
    right
      .filter((s) => b['auction'] !== null && Number(b['auction']) % 10000 === s['key'])
      .map((s) => ({
        auction: b['auction'] ?? null,
        bidder: b['bidder'] ?? null,
        price: b['price'] ?? null,
        date_time: b['date_time'] ?? null,
        value: s['value'] ?? null,
      })),
  );
  let q13Peak = 0;
  let q13Checks = 0;

  const created: string[] = [];
  const peak = new Map<string, number>();
  let checks = 0;
  let adHoc = 0;
  let late = 0;
  let restarts = 0;
  const context = (step: number): string =>
    `seed ${seed} step ${step} epoch ${engine.epoch}; replay: SLUICE_SEED=${seed} SLUICE_STEPS=${STEPS} node --import tsx --test test/nexmark.test.ts`;
  const checkAll = (step: number): void => {
    for (const name of created) {
      assertViewMatchesOracle(engine, oracle, name, () => `${name}\n${context(step)}`);
      checks++;
      peak.set(name, Math.max(peak.get(name) ?? 0, engine.viewSnapshot(name).rows.length));
    }
    const rows = engine.viewSnapshot(NEXMARK_Q13.name).rows;
    assert.deepEqual(multiset(rows), multiset(q13.rows()), `${NEXMARK_Q13.name} (model)\n${context(step)}`);
    q13Peak = Math.max(q13Peak, rows.length);
    q13Checks++;
  };
  const apply = (b: TableBatch, step: number): void => {
    engine.applyChanges(b.table, { insert: b.insert, delete: b.delete });
    oracle.apply(b.table, { insert: b.insert, delete: b.delete });
    if (b.table === 'bid') q13.apply(b.insert, b.delete, [...sideRows.values()]);
    checkAll(step);
  };
  execute(`CREATE MATERIALIZED VIEW ${NEXMARK_Q13.name} AS ${NEXMARK_Q13.sql}`);
  let newest = 0;
  for (let step = 1; step <= STEPS; step++) {
    if (step === 1 || step === Math.floor(STEPS / 3)) {
      for (const [i, q] of NEXMARK_QUERIES.entries()) {
        if (i % 2 !== (step === 1 ? 0 : 1)) continue;
        execute(`CREATE MATERIALIZED VIEW ${q.name} AS ${q.sql}`);
        oracle.createView(q.name, q.sqlite);
        created.push(q.name);
      }
      checkAll(step);
    }
    for (const b of gen.step()) {
      for (const r of b.insert) {
        // Late: more than a second behind the newest event time so far.
        const t = timestampMs(r['date_time'] as string);
        if (t < newest - 1000) late++;
        newest = Math.max(newest, t);
      }
      apply(b, step);
    }
    if (step === Math.floor(STEPS / 2)) {
      // The side input changes: a value replaced, a key removed, a key added.
      const change = {
        insert: [
          { key: 1000, value: 'changed' },
          { key: 1001, value: 'new' },
        ],
        delete: [side[0]!, side[1]!],
      };
      engine.applyChanges('side_input', change);
      oracle.apply('side_input', change);
      for (const s of change.delete) sideRows.delete(s.key);
      for (const s of change.insert) sideRows.set(s.key, s);
      checkAll(step);
    }
    if (step === Math.floor((2 * STEPS) / 3)) {
      // A restart: a fresh engine given the same DDL and the last checkpoint takes over, with every
      // view restored (none rebuilt from the tables) and still equal to SQLite from then on.
      const store = new MemoryCheckpointStore();
      store.write(engine.takeCheckpoint());
      const restored = new Engine();
      restored.setStateTracking(true);
      for (const sql of ddl) restored.execute(sql);
      const { rebuilt } = restored.loadCheckpoint(store.read());
      assert.deepEqual(rebuilt, [], `views rebuilt instead of restored\n${context(step)}`);
      assert.equal(restored.epoch, engine.epoch);
      engine = restored;
      restarts++;
      checkAll(step);
    }
    if (step % 10 === 0) {
      for (const q of NEXMARK_QUERIES) {
        compareAdHoc(engine, oracle, q.sql, () => `ad-hoc ${q.name}\n${context(step)}`, q.sqlite);
        adHoc++;
      }
      // Ad hoc, q13 reads one epoch: each bid meets the side input as it is now (the plain join).
      const q = NEXMARK_Q13;
      compareAdHoc(engine, oracle, q.sql, () => `ad-hoc ${q.name}\n${context(step)}`, q.adHocSqlite);
      adHoc++;
    }
  }
  for (const b of gen.deleteEverything()) apply(b, STEPS + 1);
  for (const name of [...created, NEXMARK_Q13.name]) {
    assert.equal(engine.viewSnapshot(name).rows.length, 0, `${name} not empty after deleting everything`);
  }
  oracle.close();
  peak.set(NEXMARK_Q13.name, q13Peak);
  return { epochs: engine.epoch, checks: checks + q13Checks, adHoc, peak, late, restarts };
}

const totals = { seeds: 0, epochs: 0, checks: 0 };
for (const [i, seed] of seeds.entries()) {
  test(`nexmark differential seed ${seed}`, () => {
    const r = runSeed(seed, i);
    totals.seeds++;
    totals.epochs += r.epochs;
    totals.checks += r.checks;
    console.log(
      `seed ${seed}: ${r.epochs} epochs, ${r.checks} view comparisons, ${r.adHoc} ad hoc, ${r.late} late rows, ${r.restarts} restart; ` +
        `largest: ${[...r.peak].map(([n, k]) => `${n}=${k}`).join(' ')}`,
    );
    assert.ok(r.late > 0, 'no late rows were generated');
    assert.equal(r.restarts, 1);
    for (const q of [...NEXMARK_QUERIES, NEXMARK_Q13]) {
      assert.ok((r.peak.get(q.name) ?? 0) > 0, `${q.name} stayed empty: its comparison means nothing`);
    }
  });
}

test('nexmark differential totals', () => {
  console.log(
    `nexmark differential: ${NEXMARK_QUERIES.length} queries, ${totals.seeds} seeds, ${totals.epochs} epochs, ${totals.checks} view comparisons`,
  );
  assert.ok(totals.checks >= seeds.length * STEPS);
});

// The queries Sluice refuses: the exact error, so that a refusal that changes (or a query that starts
// working) fails here and the table in test/README.md is updated with it.
for (const q of NEXMARK_REFUSED) {
  test(`nexmark ${q.name} is refused: ${q.why}`, () => {
    const engine = new Engine();
    for (const t of [...NEXMARK_TABLES, SIDE_INPUT_TABLE]) engine.execute(createTableSql(t));
    assert.throws(
      () => engine.execute(`CREATE MATERIALIZED VIEW ${q.name} AS ${q.sql}`),
      (e: unknown) => {
        assert.ok(e instanceof SluiceError, `not a SluiceError: ${String(e)}`);
        assert.equal(`${e.code}: ${e.message}`, `${q.code}: ${q.message}`);
        // The position is in the statement as run here: `CREATE MATERIALIZED VIEW <name> AS <sql>`.
        assert.deepEqual(e.position, q.position);
        return true;
      },
    );
  });
}
