// The join differential suite's run (test/join-differential.test.ts): a seed's schema and views
// (join-schema.ts, join-templates.ts), random batches and DML, and every join view compared with SQLite
// after every epoch, with its changelog folded and ad-hoc SELECTs beside. Every choice comes from one
// mulberry32 stream (Rng from random-workload.ts), so a seed replays exactly as long as the generator is
// unchanged (JOIN_GENERATOR_VERSION names the stream's shape). The invariance properties (other
// batchings and arrival orders, retraction of everything) are in join-invariance.ts.
import { Engine, SluiceError } from '../../src/index.ts';
import type { ColumnInfo, Row } from '../../src/common/types.ts';
import type { ViewChangeSet } from '../../src/exec/api.ts';
import type { EngineLike } from './engine-like.ts';
import { exactRow } from './properties.ts';
import { Rng, describeBatch } from './random-workload.ts';
import {
  SqliteOracle,
  assertViewMatchesOracle,
  canonicalRows,
  canonicalValue,
  createTableSql,
  multisetDiff,
} from './sqlite-oracle.ts';
import {
  JoinModel,
  fromSqlite,
  randomJoinBatch,
  randomJoinBatchSize,
  randomJoinDml,
  vCol,
  type JoinSchema,
} from './join-schema.ts';
import { pickTwo, type JoinView } from './join-template-parts.ts';
import {
  describeJoinScenario,
  joinViewDdl,
  randomJoinScenario,
  type JoinScenario,
} from './join-templates.ts';

export const JOIN_GENERATOR_VERSION = 3;

// ---------------------------------------------------------------------------------------------------
// Ad-hoc SELECTs compared with SQLite

/** An ad-hoc SELECT with a join (valid in both; unique output names). */
export function randomAdHoc(rng: Rng, schema: JoinSchema): string {
  const [x, y] = pickTwo(rng, schema.tables);
  const X = x.name;
  const Y = y.name;
  const kind = rng.pick(['JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN']);
  return rng.pick([
    () =>
      `SELECT ${X}.k AS xk, ${Y}.k AS yk, ${vCol(x)}, ${vCol(y)} FROM ${X} ${kind} ${Y} ON ${X}.k = ${Y}.k`,
    () =>
      `SELECT ${X}.k AS k, COUNT(*) AS n, SUM(${vCol(y)}) AS s FROM ${X} ${kind} ${Y} ON ${X}.k = ${Y}.k AND ${X}.j = ${Y}.j GROUP BY ${X}.k`,
    () => `SELECT * FROM ${X} NATURAL ${kind} ${Y}`,
    () =>
      `SELECT ${Y}.*, ${vCol(x)} AS xv FROM ${X} ${kind} ${Y} USING (k) WHERE ${vCol(x)} > ${rng.int(0, 15)}`,
    () =>
      `SELECT ${X}.k AS xk, ${Y}.k AS yk, ${vCol(x)} AS xv, ${vCol(y)} AS yv FROM ${X} ${kind} ${Y} ` +
      `ON ${X}.k = ${Y}.k ORDER BY xk NULLS FIRST, yk DESC NULLS LAST, xv NULLS FIRST, yv NULLS LAST LIMIT 7`,
  ])();
}

// ---------------------------------------------------------------------------------------------------
// Changelog fold: what a subscriber of a join view sees

function addTo(m: Map<string, number>, k: string, n: number): void {
  const next = (m.get(k) ?? 0) + n;
  if (next === 0) m.delete(k);
  else m.set(k, next);
}

function sameMultiset(a: Map<string, number>, b: Map<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, n] of a) if (b.get(k) !== n) return false;
  return true;
}

/**
 * Subscribes to one view and checks, epoch by epoch, that folding its change sets onto the snapshot
 * it started from gives the current snapshot; that a change set comes exactly when the view changed,
 * consolidated, with -U/+U paired and `n` only on keyless views; and that a keyed view never holds one
 * key twice (a join's derived key must really be unique).
 */
