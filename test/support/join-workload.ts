// Seeded schemas, join view templates and change batches for the join differential suite
// (test/join-differential.test.ts), and the run that compares every join view with SQLite after every
// epoch. Every choice comes from one mulberry32 stream (Rng from random-workload.ts), so a seed replays
// exactly as long as this file is unchanged (JOIN_GENERATOR_VERSION names the stream's shape).
//
// Schema. 2–4 tables named a, b, c, d. Every table starts with the join keys `k` and `j` (nullable
// integers from small domains, so matches are common; ~10% NULL; sometimes one hot key holds a large
// share of the rows), then, for keyed tables, `<t>id integer PRIMARY KEY`, then `<t>v` (nullable
// integer) and `<t>w` (nullable text). Only `k` and `j` are shared between tables, so NATURAL JOIN
// joins on exactly (k, j), the other columns can be referenced unqualified, and `SELECT *` over
// NATURAL / USING (k, j) has the same column order in PostgreSQL (USING columns first) and SQLite
// (the left table's order) because k, j come first in every table. At least one table is small
// (≤ ~12 rows) for cross and theta joins.
//
// SQL subset shared by PostgreSQL (Sluice's semantics) and SQLite ≥ 3.39 (RIGHT/FULL JOIN): integer
// arithmetic without division, text comparisons on ASCII, COUNT/SUM/MIN/MAX/COUNT(DISTINCT), every
// output column has a unique name (a view may not have two columns with the same name), no pure
// non-equi FULL JOIN (PostgreSQL rejects it: "FULL JOIN is only supported with merge-joinable or
// hash-joinable join conditions"). Also avoided: `t.*` of the LEFT side of a RIGHT/FULL join with
// USING/NATURAL (SQLite expands it with the merged, coalesced USING columns; PostgreSQL with t's own).
import { Engine, SluiceError } from '../../src/index.ts';
import type { ColumnInfo, Row, Value } from '../../src/common/types.ts';
import type { ViewChangeSet } from '../../src/exec/api.ts';
import type { EngineLike } from './engine-like.ts';
import { exactRow } from './properties.ts';
import { Rng, describeBatch, sqlLiteral } from './random-workload.ts';
import {
  SCALAR_TEMPLATES,
  buildScalarTemplate,
  isScalarTemplate,
  type ScalarTemplate,
} from './scalar-subquery-templates.ts';
import {
  SqliteOracle,
  assertViewMatchesOracle,
  canonicalRows,
  canonicalValue,
  createTableSql,
  multisetDiff,
  type Changes,
  type ColumnSpec,
  type TableSpec,
} from './sqlite-oracle.ts';

export const JOIN_GENERATOR_VERSION = 3;

// ---------------------------------------------------------------------------------------------------
// Schema

export interface JoinTable extends TableSpec {
  /** The table name, also the prefix of its own columns (`aid`, `av`, `aw`). */
  readonly name: string;
  readonly keyed: boolean;
  /** Size the workload drifts towards. */
  readonly target: number;
  readonly small: boolean;
}

/** Value domains shared by every table of one seed. */
export interface Domains {
  /** Keys are 0..kMax. */
  readonly kMax: number;
  /** When set, this share of non-NULL keys is key 0. */
  readonly hot: number;
  readonly jMax: number;
}

export interface JoinSchema {
  readonly tables: readonly JoinTable[];
  readonly domains: Domains;
}

const WORDS = ['p', 'q', 'r', 'pq', 'qr', '', 'x'];

export function idCol(t: JoinTable): string {
  return `${t.name}id`;
}
export function vCol(t: JoinTable): string {
  return `${t.name}v`;
}
export function wCol(t: JoinTable): string {
  return `${t.name}w`;
}

function makeTable(name: string, keyed: boolean, small: boolean, rng: Rng): JoinTable {
  // Join keys of different integer types across tables (integer = bigint must match like 1 = 1).
  const columns: ColumnSpec[] = [
    { name: 'k', sqlType: rng.pick(['integer', 'integer', 'bigint', 'smallint']), nullable: true },
    { name: 'j', sqlType: rng.pick(['integer', 'smallint', 'bigint']), nullable: true },
  ];
  if (keyed) columns.push({ name: `${name}id`, sqlType: 'integer', nullable: false });
  columns.push({ name: `${name}v`, sqlType: 'integer', nullable: true });
  columns.push({ name: `${name}w`, sqlType: 'text', nullable: true });
  return {
    name,
    columns,
    primaryKey: keyed ? [`${name}id`] : null,
    keyed,
    small,
    target: small ? rng.int(4, 12) : rng.int(25, 50),
  };
}

export function randomJoinSchema(rng: Rng): JoinSchema {
  const n = rng.weighted([
    [4, 2],
    [4, 3],
    [3, 4],
  ]);
  const names = ['a', 'b', 'c', 'd'].slice(0, n);
  // At least one keyed and one keyless table; at least one small table.
  const keyed = names.map(() => rng.chance(0.5));
  if (keyed.every((x) => x)) keyed[rng.int(0, n - 1)] = false;
  if (keyed.every((x) => !x)) keyed[rng.int(0, n - 1)] = true;
  const small = names.map(() => rng.chance(0.3));
  if (!small.some((x) => x)) small[n - 1] = true;
  const tables = names.map((name, i) => makeTable(name, keyed[i]!, small[i]!, rng));
  const domains: Domains = {
    kMax: rng.pick([3, 5, 8]),
    hot: rng.chance(0.35) ? rng.pick([0.4, 0.6]) : 0,
    jMax: rng.pick([1, 2]),
  };
  return { tables, domains };
}

// ---------------------------------------------------------------------------------------------------
// Data

function keyValue(rng: Rng, d: Domains): Value {
  if (rng.chance(0.1)) return null;
  if (d.hot > 0 && rng.chance(d.hot)) return 0;
  return rng.int(0, d.kMax);
}

function jValue(rng: Rng, d: Domains): Value {
  if (rng.chance(0.1)) return null;
  return rng.int(0, d.jMax);
}

function vValue(rng: Rng): Value {
  return rng.chance(0.12) ? null : rng.int(-5, 25);
}

function wValue(rng: Rng): Value {
  return rng.chance(0.1) ? null : rng.pick(WORDS);
}

/** One table's rows as the generator believes them to be (a multiset; keyed by id when keyed). */
export class JoinModel {
  rows: Row[] = [];
  private nextId = 1;

  constructor(
    readonly table: JoinTable,
    readonly domains: Domains,
  ) {}

  freshRow(rng: Rng): Row {
    const t = this.table;
    const row: Row = { k: keyValue(rng, this.domains), j: jValue(rng, this.domains) };
    if (t.keyed) row[idCol(t)] = this.nextId++;
    row[vCol(t)] = vValue(rng);
    row[wCol(t)] = wValue(rng);
    return row;
  }

  /** A changed copy: mostly the join key moves (to another key, to NULL, from NULL). */
  modified(rng: Rng, row: Row): Row {
    const t = this.table;
    const out: Row = { ...row };
    const what = rng.weighted<'k' | 'j' | 'kj' | 'v' | 'w'>([
      [5, 'k'],
      [2, 'j'],
      [1, 'kj'],
      [2, 'v'],
      [1, 'w'],
    ]);
    if (what === 'k' || what === 'kj') out['k'] = keyValue(rng, this.domains);
    if (what === 'j' || what === 'kj') out['j'] = jValue(rng, this.domains);
    if (what === 'v') out[vCol(t)] = vValue(rng);
    if (what === 'w') out[wCol(t)] = wValue(rng);
    return out;
  }

  pkOnly(row: Row): Row {
    const id = idCol(this.table);
    return { [id]: row[id] ?? null };
  }

  /** The engine's batch semantics: deletes (full row, or the key), then inserts (upsert when keyed). */
  apply(changes: Changes): void {
    const t = this.table;
    const id = idCol(t);
    for (const d of changes.delete ?? []) {
      const i = t.keyed
        ? this.rows.findIndex((r) => r[id] === d[id])
        : this.rows.findIndex((r) => t.columns.every((c) => r[c.name] === d[c.name]));
      if (i < 0) throw new Error(`JoinModel: delete of a missing row ${JSON.stringify(d)} from ${t.name}`);
      this.rows[i] = this.rows[this.rows.length - 1]!;
      this.rows.pop();
    }
    for (const ins of changes.insert ?? []) {
      if (t.keyed) {
        const i = this.rows.findIndex((r) => r[id] === ins[id]);
        if (i >= 0) {
          this.rows[i] = ins;
          continue;
        }
        const n = ins[id];
        if (typeof n === 'number' && n >= this.nextId) this.nextId = n + 1;
      }
      this.rows.push(ins);
    }
  }

  reset(rows: readonly Row[]): void {
    this.rows = [];
    this.apply({ insert: rows });
  }
}

/** Batch size: mostly 1–50, sometimes a few hundred. */
export function randomJoinBatchSize(rng: Rng): number {
  return rng.weighted<() => number>([
    [55, () => rng.int(1, 8)],
    [35, () => rng.int(9, 50)],
    [10, () => rng.int(100, 300)],
  ])();
}

/**
 * One valid batch against the model's rows (not applied). Above the table's target size deletes
 * dominate; each existing row is touched at most once per batch. Rarely the batch deletes everything.
 */
export function randomJoinBatch(rng: Rng, model: JoinModel, size: number): Changes {
  const insert: Row[] = [];
  const del: Row[] = [];
  const t = model.table;
  const n = model.rows.length;
  if (n > 0 && rng.chance(0.02)) {
    // Every row goes (the last match of every key leaves at once).
    return { delete: model.rows.map((r) => (t.keyed && rng.chance(0.5) ? model.pkOnly(r) : { ...r })) };
  }
  const big = size > 60;
  const pDelete = n === 0 ? 0 : n > t.target ? 0.5 : 0.15;
  // Large batches churn (updates and deletes) rather than grow without bound.
  const pUpdate = n === 0 ? 0 : big ? 0.45 : 0.35;
  const order = Array.from({ length: n }, (_, i) => i);
  let cursor = 0;
  const takeExisting = (): Row | undefined => {
    if (cursor >= order.length) return undefined;
    const j = cursor + Math.floor(rng.next() * (order.length - cursor));
    const tmp = order[cursor]!;
    order[cursor] = order[j]!;
    order[j] = tmp;
    return model.rows[order[cursor++]!];
  };
  let grow = 0;
  // Inserts stop at 1.5 × the target, so joins over the table stay a bounded size.
  const growCap = Math.max(big ? 5 : 2, Math.ceil(1.5 * t.target) - n);
  for (let i = 0; i < size; i++) {
    const r = rng.next();
    if (r < pDelete) {
      const row = takeExisting();
      if (row === undefined) continue;
      del.push(t.keyed && rng.chance(0.5) ? model.pkOnly(row) : { ...row });
    } else if (r < pDelete + pUpdate) {
      const row = takeExisting();
      if (row === undefined) continue;
      const next = model.modified(rng, row);
      if (t.keyed && rng.chance(0.5)) insert.push(next);
      else {
        del.push(t.keyed && rng.chance(0.5) ? model.pkOnly(row) : { ...row });
        insert.push(next);
      }
    } else if (grow < growCap) {
      grow++;
      if (!t.keyed && n > 0 && rng.chance(0.1)) insert.push({ ...model.rows[rng.int(0, n - 1)]! });
      else insert.push(model.freshRow(rng));
    }
  }
  if (insert.length === 0 && del.length === 0) insert.push(model.freshRow(rng));
  const out: { insert?: Row[]; delete?: Row[] } = {};
  if (insert.length > 0) out.insert = insert;
  if (del.length > 0) out.delete = del;
  return out;
}

