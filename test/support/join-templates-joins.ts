// The join differential suite's join templates: inner, outer, USING/NATURAL, chains of three or
// four tables, self joins, joins of views and of expressions (join-templates.ts picks the family).
// Each case draws from the seed's stream exactly as it did in one switch, so seeds replay unchanged.
import { vCol, wCol } from './join-schema.ts';
import { smallOf, type JoinView, type TemplateParts } from './join-template-parts.ts';

/** The views of `parts.template` when it is one of this family's, else undefined. */
export function buildJoinFamily(parts: TemplateParts): JoinView[] | undefined {
  const { ctx, rng, schema, ts, x, y, X, Y, c, one, template, again } = parts;
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
      if (rest.length === 0) return again('using_chain_full');
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
  return undefined;
}
