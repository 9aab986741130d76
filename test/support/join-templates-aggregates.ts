// The join differential suite's aggregate templates: FILTER, string/array/JSON aggregates, Top-N and
// window functions (join-templates.ts picks the family).
// Each case draws from the seed's stream exactly as it did in one switch, so seeds replay unchanged.
import { idCol, vCol, wCol, type JoinTable } from './join-schema.ts';
import { allOrder, type JoinView, type TemplateParts } from './join-template-parts.ts';

/** The views of `parts.template` when it is one of this family's, else undefined. */
export function buildAggregateFamily(parts: TemplateParts): JoinView[] | undefined {
  const { ctx, rng, ts, x, y, X, Y, c, one, template } = parts;
  switch (template) {
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
    case 'win_string_agg': {
      const w = `PARTITION BY ${rng.pick(['k', 'j'])} ORDER BY ${allOrder(x)}`;
      const a = rng.int(0, 3);
      const b = rng.int(1, 3);
      const wv = wCol(x);
      // Texts never empty: SQLite's window string_agg mishandles '' (a lone one reads as "\u0000",
      // and a frame sliding past one drops a delimiter), PostgreSQL's is in window-string-agg.slt.
      const t = `${wv} || '.'`;
      const items: [string, string, string, string][] = [
        [t, ',', '', 'run'],
        [t, '-', ` ROWS BETWEEN ${a} PRECEDING AND ${b} FOLLOWING`, 'near'],
        [t, '', ' ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING', 'rest'],
        [`${wv} || ':' || j`, '|', ` ROWS BETWEEN ${b} FOLLOWING AND ${b + 1} FOLLOWING`, 'ahead'],
        [t, '; ', ` ROWS BETWEEN UNBOUNDED PRECEDING AND ${a} PRECEDING`, 'pre'],
      ];
      const list = items
        .map(([arg, d, frame, name]) => `STRING_AGG(${arg}, '${d}') OVER (${w}${frame}) AS ${name}`)
        .join(', ');
      return one(`SELECT k, j, ${wv} AS w, ${list} FROM ${X}`);
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
  }
  return undefined;
}