export class ChangelogWatch {
  private readonly folded: Map<string, number>;
  private last: Map<string, number>;
  private readonly received: ViewChangeSet[] = [];
  readonly unsubscribe: () => void;
  readonly columns: readonly ColumnInfo[];
  readonly key: readonly string[] | null;
  folds = 0;

  constructor(
    private readonly engine: EngineLike,
    readonly view: string,
  ) {
    const snap = engine.viewSnapshot(view);
    this.columns = snap.columns;
    this.key = snap.key;
    this.folded = this.multiset(snap.rows);
    this.last = new Map(this.folded);
    this.unsubscribe = engine.subscribe(view, (cs) => this.received.push(cs));
  }

  private multiset(rows: readonly Row[]): Map<string, number> {
    const m = new Map<string, number>();
    for (const r of rows) addTo(m, exactRow(this.columns, r), 1);
    return m;
  }

  /** After an epoch; `ctx` describes the run for failure messages. */
  check(ctx: () => string): void {
    const fail = (what: string): never => {
      throw new Error(`changelog of view ${this.view} (key ${JSON.stringify(this.key)}): ${what}\n${ctx()}`);
    };
    const snap = this.engine.viewSnapshot(this.view);
    const now = this.multiset(snap.rows);
    const sets = this.received.splice(0);
    const changed = !sameMultiset(now, this.last);
    if (sets.length > 1) fail(`${sets.length} change sets in one epoch`);
    if (sets.length !== (changed ? 1 : 0))
      fail(changed ? 'no change set for a changed view' : 'a change set for an unchanged view');
    for (const cs of sets) {
      if (cs.epoch !== this.engine.epoch)
        fail(`change set of epoch ${cs.epoch} at epoch ${this.engine.epoch}`);
      const plus = new Map<string, number>();
      const minus = new Map<string, number>();
      let minusU = 0;
      let plusU = 0;
      for (const ch of cs.changes) {
        const n = ch.n ?? 1;
        if (!Number.isInteger(n) || n < 1) fail(`bad multiplicity ${String(ch.n)}`);
        if (ch.n !== undefined && this.key !== null) fail(`n=${ch.n} on a keyed view`);
        const k = exactRow(this.columns, ch.row);
        if (ch.op === '+I' || ch.op === '+U') addTo(plus, k, n);
        else addTo(minus, k, n);
        if (ch.op === '-U') minusU++;
        if (ch.op === '+U') plusU++;
      }
      if (minusU !== plusU) fail(`${minusU} -U but ${plusU} +U`);
      for (const k of plus.keys()) if (minus.has(k)) fail(`not consolidated: ${k} both added and removed`);
      for (const [k, n] of minus) {
        const have = this.folded.get(k) ?? 0;
        if (have < n) fail(`removes ${n} x ${k} but the fold holds ${have}`);
        addTo(this.folded, k, -n);
      }
      for (const [k, n] of plus) addTo(this.folded, k, n);
      this.folds++;
    }
    if (!sameMultiset(this.folded, now)) {
      const a = [...this.folded].map(([k, n]) => `${k} x${n}`).sort();
      const b = [...now].map(([k, n]) => `${k} x${n}`).sort();
      const { missing, extra } = multisetDiff(b, a);
      fail(
        `the fold differs from the snapshot: snapshot only ${JSON.stringify(missing.slice(0, 6))}, fold only ${JSON.stringify(extra.slice(0, 6))}`,
      );
    }
    if (this.key !== null) {
      const keys = new Set(snap.rows.map((r) => JSON.stringify(this.key!.map((k) => String(r[k])))));
      if (keys.size !== snap.rows.length) fail(`a keyed view holds two rows with one key`);
    }
    this.last = now;
  }
}

// ---------------------------------------------------------------------------------------------------
// One differential run

export interface JoinRunOptions {
  readonly epochs: number;
  readonly engine?: () => EngineLike;
  /** Replay command printed on failure. */
  readonly replay?: (seed: number) => string;
  /** Fold every view's changelog and check it against the snapshot after every epoch (default on). */
  readonly foldChangelog?: boolean;
  /** Only these templates (the harness's own sensitivity test). */
  readonly templates?: readonly string[];
  /** Another SQLite text for a view (the harness's own sensitivity test: a deliberately wrong oracle). */
  readonly sqliteOverride?: (v: JoinView) => string;
}

