// Scalar-subquery view templates for the join differential suite (support/join-workload.ts): the
// same SQL runs in SQLite, which has scalar subqueries natively. SQLite takes the first row of a
// subquery returning several, where PostgreSQL (and Sluice) raise an error: a template whose subquery
// can return several rows gives the oracle `sqliteError`, a query saying when the view must hold
// CARDINALITY_VIOLATION row errors instead of rows. The others return at most one row per outer row.

/** What a template needs of a table of the join workload (columns k, j, <name>v, <name>w). */
interface TemplateTable {
  readonly name: string;
  readonly small: boolean;
}

export interface ScalarTemplateContext {
  readonly rng: {
    int(lo: number, hi: number): number;
    pick<T>(xs: readonly T[]): T;
  };
  readonly tables: readonly TemplateTable[];
  readonly kMax: number;
  readonly jMax: number;
  name(): string;
}

export interface ScalarTemplateView {
  readonly name: string;
  readonly sql: string;
  readonly sqlite: string;
  readonly template: string;
  /** SQLite query of one row whose column `e` is 1 while the view must be in error. */
  readonly sqliteError?: string;
}

/** Templates whose subqueries return exactly (or at most) one row per outer row: never an error. */
export const SCALAR_TEMPLATES = [
  'scalar_avg_where',
  'scalar_max_select',
  'scalar_count_having',
  'scalar_corr_max',
  'scalar_corr_count',
  'scalar_corr_empty_expr',
  'scalar_two_subqueries',
  'scalar_corr_text',
  'scalar_grouped_corr',
  'scalar_having_corr',
] as const;

/** Templates whose subqueries switch between 0, 1 and several rows: the view errs while several. */
export const SCALAR_ROWS_TEMPLATES = [
  'scalar_rows_select',
  'scalar_rows_where',
  'scalar_corr_rows',
  'scalar_corr_grouped',
] as const;

export type ScalarTemplate = (typeof SCALAR_TEMPLATES)[number] | (typeof SCALAR_ROWS_TEMPLATES)[number];

export function isScalarTemplate(t: string): t is ScalarTemplate {
  return (
    (SCALAR_TEMPLATES as readonly string[]).includes(t) ||
    (SCALAR_ROWS_TEMPLATES as readonly string[]).includes(t)
  );
}

