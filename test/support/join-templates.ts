// The join differential suite's views: a seed's scenario (schema and 5–8 templates' views) and each
// template's SQL for Sluice and for SQLite. The templates live in three families (join-templates-*.ts);
// scalar subqueries in scalar-subquery-templates.ts, VALUES in FROM in values-templates.ts.
import type { Rng } from './random-workload.ts';
import { createTableSql } from './sqlite-oracle.ts';
import { buildScalarTemplate, isScalarTemplate, type ScalarTemplate } from './scalar-subquery-templates.ts';
import { buildValuesTemplate, isValuesTemplate, type ValuesTemplate } from './values-templates.ts';
import {
  buildGroupingSetTemplate,
  isGroupingSetTemplate,
  type GroupingSetTemplate,
} from './grouping-set-templates.ts';
import { randomJoinSchema, type JoinSchema } from './join-schema.ts';
import {
  JOIN_TEMPLATES,
  pickTwo,
  type JoinTemplate,
  type JoinView,
  type TemplateContext,
} from './join-template-parts.ts';
import { buildJoinFamily } from './join-templates-joins.ts';
import { buildRelationalFamily } from './join-templates-relational.ts';
import { buildAggregateFamily } from './join-templates-aggregates.ts';

/** Builds one template's views (a template over a view returns the base view first). */
function buildTemplate(
  ctx: TemplateContext,
  template: JoinTemplate | ScalarTemplate | ValuesTemplate | GroupingSetTemplate,
): JoinView[] {
  const { rng, schema } = ctx;
  if (isGroupingSetTemplate(template)) {
    return buildGroupingSetTemplate({ rng, tables: schema.tables, name: () => ctx.name() }, template);
  }
  if (isValuesTemplate(template)) {
    const parts = { rng, tables: schema.tables, kMax: schema.domains.kMax, name: () => ctx.name() };
    return buildValuesTemplate(parts, template);
  }
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
  const again = (t: JoinTemplate): JoinView[] => buildTemplate(ctx, t);
  const parts = { ctx, rng, schema, ts, x, y, X, Y, c, one, template, again };
  const views = buildJoinFamily(parts) ?? buildRelationalFamily(parts) ?? buildAggregateFamily(parts);
  if (views === undefined) throw new Error(`no family builds the join template ${template}`);
  return views;
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
  const ctx: TemplateContext = { rng, schema, name: () => `jv${n++}` };
  const pool: readonly string[] = options.templates ?? JOIN_TEMPLATES;
  const count = rng.int(options.minTemplates ?? 5, options.maxTemplates ?? 8);
  const views: JoinView[] = [];
  for (let i = 0; i < count; i++) views.push(...buildTemplate(ctx, rng.pick(pool) as JoinTemplate));
  return { schema, views };
}

export function joinViewDdl(v: JoinView): string {
  const view = `CREATE MATERIALIZED VIEW ${v.name} AS ${v.sql}`;
  return v.functions !== undefined ? `${v.functions};\n${view}` : view;
}

export function describeJoinScenario(s: JoinScenario): string {
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
