// One differential run: a seeded scenario (tables + views) is created in Sluice and in the SQLite
// oracle, a seeded workload of batches is applied to both, and after every epoch every view's
// snapshot is compared with SQLite running the same SELECT. Some views are created only after data
// has arrived, so backfill (initial computation) is checked as well as incremental maintenance.
import { Engine, SluiceError } from '../../src/index.ts';
import type { EngineLike } from './engine-like.ts';
import {
  GENERATOR_VERSION,
  Rng,
  TableModel,
  describeBatch,
  fromSqliteRow,
  randomBatch,
  randomBatchSize,
} from './random-workload.ts';
import { randomDml, randomScenario, type GenView, type Scenario } from './random-views.ts';
import {
  SqliteOracle,
  assertViewMatchesOracle,
  canonicalRows,
  createTableSql,
  multisetDiff,
} from './sqlite-oracle.ts';

export interface DifferentialOptions {
  readonly epochs: number;
  /** Table size the workload drifts towards (above it deletes dominate). */
  readonly targetRows?: number;
  /** Builds the engine under test (the harness's own tests pass a fault-injecting wrapper). */
  readonly engine?: () => EngineLike;
  /** Also wrap expressions in the named functions SQLite shares (random-workload.ts, ExprGen). */
  readonly functions?: boolean;
}

export interface DifferentialResult {
  readonly epochs: number;
  /** View comparisons performed. */
  readonly checks: number;
  readonly scenario: Scenario;
}

export function replayCommand(seed: number, functions = false): string {
  return functions
    ? `SLUICE_SEEDS=0 SLUICE_FN_SEED=${seed} node --import tsx --test test/differential.test.ts`
    : `SLUICE_SEED=${seed} node --import tsx --test test/differential.test.ts`;
}

/** The side stream of function choices for a seed (a fixed function of it, so a seed replays). */
export function functionsRng(seed: number): Rng {
  return new Rng((seed ^ 0x5f3759df) >>> 0);
}

export function viewDdl(v: GenView): string {
  return `CREATE MATERIALIZED VIEW ${v.name} AS ${v.select}`;
}

function describeScenario(s: Scenario): string {
  return [
    ...s.tables.map((t) => `  ${createTableSql(t)};`),
    ...s.views.map((v) => `  ${viewDdl(v)};   -- ${v.template}, depth ${v.depth}`),
  ].join('\n');
}

