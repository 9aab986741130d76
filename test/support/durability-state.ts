// What a server of the durability attack (durability-run.ts) holds, read over its API — catalog,
// tables, views, query subscriptions' temporary views, the SQL function — and its comparisons: with
// the driver's model (SQLite running each view's SELECT over the model's tables) and with another
// restart of the same data directory.
import type { ColumnInfo, Row } from '../../src/common/types.ts';
import { ALL_VIEWS, type Model, type TableModel } from './durability-workload.ts';
import { SqliteOracle, canonicalRows, multisetDiff } from './sqlite-oracle.ts';
import { request, sortedRows, viewRowsAtOneEpoch } from '../server/helpers.ts';

/** What the server holds: catalog, tables' rows and views' rows, canonical. */
export interface ServedState {
  readonly epoch: number;
  readonly tables: Map<string, string[]>;
  readonly views: Map<string, { columns: ColumnInfo[]; rows: string[]; raw: Row[]; epoch: number }>;
  /** Query subscriptions' temporary views present (one may be dropped while read: then absent). */
  readonly temporary: Map<string, { columns: ColumnInfo[]; rows: string[] }>;
  /** `dbl`'s factor by SHOW FUNCTIONS, null without it. */
  readonly functionFactor: number | null;
}

const TEMPORARY = /^sluice_sub_/;

export async function readServed(base: string): Promise<ServedState> {
  const tablesRes = await request(base, 'GET', '/v1/tables');
  const viewsRes = await request(base, 'GET', '/v1/views');
  const tableNames = (tablesRes.body.tables as { name: string }[]).map((t) => t.name).sort();
  const allViews = (viewsRes.body.views as { name: string }[]).map((v) => v.name).sort();
  const viewNames = allViews.filter((v) => !TEMPORARY.test(v));
  const tables = new Map<string, string[]>();
  for (const t of tableNames) {
    // The large table in parts: one result holds at most --max-result-rows.
    const parts = t === 'big' ? ['id % 4 = 0', 'id % 4 = 1', 'id % 4 = 2', 'id % 4 = 3'] : ['TRUE'];
    const rows: Row[] = [];
    for (const where of parts) {
      const r = await request(base, 'POST', '/v1/sql', { sql: `SELECT * FROM ${t} WHERE ${where}` });
      if (r.status !== 200) throw new Error(`SELECT * FROM ${t}: ${r.text}`);
      rows.push(...((r.body.results as { rows: Row[] }[])[0] as { rows: Row[] }).rows);
    }
    tables.set(t, sortedRows(rows));
  }
  const views = new Map<string, { columns: ColumnInfo[]; rows: string[]; raw: Row[]; epoch: number }>();
  let epoch = 0;
  for (const v of viewNames) {
    const info = await request(base, 'GET', `/v1/views/${v}`);
    const columns = info.body.columns as ColumnInfo[];
    const at = await viewRowsAtOneEpoch(base, v);
    epoch = Math.max(epoch, at.epoch);
    views.set(v, {
      columns,
      rows: canonicalRows(columns, at.rows as Row[]),
      raw: at.rows as Row[],
      epoch: at.epoch,
    });
  }
  const temporary = new Map<string, { columns: ColumnInfo[]; rows: string[] }>();
  for (const v of allViews.filter((name) => TEMPORARY.test(name))) {
    // Its linger may end (a DROP) between the listing and the read.
    const info = await request(base, 'GET', `/v1/views/${v}`);
    if (info.status === 404) continue;
    const columns = info.body.columns as ColumnInfo[];
    try {
      const at = await viewRowsAtOneEpoch(base, v);
      temporary.set(v, { columns, rows: canonicalRows(columns, at.rows as Row[]) });
    } catch (error) {
      if (!/: 404 /.test(String(error))) throw error;
    }
  }
  const fns = await request(base, 'POST', '/v1/sql', { sql: 'SHOW FUNCTIONS' });
  if (fns.status !== 200) throw new Error(`SHOW FUNCTIONS: ${fns.text}`);
  const fnRows = ((fns.body.results as { rows: Row[] }[])[0] as { rows: Row[] }).rows;
  const dbl = fnRows.find((r) => r['name'] === 'dbl');
  const factor = dbl === undefined ? null : Number(/x \* (\d+)/.exec(String(dbl['definition']))?.[1] ?? NaN);
  return { epoch, tables, views, temporary, functionFactor: factor };
}

