// What the join differential suite's view templates share: the view record, the template catalogue,
// the context a template is built in and the helpers of several families (join-templates.ts builds).
//
// SQL subset shared by PostgreSQL (Sluice's semantics) and SQLite ≥ 3.39 (RIGHT/FULL JOIN): integer
// arithmetic without division, text comparisons on ASCII, COUNT/SUM/MIN/MAX/COUNT(DISTINCT), every
// output column has a unique name (a view may not have two columns with the same name), no pure
// non-equi FULL JOIN (PostgreSQL rejects it: "FULL JOIN is only supported with merge-joinable or
// hash-joinable join conditions"). Also avoided: `t.*` of the LEFT side of a RIGHT/FULL join with
// USING/NATURAL (SQLite expands it with the merged, coalesced USING columns; PostgreSQL with t's own).
import type { Rng } from './random-workload.ts';
import { SCALAR_TEMPLATES } from './scalar-subquery-templates.ts';
import { idCol, vCol, wCol, type JoinSchema, type JoinTable } from './join-schema.ts';

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
  // Row NOT IN: NULLs in either row's entries, per entry (bind-not-in-row.ts).
  'not_in_row',
  'not_in_row_nulls',
  'not_in_row_corr',
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
  // STRING_AGG OVER (SQLite's string_agg is a window function too): running, ROWS frames around,
  // after and to the end of the row, over a window ordered by every column (the texts' order).
  'win_string_agg',
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
  // Expressions in PARTITION BY (an operator, a parenthesised comparison, CASE), which SQLite reads
  // as PostgreSQL does for integers (% and / truncate; a comparison's NULL is a partition of its own).
  'win_partition_expr',
] as const;

export type JoinTemplate = (typeof JOIN_TEMPLATES)[number];

export interface TemplateContext {
  readonly rng: Rng;
  readonly schema: JoinSchema;
  name(): string;
}

/** Everything a template family reads: the choices made for every template before its own. */
export interface TemplateParts {
  readonly ctx: TemplateContext;
  readonly rng: Rng;
  readonly schema: JoinSchema;
  readonly ts: readonly JoinTable[];
  readonly x: JoinTable;
  readonly y: JoinTable;
  readonly X: string;
  readonly Y: string;
  readonly c: number;
  readonly one: (sql: string, extra?: Partial<JoinView>) => JoinView[];
  readonly template: JoinTemplate;
  /** Builds another template instead (when this one does not fit the schema). */
  readonly again: (template: JoinTemplate) => JoinView[];
}

export function pickTwo(rng: Rng, tables: readonly JoinTable[]): [JoinTable, JoinTable] {
  const a = rng.pick(tables);
  const rest = tables.filter((t) => t !== a);
  return [a, rng.pick(rest)];
}

/**
 * An ORDER BY over every column of `t` (its id last when keyed): only identical rows are peers, so a
 * window value that depends on the order among peers is the same multiset in SQLite and Sluice.
 */
export function allOrder(t: JoinTable): string {
  return (
    `k NULLS FIRST, j DESC NULLS LAST, ${vCol(t)} NULLS LAST, ${wCol(t)} NULLS FIRST` +
    (t.keyed ? `, ${idCol(t)}` : '')
  );
}

export function smallOf(rng: Rng, tables: readonly JoinTable[]): JoinTable {
  return rng.pick(tables.filter((t) => t.small));
}

/**
 * INTERSECT ALL / EXCEPT ALL as SQLite can run them: each copy of a row numbered within its equals,
 * so the set operation on (row, copy number) keeps min(a, b) or max(a − b, 0) copies.
 */
export function sqliteSetAll(op: string, left: string, right: string, columns: readonly string[]): string {
  const cs = columns.map((_, i) => `c${i}`).join(', ');
  const numbered = (q: string): string =>
    `SELECT ${cs}, ROW_NUMBER() OVER (PARTITION BY ${cs}) AS rn FROM (WITH q0(${cs}) AS (${q}) SELECT * FROM q0)`;
  const named = columns.map((c, i) => `c${i} AS ${c}`).join(', ');
  return `SELECT ${named} FROM (${numbered(left)} ${op} ${numbered(right)})`;
}