export function buildScalarTemplate(
  ctx: ScalarTemplateContext,
  template: ScalarTemplate,
): ScalarTemplateView[] {
  const { rng } = ctx;
  const x = rng.pick(ctx.tables);
  // The subquery side: a small table when there is one, so that its row counts stay near 0, 1, 2.
  const smalls = ctx.tables.filter((t) => t !== x && t.small);
  const y = smalls.length > 0 ? rng.pick(smalls) : rng.pick(ctx.tables.filter((t) => t !== x));
  const X = x.name;
  const Y = y.name;
  const xv = `${X}v`;
  const yv = `${Y}v`;
  const yw = `${Y}w`;
  const c = rng.int(0, 15);
  const ck = rng.int(1, ctx.kMax);
  const cj = rng.int(0, ctx.jMax);
  const one = (sql: string, sqliteError?: string): ScalarTemplateView[] => [
    { name: ctx.name(), sql, sqlite: sql, template, ...(sqliteError !== undefined ? { sqliteError } : {}) },
  ];
  switch (template) {
    case 'scalar_avg_where':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, ${xv} AS v FROM ${X} WHERE ${xv} > (SELECT AVG(${yv}) FROM ${Y})`,
      );
    case 'scalar_max_select':
      // NULL while no Y row has j = cj (MAX over no rows).
      return one(
        `SELECT ${X}.k AS k, ${xv} AS v, (SELECT MAX(${yv}) FROM ${Y} WHERE ${Y}.j = ${cj}) AS m FROM ${X}`,
      );
    case 'scalar_count_having':
      return one(
        `SELECT ${X}.k AS k, COUNT(*) AS n FROM ${X} GROUP BY ${X}.k ` +
          `HAVING COUNT(*) >= (SELECT COUNT(*) / NULLIF(COUNT(DISTINCT ${Y}.k), 0) FROM ${Y})`,
      );
    case 'scalar_corr_max':
      return one(
        `SELECT ${X}.k AS k, ${xv} AS v FROM ${X} WHERE ${xv} = (SELECT MAX(${yv}) FROM ${Y} WHERE ${Y}.k = ${X}.k)`,
      );
    case 'scalar_corr_count':
      // COUNT over a key with no rows is 0, not NULL; a NULL outer key meets no rows.
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, (SELECT COUNT(*) FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${Y}.j = ${X}.j) AS n FROM ${X}`,
      );
    case 'scalar_corr_empty_expr':
      // The select list over no rows: COALESCE(NULL, -1) + 0.
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, (SELECT COALESCE(SUM(${yv}), -1) + COUNT(*) FROM ${Y} WHERE ${Y}.j = ${X}.j AND ${yv} > ${c}) AS s FROM ${X}`,
      );
    case 'scalar_two_subqueries':
      return one(
        `SELECT ${X}.k AS k, ${xv} AS v, (SELECT MIN(${yv}) FROM ${Y}) AS lo FROM ${X} ` +
          `WHERE ${xv} >= (SELECT MIN(${yv}) FROM ${Y} WHERE ${Y}.k = ${X}.k) AND ${X}.j IS NOT NULL`,
      );
    case 'scalar_corr_text':
      return one(
        `SELECT ${X}.k AS k, (SELECT MAX(${yw}) FROM ${Y} WHERE ${Y}.k + 1 = ${X}.k) AS w FROM ${X}`,
      );
    case 'scalar_grouped_corr':
      // Correlated on a group key: one subquery row per group, COUNT 0 for a key with no Y rows.
      return one(
        `SELECT ${X}.k AS k, COUNT(*) AS n, (SELECT COUNT(*) FROM ${Y} WHERE ${Y}.k = ${X}.k) AS yn, ` +
          `(SELECT MAX(${yv}) FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${Y}.j = ${cj}) AS ym FROM ${X} GROUP BY ${X}.k`,
      );
    case 'scalar_having_corr':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, SUM(${xv}) AS s FROM ${X} GROUP BY ${X}.k, ${X}.j ` +
          `HAVING COUNT(*) >= (SELECT COUNT(*) FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${Y}.j = ${X}.j)`,
      );
    case 'scalar_rows_select':
      // Rows of Y with one (k, j): 0, 1 or several over time.
      return one(
        `SELECT ${X}.k AS k, ${xv} AS v, (SELECT ${yv} FROM ${Y} WHERE ${Y}.k = ${ck} AND ${Y}.j = ${cj}) AS s FROM ${X}`,
        `SELECT (SELECT COUNT(*) FROM ${Y} WHERE ${Y}.k = ${ck} AND ${Y}.j = ${cj}) > 1 AND EXISTS (SELECT 1 FROM ${X}) AS e`,
      );
    case 'scalar_rows_where':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j FROM ${X} WHERE ${X}.j = (SELECT ${Y}.j FROM ${Y} WHERE ${Y}.k = ${ck} AND ${yv} > ${c})`,
        `SELECT (SELECT COUNT(*) FROM ${Y} WHERE ${Y}.k = ${ck} AND ${yv} > ${c}) > 1 AND EXISTS (SELECT 1 FROM ${X}) AS e`,
      );
    case 'scalar_corr_rows':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, (SELECT ${yw} FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${Y}.j = ${cj}) AS w FROM ${X}`,
        `SELECT EXISTS (SELECT 1 FROM ${X} WHERE (SELECT COUNT(*) FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${Y}.j = ${cj}) > 1) AS e`,
      );
    case 'scalar_corr_grouped':
      // One row per distinct j of the key's rows (NULL is one group): several j, several rows.
      return one(
        `SELECT ${X}.k AS k, (SELECT COUNT(*) FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${yv} > ${c} GROUP BY ${Y}.j) AS n FROM ${X}`,
        `SELECT EXISTS (SELECT 1 FROM ${X} WHERE (SELECT COUNT(DISTINCT ${Y}.j) + MAX(${Y}.j IS NULL) FROM ${Y} WHERE ${Y}.k = ${X}.k AND ${yv} > ${c}) > 1) AS e`,
      );
  }
}