function modelTableRows(t: TableModel): string[] {
  return sortedRows([...t.rows.values()]);
}

/** Differences between what the server holds and the model (empty when they agree). */
export function compareWithModel(
  served: ServedState,
  model: Model,
  queries: ReadonlyMap<string, string>,
): string[] {
  const problems: string[] = [];
  if (served.functionFactor !== model.functionFactor)
    problems.push(`function dbl ×${served.functionFactor}, model ×${model.functionFactor}`);
  const wantTables = [...model.tables.keys()].sort().join(',');
  const gotTables = [...served.tables.keys()].join(',');
  if (wantTables !== gotTables) problems.push(`tables ${gotTables}, model ${wantTables}`);
  const wantViews = [...model.views].sort().join(',');
  const gotViews = [...served.views.keys()].join(',');
  if (wantViews !== gotViews) problems.push(`views ${gotViews}, model ${wantViews}`);
  if (problems.length > 0) return problems;
  for (const [name, t] of model.tables) {
    const d = multisetDiff(modelTableRows(t), served.tables.get(name) as string[]);
    if (d.missing.length + d.extra.length > 0) problems.push(`table ${name}: ${JSON.stringify(d)}`);
  }
  const oracle = new SqliteOracle();
  try {
    for (const t of model.tables.values()) {
      oracle.createTable({ name: t.name, columns: t.columns, primaryKey: t.key === null ? null : [t.key] });
      oracle.apply(t.name, { insert: [...t.rows.values()] });
    }
    for (const v of ALL_VIEWS)
      if (model.views.has(v.name)) oracle.createView(v.name, v.oracle?.(model) ?? v.select);
    for (const v of ALL_VIEWS) {
      const got = served.views.get(v.name);
      if (got === undefined) continue;
      const want = canonicalRows(got.columns, oracle.query(`SELECT * FROM ${v.name}`) as Row[]);
      const d = multisetDiff(want, got.rows);
      if (d.missing.length + d.extra.length > 0)
        problems.push(`view ${v.name} vs SQLite: ${JSON.stringify(d)}`);
    }
    for (const [name, got] of served.temporary) {
      const query = queries.get(name);
      if (query === undefined) {
        problems.push(`temporary view ${name} of no query subscription opened`);
        continue;
      }
      const want = canonicalRows(got.columns, oracle.query(query) as Row[]);
      const d = multisetDiff(want, got.rows);
      if (d.missing.length + d.extra.length > 0)
        problems.push(`temporary view ${name} (${query}) vs SQLite: ${JSON.stringify(d)}`);
    }
  } finally {
    oracle.close();
  }
  return problems;
}

export function sameServed(a: ServedState, b: ServedState): string[] {
  const problems: string[] = [];
  if (a.epoch !== b.epoch) problems.push(`epoch ${a.epoch} against ${b.epoch}`);
  if (a.functionFactor !== b.functionFactor)
    problems.push(`function ×${a.functionFactor} against ×${b.functionFactor}`);
  const ka = [...a.tables.keys()].join(',') + '|' + [...a.views.keys()].join(',');
  const kb = [...b.tables.keys()].join(',') + '|' + [...b.views.keys()].join(',');
  if (ka !== kb) return [...problems, `catalog ${ka} against ${kb}`];
  for (const [n, rows] of a.tables)
    if (rows.join('\n') !== (b.tables.get(n) as string[]).join('\n')) problems.push(`table ${n} differs`);
  for (const [n, v] of a.views) {
    const d = multisetDiff(v.rows, (b.views.get(n) as { rows: string[] }).rows);
    if (d.missing.length + d.extra.length > 0) problems.push(`view ${n} differs: ${JSON.stringify(d)}`);
  }
  return problems;
}