/** An INSERT / UPDATE / DELETE valid in Sluice and SQLite; UPDATEs move join keys, never ids. */
export function randomJoinDml(rng: Rng, model: JoinModel): string {
  const t = model.table;
  const d = model.domains;
  const cond = (): string =>
    rng.pick([
      () => `k = ${rng.int(0, d.kMax)}`,
      () => `j = ${rng.int(0, d.jMax)}`,
      () => `k IS NULL`,
      () => `${vCol(t)} < ${rng.int(0, 20)}`,
      () => `(k = ${rng.int(0, d.kMax)} AND j IS NOT NULL)`,
    ])();
  const kind = rng.weighted<'insert' | 'update' | 'delete'>([
    [2, 'insert'],
    [5, 'update'],
    [model.rows.length > t.target ? 3 : 1, 'delete'],
  ]);
  if (kind === 'insert') {
    const rows = Array.from({ length: rng.int(1, 4) }, () => model.freshRow(rng));
    const cols = t.columns.map((c) => c.name);
    const values = rows.map((r) => `(${cols.map((c) => sqlLiteral(r[c] ?? null)).join(', ')})`);
    return `INSERT INTO ${t.name} (${cols.join(', ')}) VALUES ${values.join(', ')}`;
  }
  if (kind === 'delete') return `DELETE FROM ${t.name} WHERE ${cond()}`;
  const set = rng.pick([
    () => `k = k + 1`,
    () => `k = ${rng.int(0, d.kMax)}`,
    () => `k = NULL`,
    () => `j = ${rng.int(0, d.jMax)}`,
    () => `k = j, j = k`,
    () => `${vCol(t)} = ${vCol(t)} + ${rng.int(-3, 5)}`,
    () => `k = COALESCE(k, ${rng.int(0, d.kMax)})`,
  ])();
  return `UPDATE ${t.name} SET ${set} WHERE ${cond()}`;
}