export interface JoinRunResult {
  readonly epochs: number;
  readonly checks: number;
  readonly adHoc: number;
  readonly scenario: JoinScenario;
  /** Largest view (rows) compared. */
  readonly maxRows: number;
  /** View checks that found the view rightly in error (a scalar subquery of several rows). */
  readonly erred: number;
  /** Change sets folded. */
  readonly folds: number;
  readonly templates: readonly string[];
}

export function joinReplayCommand(seed: number): string {
  return `SLUICE_SEED=${seed} node --import tsx --test test/join-differential.test.ts`;
}

/**
 * Compares an ad-hoc SELECT's result (engine) with SQLite's rows: as multisets, or in order when the
 * query has ORDER BY (such queries order by every output column, so the order is determined).
 */
/** The text with every parenthesised part removed. */
function outsideParentheses(sql: string): string {
  let depth = 0;
  let out = '';
  for (const ch of sql) {
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (depth === 0) out += ch;
  }
  return out;
}

/** Whether the oracle says the view must hold row errors now (see JoinView.sqliteError). */
function expectsRowErrors(oracle: SqliteOracle, v: JoinView): boolean {
  if (v.sqliteError === undefined) return false;
  const [row] = oracle.query(v.sqliteError);
  return Number(row?.['e'] ?? 0) === 1;
}

/** The view refuses reads with VIEW_ERROR and holds only CARDINALITY_VIOLATION row errors. */
function assertCardinalityErrors(engine: EngineLike, view: string, ctx: () => string): void {
  let code = '(none)';
  try {
    engine.viewSnapshot(view);
  } catch (e) {
    code = e instanceof SluiceError ? e.code : String(e);
  }
  const errors = engine.viewErrors(view);
  const codes = [...new Set(errors.map((e) => e.code))];
  if (code !== 'VIEW_ERROR' || codes.length !== 1 || codes[0] !== 'CARDINALITY_VIOLATION') {
    throw new Error(
      `view ${view} should hold CARDINALITY_VIOLATION errors (its subquery returns several rows): ` +
        `snapshot gave ${code}, errors ${JSON.stringify(codes)}\n${ctx()}`,
    );
  }
}

function assertAdHocCardinalityError(engine: EngineLike, sql: string, ctx: () => string): void {
  let code = '(none)';
  try {
    engine.execute(sql);
  } catch (e) {
    code = e instanceof SluiceError ? e.code : String(e);
  }
  if (code !== 'CARDINALITY_VIOLATION')
    throw new Error(`ad-hoc ${sql} should fail with CARDINALITY_VIOLATION, not ${code}\n${ctx()}`);
}