export function runDifferential(seed: number, options: DifferentialOptions): DifferentialResult {
  const rng = new Rng(seed);
  const functions = options.functions === true;
  const scenario = randomScenario(rng, functions ? { functions: functionsRng(seed) } : {});
  // SLUICE_WORKERS=<n>: the engine runs its partitionable Reduces on n workers (src/exec/workers/).
  const workers = Number(process.env['SLUICE_WORKERS'] ?? 1);
  const own = options.engine === undefined ? new Engine({ workers }) : null;
  const engine: EngineLike = options.engine?.() ?? (own as Engine);
  const oracle = new SqliteOracle();
  let lastBatch = '(none)';
  let created = 0;
  const context = (): string =>
    `seed ${seed} (generator v${GENERATOR_VERSION}), epoch ${engine.epoch}, ` +
    `${created}/${scenario.views.length} views created\n` +
    `replay: ${replayCommand(seed, functions)}\nschema:\n${describeScenario(scenario)}\nlast ${lastBatch}`;
  const fail = (what: string, e: unknown): never => {
    const detail = e instanceof SluiceError ? `${e.code}: ${e.message}` : String(e);
    throw new Error(`${what} failed: ${detail}\n${context()}`, { cause: e });
  };
  let checks = 0;
  try {
    for (const t of scenario.tables) {
      try {
        engine.execute(createTableSql(t));
      } catch (e) {
        fail(createTableSql(t), e);
      }
      oracle.createTable(t);
    }
    for (const v of scenario.views) oracle.createView(v.name, v.select);
    // Views [0, firstBatch) exist before any data; the rest are created one by one at random epochs.
    const createAt = scenario.views.map((_, i) =>
      i < Math.max(2, Math.ceil(scenario.views.length / 2)) ? 0 : rng.int(1, Math.max(1, options.epochs / 3)),
    );
    for (let i = 1; i < createAt.length; i++) createAt[i] = Math.max(createAt[i]!, createAt[i - 1]!);
    const createDue = (epochIndex: number): void => {
      while (created < scenario.views.length && createAt[created]! <= epochIndex) {
        const v = scenario.views[created]!;
        try {
          engine.execute(viewDdl(v));
        } catch (e) {
          fail(viewDdl(v), e);
        }
        created++;
      }
    };
    const checkAll = (): void => {
      for (let i = 0; i < created; i++) {
        assertViewMatchesOracle(engine, oracle, scenario.views[i]!.name, context);
        checks++;
      }
    };
    createDue(0);
    checkAll();
    // The same view SELECTs run as ad-hoc queries (computed once, not incrementally).
    const checkAdHoc = (): void => {
      for (let i = 0; i < created; i++) {
        const v = scenario.views[i]!;
        let res;
        try {
          res = engine.execute(v.select)[0];
        } catch (e) {
          fail(`ad-hoc ${v.select}`, e);
        }
        const columns = res?.columns ?? [];
        const expected = canonicalRows(columns, oracle.query(v.select));
        const actual = canonicalRows(columns, res?.rows ?? []);
        const { missing, extra } = multisetDiff(expected, actual);
        if (missing.length + extra.length > 0) {
          throw new Error(
            `ad-hoc SELECT of ${v.name} differs from SQLite: missing ${JSON.stringify(missing.slice(0, 8))}, ` +
              `extra ${JSON.stringify(extra.slice(0, 8))}\n${context()}`,
          );
        }
        checks++;
      }
    };
    const models = scenario.tables.map((t) => new TableModel(t));
    for (let e = 1; e <= options.epochs; e++) {
      const model = rng.pick(models);
      if (rng.chance(0.06)) {
        // A SQL statement instead of a batch; the model is re-read from the oracle afterwards.
        const sql = randomDml(rng, model);
        lastBatch = `statement: ${sql}`;
        try {
          engine.execute(sql);
        } catch (err) {
          fail(sql, err);
        }
        oracle.db.exec(sql);
        model.reset(
          oracle.query(`SELECT * FROM ${model.table.name}`).map((r) => fromSqliteRow(model.table, r)),
        );
      } else {
        const batch = randomBatch(rng, model, randomBatchSize(rng), options.targetRows ?? 250);
        lastBatch = describeBatch(model.table.name, batch);
        try {
          engine.applyChanges(model.table.name, batch);
        } catch (err) {
          fail(`applyChanges(${model.table.name})`, err);
        }
        oracle.apply(model.table.name, batch);
        model.apply(batch);
      }
      createDue(e);
      if (created > 0 && rng.chance(0.03)) {
        // Drop the newest view (nothing depends on it yet) and create it again over the current data.
        const v = scenario.views[created - 1]!;
        try {
          engine.execute(`DROP MATERIALIZED VIEW ${v.name}`);
          engine.execute(viewDdl(v));
        } catch (err) {
          fail(`drop and re-create ${v.name}`, err);
        }
      }
      checkAll();
      if (e % 10 === 0) checkAdHoc();
    }
    createDue(Number.POSITIVE_INFINITY);
    checkAll();
    // The tables themselves hold what the oracle holds.
    for (const t of scenario.tables) {
      const cols = t.columns.map((c) => ({ name: c.name, type: c.sqlType, nullable: c.nullable }));
      const expected = canonicalRows(cols, oracle.query(`SELECT * FROM ${t.name}`));
      const actual = canonicalRows(cols, engine.tableRows(t.name));
      const { missing, extra } = multisetDiff(expected, actual);
      if (missing.length + extra.length > 0) {
        throw new Error(
          `table ${t.name} differs: missing ${JSON.stringify(missing.slice(0, 5))}, ` +
            `extra ${JSON.stringify(extra.slice(0, 5))}\n${context()}`,
        );
      }
    }
    return { epochs: options.epochs, checks, scenario };
  } finally {
    oracle.close();
    own?.close();
  }
}
