// The join differential suite's VALUES templates: a constant relation in FROM joined, left-joined,
// aggregated, unioned and used as an IN list's subquery over the seed's tables; VALUES as a WITH
// query and as a set operation's branch. SQLite reads
// `(VALUES …) AS v` with the same column1, column2 names; column aliases (`AS v(a, b)`, which SQLite
// does not take) are spelled for it as a derived table that renames them.
import type { Rng } from './random-workload.ts';
import type { JoinTable } from './join-schema.ts';
import type { JoinView } from './join-template-parts.ts';

export const VALUES_TEMPLATES = [
  'values_join',
  'values_left_join_count',
  'values_alias_join',
  'values_union',
  'values_in',
  'values_only',
  'values_cte',
  'values_branch',
] as const;

export type ValuesTemplate = (typeof VALUES_TEMPLATES)[number];

export function isValuesTemplate(t: string): t is ValuesTemplate {
  return (VALUES_TEMPLATES as readonly string[]).includes(t);
}

export interface ValuesParts {
  readonly rng: Rng;
  readonly tables: readonly JoinTable[];
  readonly kMax: number;
  readonly name: () => string;
}

/**
 * 2–12 rows of (key, label), keys drawn from the tables' domain (a repeat or a NULL now and then);
 * from 8 rows on, a list the parser reads past node-sql-parser.
 */
function keyRows(rng: Rng, kMax: number): string {
  const rows: string[] = [];
  for (let i = rng.int(2, 12); i > 0; i--) {
    const key = rng.int(0, 9) === 0 ? 'NULL' : String(rng.int(0, kMax + 1));
    rows.push(`(${key}, '${rng.pick(['a', 'b', 'c'])}')`);
  }
  return rows.join(', ');
}

export function buildValuesTemplate(parts: ValuesParts, template: ValuesTemplate): JoinView[] {
  const { rng, tables, kMax } = parts;
  const X = rng.pick(tables).name;
  const rows = keyRows(rng, kMax);
  const one = (sql: string, sqlite = sql): JoinView[] => [{ name: parts.name(), sql, sqlite, template }];
  switch (template) {
    case 'values_join':
      return one(
        `SELECT ${X}.k, ${X}.j, v.column2 AS label FROM ${X} JOIN (VALUES ${rows}) AS v ON ${X}.k = v.column1`,
      );
    case 'values_left_join_count':
      return one(
        `SELECT v.column1 AS code, v.column2 AS label, COUNT(${X}.k) AS n FROM (VALUES ${rows}) AS v ` +
          `LEFT JOIN ${X} ON ${X}.j = v.column1 GROUP BY v.column1, v.column2`,
      );
    case 'values_alias_join':
      return one(
        `SELECT ${X}.k, v.label FROM ${X} JOIN (VALUES ${rows}) AS v(code, label) ON ${X}.k = v.code AND v.label <> 'c'`,
        `SELECT ${X}.k, v.label FROM ${X} JOIN (SELECT column1 AS code, column2 AS label FROM (VALUES ${rows})) AS v ` +
          `ON ${X}.k = v.code AND v.label <> 'c'`,
      );
    case 'values_union':
      return one(`SELECT k FROM ${X} UNION SELECT column1 FROM (VALUES ${rows}) AS v`);
    case 'values_in':
      return one(`SELECT k, j FROM ${X} WHERE k IN (SELECT column1 FROM (VALUES ${rows}) AS v)`);
    case 'values_cte':
      return one(
        `WITH codes AS (VALUES ${rows}) SELECT ${X}.k, codes.column2 AS label FROM ${X} LEFT JOIN codes ON ${X}.k = codes.column1`,
      );
    case 'values_branch':
      return one(`SELECT k, j FROM ${X} UNION ALL VALUES ${rows.replace(/'[abc]'/g, '7')}`);
    case 'values_only':
      return [
        {
          name: parts.name(),
          sql: `SELECT COUNT(*) AS n, SUM(column1) AS s FROM (VALUES ${rows}) AS v`,
          sqlite: `SELECT COUNT(*) AS n, SUM(column1) AS s FROM (VALUES ${rows}) AS v`,
          template,
          global: true,
        },
      ];
  }
}
