// The join differential suite's grouping-set templates: ROLLUP, CUBE and GROUPING SETS over one
// table and over a join, with HAVING, GROUPING(…), an expression as a grouping column and SELECT
// DISTINCT. SQLite has none of them, so its text is the same query written out as PostgreSQL
// defines it: a UNION ALL of one GROUP BY per set, the columns a set leaves out as NULL and
// GROUPING(…) as that set's bits (UNION for SELECT DISTINCT).
import type { Rng } from './random-workload.ts';
import type { JoinTable } from './join-schema.ts';
import type { JoinView } from './join-template-parts.ts';

export const GROUPING_SET_TEMPLATES = [
  'gs_rollup',
  'gs_cube_join',
  'gs_sets_having',
  'gs_expression',
  'gs_distinct',
] as const;

export type GroupingSetTemplate = (typeof GROUPING_SET_TEMPLATES)[number];

export function isGroupingSetTemplate(t: string): t is GroupingSetTemplate {
  return (GROUPING_SET_TEMPLATES as readonly string[]).includes(t);
}

export interface GroupingSetParts {
  readonly rng: Rng;
  readonly tables: readonly JoinTable[];
  readonly name: () => string;
}

/** A table's integer value column and text column (every table has `<t>v` and `<t>w`). */
const v = (t: string): string => `${t}v`;
const w = (t: string): string => `${t}w`;

export function buildGroupingSetTemplate(parts: GroupingSetParts, template: GroupingSetTemplate): JoinView[] {
  const { rng, tables } = parts;
  const x = rng.pick(tables);
  const y = rng.pick(tables.filter((t) => t !== x));
  const X = x.name;
  const Y = (y ?? x).name;
  const one = (sql: string, sqlite: string, global = false): JoinView[] => [
    { name: parts.name(), sql, sqlite, template, ...(global ? { global: true } : {}) },
  ];
  switch (template) {
    case 'gs_rollup': {
      const aggs = `COUNT(*) AS n, SUM(${v(X)}) AS s, MIN(${w(X)}) AS lo`;
      return one(
        `SELECT k, j, ${aggs}, GROUPING(k, j) AS g FROM ${X} GROUP BY ROLLUP (k, j)`,
        `SELECT k, j, ${aggs}, 0 AS g FROM ${X} GROUP BY k, j UNION ALL ` +
          `SELECT k, NULL, ${aggs}, 1 FROM ${X} GROUP BY k UNION ALL ` +
          `SELECT NULL, NULL, ${aggs}, 3 FROM ${X}`,
        true,
      );
    }
    case 'gs_cube_join': {
      if (X === Y) return buildGroupingSetTemplate(parts, 'gs_rollup');
      const aggs = `COUNT(*) AS n, SUM(${X}.${v(X)}) AS s`;
      const from = `${X} JOIN ${Y} ON ${X}.j = ${Y}.j`;
      return one(
        `SELECT ${X}.k AS xk, ${Y}.${w(Y)} AS yw, ${aggs} FROM ${from} GROUP BY CUBE (${X}.k, ${Y}.${w(Y)})`,
        `SELECT ${X}.k AS xk, ${Y}.${w(Y)} AS yw, ${aggs} FROM ${from} GROUP BY ${X}.k, ${Y}.${w(Y)} UNION ALL ` +
          `SELECT ${X}.k, NULL, ${aggs} FROM ${from} GROUP BY ${X}.k UNION ALL ` +
          `SELECT NULL, ${Y}.${w(Y)}, ${aggs} FROM ${from} GROUP BY ${Y}.${w(Y)} UNION ALL ` +
          `SELECT NULL, NULL, ${aggs} FROM ${from}`,
        true,
      );
    }
    case 'gs_sets_having': {
      const min = rng.int(1, 3);
      const aggs = `COUNT(*) AS n, MAX(${v(X)}) AS mx`;
      const having = `HAVING COUNT(*) > ${min}`;
      return one(
        `SELECT k, ${w(X)} AS tw, ${aggs} FROM ${X} GROUP BY GROUPING SETS ((k), (${w(X)}), ()) ${having}`,
        `SELECT k, NULL AS tw, ${aggs} FROM ${X} GROUP BY k ${having} UNION ALL ` +
          `SELECT NULL, ${w(X)}, ${aggs} FROM ${X} GROUP BY ${w(X)} ${having} UNION ALL ` +
          `SELECT NULL, NULL, ${aggs} FROM ${X} ${having}`,
      );
    }
    case 'gs_expression': {
      const m = rng.int(2, 4);
      return one(
        `SELECT k % ${m} AS m, j, SUM(${v(X)}) AS s, GROUPING(k % ${m}) AS g FROM ${X} GROUP BY CUBE (k % ${m}, j)`,
        `SELECT k % ${m} AS m, j, SUM(${v(X)}) AS s, 0 AS g FROM ${X} GROUP BY k % ${m}, j UNION ALL ` +
          `SELECT k % ${m}, NULL, SUM(${v(X)}), 0 FROM ${X} GROUP BY k % ${m} UNION ALL ` +
          `SELECT NULL, j, SUM(${v(X)}), 1 FROM ${X} GROUP BY j UNION ALL ` +
          `SELECT NULL, NULL, SUM(${v(X)}), 1 FROM ${X}`,
        true,
      );
    }
    case 'gs_distinct':
      return one(
        `SELECT DISTINCT k FROM ${X} GROUP BY GROUPING SETS ((k), (k, j), ())`,
        // The empty set is one group even over no rows: its row is always there.
        `SELECT k FROM ${X} GROUP BY k UNION SELECT k FROM ${X} GROUP BY k, j UNION SELECT NULL`,
        true,
      );
  }
}