export function compareAdHoc(
  engine: EngineLike,
  oracle: SqliteOracle,
  sql: string,
  ctx: () => string,
  /** The same query as SQLite spells it, when that differs. */
  sqliteSql: string = sql,
): void {
  let res;
  try {
    res = engine.execute(sql)[0];
  } catch (e) {
    const detail = e instanceof SluiceError ? `${e.code}: ${e.message}` : String(e);
    throw new Error(`ad-hoc ${sql} failed: ${detail}\n${ctx()}`, { cause: e });
  }
  const columns = res?.columns ?? [];
  const stmt = oracle.db.prepare(sqliteSql);
  const sqliteNames = stmt.columns().map((c) => c.name);
  const names = columns.map((c) => c.name);
  if (names.join(',') !== sqliteNames.join(',')) {
    throw new Error(`ad-hoc ${sql}: columns differ: sluice [${names}], sqlite [${sqliteNames}]\n${ctx()}`);
  }
  const rawExpected = stmt.all() as Record<string, unknown>[];
  const rawActual = (res?.rows ?? []) as Record<string, unknown>[];
  // Compared in order only when both queries order their result (not an ORDER BY inside OVER or a subquery).
  if (/\bORDER BY\b/i.test(outsideParentheses(sql)) && /\bORDER BY\b/i.test(outsideParentheses(sqliteSql))) {
    const line = (r: Record<string, unknown>): string =>
      columns.map((c) => `${c.name}=${canonicalValue(c.type, r[c.name])}`).join(' | ');
    const e = rawExpected.map(line);
    const a = rawActual.map(line);
    if (e.join('\n') !== a.join('\n')) {
      throw new Error(
        `ad-hoc ordered SELECT differs from SQLite: ${sql}\n  sqlite:\n    ${e.join('\n    ')}\n` +
          `  sluice:\n    ${a.join('\n    ')}\n${ctx()}`,
      );
    }
    return;
  }
  const { missing, extra } = multisetDiff(
    canonicalRows(columns, rawExpected),
    canonicalRows(columns, rawActual),
  );
  if (missing.length + extra.length > 0) {
    throw new Error(
      `ad-hoc SELECT differs from SQLite: ${sql}\n  missing from sluice: ${JSON.stringify(missing.slice(0, 10))}\n` +
        `  extra in sluice: ${JSON.stringify(extra.slice(0, 10))}\n${ctx()}`,
    );
  }
}

