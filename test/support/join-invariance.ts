// Invariance properties of join views (test/join-differential.test.ts): the same changes in another
// batching or arrival order end in the same views, and deleting every row retracts every view.
import { Engine } from '../../src/index.ts';
import type { ColumnInfo, Row } from '../../src/common/types.ts';
import type { EngineLike } from './engine-like.ts';
import { batchUnits } from './properties.ts';
import { Rng } from './random-workload.ts';
import {
  SqliteOracle,
  assertViewMatchesOracle,
  canonicalRows,
  createTableSql,
  multisetDiff,
  type Changes,
} from './sqlite-oracle.ts';
import { JoinModel, idCol, randomJoinBatch, type JoinSchema, type JoinTable } from './join-schema.ts';
import {
  describeJoinScenario,
  joinViewDdl,
  randomJoinScenario,
  type JoinScenario,
} from './join-templates.ts';

// ---------------------------------------------------------------------------------------------------
// Invariance properties

/** One small change to one table, valid after the units before it (an update is delete + insert). */
export interface JoinUnit {
  readonly table: string;
  readonly changes: Changes;
  /** Identities (the id for keyed tables, the whole row otherwise) inserted / deleted. */
  readonly ins: readonly string[];
  readonly del: readonly string[];
}

function identity(t: JoinTable, row: Row): string {
  if (t.keyed) return String(row[idCol(t)]);
  return JSON.stringify(t.columns.map((c) => row[c.name] ?? null));
}

export function joinUnits(
  rng: Rng,
  schema: JoinSchema,
  count: number,
): { units: JoinUnit[]; models: JoinModel[] } {
  const models = schema.tables.map((t) => new JoinModel(t, schema.domains));
  const units: JoinUnit[] = [];
  for (let i = 0; i < count; i++) {
    const m = rng.pick(models);
    const changes = randomJoinBatch(rng, m, rng.chance(0.75) ? 1 : rng.int(2, 5));
    units.push({
      table: m.table.name,
      changes,
      ins: (changes.insert ?? []).map((r) => identity(m.table, r)),
      del: (changes.delete ?? []).map((r) => identity(m.table, r)),
    });
    m.apply(changes);
  }
  return { units, models };
}

export interface JoinBatch {
  readonly table: string;
  readonly changes: Changes;
}

/**
 * Groups consecutive units into batches, cutting where `cut(i)` says and wherever merging would change
 * the meaning (a batch applies all its deletes before all its inserts): another table, a delete of
 * something the batch inserts, a second insert of one key.
 */
export function batchJoinUnits(
  units: readonly JoinUnit[],
  cut: (i: number) => boolean,
  keyed: (t: string) => boolean,
): JoinBatch[] {
  return batchUnits(
    units.map((u) => ({
      table: u.table,
      keyed: keyed(u.table),
      changes: u.changes,
      insertKeys: u.ins,
      deleteKeys: u.del,
    })),
    cut,
  );
}

/** A different arrival order across tables: a random interleaving that keeps each table's own order. */
export function interleave(rng: Rng, units: readonly JoinUnit[], tableFirst?: readonly string[]): JoinUnit[] {
  const queues = new Map<string, JoinUnit[]>();
  for (const u of units) {
    const q = queues.get(u.table);
    if (q === undefined) queues.set(u.table, [u]);
    else q.push(u);
  }
  if (tableFirst !== undefined) return tableFirst.flatMap((t) => queues.get(t) ?? []);
  const out: JoinUnit[] = [];
  const live = [...queues.values()];
  while (live.length > 0) {
    const i = rng.int(0, live.length - 1);
    out.push(live[i]!.shift()!);
    if (live[i]!.length === 0) live.splice(i, 1);
  }
  return out;
}

export type EngineFactory = () => EngineLike;

/** Applies batches to a fresh engine, views created before (or, with `backfill`, after) the data. */
export function finalJoinViews(
  scenario: JoinScenario,
  batches: readonly JoinBatch[],
  options: { backfill?: boolean; make?: EngineFactory } = {},
): Map<string, { columns: readonly ColumnInfo[]; rows: string[] }> {
  const engine = options.make?.() ?? new Engine();
  for (const t of scenario.schema.tables) engine.execute(createTableSql(t));
  if (!options.backfill) for (const v of scenario.views) engine.execute(joinViewDdl(v));
  for (const b of batches) engine.applyChanges(b.table, b.changes);
  if (options.backfill) for (const v of scenario.views) engine.execute(joinViewDdl(v));
  const out = new Map<string, { columns: readonly ColumnInfo[]; rows: string[] }>();
  for (const v of scenario.views) {
    const snap = engine.viewSnapshot(v.name);
    out.set(v.name, { columns: snap.columns, rows: canonicalRows(snap.columns, snap.rows) });
  }
  return out;
}

function diffText(a: readonly string[] | undefined, b: readonly string[] | undefined): string {
  const { missing, extra } = multisetDiff(a ?? [], b ?? []);
  return `only in SQLite (${missing.length}): ${JSON.stringify(missing.slice(0, 6))}; only in Sluice (${extra.length}): ${JSON.stringify(extra.slice(0, 6))}`;
}

/**
 * Property: the same changes in different batch splits and different arrival orders across the
 * tables (each table's own order kept) leave every join view with the same rows, which are SQLite's.
 * Returns the number of (arrangement, view) comparisons.
 */
