// The join differential suite's relational templates: set operations, derived tables, CTEs,
// predicate subqueries (IN / NOT IN / EXISTS) and scalar functions (join-templates.ts picks the family).
// Each case draws from the seed's stream exactly as it did in one switch, so seeds replay unchanged.
import { vCol, wCol } from './join-schema.ts';
import { allOrder, sqliteSetAll, type JoinView, type TemplateParts } from './join-template-parts.ts';

/** The views of `parts.template` when it is one of this family's, else undefined. */
export function buildRelationalFamily(parts: TemplateParts): JoinView[] | undefined {
  const { ctx, rng, ts, x, y, X, Y, c, one, template } = parts;
  switch (template) {
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

    case 'not_in_row':
      // k and j are NULL in some rows of both tables, and updates move them in and out of NULL.
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, ${vCol(x)} FROM ${X} WHERE (${X}.k, ${X}.j) NOT IN (SELECT ${Y}.j, ${Y}.k FROM ${Y})`,
      );
    case 'not_in_row_nulls':
      // Most subquery rows hold a NULL in one entry or the other; the filter empties it at times.
      return one(
        `SELECT ${X}.k AS k, ${vCol(x)} FROM ${X} WHERE (${X}.j, ${X}.k) NOT IN ` +
          `(SELECT CASE WHEN ${vCol(y)} > ${c} THEN ${Y}.k END, CASE WHEN ${Y}.k <> ${rng.int(0, 3)} THEN ${Y}.j END ` +
          `FROM ${Y} WHERE ${Y}.j <> ${rng.int(0, 2)} OR ${Y}.j IS NULL)`,
      );
    case 'not_in_row_corr':
      return one(
        `SELECT ${X}.k AS k, ${X}.j AS j, ${wCol(x)} FROM ${X} WHERE (${X}.j, ${X}.k) NOT IN ` +
          `(SELECT ${Y}.j, CASE WHEN ${vCol(y)} > ${c} THEN ${Y}.k END FROM ${Y} WHERE ${Y}.k = ${X}.k)`,
      );

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
    case 'win_partition_expr': {
      // Ordered by every column of the table, all shown: only identical rows tie.
      const w = `PARTITION BY k % ${rng.int(2, 3)}, (j > ${c}) ORDER BY ${allOrder(x)}`;
      return one(
        `SELECT k, j, ${vCol(x)} AS v, ${wCol(x)} AS w, ROW_NUMBER() OVER (${w}) AS rn, LAG(${vCol(x)}) OVER (${w}) AS pv, ` +
          `SUM(${vCol(x)}) OVER (PARTITION BY (k + j) % 2) AS s, ` +
          `COUNT(*) OVER (PARTITION BY CASE WHEN ${vCol(x)} IS NULL THEN -1 ELSE j / 2 END) AS n FROM ${X}`,
      );
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
  }
  return undefined;
}