export function runJoinDifferential(seed: number, options: JoinRunOptions): JoinRunResult {
  const rng = new Rng(seed);
  const scenario = randomJoinScenario(rng, {
    ...(options.templates ? { templates: options.templates } : {}),
  });
  const { schema } = scenario;
  const engine: EngineLike = options.engine?.() ?? new Engine();
  const oracle = new SqliteOracle();
  const replay = options.replay ?? joinReplayCommand;
  let lastBatch = '(none)';
  let created = 0;
  const context = (): string =>
    `seed ${seed} (join generator v${JOIN_GENERATOR_VERSION}), epoch ${engine.epoch}, ` +
    `${created}/${scenario.views.length} views created\nreplay: ${replay(seed)}\n` +
    `schema:\n${describeJoinScenario(scenario)}\nlast ${lastBatch}`;
  const fail = (what: string, e: unknown): never => {
    const detail = e instanceof SluiceError ? `${e.code}: ${e.message}` : String(e);
    throw new Error(`${what} failed: ${detail}\n${context()}`, { cause: e });
  };
  let checks = 0;
  let erred = 0;
  let adHoc = 0;
  let maxRows = 0;
  try {
    for (const t of schema.tables) {
      try {
        engine.execute(createTableSql(t));
      } catch (e) {
        fail(createTableSql(t), e);
      }
      oracle.createTable(t);
    }
    for (const v of scenario.views) oracle.createView(v.name, options.sqliteOverride?.(v) ?? v.sqlite);
    // The first half exist before any data; the rest are created at random epochs (backfill).
    const createAt = scenario.views.map((_, i) =>
      i < Math.ceil(scenario.views.length / 2) ? 0 : rng.int(1, Math.max(1, Math.floor(options.epochs / 2))),
    );
    for (let i = 1; i < createAt.length; i++) createAt[i] = Math.max(createAt[i]!, createAt[i - 1]!);
    const watches = new Map<string, ChangelogWatch>();
    let droppedFolds = 0;
    const watch = (v: JoinView): void => {
      watches.get(v.name)?.unsubscribe();
      watches.delete(v.name);
      // A view in error has no snapshot to follow from: checkAll watches it once it recovers.
      if (options.foldChangelog !== false && !expectsRowErrors(oracle, v))
        watches.set(v.name, new ChangelogWatch(engine, v.name));
    };
    const createDue = (epochIndex: number): void => {
      while (created < scenario.views.length && createAt[created]! <= epochIndex) {
        const v = scenario.views[created]!;
        try {
          engine.execute(joinViewDdl(v));
          watch(v);
        } catch (e) {
          fail(joinViewDdl(v), e);
        }
        created++;
      }
    };
    const checkAll = (): void => {
      for (let i = 0; i < created; i++) {
        const v = scenario.views[i]!;
        const ctx = (): string => `view ${v.name} (${v.template})\n${context()}`;
        if (expectsRowErrors(oracle, v)) {
          // The subquery returns several rows: row errors, reads refused; the changelog is followed
          // again from a fresh snapshot once the view recovers.
          assertCardinalityErrors(engine, v.name, ctx);
          watches.get(v.name)?.unsubscribe();
          watches.delete(v.name);
          erred++;
          continue;
        }
        assertViewMatchesOracle(engine, oracle, v.name, ctx);
        if (!watches.has(v.name) && v.sqliteError !== undefined) watch(v);
        else watches.get(v.name)?.check(ctx);
        checks++;
      }
    };
    createDue(0);
    checkAll();
    const models = schema.tables.map((t) => new JoinModel(t, schema.domains));
    for (let e = 1; e <= options.epochs; e++) {
      const model = rng.pick(models);
      if (rng.chance(0.06)) {
        const sql = randomJoinDml(rng, model);
        lastBatch = `statement: ${sql}`;
        try {
          engine.execute(sql);
        } catch (err) {
          fail(sql, err);
        }
        oracle.db.exec(sql);
        model.reset(oracle.query(`SELECT * FROM ${model.table.name}`).map((r) => fromSqlite(model.table, r)));
      } else {
        const batch = randomJoinBatch(rng, model, randomJoinBatchSize(rng));
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
        // Drop the newest view (nothing depends on it) and create it again over the current data.
        const v = scenario.views[created - 1]!;
        try {
          droppedFolds += watches.get(v.name)?.folds ?? 0;
          watches.get(v.name)?.unsubscribe();
          watches.delete(v.name);
          engine.execute(`DROP MATERIALIZED VIEW ${v.name}`);
          engine.execute(joinViewDdl(v));
          watch(v);
        } catch (err) {
          fail(`drop and re-create ${v.name}`, err);
        }
      }
      checkAll();
      if (e % 10 === 0) {
        // Every view's SELECT, computed once rather than maintained, and a random join query.
        for (let i = 0; i < created; i++) {
          const v = scenario.views[i]!;
          if (options.sqliteOverride !== undefined) continue;
          if (expectsRowErrors(oracle, v)) {
            assertAdHocCardinalityError(engine, v.sql, context);
            adHoc++;
            continue;
          }
          compareAdHoc(
            engine,
            oracle,
            v.sql,
            () => `ad-hoc of ${v.name} (${v.template})\n${context()}`,
            v.sqlite,
          );
          adHoc++;
        }
        compareAdHoc(engine, oracle, randomAdHoc(rng, schema), context);
        adHoc++;
      }
      if (e % 25 === 0) {
        for (let i = 0; i < created; i++) {
          const [row] = oracle.query(`SELECT COUNT(*) AS n FROM ${scenario.views[i]!.name}`);
          maxRows = Math.max(maxRows, Number(row?.['n'] ?? 0));
        }
      }
    }
    createDue(Number.POSITIVE_INFINITY);
    checkAll();
    for (const t of schema.tables) {
      const cols = t.columns.map((c) => ({ name: c.name, type: c.sqlType, nullable: c.nullable }));
      const expected = canonicalRows(cols, oracle.query(`SELECT * FROM ${t.name}`));
      const actual = canonicalRows(cols, engine.tableRows(t.name));
      const { missing, extra } = multisetDiff(expected, actual);
      if (missing.length + extra.length > 0) {
        throw new Error(
          `table ${t.name} differs: missing ${JSON.stringify(missing.slice(0, 5))}, extra ${JSON.stringify(extra.slice(0, 5))}\n${context()}`,
        );
      }
    }
    return {
      epochs: options.epochs,
      checks,
      adHoc,
      scenario,
      maxRows,
      folds: [...watches.values()].reduce((n, w) => n + w.folds, 0) + droppedFolds,
      templates: scenario.views.map((v) => v.template),
      erred,
    };
  } finally {
    oracle.close();
  }
}