export function checkJoinInvariance(seed: number, unitCount: number, make?: EngineFactory): number {
  const rng = new Rng(seed);
  const scenario = randomJoinScenario(rng, { minTemplates: 4, maxTemplates: 6 });
  const { units } = joinUnits(rng, scenario.schema, unitCount);
  const keyed = (name: string): boolean =>
    scenario.schema.tables.find((t) => t.name === name)?.keyed ?? false;
  const names = scenario.schema.tables.map((t) => t.name);
  const reversed = [...names].reverse();
  const arrangements: { what: string; batches: JoinBatch[]; backfill?: boolean }[] = [
    { what: 'one unit per epoch', batches: batchJoinUnits(units, () => true, keyed) },
    { what: 'random cuts', batches: batchJoinUnits(units, () => rng.chance(0.3), keyed) },
    { what: 'largest batches', batches: batchJoinUnits(units, () => false, keyed) },
    {
      what: 'random interleaving across tables, random cuts',
      batches: batchJoinUnits(interleave(rng, units), () => rng.chance(0.5), keyed),
    },
    {
      what: `tables in order ${names.join(',')}`,
      batches: batchJoinUnits(interleave(rng, units, names), () => false, keyed),
    },
    {
      what: `tables in order ${reversed.join(',')}, one unit per epoch`,
      batches: batchJoinUnits(interleave(rng, units, reversed), () => true, keyed),
    },
    {
      what: 'views created after all data (backfill)',
      batches: batchJoinUnits(units, () => rng.chance(0.5), keyed),
      backfill: true,
    },
  ];
  // The oracle's answer for the final state (canonicalised with the engine's column types).
  const oracle = new SqliteOracle();
  let comparisons = 0;
  try {
    for (const t of scenario.schema.tables) oracle.createTable(t);
    for (const v of scenario.views) oracle.createView(v.name, v.sqlite);
    for (const u of units) oracle.apply(u.table, u.changes);
    for (const arr of arrangements) {
      const got = finalJoinViews(scenario, arr.batches, {
        backfill: arr.backfill ?? false,
        ...(make ? { make } : {}),
      });
      for (const v of scenario.views) {
        const { columns, rows } = got.get(v.name)!;
        const a = oracle.canonicalView(v.name, columns);
        if (JSON.stringify(a) !== JSON.stringify(rows)) {
          throw new Error(
            `invariance: view ${v.name} (${v.template}: ${v.sql}) after "${arr.what}" (${arr.batches.length} batches) ` +
              `differs from SQLite's final state: ${diffText(a, rows)}\n` +
              `seed ${seed}, ${unitCount} units\nreplay: SLUICE_SEED=${seed} node --import tsx --test test/join-differential.test.ts\n` +
              describeJoinScenario(scenario),
          );
        }
        comparisons++;
      }
    }
  } finally {
    oracle.close();
  }
  return comparisons;
}

/**
 * Property: inserting rows into every table (with updates between) and then deleting all of them, in
 * random batches and table orders, returns every join view (inner and outer) to empty; global
 * aggregates return to their over-no-rows row. Views are created before the data and after the
 * inserts (backfilled), and must be non-empty at the peak for the check to mean anything.
 * Returns the largest total view size at the peak.
 */
export function checkJoinRetraction(seed: number, make?: EngineFactory): number {
  const rng = new Rng(seed);
  const scenario = randomJoinScenario(rng, { minTemplates: 5, maxTemplates: 8 });
  const { schema } = scenario;
  const engine = make?.() ?? new Engine();
  for (const t of schema.tables) engine.execute(createTableSql(t));
  const early = Math.ceil(scenario.views.length / 2);
  scenario.views.slice(0, early).forEach((v) => engine.execute(joinViewDdl(v)));
  const models = schema.tables.map((t) => new JoinModel(t, schema.domains));
  for (let i = 0; i < 12; i++) {
    const m = rng.pick(models);
    const batch = randomJoinBatch(rng, m, rng.int(1, 30));
    engine.applyChanges(m.table.name, batch);
    m.apply(batch);
  }
  scenario.views.slice(early).forEach((v) => engine.execute(joinViewDdl(v)));
  let peak = 0;
  for (const v of scenario.views) peak += engine.viewSnapshot(v.name).rows.length;
  // Delete everything: per table in chunks, tables interleaved at random, keyed rows by key or whole.
  const pending = models.map((m) => [...m.rows]);
  while (pending.some((p) => p.length > 0)) {
    const i = rng.pick(pending.map((p, j) => (p.length > 0 ? j : -1)).filter((j) => j >= 0));
    const m = models[i]!;
    const take = pending[i]!.splice(0, rng.int(1, Math.max(1, Math.ceil(pending[i]!.length / 2))));
    const del = take.map((r) => (m.table.keyed && rng.chance(0.5) ? m.pkOnly(r) : r));
    engine.applyChanges(m.table.name, { delete: del });
    m.apply({ delete: del });
  }
  const oracle = new SqliteOracle();
  try {
    for (const t of schema.tables) oracle.createTable(t);
    for (const v of scenario.views) oracle.createView(v.name, v.sqlite);
    for (const v of scenario.views) {
      const snap = engine.viewSnapshot(v.name);
      const ctx = `retraction: view ${v.name} (${v.template}: ${v.sql}) after deleting every row; seed ${seed}\n${describeJoinScenario(scenario)}`;
      if (!v.global && snap.rows.length > 0) {
        throw new Error(
          `${ctx}\n  still holds ${snap.rows.length} rows: ${JSON.stringify(canonicalRows(snap.columns, snap.rows).slice(0, 6))}`,
        );
      }
      assertViewMatchesOracle(engine, oracle, v.name, ctx);
    }
  } finally {
    oracle.close();
  }
  return peak;
}