/** SQLite's values (bigint under safe integers) back in Sluice's representation. */
export function fromSqlite(t: JoinTable, r: Record<string, unknown>): Row {
  const out: Row = {};
  for (const c of t.columns) {
    const v = r[c.name];
    out[c.name] = v === undefined || v === null ? null : typeof v === 'bigint' ? Number(v) : (v as Value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Views

export interface JoinView {
  readonly name: string;
  /** The SELECT as given to Sluice. */
  readonly sql: string;
  /** The SELECT as given to SQLite (the same text unless a template needs another spelling). */
  readonly sqlite: string;
  readonly template: string;
  /** A global aggregate (one row even over no input): not empty after everything is deleted. */
  readonly global?: boolean;
  /**
   * A SQLite query of one row whose column `e` is 1 while the view must hold CARDINALITY_VIOLATION
   * row errors (a scalar subquery returning several rows, where SQLite takes the first).
   */
  readonly sqliteError?: string;
  /** CREATE OR REPLACE FUNCTION statements the view needs, run right before it is created. */
  readonly functions?: string;
}

export const JOIN_TEMPLATES = [
  'inner_one_key',
  'inner_two_keys',
  'using_k',
  'using_kj_star',
  'natural_star',
  'natural_left_star',
  'comma_where',
  'cross_small',
  'expr_key',
  'equi_residual',
  'theta_small',
  'left',
  'left_on_right_filter',
  'left_on_left_filter',
  'left_anti',
  'left_where_coalesce',
  'right',
  'right_residual',
  'full',
  'full_residual',
  'full_unmatched',
  'full_using_star',
  'three_way',
  'three_way_left',
  'four_way',
  'paren_left_inner',
  'paren_inner_full',
  'self_join',
  'self_left_shift',
  'join_view_of_table',
  'join_of_views',
  'agg_over_join_view',
  'agg_direct',
  'agg_global_outer',
  'distinct_join',
  'expr_select',
  'qualified_star',
  'self_full',
  'self_natural',
  'full_on_false',
  'coalesce_key',
  'text_key',
  'numeric_key',
  'inner_where_both',
  'left_where_right',
  'left_where_left',
  'full_where_left',
  'using_chain_full',
  'natural_chain',
  'paren_using',
  'or_condition',
  'on_single_side',
  'range_small',
  'hidden_equi',
  'outer_residual_both',
  'paren_where_pushdown',
  'comma_then_left',
  // A FULL JOIN of two views whose keys can be NULL (GROUP BY / DISTINCT NULL groups): bug 1, fixed on
  // main by f840452 (test/join-regressions.test.ts has the reproducer).
  'join_of_views_full',
  // Nested join syntax (`a JOIN b JOIN c ON … ON …`); SQLite gets the same tree in parentheses.
  'nested_left_inner',
  'nested_full_left',
  'nested_right_cross',
  // Set operations (SQLite has no INTERSECT/EXCEPT ALL, no parentheses and no INTERSECT precedence:
  // it gets the same query spelled with derived tables and ROW_NUMBER()).
  'union_all',
  'union_set',
  'intersect_set',
  'except_set',
  'intersect_all',
  'except_all',
  'setop_precedence',
  'setop_parens',
  'setop_types',
  'setop_join_branch',
  'view_over_setop',
  'setop_over_views',
  // Derived tables in FROM and WITH queries (a WITH query read twice is computed once).
  'derived_agg_join',
  'derived_nested',
  'derived_unaliased',
  'derived_left_view',
  'derived_setop_agg',
  'cte_twice',
  'cte_chain',
  'cte_setop',
  'cte_columns',
  // Predicate subqueries (semi- and anti-joins); NULL-heavy operands and subquery columns for NOT IN.
  'in_sub',
  'not_in_sub',
  'not_in_nulls',
  'not_in_corr',
  'not_not_in',
  'exists_corr',
  'not_exists_corr',
  'exists_uncorr',
  'in_corr',
  'in_expr_types',
  'in_setop',
  'in_grouped_sub',
  'in_join_group',
  'in_over_view',
  'view_over_semi',
  'two_predicates',
  // Aggregate FILTER (WHERE ...) on every aggregate.
  'agg_filter',
  'agg_filter_join',
  'agg_filter_global',
  // BOOL_AND/BOOL_OR/EVERY and the variance family: SQLite gets MIN/MAX of the 0/1 comparison, and
  // (N·Σx² − (Σx)²) / (N·(N−1)) (or N·N) from exact integer sums (a zero divisor is NULL there).
  'agg_more',
  'agg_more_join',
  'agg_more_global',
  // STRING_AGG in Sluice's order (by value; SQLite spells it ORDER BY inside the call, and its
  // DISTINCT form, which SQLite allows with one argument only, over a correlated SELECT DISTINCT).
  'string_agg',
  // STRING_AGG(x, d ORDER BY …): orders that tie only on equal values, so the text is defined
  // (SQLite takes the same ORDER BY inside the call; DISTINCT there only without a delimiter).
  'string_agg_ordered',
  // JSONB_OBJECT_AGG over a keyed table's ids (unique keys: SQLite's json_group_object keeps
  // duplicates), with FILTER; SQLite orders its pairs as jsonb sorts keys (length, then bytes), and
  // Sluice's text drops the blanks after ':' and ',' (no key or value here holds either).
  'jsonb_object_agg',
  // ARRAY_AGG (with and without ORDER BY, DISTINCT) and array functions over it, read as text and
  // numbers (SQLite has no arrays: string_agg / count / a LIMIT 1 subquery in the same order), and
  // unnest in FROM as SQLite's json_each over json_array(...).
  'array_agg',
  'unnest_from',
  // Top-N, ranking window functions and DISTINCT ON (SQLite has window functions and LIMIT in
  // subqueries; DISTINCT ON is spelled ROW_NUMBER() ... = 1 for it). Every NULL order is written
  // out (SQLite puts NULLs first ascending, PostgreSQL last). Where ROW_NUMBER or LIMIT meets ties,
  // the view outputs only the partition and ORDER BY columns (and the rank), so rows tied in the
  // order are equal in the output: the two sides are compared as the same set of rows whichever
  // tied row each one picked.
  'topn_limit',
  'topn_limit_offset',
  'topn_per_group',
  'topn_rn_eq1',
  'topn_rank',
  'topn_dense_rank',
  'rank_unbounded',
  'row_number_all',
  'distinct_on',
  'topn_over_agg',
  'topn_cte_join',
  'topn_over_join_view',
  // Window functions in the select list (LAG/LEAD, FIRST/LAST_VALUE, ranks, aggregates OVER with
  // the default RANGE frame, ROWS frames and no ORDER BY). Where a value depends on the order among
  // peers (ROW_NUMBER, LAG/LEAD, FIRST/LAST_VALUE, ROWS frames), the window orders by every column
  // of the table (its id last when keyed), so only identical rows tie — and they get the same
  // multiset of outputs whichever copy comes first. RANGE frames and ranks are defined among peers.
  'win_lag_lead',
  'win_running_range',
  'win_rows_frame',
  'win_partition_total',
  'win_first_last',
  'win_ranks_mixed',
  'win_filtered_derived',
  'win_over_agg',
  'win_over_join_view',
  // NTILE, PERCENT_RANK, CUME_DIST (the partition's size), NTH_VALUE, and ROWS frames that end
  // after the current row (n FOLLOWING, UNBOUNDED FOLLOWING), with changes anywhere in a partition.
  'win_distribution',
  'win_nth_value',
  'win_following_frames',
  // Named windows: WINDOW p AS (…), w AS (p ORDER BY …), OVER w and OVER (w ROWS …).
  'win_named',
  // A derived table's column alias list `AS s (a, b)` (SQLite has none: a WITH query's column list).
  'derived_alias_list',
  // SQL functions (one calling another) inlined into a join's items and WHERE; SQLite gets the
  // inlined expressions written out.
  'sql_function',
  // Math functions over a LEFT JOIN's NULL-padded values: numeric ones compared as doubles to 10
  // digits (exact when integral), gcd against 12 as SQLite's divisibility CASE, cbrt as pow.
  'math_fns',
  // Regular expressions over text values (SQLite: JavaScript RegExp functions the oracle registers).
  'regex_fns',
  // Scalar subqueries of at most one row per outer row (support/scalar-subquery-templates.ts; the
  // ones that can return several rows run in test/scalar-subquery-differential.test.ts).
  ...SCALAR_TEMPLATES,
] as const;

export type JoinTemplate = (typeof JOIN_TEMPLATES)[number];

interface Ctx {
  readonly rng: Rng;
  readonly schema: JoinSchema;
  name(): string;
}

function pickTwo(rng: Rng, tables: readonly JoinTable[]): [JoinTable, JoinTable] {
  const a = rng.pick(tables);
  const rest = tables.filter((t) => t !== a);
  return [a, rng.pick(rest)];
}

/**
 * An ORDER BY over every column of `t` (its id last when keyed): only identical rows are peers, so a
 * window value that depends on the order among peers is the same multiset in SQLite and Sluice.
 */
function allOrder(t: JoinTable): string {
  return (
    `k NULLS FIRST, j DESC NULLS LAST, ${vCol(t)} NULLS LAST, ${wCol(t)} NULLS FIRST` +
    (t.keyed ? `, ${idCol(t)}` : '')
  );
}

function smallOf(rng: Rng, tables: readonly JoinTable[]): JoinTable {
  return rng.pick(tables.filter((t) => t.small));
}

/** Builds one template's views (a template over a view returns the base view first). */
type AnyTemplate = JoinTemplate;

function buildTemplate(ctx: Ctx, template: AnyTemplate | ScalarTemplate): JoinView[] {
  const { rng, schema } = ctx;
  if (isScalarTemplate(template)) {
    const d = schema.domains;
    return buildScalarTemplate(
      { rng, tables: schema.tables, kMax: d.kMax, jMax: d.jMax, name: () => ctx.name() },
      template,
    );
  }
  const ts = schema.tables;
  const [x, y] = pickTwo(rng, ts);
  const X = x.name;
  const Y = y.name;
  const c = rng.int(0, 15);
  const one = (sql: string, extra: Partial<JoinView> = {}): JoinView[] => [
    { name: ctx.name(), sql, sqlite: sql, template, ...extra },
  ];
  switch (template) {
    case 'inner_one_key':
      // Unqualified columns that exist on one side only.
      return one(`SELECT ${X}.k, ${vCol(x)}, ${vCol(y)}, ${wCol(y)} FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k`);
    case 'inner_two_keys':
      return one(
        `SELECT ${X}.k AS k, ${Y}.j AS j, ${X}.${vCol(x)} AS xv, ${Y}.${wCol(y)} AS yw ` +
          `FROM ${X} INNER JOIN ${Y} ON ${X}.k = ${Y}.k AND ${X}.j = ${Y}.j`,
      );
    case 'using_k':
      // The merged USING column unqualified; the other shared column qualified on both sides.
      return one(
        `SELECT k, ${X}.j AS xj, ${Y}.j AS yj, ${vCol(x)}, ${vCol(y)} FROM ${X} JOIN ${Y} USING (k)`,
      );
    case 'using_kj_star':
      return one(`SELECT * FROM ${X} JOIN ${Y} USING (k, j)`);
    case 'natural_star':
      return one(`SELECT * FROM ${X} NATURAL JOIN ${Y}`);
    case 'natural_left_star':
      return one(`SELECT * FROM ${X} NATURAL LEFT JOIN ${Y}`);
    case 'comma_where':
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)}, ${wCol(y)} FROM ${X}, ${Y} ` +
          `WHERE ${X}.k = ${Y}.k AND ${Y}.j <> ${rng.int(0, schema.domains.jMax)}`,
      );
    case 'cross_small': {
      const s = smallOf(rng, ts);
      const o = rng.pick(ts.filter((t) => t !== s).concat(ts.filter((t) => t.small && t !== s)));
      const [O, S] = [o.name, s.name];
      const from = rng.pick([
        `${O} CROSS JOIN ${S}`,
        `${O}, ${S}`,
        `${O} JOIN ${S} ON TRUE`,
        `${O} INNER JOIN ${S} ON 1 = 1`,
      ]);
      return one(`SELECT ${O}.k AS ok, ${vCol(o)}, ${S}.k AS sk, ${wCol(s)} FROM ${from}`);
    }
    case 'expr_key':
      return one(
        `SELECT ${X}.k AS xk, ${Y}.k AS yk, ${vCol(x)}, ${vCol(y)} FROM ${X} JOIN ${Y} ON ${X}.k + 1 = ${Y}.k`,
      );
    case 'equi_residual':
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)}, ${vCol(y)} FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k AND ${vCol(x)} < ${vCol(y)}`,
      );
    case 'theta_small': {
      const s = smallOf(rng, ts);
      const o = rng.pick(ts.filter((t) => t !== s));
      return one(
        `SELECT ${o.name}.k AS ok, ${vCol(o)}, ${vCol(s)}, ${wCol(s)} FROM ${o.name} JOIN ${s.name} ON ${vCol(o)} < ${vCol(s)}`,
      );
    }
    case 'left':
      return one(
        `SELECT ${X}.k AS xk, ${X}.j AS xj, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)}, ${wCol(y)} ` +
          `FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k`,
      );
    case 'left_on_right_filter':
      // A condition on the right side only inside ON: it limits matches, it never drops left rows.
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${vCol(y)} FROM ${X} LEFT OUTER JOIN ${Y} ` +
          `ON ${X}.k = ${Y}.k AND ${vCol(y)} > ${c}`,
      );
    case 'left_on_left_filter':
      // A condition on the preserved side inside ON: failing left rows stay, NULL-padded.
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.j AS yj, ${vCol(y)} FROM ${X} LEFT JOIN ${Y} ` +
          `ON ${X}.k = ${Y}.k AND ${vCol(x)} > ${c} AND ${X}.j IS NOT NULL`,
      );
    case 'left_anti':
      return one(
        `SELECT ${X}.* FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k AND ${X}.j = ${Y}.j WHERE ${Y}.k IS NULL`,
      );
    case 'left_where_coalesce':
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${vCol(y)} FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k ` +
          `WHERE COALESCE(${vCol(y)}, -1) < ${c}`,
      );
    case 'right':
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${Y}.j AS yj, ${vCol(y)} FROM ${X} RIGHT JOIN ${Y} ON ${X}.k = ${Y}.k`,
      );
    case 'right_residual':
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)} FROM ${X} RIGHT OUTER JOIN ${Y} ` +
          `ON ${X}.k = ${Y}.k AND ${X}.j = ${rng.int(0, schema.domains.jMax)} AND ${vCol(y)} >= ${c}`,
      );
    case 'full':
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)}, ${wCol(y)} FROM ${X} FULL JOIN ${Y} ON ${X}.k = ${Y}.k`,
      );
    case 'full_residual':
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)} FROM ${X} FULL OUTER JOIN ${Y} ` +
          `ON ${X}.k = ${Y}.k AND ${vCol(x)} < ${vCol(y)}`,
      );
    case 'full_unmatched':
      return one(
        `SELECT ${X}.k AS xk, ${X}.j AS xj, ${Y}.k AS yk, ${Y}.j AS yj FROM ${X} FULL JOIN ${Y} ` +
          `ON ${X}.k = ${Y}.k AND ${X}.j = ${Y}.j WHERE ${X}.k IS NULL OR ${Y}.k IS NULL`,
      );
    case 'full_using_star':
      return one(`SELECT * FROM ${X} FULL JOIN ${Y} USING (k, j)`);
    case 'three_way': {
      const z = rng.pick(ts);
      return one(
        `SELECT t1.k AS k, t1.${vCol(x)} AS v1, t2.${vCol(y)} AS v2, t3.${wCol(z)} AS w3 ` +
          `FROM ${X} t1 JOIN ${Y} t2 ON t1.k = t2.k JOIN ${z.name} t3 ON t3.k = t2.k AND t3.j = t1.j`,
      );
    }
    case 'three_way_left': {
      const z = rng.pick(ts);
      return one(
        `SELECT t1.k AS k1, t1.${vCol(x)} AS v1, t2.k AS k2, t2.j AS j2, t3.${vCol(z)} AS v3 ` +
          `FROM ${X} t1 LEFT JOIN ${Y} t2 ON t1.k = t2.k AND t1.j = t2.j ` +
          `LEFT JOIN ${z.name} t3 ON t3.j = t2.j AND t3.k = t2.k`,
      );
    }
    case 'four_way': {
      const z = rng.pick(ts);
      const s = smallOf(rng, ts);
      return one(
        `SELECT t1.k AS k, t1.j AS j, t2.${vCol(y)} AS v2, t3.${vCol(z)} AS v3, t4.${wCol(s)} AS w4 ` +
          `FROM ${X} t1 JOIN ${Y} t2 ON t1.k = t2.k AND t1.j = t2.j ` +
          `JOIN ${z.name} t3 ON t3.k = t2.k AND t3.j = t2.j ` +
          `LEFT JOIN ${s.name} t4 ON t4.j = t1.j AND t4.k = t3.k`,
      );
    }
    case 'paren_left_inner': {
      const z = rng.pick(ts);
      // Not the same as (X LEFT JOIN Y) JOIN Z: the inner join happens before the padding.
      return one(
        `SELECT t1.k AS k1, t1.${vCol(x)} AS v1, t2.${vCol(y)} AS v2, t3.${vCol(z)} AS v3 ` +
          `FROM ${X} t1 LEFT JOIN (${Y} t2 JOIN ${z.name} t3 ON t2.k = t3.k AND t2.j = t3.j) ` +
          `ON t1.k = t2.k AND t1.j = t3.j`,
      );
    }
    case 'paren_inner_full': {
      const z = rng.pick(ts);
      return one(
        `SELECT t1.k AS k1, t2.k AS k2, t2.${vCol(y)} AS v2, t3.k AS k3, t3.${vCol(z)} AS v3 ` +
          `FROM ${X} t1 JOIN (${Y} t2 FULL JOIN ${z.name} t3 ON t2.k = t3.k) ON t1.j = COALESCE(t2.j, t3.j) ` +
          `AND t1.k = COALESCE(t2.k, t3.k)`,
      );
    }
    case 'self_join':
      return one(
        `SELECT p.k AS k, p.${vCol(x)} AS pv, q.${vCol(x)} AS qv, q.${wCol(x)} AS qw ` +
          `FROM ${X} p JOIN ${X} q ON p.k = q.k AND p.j = q.j`,
      );
    case 'self_left_shift':
      return one(
        `SELECT p.k AS k, p.${vCol(x)} AS pv, q.k AS qk, q.${vCol(x)} AS qv FROM ${X} p LEFT JOIN ${X} q ON q.k = p.k + 1`,
      );
    case 'join_view_of_table': {
      const base = ctx.name();
      const baseSql = `SELECT k, COUNT(*) AS n, SUM(${vCol(x)}) AS total FROM ${X} GROUP BY k`;
      const top = ctx.name();
      const kind = rng.pick(['JOIN', 'LEFT JOIN']);
      const topSql =
        `SELECT ${X}.k AS k, ${vCol(x)}, g.n AS n, g.total AS total FROM ${X} ${kind} ${base} g ` +
        `ON ${X}.k = g.k`;
      return [
        { name: base, sql: baseSql, sqlite: baseSql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
    case 'agg_over_join_view': {
      const base = ctx.name();
      const kind = rng.pick(['JOIN', 'LEFT JOIN', 'FULL JOIN']);
      const baseSql =
        `SELECT ${X}.k AS k, ${X}.j AS j, ${vCol(x)} AS v1, ${vCol(y)} AS v2, ${wCol(y)} AS w2 ` +
        `FROM ${X} ${kind} ${Y} ON ${X}.k = ${Y}.k`;
      const top = ctx.name();
      const having = rng.chance(0.5) ? ` HAVING COUNT(*) > ${rng.int(1, 3)}` : '';
      const topSql =
        `SELECT k, COUNT(*) AS n, COUNT(v2) AS nv2, SUM(v2) AS s2, MIN(w2) AS mnw, MAX(v1) AS mxv, ` +
        `COUNT(DISTINCT j) AS dj FROM ${base} GROUP BY k${having}`;
      return [
        { name: base, sql: baseSql, sqlite: baseSql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
    case 'agg_direct':
      return one(
        `SELECT ${X}.k AS k, COUNT(*) AS n, SUM(${vCol(y)}) AS s, MIN(${wCol(y)}) AS mn, MAX(${vCol(x)}) AS mx, ` +
          `COUNT(DISTINCT ${Y}.j) AS dj FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k GROUP BY ${X}.k ` +
          `HAVING COUNT(*) >= ${rng.int(1, 3)}`,
      );
    case 'agg_global_outer':
      return one(
        `SELECT COUNT(*) AS n, COUNT(${Y}.k) AS matched, SUM(${vCol(y)}) AS s, MAX(${vCol(x)}) AS mx ` +
          `FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k`,
        { global: true },
      );
    case 'distinct_join':
      return one(`SELECT DISTINCT ${X}.k AS k, ${Y}.j AS j FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k`);
    case 'expr_select':
      return one(
        `SELECT ${X}.k * 2 + COALESCE(${vCol(y)}, 0) AS e, ` +
          `CASE WHEN ${Y}.k IS NULL THEN 'none' ELSE ${wCol(y)} END AS w, ${vCol(x)} - ${Y}.j AS d ` +
          `FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k`,
      );
    case 'qualified_star':
      return one(
        `SELECT ${Y}.*, ${vCol(x)} FROM ${X} RIGHT JOIN ${Y} ON ${X}.k = ${Y}.k AND ${X}.j = ${Y}.j`,
      );
    case 'self_full':
      return one(
        `SELECT p.k AS pk, q.k AS qk, p.${vCol(x)} AS pv, q.${vCol(x)} AS qv ` +
          `FROM ${X} p FULL JOIN ${X} q ON p.k = q.k + 1 AND p.j = q.j`,
      );
    case 'self_natural':
      // Every column is common: rows with a NULL anywhere match nothing, duplicates multiply.
      return one(`SELECT * FROM ${X} p NATURAL JOIN ${X} q`);
    case 'full_on_false':
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)} FROM ${X} ${rng.pick(['FULL', 'LEFT', 'RIGHT'])} JOIN ${Y} ON FALSE`,
      );
    case 'coalesce_key':
      // A key expression that maps NULL to a value: NULL keys match each other here.
      return one(
        `SELECT ${X}.k AS xk, ${Y}.k AS yk, ${vCol(x)}, ${vCol(y)} FROM ${X} ${rng.pick(['JOIN', 'LEFT JOIN', 'FULL JOIN'])} ${Y} ` +
          `ON COALESCE(${X}.k, -1) = COALESCE(${Y}.k, -1) AND ${X}.j = ${Y}.j`,
      );
    case 'text_key':
      return one(
        `SELECT ${wCol(x)} AS w, ${X}.j AS j, ${vCol(x)}, ${vCol(y)} FROM ${X} ${rng.pick(['JOIN', 'LEFT JOIN', 'FULL JOIN'])} ${Y} ` +
          `ON ${wCol(x)} = ${wCol(y)} AND ${X}.j = ${Y}.j`,
      );
    case 'numeric_key':
      // integer = numeric (and, across tables, smallint / integer / bigint keys).
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${vCol(y)} FROM ${X} ${rng.pick(['JOIN', 'LEFT JOIN'])} ${Y} ` +
          `ON ${X}.k * 1.0 = ${Y}.k AND ${X}.j = ${Y}.j`,
      );
    case 'inner_where_both':
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)}, ${vCol(y)}, ${wCol(y)} FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k ` +
          `WHERE ${vCol(x)} < ${vCol(y)} OR ${wCol(y)} = 'p'`,
      );
    case 'left_where_right':
      // A WHERE condition on the padded side: padded rows fail it (the LEFT JOIN acts as an inner one).
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${vCol(y)} FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k WHERE ${vCol(y)} > ${c}`,
      );
    case 'left_where_left':
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)} FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k ` +
          `WHERE ${vCol(x)} > ${c} AND ${X}.j IS NOT NULL`,
      );
    case 'full_where_left':
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)} FROM ${X} FULL JOIN ${Y} ON ${X}.k = ${Y}.k ` +
          `WHERE ${vCol(x)} > ${c} OR ${X}.j IS NULL`,
      );
    case 'using_chain_full': {
      const z = rng.pick(ts);
      // The second USING joins on the first join's merged columns (COALESCE of both sides).
      return one(
        `SELECT k, j, t1.${vCol(x)} AS v1, t2.${vCol(y)} AS v2, t3.${vCol(z)} AS v3 ` +
          `FROM ${X} t1 FULL JOIN ${Y} t2 USING (k, j) ${rng.pick(['FULL', 'LEFT', 'RIGHT', 'INNER'])} JOIN ${z.name} t3 USING (k, j)`,
      );
    }
    case 'natural_chain': {
      const rest = ts.filter((t) => t !== x && t !== y);
      if (rest.length === 0) return buildTemplate(ctx, 'using_chain_full');
      const z = rng.pick(rest);
      return one(
        `SELECT * FROM ${X} NATURAL JOIN ${Y} NATURAL ${rng.pick(['LEFT', 'FULL', 'INNER'])} JOIN ${z.name}`,
      );
    }
    case 'paren_using': {
      const z = rng.pick(ts);
      return one(
        `SELECT k, j, t1.${vCol(x)} AS v1, t2.${wCol(y)} AS w2, t3.${vCol(z)} AS v3 ` +
          `FROM ${X} t1 ${rng.pick(['LEFT', 'FULL', 'INNER'])} JOIN (${Y} t2 JOIN ${z.name} t3 USING (k, j)) USING (k, j)`,
      );
    }
    case 'or_condition':
      // A disjunction: no equi key to hash on, the join must still be right.
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)} FROM ${X} ${rng.pick(['JOIN', 'LEFT JOIN', 'RIGHT JOIN'])} ${Y} ` +
          `ON ${X}.k = ${Y}.k OR ${vCol(x)} = ${vCol(y)}`,
      );
    case 'on_single_side': {
      // ON conditions that mention one side only: in a LEFT JOIN a left-only condition decides which
      // left rows may match (all of the right side), a right-only one which right rows are eligible.
      const s = smallOf(rng, ts);
      const o = rng.pick(ts.filter((t) => t !== s));
      const cond = rng.pick([
        `${o.name}.k = ${o.name}.j`,
        `${s.name}.k = ${rng.int(0, schema.domains.kMax)}`,
        `${o.name}.k = ${s.name}.k AND ${o.name}.j = ${rng.int(0, schema.domains.jMax)}`,
        `${s.name}.j IS NULL`,
      ]);
      return one(
        `SELECT ${o.name}.k AS ok, ${o.name}.j AS oj, ${vCol(o)}, ${s.name}.k AS sk, ${vCol(s)} ` +
          `FROM ${o.name} ${rng.pick(['LEFT JOIN', 'JOIN'])} ${s.name} ON ${cond}`,
      );
    }
    case 'range_small': {
      const s = smallOf(rng, ts);
      const o = rng.pick(ts.filter((t) => t !== s));
      return one(
        `SELECT ${o.name}.k AS ok, ${vCol(o)}, ${s.name}.k AS sk, ${wCol(s)} FROM ${o.name} ${rng.pick(['JOIN', 'LEFT JOIN'])} ${s.name} ` +
          `ON ${o.name}.k BETWEEN ${s.name}.k AND ${s.name}.k + 1`,
      );
    }
    case 'hidden_equi':
      // Equality the planner may or may not see as a key: under NOT, in an IN list, both ways round.
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)} FROM ${X} ${rng.pick(['JOIN', 'LEFT JOIN'])} ${Y} ON ` +
          rng.pick([
            `NOT (${X}.k <> ${Y}.k)`,
            `${X}.k IN (${Y}.k, ${Y}.j)`,
            `${Y}.k = ${X}.k AND ${Y}.j = ${X}.j AND ${Y}.k = ${X}.j`,
            `(${X}.k = ${Y}.k) = TRUE`,
          ]),
      );
    case 'outer_residual_both':
      // A residual comparing both sides in a LEFT / RIGHT join: a pair's match can flip without a key
      // change (the match count per row decides the padding).
      return one(
        `SELECT ${X}.k AS xk, ${vCol(x)}, ${Y}.k AS yk, ${vCol(y)} FROM ${X} ${rng.pick(['LEFT', 'RIGHT'])} JOIN ${Y} ` +
          `ON ${X}.k = ${Y}.k AND ${vCol(x)} ${rng.pick(['<', '>=', '<>'])} ${vCol(y)}`,
      );
    case 'paren_where_pushdown': {
      const z = rng.pick(ts);
      // A WHERE condition on a relation inside the nullable side of a LEFT JOIN: it also removes the
      // padded rows, so it must not be pushed into the inner join below the LEFT JOIN.
      return one(
        `SELECT t1.k AS k1, t1.${vCol(x)} AS v1, t2.${vCol(y)} AS v2, t3.${vCol(z)} AS v3 ` +
          `FROM ${X} t1 LEFT JOIN (${Y} t2 JOIN ${z.name} t3 ON t2.k = t3.k AND t2.j = t3.j) ON t1.k = t2.k AND t1.j = t3.j ` +
          `WHERE ${rng.pick([`t3.${vCol(z)} > ${c}`, `t2.${vCol(y)} > ${c} OR t2.${vCol(y)} IS NULL`, `t3.k IS NOT NULL`])}`,
      );
    }
    case 'comma_then_left': {
      const z = rng.pick(ts);
      // `X, Y LEFT JOIN Z ON …` is X × (Y ⟕ Z) in PostgreSQL, (X × Y) ⟕ Z in SQLite: the same rows while
      // ON names only Y and Z.
      return one(
        `SELECT t1.k AS k1, t2.${vCol(y)} AS v2, t3.k AS k3, t3.${vCol(z)} AS v3 ` +
          `FROM ${X} t1, ${Y} t2 LEFT JOIN ${z.name} t3 ON t2.k = t3.k AND t2.j = t3.j ` +
          `WHERE t1.k = t2.k AND t1.j = t2.j`,
      );
    }
    case 'nested_left_inner':
    case 'nested_full_left':
    case 'nested_right_cross': {
      const z = rng.pick(ts);
      const Z = z.name;
      const [outer, inner] =
        template === 'nested_left_inner'
          ? ['LEFT JOIN', 'JOIN']
          : template === 'nested_full_left'
            ? ['FULL JOIN', 'LEFT JOIN']
            : ['RIGHT JOIN', 'CROSS JOIN'];
      const innerOn = inner === 'CROSS JOIN' ? '' : ` ON t2.k = t3.k AND t2.j = t3.j`;
      const outerOn = `ON t1.k = t2.k AND t1.j = ${inner === 'CROSS JOIN' ? 't3.j' : 't2.j'}`;
      const select = `SELECT t1.k AS k1, t1.${vCol(x)} AS v1, t2.k AS k2, t2.${vCol(y)} AS v2, t3.${vCol(z)} AS v3 `;
      const nested = `FROM ${X} t1 ${outer} ${Y} t2 ${inner} ${Z} t3${innerOn} ${outerOn}`;
      const parenthesised = `FROM ${X} t1 ${outer} (${Y} t2 ${inner} ${Z} t3${innerOn}) ${outerOn}`;
      return one(select + nested, { sqlite: select + parenthesised });
    }
    case 'union_all':
    case 'union_set':
    case 'intersect_set':
    case 'except_set':
    case 'intersect_all':
    case 'except_all': {
      const [op, all] = {
        union_all: ['UNION', true],
        union_set: ['UNION', false],
        intersect_set: ['INTERSECT', false],
        except_set: ['EXCEPT', false],
        intersect_all: ['INTERSECT', true],
        except_all: ['EXCEPT', true],
      }[template] as [string, boolean];
      const left = `SELECT k, j FROM ${X} WHERE ${vCol(x)} IS NULL OR ${vCol(x)} > ${c}`;
      const right = `SELECT k AS k2, j FROM ${Y}`;
      const sql = `${left} ${op}${all ? ' ALL' : ''} ${right}`;
      return one(sql, { sqlite: op === 'UNION' || !all ? sql : sqliteSetAll(op, left, right, ['k', 'j']) });
    }
    case 'setop_precedence': {
      const z = rng.pick(ts);
      // PostgreSQL: X ∪ (Y ∩ Z); SQLite would read (X ∪ Y) ∩ Z.
      const [a, b, cc] = [`SELECT k FROM ${X}`, `SELECT k FROM ${Y}`, `SELECT k FROM ${z.name} WHERE j = 0`];
      const op = rng.pick(['UNION', 'EXCEPT']);
      return one(`${a} ${op} ${b} INTERSECT ${cc}`, {
        sqlite: `${a} ${op} SELECT * FROM (${b} INTERSECT ${cc})`,
      });
    }
    case 'setop_parens': {
      const z = rng.pick(ts);
      const a = `SELECT k, j FROM ${X}`;
      const b = `SELECT k, j FROM ${Y} WHERE ${vCol(y)} < ${c}`;
      const cc = `SELECT k, j FROM ${z.name}`;
      return one(`(${a} EXCEPT ${b}) UNION ALL (${cc} INTERSECT ALL ${a})`, {
        sqlite: `SELECT * FROM (${a} EXCEPT ${b}) UNION ALL SELECT * FROM (${sqliteSetAll('INTERSECT', cc, a, ['k', 'j'])})`,
      });
    }
    case 'setop_types': {
      // integer/smallint/bigint columns, NULL and text literals unified by the first branch's types.
      const sql =
        `SELECT k, ${wCol(x)} AS w, NULL AS extra FROM ${X} UNION ALL ` +
        `SELECT j, 'lit', ${vCol(y)} FROM ${Y} UNION ALL SELECT ${vCol(y)}, ${wCol(y)}, NULL FROM ${Y} WHERE k = 0`;
      return one(sql);
    }
    case 'setop_join_branch': {
      const z = rng.pick(ts);
      const left = `SELECT ${X}.k AS k, ${Y}.j AS j FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k`;
      const right = `SELECT k, j FROM ${z.name}`;
      const op = rng.pick(['EXCEPT', 'INTERSECT']);
      return one(`${left} ${op} ALL ${right}`, { sqlite: sqliteSetAll(op, left, right, ['k', 'j']) });
    }
    case 'view_over_setop': {
      const base = ctx.name();
      const op = rng.pick(['UNION ALL', 'UNION', 'EXCEPT', 'INTERSECT ALL']);
      const l = `SELECT k, j FROM ${X}`;
      const r = `SELECT k, j FROM ${Y}`;
      const baseSql = `${l} ${op} ${r}`;
      const baseSqlite = op === 'INTERSECT ALL' ? sqliteSetAll('INTERSECT', l, r, ['k', 'j']) : baseSql;
      const top = ctx.name();
      const topSql = `SELECT k, COUNT(*) AS n, SUM(j) AS s FROM ${base} GROUP BY k`;
      return [
        { name: base, sql: baseSql, sqlite: baseSqlite, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
    case 'setop_over_views': {
      const b1 = ctx.name();
      const b1Sql = `SELECT k, COUNT(*) AS n FROM ${X} GROUP BY k`;
      const b2 = ctx.name();
      const b2Sql = `SELECT k, COUNT(*) AS n FROM ${Y} GROUP BY k`;
      const top = ctx.name();
      const op = rng.pick(['EXCEPT', 'INTERSECT', 'UNION', 'UNION ALL']);
      const topSql = `SELECT k, n FROM ${b1} ${op} SELECT k, n FROM ${b2}`;
      return [
        { name: b1, sql: b1Sql, sqlite: b1Sql, template: `${template}(base)` },
        { name: b2, sql: b2Sql, sqlite: b2Sql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
    case 'derived_agg_join':
      return one(
        `SELECT s.k AS k, s.n AS n, ${Y}.${vCol(y)} AS v FROM (SELECT k, COUNT(*) AS n FROM ${X} GROUP BY k) AS s ` +
          `${rng.pick(['JOIN', 'LEFT JOIN', 'FULL JOIN'])} ${Y} ON s.k = ${Y}.k`,
      );
    case 'derived_nested':
      return one(
        `SELECT u.k AS k, u.j AS j, u.v AS v FROM (SELECT t.k, t.j, t.${vCol(x)} AS v FROM ` +
          `(SELECT k, j, ${vCol(x)} FROM ${X} WHERE ${vCol(x)} > ${c}) t WHERE t.j IS NOT NULL) u`,
      );
    case 'derived_unaliased':
      // PostgreSQL 16 allows a derived table without an alias.
      return one(`SELECT k, j FROM (SELECT k, j FROM ${X} WHERE k IS NOT NULL) WHERE j >= 0`);
    case 'derived_left_view': {
      const base = ctx.name();
      const baseSql = `SELECT k, SUM(${vCol(y)}) AS s FROM ${Y} GROUP BY k`;
      const top = ctx.name();
      const topSql =
        `SELECT ${X}.k AS k, ${X}.${vCol(x)} AS v, dd.s AS s FROM ${X} LEFT JOIN ` +
        `(SELECT k, s FROM ${base} WHERE s IS NOT NULL) dd ON ${X}.k = dd.k`;
      return [
        { name: base, sql: baseSql, sqlite: baseSql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
    case 'derived_setop_agg':
      return one(
        `SELECT k, COUNT(*) AS n, SUM(j) AS s FROM (SELECT k, j FROM ${X} UNION ALL SELECT k, j FROM ${Y}) u GROUP BY k`,
      );
    case 'cte_twice':
      return one(
        `WITH cx AS (SELECT k, COUNT(*) AS n FROM ${X} GROUP BY k) ` +
          `SELECT c1.k AS k, c1.n AS n, c2.n AS n2 FROM cx c1 LEFT JOIN cx c2 ON c2.k = c1.k + 1`,
      );
    case 'cte_chain':
      return one(
        `WITH cx AS (SELECT k, j, ${vCol(x)} AS v FROM ${X} WHERE ${vCol(x)} IS NOT NULL), ` +
          `dx AS (SELECT k, MAX(v) AS m FROM cx GROUP BY k) ` +
          `SELECT cx.k AS k, cx.j AS j, dx.m AS m FROM cx JOIN dx ON cx.k = dx.k JOIN ${Y} ON ${Y}.k = dx.k`,
      );
    case 'cte_setop':
      return one(
        `WITH cx AS (SELECT k, j FROM ${X}) SELECT k, j FROM cx EXCEPT SELECT k, j FROM ${Y} ` +
          `UNION SELECT k, j FROM cx WHERE j = 0`,
      );
    case 'cte_columns':
      return one(
        `WITH cx (kk, total) AS (SELECT k, SUM(${vCol(x)}) FROM ${X} GROUP BY k) SELECT kk, total FROM cx WHERE total > ${c}`,
      );
    case 'in_sub':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, ${vCol(x)} FROM ${X} WHERE ${X}.k IN (SELECT ${Y}.k FROM ${Y} WHERE ${vCol(y)} > ${c})`,
      );
    case 'not_in_sub':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, ${vCol(x)} FROM ${X} WHERE ${X}.j NOT IN (SELECT ${Y}.j FROM ${Y})`,
      );
    case 'not_in_nulls':
      // The subquery's value is NULL for most rows, and updates move rows in and out of NULL.
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)} FROM ${X} WHERE ${X}.k NOT IN ` +
          `(SELECT CASE WHEN ${vCol(y)} > ${c} THEN ${Y}.k END FROM ${Y} WHERE ${Y}.j <> ${rng.int(0, 2)} OR ${Y}.j IS NULL)`,
      );
    case 'not_in_corr':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, ${wCol(x)} FROM ${X} WHERE ${X}.j NOT IN (SELECT ${Y}.j FROM ${Y} WHERE ${Y}.k = ${X}.k)`,
      );
    case 'not_not_in':
      return one(`SELECT ${X}.k AS k, ${vCol(x)} FROM ${X} WHERE NOT (${X}.k IN (SELECT ${Y}.j FROM ${Y}))`);
    case 'exists_corr':
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)}, ${wCol(x)} FROM ${X} WHERE EXISTS (SELECT 1 FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${vCol(y)} > ${c})`,
      );
    case 'not_exists_corr':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, ${vCol(x)} FROM ${X} WHERE NOT EXISTS (SELECT * FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${X}.j = ${Y}.j)`,
      );
    case 'exists_uncorr':
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)} FROM ${X} WHERE ${vCol(x)} < ${c + 5} AND EXISTS (SELECT ${Y}.k FROM ${Y} WHERE ${vCol(y)} > ${c + 5})`,
      );
    case 'in_corr':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j FROM ${X} WHERE ${X}.j IN (SELECT ${Y}.j FROM ${Y} WHERE ${X}.k = ${Y}.k AND ${vCol(y)} >= ${c})`,
      );
    case 'in_expr_types':
      // An expression operand; k and j are of different integer types across tables.
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)} FROM ${X} WHERE ${X}.k + 1 ${rng.pick(['IN', 'NOT IN'])} (SELECT ${Y}.j * 2 FROM ${Y})`,
      );
    case 'in_setop':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j FROM ${X} WHERE ${X}.k ${rng.pick(['IN', 'NOT IN'])} (SELECT ${Y}.k FROM ${Y} WHERE ${vCol(y)} > ${c} UNION SELECT ${Y}.j FROM ${Y})`,
      );
    case 'in_grouped_sub':
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)} FROM ${X} WHERE ${X}.k ${rng.pick(['IN', 'NOT IN'])} (SELECT ${Y}.k FROM ${Y} GROUP BY ${Y}.k HAVING COUNT(*) > 1)`,
      );
    case 'in_join_group':
      return one(
        `SELECT ${X}.k AS k, COUNT(*) AS n, SUM(${vCol(y)}) AS s FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k ` +
          `WHERE ${X}.j ${rng.pick(['IN', 'NOT IN'])} (SELECT ${Y}.j FROM ${Y} WHERE ${vCol(y)} < ${c}) GROUP BY ${X}.k`,
      );
    case 'in_over_view': {
      const base = ctx.name();
      const baseSql = `SELECT k, COUNT(*) AS n FROM ${Y} GROUP BY k`;
      const top = ctx.name();
      const topSql = `SELECT ${X}.k AS k, ${vCol(x)} FROM ${X} WHERE ${X}.k ${rng.pick(['IN', 'NOT IN'])} (SELECT g.k FROM ${base} g WHERE g.n > 1)`;
      return [
        { name: base, sql: baseSql, sqlite: baseSql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }

    case 'topn_limit':
      return one(
        `SELECT k, ${vCol(x)} FROM ${X} ORDER BY ${vCol(x)} DESC NULLS LAST, k NULLS FIRST LIMIT ${rng.int(1, 6)}`,
      );
    case 'topn_limit_offset':
      return one(
        `SELECT k, j FROM ${X} ORDER BY j NULLS FIRST, k DESC NULLS LAST LIMIT ${rng.int(0, 5)} OFFSET ${rng.int(0, 4)}`,
      );
    case 'topn_per_group':
      return one(
        `SELECT k, v, j, rn FROM (SELECT k, j, ${vCol(x)} AS v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ` +
          `${vCol(x)} DESC NULLS LAST, j NULLS FIRST) AS rn FROM ${X}) ranked WHERE rn ${rng.pick(['<=', '<'])} ${rng.int(1, 4)}`,
      );
    case 'topn_rn_eq1':
      return one(
        `SELECT j, v FROM (SELECT j, ${vCol(x)} AS v, ROW_NUMBER() OVER (PARTITION BY j ORDER BY ${vCol(x)} NULLS FIRST) AS rn ` +
          `FROM ${X}) t WHERE rn = 1 AND j IS NOT NULL`,
      );
    case 'topn_rank':
      // RANK is defined among ties: any columns may be shown.
      return one(
        `SELECT k, ${wCol(x)} AS w, v, rk FROM (SELECT k, ${wCol(x)}, ${vCol(x)} AS v, RANK() OVER (PARTITION BY k ` +
          `ORDER BY ${vCol(x)} DESC NULLS FIRST) AS rk FROM ${X}) r WHERE rk <= ${rng.int(1, 3)}`,
      );
    case 'topn_dense_rank':
      return one(
        `SELECT * FROM (SELECT k, j, ${vCol(x)} AS v, DENSE_RANK() OVER (PARTITION BY j ORDER BY k NULLS LAST) AS dr ` +
          `FROM ${X}) d WHERE dr ${rng.pick(['<= 2', '= 1', '< 3', '> 1'])}`,
      );
    case 'rank_unbounded':
      return one(
        `SELECT k, ${vCol(x)} AS v, RANK() OVER (PARTITION BY k ORDER BY ${vCol(x)} NULLS FIRST) AS rk, ` +
          `DENSE_RANK() OVER (ORDER BY ${vCol(x)} DESC NULLS LAST) AS dr FROM ${X}`,
      );
    case 'row_number_all':
      // Ordered by every column shown: tied rows are equal.
      return one(
        `SELECT k, j, ${vCol(x)} AS v, ${wCol(x)} AS w, ROW_NUMBER() OVER (PARTITION BY k ORDER BY j NULLS FIRST, ` +
          `${vCol(x)} DESC NULLS LAST, ${wCol(x)} NULLS LAST) AS rn FROM ${X}`,
      );
    case 'distinct_on':
      return one(
        `SELECT DISTINCT ON (k) k, ${vCol(x)} AS v FROM ${X} ORDER BY k, ${vCol(x)} DESC NULLS LAST`,
        {
          sqlite:
            `SELECT k, v FROM (SELECT k, ${vCol(x)} AS v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ` +
            `${vCol(x)} DESC NULLS LAST) AS rn FROM ${X}) WHERE rn = 1`,
        },
      );
    case 'topn_over_agg':
      return one(
        `SELECT k, n, s FROM (SELECT k, COUNT(*) AS n, SUM(${vCol(x)}) AS s FROM ${X} GROUP BY k) g ` +
          `ORDER BY n DESC, k NULLS FIRST LIMIT ${rng.int(1, 3)}`,
      );
    case 'topn_cte_join':
      return one(
        `WITH best AS (SELECT k, ${vCol(x)} AS v FROM ${X} WHERE k IS NOT NULL ORDER BY ${vCol(x)} DESC NULLS LAST, k LIMIT ${rng.int(2, 6)}) ` +
          `SELECT best.k AS k, best.v AS v, ${Y}.j AS j FROM best ${rng.pick(['JOIN', 'LEFT JOIN'])} ${Y} ON ${Y}.k = best.k`,
      );
    case 'topn_over_join_view': {
      const base = ctx.name();
      const baseSql = `SELECT ${X}.k AS k, ${X}.j AS xj, ${Y}.j AS yj FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k`;
      const top = ctx.name();
      const topSql =
        `SELECT k, xj, yj, rn FROM (SELECT k, xj, yj, ROW_NUMBER() OVER (PARTITION BY k ORDER BY xj DESC NULLS LAST, ` +
        `yj NULLS FIRST) AS rn FROM ${base}) t WHERE rn <= 2`;
      return [
        { name: base, sql: baseSql, sqlite: baseSql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
    case 'win_lag_lead': {
      const w = `PARTITION BY k ORDER BY ${allOrder(x)}`;
      return one(
        `SELECT k, j, ${vCol(x)} AS v, ${wCol(x)} AS w, LAG(${vCol(x)}) OVER (${w}) AS pv, ` +
          `LEAD(${wCol(x)}, ${rng.int(1, 3)}, 'none') OVER (${w}) AS nw, LAG(j, ${rng.int(0, 2)}, -1) OVER (${w}) AS pj FROM ${X}`,
      );
    }
    case 'win_running_range':
      // The default frame: peers (equal ORDER BY keys) share the value, whatever their order.
      return one(
        `SELECT k, j, ${vCol(x)} AS v, SUM(${vCol(x)}) OVER (PARTITION BY k ORDER BY j NULLS LAST) AS rs, ` +
          `COUNT(*) OVER (PARTITION BY k ORDER BY j NULLS LAST) AS rc, MAX(${wCol(x)}) OVER (PARTITION BY k ORDER BY j DESC NULLS FIRST) AS mw, ` +
          `AVG(${vCol(x)}) OVER (PARTITION BY j ORDER BY k NULLS FIRST) AS ra, COUNT(${vCol(x)}) OVER (ORDER BY ${vCol(x)} NULLS FIRST) AS cv FROM ${X}`,
      );
    case 'win_rows_frame': {
      const n = rng.int(0, 3);
      const w = `PARTITION BY ${rng.pick(['k', 'j'])} ORDER BY ${allOrder(x)}`;
      return one(
        `SELECT k, j, ${vCol(x)} AS v, ${wCol(x)} AS w, SUM(${vCol(x)}) OVER (${w} ROWS BETWEEN ${n} PRECEDING AND CURRENT ROW) AS s, ` +
          `MIN(${vCol(x)}) OVER (${w} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS mn, ` +
          `COUNT(${wCol(x)}) OVER (${w} ROWS ${rng.int(1, 4)} PRECEDING) AS cw, AVG(${vCol(x)}) OVER (${w} ROWS UNBOUNDED PRECEDING) AS av, ` +
          `MAX(${wCol(x)}) OVER (${w} ROWS ${n + 1} PRECEDING) AS mw, AVG(j) OVER (${w} ROWS BETWEEN ${n} PRECEDING AND CURRENT ROW) AS aj FROM ${X}`,
      );
    }
    case 'win_partition_total':
      // No ORDER BY: the whole partition is every row's frame.
      return one(
        `SELECT k, j, ${vCol(x)} AS v, SUM(${vCol(x)}) OVER (PARTITION BY k) AS tot, COUNT(*) OVER (PARTITION BY k, j) AS n, ` +
          `AVG(${vCol(x)}) OVER () AS av, MIN(${wCol(x)}) OVER (PARTITION BY j) AS mw, MAX(${vCol(x)}) OVER () AS mx FROM ${X}`,
      );
    case 'win_first_last': {
      const w = `PARTITION BY k ORDER BY ${allOrder(x)}`;
      return one(
        `SELECT k, j, ${vCol(x)} AS v, ${wCol(x)} AS w, FIRST_VALUE(${vCol(x)}) OVER (${w}) AS fv, ` +
          `LAST_VALUE(${wCol(x)}) OVER (${w}) AS lw, FIRST_VALUE(${wCol(x)}) OVER (${w} ROWS BETWEEN ${rng.int(0, 2)} PRECEDING AND CURRENT ROW) AS fw, ` +
          `LAST_VALUE(j) OVER (PARTITION BY j ORDER BY k NULLS FIRST) AS lj FROM ${X}`,
      );
    }
    case 'win_ranks_mixed': {
      const w = `PARTITION BY j ORDER BY ${allOrder(x)}`;
      return one(
        `SELECT k, j, ${vCol(x)} AS v, ${wCol(x)} AS w, ROW_NUMBER() OVER (${w}) AS rn, LAG(k) OVER (${w}) AS pk, ` +
          `RANK() OVER (PARTITION BY k ORDER BY ${vCol(x)} DESC NULLS LAST) AS rk, DENSE_RANK() OVER (ORDER BY j NULLS FIRST, k NULLS LAST) AS dr, ` +
          `SUM(k) OVER (PARTITION BY k ORDER BY ${vCol(x)} DESC NULLS LAST) + ${c} AS sk FROM ${X}`,
      );
    }
    case 'win_filtered_derived': {
      // A window in a derived table, filtered outside on its value (no rank: no Top-N).
      const w = `PARTITION BY k ORDER BY ${allOrder(x)}`;
      return one(
        `SELECT k, v, pv, rs FROM (SELECT k, ${vCol(x)} AS v, LAG(${vCol(x)}) OVER (${w}) AS pv, ` +
          `SUM(${vCol(x)}) OVER (PARTITION BY k ORDER BY j NULLS LAST) AS rs FROM ${X} WHERE ${vCol(x)} IS NOT NULL) s ` +
          `WHERE pv IS NULL OR pv ${rng.pick(['<', '>=', '<>'])} v`,
      );
    }
    case 'win_distribution': {
      const w = `PARTITION BY k ORDER BY ${allOrder(x)}`;
      return one(
        `SELECT k, j, ${vCol(x)} AS v, NTILE(${rng.int(1, 4)}) OVER (${w}) AS nt, ` +
          `PERCENT_RANK() OVER (PARTITION BY k ORDER BY ${vCol(x)} NULLS FIRST) AS pr, ` +
          `CUME_DIST() OVER (PARTITION BY j ORDER BY k NULLS LAST) AS cd, CUME_DIST() OVER () AS cd_all FROM ${X}`,
      );
    }
    case 'win_nth_value': {
      const w = `PARTITION BY k ORDER BY ${allOrder(x)}`;
      const n = rng.int(1, 3);
      return one(
        `SELECT k, j, ${vCol(x)} AS v, NTH_VALUE(${vCol(x)}, ${n}) OVER (${w}) AS nv, ` +
          `NTH_VALUE(${wCol(x)}, ${rng.int(1, 3)}) OVER (${w} ROWS BETWEEN ${rng.int(0, 2)} PRECEDING AND ${rng.int(0, 2)} FOLLOWING) AS nw, ` +
          `NTH_VALUE(j, 2) OVER (PARTITION BY j ORDER BY k NULLS FIRST) AS nj FROM ${X}`,
      );
    }
    case 'win_following_frames': {
      const w = `PARTITION BY ${rng.pick(['k', 'j'])} ORDER BY ${allOrder(x)}`;
      const a = rng.int(0, 3);
      const b = rng.int(1, 3);
      return one(
        `SELECT k, j, ${vCol(x)} AS v, ${wCol(x)} AS w, SUM(${vCol(x)}) OVER (${w} ROWS BETWEEN ${a} PRECEDING AND ${b} FOLLOWING) AS s, ` +
          `COUNT(*) OVER (${w} ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS rest, ` +
          `MIN(${wCol(x)}) OVER (${w} ROWS BETWEEN 1 FOLLOWING AND ${b + 1} FOLLOWING) AS nmin, ` +
          `MAX(${vCol(x)}) OVER (${w} ROWS BETWEEN ${a} PRECEDING AND UNBOUNDED FOLLOWING) AS mx, ` +
          `FIRST_VALUE(${wCol(x)}) OVER (${w} ROWS BETWEEN ${b} FOLLOWING AND UNBOUNDED FOLLOWING) AS fw, ` +
          `LAST_VALUE(${vCol(x)}) OVER (${w} ROWS BETWEEN ${a} PRECEDING AND ${b} FOLLOWING) AS lv, ` +
          `AVG(${vCol(x)}) OVER (${w} ROWS BETWEEN UNBOUNDED PRECEDING AND ${b} FOLLOWING) AS av, ` +
          `SUM(j) OVER (${w} ROWS BETWEEN ${a} PRECEDING AND UNBOUNDED FOLLOWING) AS sj, ` +
          `COUNT(${vCol(x)}) OVER (${w} ROWS BETWEEN ${b + 1} PRECEDING AND 1 PRECEDING) AS cb FROM ${X}`,
      );
    }
    case 'win_named': {
      const wv = wCol(x);
      return one(
        `SELECT k, j, ${vCol(x)} AS v, ${wv} AS w, ROW_NUMBER() OVER w AS rn, ` +
          `SUM(${vCol(x)}) OVER (w ROWS BETWEEN ${rng.int(0, 2)} PRECEDING AND ${rng.int(0, 2)} FOLLOWING) AS s, ` +
          `LAG(${wv}) OVER w AS pw, COUNT(*) OVER (p ORDER BY j NULLS FIRST) AS c, MAX(${vCol(x)}) OVER p AS mx ` +
          `FROM ${X} WINDOW p AS (PARTITION BY k), w AS (p ORDER BY ${allOrder(x)})`,
      );
    }
    case 'win_over_agg':
      return one(
        `SELECT k, n, SUM(n) OVER (ORDER BY k NULLS FIRST) AS cum, LAG(n, 1, 0) OVER (ORDER BY k NULLS FIRST) AS pn, ` +
          `RANK() OVER (ORDER BY n DESC) AS rk FROM (SELECT k, COUNT(*) AS n FROM ${X} GROUP BY k) g`,
      );
    case 'win_over_join_view': {
      const base = ctx.name();
      const baseSql = `SELECT ${X}.k AS k, ${X}.j AS xj, ${Y}.j AS yj, ${vCol(y)} AS yv FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k`;
      const top = ctx.name();
      const topSql =
        `SELECT k, xj, yj, yv, SUM(yv) OVER (PARTITION BY k ORDER BY xj NULLS FIRST) AS s, ` +
        `LEAD(yv) OVER (PARTITION BY k ORDER BY xj NULLS FIRST, yj DESC NULLS LAST, yv NULLS LAST) AS ny FROM ${base}`;
      return [
        { name: base, sql: baseSql, sqlite: baseSql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
    case 'sql_function': {
      // Named after the view, so that recreating the view (DROP, then this DDL again) replaces
      // functions nothing else uses.
      const name = ctx.name();
      const f = `f_${name}`;
      const g = `g_${name}`;
      const functions =
        `CREATE OR REPLACE FUNCTION ${f}(a bigint, b integer) RETURNS bigint LANGUAGE SQL IMMUTABLE AS $$ SELECT coalesce(a, 0) * 2 + b $$;\n` +
        `CREATE OR REPLACE FUNCTION ${g}(s text, n bigint) RETURNS text RETURN ${f}(n, 1) || ':' || coalesce(s, '?')`;
      const fx = (a: string, b: string): string => `(coalesce(${a}, 0) * 2 + ${b})`;
      const where = `> ${c}`;
      return [
        {
          name,
          template,
          functions,
          sql:
            `SELECT ${X}.k AS k, ${f}(${vCol(x)}, ${vCol(y)}) AS s, ${g}(${wCol(y)}, ${X}.j) AS t ` +
            `FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k WHERE ${f}(${Y}.j, ${c}) ${where}`,
          sqlite:
            `SELECT ${X}.k AS k, ${fx(vCol(x), vCol(y))} AS s, (${fx(`${X}.j`, '1')} || ':' || coalesce(${wCol(y)}, '?')) AS t ` +
            `FROM ${X} JOIN ${Y} ON ${X}.k = ${Y}.k WHERE ${fx(`${Y}.j`, String(c))} ${where}`,
        },
      ];
    }
    case 'derived_alias_list': {
      // Two of three columns renamed; the third keeps its name.
      const inner = `SELECT k, SUM(${vCol(x)}), COUNT(*) AS n FROM ${X} GROUP BY k`;
      const outer = `SELECT kk, total, n, LAG(total) OVER (ORDER BY kk NULLS FIRST) AS prev FROM `;
      const where = `WHERE n > ${rng.int(0, 2)}`;
      return one(`${outer}(${inner}) AS g (kk, total) ${where}`, {
        sqlite: `WITH g (kk, total, n) AS (${inner}) ${outer}g ${where}`,
      });
    }
    case 'view_over_semi': {
      const base = ctx.name();
      const baseSql = `SELECT ${X}.k AS k, ${vCol(x)} AS v FROM ${X} WHERE NOT EXISTS (SELECT 1 FROM ${Y} WHERE ${Y}.j = ${X}.k)`;
      const top = ctx.name();
      const topSql = `SELECT k, COUNT(*) AS n, SUM(v) AS s FROM ${base} GROUP BY k`;
      return [
        { name: base, sql: baseSql, sqlite: baseSql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
    case 'two_predicates':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, ${vCol(x)} FROM ${X} WHERE ${X}.k IN (SELECT ${Y}.k FROM ${Y}) ` +
          `AND NOT EXISTS (SELECT 1 FROM ${Y} WHERE ${Y}.j = ${X}.j AND ${Y}.k = ${X}.k AND ${vCol(y)} > ${c})`,
      );
    case 'agg_filter':
      return one(
        `SELECT ${X}.k AS k, COUNT(*) FILTER (WHERE ${vCol(x)} > ${c}) AS n, ` +
          `COUNT(DISTINCT ${X}.j) FILTER (WHERE ${wCol(x)} <> 'p') AS dj, SUM(${vCol(x)}) FILTER (WHERE ${X}.j = 1) AS s, ` +
          `MIN(${wCol(x)}) FILTER (WHERE ${vCol(x)} < ${c}) AS mn, MAX(${vCol(x)}) FILTER (WHERE ${X}.j IS NULL) AS mx, ` +
          `COUNT(${vCol(x)}) FILTER (WHERE ${X}.k IN (1, 2)) AS cv FROM ${X} GROUP BY ${X}.k`,
      );
    case 'agg_filter_join':
      return one(
        `SELECT ${X}.k AS k, COUNT(*) FILTER (WHERE ${vCol(y)} > ${vCol(x)}) AS n, ` +
          `SUM(${vCol(y)}) FILTER (WHERE ${wCol(y)} LIKE '%q%') AS s, COUNT(DISTINCT ${wCol(y)}) FILTER (WHERE ${Y}.j <> 0) AS dw ` +
          `FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k GROUP BY ${X}.k HAVING COUNT(*) FILTER (WHERE ${vCol(x)} > ${c}) > 0`,
      );
    case 'agg_filter_global':
      return one(
        `SELECT COUNT(*) FILTER (WHERE ${vCol(x)} > ${c}) AS n, SUM(${vCol(x)}) FILTER (WHERE ${X}.k = 0) AS s0, ` +
          `COUNT(DISTINCT ${X}.k) FILTER (WHERE ${X}.j = 0) AS dk, MAX(${wCol(x)}) FILTER (WHERE ${wCol(x)} <> 'x') AS mw FROM ${X}`,
        { global: true },
      );
    case 'agg_more':
    case 'agg_more_join':
    case 'agg_more_global': {
      const join = template === 'agg_more_join';
      const v = join ? vCol(y) : vCol(x);
      const from = join ? `${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k` : X;
      const global = template === 'agg_more_global';
      const keys = global ? '' : `${X}.k AS k, `;
      const groupBy = global ? '' : ` GROUP BY ${X}.k`;
      // Sums of squares in SQLite stay exact integers (values are small), the division is a double.
      const n = `COUNT(${v})`;
      const num = `(${n} * SUM(${v} * ${v}) - SUM(${v}) * SUM(${v})) * 1.0`;
      const pop = `${num} / (${n} * ${n})`;
      const samp = `${num} / (${n} * (${n} - 1))`;
      const sql =
        `SELECT ${keys}BOOL_AND(${v} > ${c}) AS ba, BOOL_OR(${X}.j = 1) AS bo, EVERY(${v} IS NOT NULL) AS ev, ` +
        `VAR_POP(${v}) AS vp, VAR_SAMP(${v}) AS vs, STDDEV_POP(${v}) AS sp, STDDEV(${v}) AS sd, ` +
        `VARIANCE(CAST(${v} AS double precision) / 4) AS vf, ` +
        `BOOL_OR(${X}.j = 1) FILTER (WHERE ${v} > ${c}) AS bof, VAR_SAMP(${v}) FILTER (WHERE ${X}.j > 0) AS vsf ` +
        `FROM ${from}${groupBy}`;
      // FILTER on these: SQLite's own FILTER on each aggregate of the formula.
      const f = ` FILTER (WHERE ${X}.j > 0)`;
      const nf = `COUNT(${v})${f}`;
      const sampFiltered = `(${nf} * SUM(${v} * ${v})${f} - SUM(${v})${f} * SUM(${v})${f}) * 1.0 / (${nf} * (${nf} - 1))`;
      const sqlite =
        `SELECT ${keys}MIN(${v} > ${c}) AS ba, MAX(${X}.j = 1) AS bo, MIN(${v} IS NOT NULL) AS ev, ` +
        `${pop} AS vp, ${samp} AS vs, sqrt(${pop}) AS sp, sqrt(${samp}) AS sd, ${samp} / 16 AS vf, ` +
        `MAX(${X}.j = 1) FILTER (WHERE ${v} > ${c}) AS bof, ${sampFiltered} AS vsf FROM ${from}${groupBy}`;
      return one(sql, { sqlite, ...(global ? { global: true } : {}) });
    }
    case 'string_agg': {
      const w = wCol(x);
      const sql =
        `SELECT ${X}.k AS k, STRING_AGG(${w}, ', ') AS ws, STRING_AGG(DISTINCT ${w}, '|') AS dws, ` +
        `STRING_AGG(${w}, '-') FILTER (WHERE ${vCol(x)} > ${c}) AS big FROM ${X} GROUP BY ${X}.k`;
      const sqlite =
        `SELECT ${X}.k AS k, string_agg(${w}, ', ' ORDER BY ${w}) AS ws, (SELECT string_agg(d.w, '|' ORDER BY d.w) FROM (SELECT DISTINCT i.${w} AS w FROM ${X} i WHERE i.k IS ${X}.k) d) AS dws, ` +
        `string_agg(${w}, '-' ORDER BY ${w}) FILTER (WHERE ${vCol(x)} > ${c}) AS big FROM ${X} GROUP BY ${X}.k`;
      return one(sql, { sqlite });
    }
    case 'string_agg_ordered': {
      const w = wCol(x);
      const v = vCol(x);
      const order = `j DESC NULLS LAST, ${v} NULLS FIRST, ${w}`;
      const sql =
        `SELECT ${X}.k AS k, STRING_AGG(${w}, ',' ORDER BY ${order}) AS ow, ` +
        `STRING_AGG(${w}, '/' ORDER BY ${v} DESC NULLS FIRST, ${w} DESC NULLS LAST) FILTER (WHERE j > 0) AS fo, ` +
        `STRING_AGG(DISTINCT ${w}, '|' ORDER BY ${w} DESC) AS dd FROM ${X} GROUP BY ${X}.k`;
      const sqlite =
        `SELECT ${X}.k AS k, string_agg(${w}, ',' ORDER BY ${order}) AS ow, ` +
        `string_agg(${w}, '/' ORDER BY ${v} DESC NULLS FIRST, ${w} DESC NULLS LAST) FILTER (WHERE j > 0) AS fo, ` +
        `(SELECT string_agg(d.w, '|' ORDER BY d.w DESC) FROM (SELECT DISTINCT i.${w} AS w FROM ${X} i WHERE i.k IS ${X}.k) d) AS dd FROM ${X} GROUP BY ${X}.k`;
      return one(sql, { sqlite });
    }
    case 'jsonb_object_agg': {
      const t = ts.find((u) => u.keyed) as JoinTable; // every schema has one
      const T = t.name;
      const id = `${T}.${idCol(t)}`;
      const v = `${T}.${vCol(t)}`;
      const w = `${T}.${wCol(t)}`;
      const compact = (e: string): string => `replace(replace((${e})::text, ': ', ':'), ', ', ',')`;
      const sql =
        `SELECT ${T}.k AS k, ${compact(`jsonb_object_agg(${id}, ${v})`)} AS o, ` +
        `${compact(`jsonb_object_agg('w' || ${id}, ${w}) FILTER (WHERE ${v} > ${c})`)} AS f FROM ${T} GROUP BY ${T}.k`;
      const key = `CAST(${id} AS TEXT)`;
      const wkey = `('w' || ${id})`;
      const sqlite =
        `SELECT ${T}.k AS k, json_group_object(${key}, ${v} ORDER BY length(${key}), ${key}) AS o, ` +
        `NULLIF(json_group_object(${wkey}, ${w} ORDER BY length(${wkey}), ${wkey}) FILTER (WHERE ${v} > ${c}), '{}') AS f ` +
        `FROM ${T} GROUP BY ${T}.k`;
      return one(sql, { sqlite });
    }
    case 'array_agg': {
      const w = wCol(x);
      const v = vCol(x);
      // ties only on equal values; NULLs placed explicitly (SQLite puts them first ascending)
      const order = `${v} NULLS FIRST, ${w} NULLS LAST`;
      const sql =
        `SELECT ${X}.k AS k, array_to_string(ARRAY_AGG(${w} ORDER BY ${order}), ',', '~') AS aw, ` +
        `cardinality(ARRAY_AGG(${v})) AS n, (ARRAY_AGG(${w} ORDER BY j DESC NULLS LAST, ${w} NULLS LAST))[1] AS first_w, ` +
        `array_to_string(ARRAY_AGG(DISTINCT ${w}), '|') AS dw, array_position(ARRAY_AGG(${v}), ${c}) IS NOT NULL AS has_c ` +
        `FROM ${X} GROUP BY ${X}.k`;
      const sqlite =
        `SELECT ${X}.k AS k, string_agg(coalesce(${w}, '~'), ',' ORDER BY ${order}) AS aw, count(*) AS n, ` +
        `(SELECT i.${w} FROM ${X} i WHERE i.k IS ${X}.k ORDER BY i.j DESC NULLS LAST, i.${w} NULLS LAST LIMIT 1) AS first_w, ` +
        `coalesce((SELECT string_agg(d.w, '|' ORDER BY d.w) FROM (SELECT DISTINCT i.${w} AS w FROM ${X} i WHERE i.k IS ${X}.k AND i.${w} IS NOT NULL) d), '') AS dw, ` +
        `max(${v} = ${c}) IS NOT NULL AND max(${v} = ${c}) = 1 AS has_c FROM ${X} GROUP BY ${X}.k`;
      return one(sql, { sqlite });
    }
    case 'unnest_from': {
      // unnest of a per-row array in FROM (with ORDINALITY), grouped and joined on
      const v = vCol(x);
      const sql =
        `SELECT u.e AS e, u.n AS n, COUNT(*) AS c, SUM(${X}.j) AS sj FROM ${X}, ` +
        `unnest(ARRAY[${v}, ${X}.j, ${c}]) WITH ORDINALITY AS u(e, n) WHERE u.e IS NOT NULL GROUP BY u.e, u.n`;
      const sqlite =
        `SELECT je.value AS e, je.key + 1 AS n, COUNT(*) AS c, SUM(${X}.j) AS sj FROM ${X}, ` +
        `json_each(json_array(${v}, ${X}.j, ${c})) je WHERE je.value IS NOT NULL GROUP BY je.value, je.key`;
      return one(sql, { sqlite });
    }
    case 'math_fns': {
      const v = vCol(y);
      const sql =
        `SELECT ${X}.k AS k, ${v}, sqrt(abs(${v})) AS sq, sqrt(abs(${v}) * 1.0) AS sqn, cbrt(${v}) AS cb, ` +
        `power(abs(${v}) + 1, 0.5) AS pw, (abs(${v}) + 1) ^ 2 AS p2, (${v} * 0.5) ^ 2 AS p2n, ` +
        `exp(${v} / 10.0) AS ex, ln(abs(${v}) + 1.0) AS lnv, log(abs(${v}) + 1) AS lg, div(${v}, 3) AS dq, ` +
        `gcd(${v}, 12) AS g, sign(${v}) AS sg, pi() * 0 + ${v} AS pv FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k`;
      const gcd12 =
        `CASE WHEN ${v} IS NULL THEN NULL WHEN ${v} % 12 = 0 THEN 12 WHEN ${v} % 6 = 0 THEN 6 ` +
        `WHEN ${v} % 4 = 0 THEN 4 WHEN ${v} % 3 = 0 THEN 3 WHEN ${v} % 2 = 0 THEN 2 ELSE 1 END`;
      const sqlite =
        `SELECT ${X}.k AS k, ${v}, sqrt(abs(${v})) AS sq, sqrt(abs(${v}) * 1.0) AS sqn, ` +
        `CASE WHEN ${v} < 0 THEN -pow(-${v}, 1.0 / 3) ELSE pow(${v}, 1.0 / 3) END AS cb, ` +
        `pow(abs(${v}) + 1, 0.5) AS pw, pow(abs(${v}) + 1, 2) AS p2, pow(${v} * 0.5, 2) AS p2n, ` +
        `exp(${v} / 10.0) AS ex, ln(abs(${v}) + 1.0) AS lnv, log10(abs(${v}) + 1) AS lg, ${v} / 3 AS dq, ` +
        `${gcd12} AS g, sign(${v}) AS sg, pi() * 0 + ${v} AS pv FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k`;
      return one(sql, { sqlite });
    }
    case 'regex_fns': {
      const w = wCol(y);
      const sql =
        `SELECT ${X}.k AS k, ${w}, ${w} ~ 'q$' AS a, ${w} ~* '^P' AS b, ${w} !~ 'r' AS c, ` +
        `regexp_like(${w}, 'p|x') AS d, regexp_count(${w}, '[pq]') AS n, ` +
        `regexp_replace(${w}, 'q', 'Q', 'g') AS rep, substring(${w} from '(.)q') AS sub, ` +
        `substring(${w} from 'r.*') AS tail FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k WHERE ${w} ~ '^[pqx]' OR ${w} IS NULL`;
      const sqlite =
        `SELECT ${X}.k AS k, ${w}, ${w} REGEXP 'q$' AS a, ${w} REGEXP '^[Pp]' AS b, NOT (${w} REGEXP 'r') AS c, ` +
        `${w} REGEXP 'p|x' AS d, regexp_count_js(${w}, '[pq]') AS n, ` +
        `replace(${w}, 'q', 'Q') AS rep, regexp_group_js(${w}, '(.)q') AS sub, ` +
        `regexp_group_js(${w}, 'r.*') AS tail FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k WHERE ${w} REGEXP '^[pqx]' OR ${w} IS NULL`;
      return one(sql, { sqlite });
    }
    case 'join_of_views':
    case 'join_of_views_full': {
      const b1 = ctx.name();
      const b1Sql = `SELECT ${X}.k AS k, COUNT(*) AS n FROM ${X} LEFT JOIN ${Y} ON ${X}.k = ${Y}.k GROUP BY ${X}.k`;
      const b2 = ctx.name();
      const b2Sql = `SELECT k, j, SUM(${vCol(y)}) AS s FROM ${Y} GROUP BY k, j`;
      const top = ctx.name();
      const topSql = `SELECT p.k AS pk, p.n AS n, q.k AS qk, q.j AS j, q.s AS s FROM ${b1} p ${template === 'join_of_views_full' ? 'FULL JOIN' : rng.pick(['JOIN', 'LEFT JOIN', 'RIGHT JOIN'])} ${b2} q ON p.k = q.k`;
      return [
        { name: b1, sql: b1Sql, sqlite: b1Sql, template: `${template}(base)` },
        { name: b2, sql: b2Sql, sqlite: b2Sql, template: `${template}(base)` },
        { name: top, sql: topSql, sqlite: topSql, template },
      ];
    }
  }
}

/**
 * INTERSECT ALL / EXCEPT ALL as SQLite can run them: each copy of a row numbered within its equals,
 * so the set operation on (row, copy number) keeps min(a, b) or max(a − b, 0) copies.
 */
function sqliteSetAll(op: string, left: string, right: string, columns: readonly string[]): string {
  const cs = columns.map((_, i) => `c${i}`).join(', ');
  const numbered = (q: string): string =>
    `SELECT ${cs}, ROW_NUMBER() OVER (PARTITION BY ${cs}) AS rn FROM (WITH q0(${cs}) AS (${q}) SELECT * FROM q0)`;
  const named = columns.map((c, i) => `c${i} AS ${c}`).join(', ');
  return `SELECT ${named} FROM (${numbered(left)} ${op} ${numbered(right)})`;
}

export interface JoinScenario {
  readonly schema: JoinSchema;
  readonly views: readonly JoinView[];
}

/** A seed's schema and 5–8 templates' views (in creation order: a base view before its dependents). */
export function randomJoinScenario(
  rng: Rng,
  options: {
    templates?: readonly string[];
    minTemplates?: number;
    maxTemplates?: number;
  } = {},
): JoinScenario {
  const schema = randomJoinSchema(rng);
  let n = 0;
  const ctx: Ctx = { rng, schema, name: () => `jv${n++}` };
  const pool: readonly string[] = options.templates ?? JOIN_TEMPLATES;
  const count = rng.int(options.minTemplates ?? 5, options.maxTemplates ?? 8);
  const views: JoinView[] = [];
  for (let i = 0; i < count; i++) views.push(...buildTemplate(ctx, rng.pick(pool) as AnyTemplate));
  return { schema, views };
}

export function joinViewDdl(v: JoinView): string {
  const view = `CREATE MATERIALIZED VIEW ${v.name} AS ${v.sql}`;
  return v.functions !== undefined ? `${v.functions};\n${view}` : view;
}

function describeJoinScenario(s: JoinScenario): string {
  const d = s.schema.domains;
  return [
    `  -- keys 0..${d.kMax}${d.hot > 0 ? `, key 0 hot (${d.hot})` : ''}, j 0..${d.jMax}; ` +
      s.schema.tables.map((t) => `${t.name} target ${t.target}`).join(', '),
    ...s.schema.tables.map((t) => `  ${createTableSql(t)};`),
    ...s.views.map(
      (v) =>
        `  ${joinViewDdl(v)};   -- ${v.template}` +
        (v.sqlite !== v.sql ? `\n    -- SQLite: ${v.sqlite}` : ''),
    ),
  ].join('\n');
}

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
  const out: JoinBatch[] = [];
  let cur: { table: string; insert: Row[]; delete: Row[]; ins: Set<string> } | undefined;
  const flush = (): void => {
    if (cur === undefined) return;
    const c: { insert?: Row[]; delete?: Row[] } = {};
    if (cur.insert.length > 0) c.insert = cur.insert;
    if (cur.delete.length > 0) c.delete = cur.delete;
    out.push({ table: cur.table, changes: c });
    cur = undefined;
  };
  units.forEach((u, i) => {
    if (cur !== undefined) {
      const c = cur;
      if (
        c.table !== u.table ||
        u.del.some((k) => c.ins.has(k)) ||
        (keyed(u.table) && u.ins.some((k) => c.ins.has(k)))
      )
        flush();
    }
    cur ??= { table: u.table, insert: [], delete: [], ins: new Set() };
    cur.insert.push(...(u.changes.insert ?? []));
    cur.delete.push(...(u.changes.delete ?? []));
    for (const k of u.ins) cur.ins.add(k);
    if (cut(i)) flush();
  });
  flush();
  return out;
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
