// Seeded random views (templates over tables and over other views) for the differential and property
// suites, with the expressions of random-expressions.ts. Every choice comes from the seed's one stream
// (random-workload.ts), so a seed replays exactly as long as the generator is unchanged. Also the
// generated INSERT / UPDATE / DELETE statements, whose WHERE clauses are such expressions.
import {
  randomTable,
  randomValue,
  sqlLiteral,
  type GenTable,
  type Rng,
  type TableModel,
} from './random-workload.ts';
import {
  ExprGen,
  colExpr,
  relOfTable,
  type EKind,
  type GExpr,
  type Rel,
  type SrcCol,
} from './random-expressions.ts';

// ---------------------------------------------------------------------------------------------------
// Views

export interface GenView {
  readonly name: string;
  /** The SELECT text, valid in both Sluice and SQLite. */
  readonly select: string;
  readonly template: string;
  readonly source: string;
  readonly depth: number;
}

interface Agg {
  readonly sql: string;
  readonly out: Omit<SrcCol, 'name'>;
}

function aggregate(g: ExprGen, rng: Rng, rel: Rel): Agg {
  const intOut = (safe: boolean, wide: boolean, huge = false): Omit<SrcCol, 'name'> => ({
    kind: 'int',
    safe,
    wide,
    huge,
  });
  const of = (kind: EKind): Omit<SrcCol, 'name'> => ({ kind, safe: true, wide: false, huge: false });
  switch (rng.int(0, 10)) {
    case 0:
      return { sql: 'COUNT(*)', out: intOut(true, true) };
    case 1:
      return { sql: `COUNT(${g.anyExpr(1).sql})`, out: intOut(true, true) };
    case 2:
      return { sql: `COUNT(DISTINCT ${g.anyExpr(1).sql})`, out: intOut(true, true) };
    case 3: {
      const a = g.int(2);
      // PostgreSQL: SUM(int) is bigint, SUM(bigint) is numeric (a float in Sluice).
      const distinct = rng.chance(0.25) ? 'DISTINCT ' : '';
      return { sql: `SUM(${distinct}${a.sql})`, out: a.wide ? of('float') : intOut(a.safe, true) };
    }
    case 4:
      return { sql: `SUM(${rng.chance(0.25) ? 'DISTINCT ' : ''}${g.float(2).sql})`, out: of('float') };
    case 5: {
      const distinct = rng.chance(0.25) ? 'DISTINCT ' : '';
      return { sql: `AVG(${distinct}${rng.chance(0.5) ? g.int(1).sql : g.float(1).sql})`, out: of('float') };
    }
    case 6:
    case 7: {
      const fn = rng.pick(['MIN', 'MAX']);
      const cands = rel.cols.filter((c) => c.kind !== 'bool');
      if (cands.length > 0 && rng.chance(0.6)) {
        const c = rng.pick(cands);
        return { sql: `${fn}(${c.name})`, out: { kind: c.kind, safe: c.safe, wide: c.wide, huge: c.huge } };
      }
      const e = rng.pick([() => g.int(1), () => g.float(1), () => g.text(1)])();
      return { sql: `${fn}(${e.sql})`, out: { kind: e.kind, safe: e.safe, wide: e.wide, huge: false } };
    }
    case 8:
      return { sql: `SUM(CASE WHEN ${g.bool(1).sql} THEN 1 ELSE 0 END)`, out: intOut(true, true) };
    case 9:
      return { sql: `MAX(${g.text(1).sql})`, out: of('text') };
    default:
      return { sql: `COUNT(DISTINCT ${g.groupKey().sql})`, out: intOut(true, true) };
  }
}

function havingClause(g: ExprGen, rng: Rng): string {
  const one = (): string =>
    rng.pick([
      () => `COUNT(*) > ${rng.int(0, 3)}`,
      () => `SUM(${g.int(1).sql}) >= ${rng.int(-10, 40)}`,
      () => `MIN(${g.int(0).sql}) IS NOT NULL`,
      () => `COUNT(DISTINCT ${g.anyExpr(0).sql}) > 1`,
      () => `MAX(${g.float(0).sql}) < ${rng.pick(['20', '50.5', '0'])}`,
    ])();
  return rng.chance(0.3) ? `(${one()}) AND (${one()})` : one();
}

interface BuiltView {
  readonly view: GenView;
  readonly rel: Rel;
}

function buildView(rng: Rng, name: string, src: Rel, template: string, fns?: Rng): BuiltView {
  const g = new ExprGen(rng, src, fns);
  const where = (p: number): string => (rng.chance(p) ? ` WHERE ${g.bool(2).sql}` : '');
  const outCol = (name: string, e: GExpr | Omit<SrcCol, 'name'>): SrcCol => ({
    name,
    kind: e.kind,
    safe: e.safe,
    wide: e.wide,
    huge: e.huge,
  });
  let select: string;
  const cols: SrcCol[] = [];
  switch (template) {
    case 'project': {
      if (rng.chance(0.1)) {
        // SELECT *: the view has exactly its source's columns.
        select = `SELECT * FROM ${src.name}${where(0.9)}`;
        cols.push(...src.cols);
        break;
      }
      const items: string[] = [];
      const n = rng.int(1, 4);
      for (let i = 0; i < n; i++) {
        const e = rng.chance(0.3) ? colExpr(rng.pick(src.cols)) : g.anyExpr(2);
        items.push(`${e.sql} AS c${i}`);
        cols.push(outCol(`c${i}`, e));
      }
      select = `SELECT ${items.join(', ')} FROM ${src.name}${where(0.8)}`;
      break;
    }
    case 'distinct': {
      const items: string[] = [];
      const n = rng.int(1, 3);
      for (let i = 0; i < n; i++) {
        const e = g.groupKey();
        items.push(`${e.sql} AS d${i}`);
        cols.push(outCol(`d${i}`, e));
      }
      select = `SELECT DISTINCT ${items.join(', ')} FROM ${src.name}${where(0.5)}`;
      break;
    }
    case 'group':
    case 'global': {
      const keys: GExpr[] = [];
      if (template === 'group') {
        const nk = rng.int(1, 2);
        for (let i = 0; i < nk; i++) keys.push(g.groupKey());
      }
      const items: string[] = [];
      // Sometimes the group keys are not selected: the output is then a multiset without a key.
      const hideKeys = template === 'group' && rng.chance(0.15);
      if (!hideKeys) {
        keys.forEach((k, i) => {
          items.push(`${k.sql} AS g${i}`);
          cols.push(outCol(`g${i}`, k));
        });
      }
      const na = rng.int(1, 4);
      for (let i = 0; i < na; i++) {
        const a = aggregate(g, rng, src);
        items.push(`${a.sql} AS a${i}`);
        cols.push(outCol(`a${i}`, a.out));
      }
      const groupBy = keys.length > 0 ? ` GROUP BY ${keys.map((k) => k.sql).join(', ')}` : '';
      // HAVING mostly with GROUP BY; without it, it keeps or drops the single global row.
      const having = rng.chance(template === 'group' ? 0.3 : 0.1) ? ` HAVING ${havingClause(g, rng)}` : '';
      const distinct = template === 'group' && rng.chance(0.1) ? 'DISTINCT ' : '';
      select = `SELECT ${distinct}${items.join(', ')} FROM ${src.name}${where(0.4)}${groupBy}${having}`;
      break;
    }
    case 'sum-per-key': {
      // The first half of "Double 11": a per-key total.
      const key = g.groupKey();
      const ints = src.cols.filter((c) => c.kind === 'int' && c.safe && !c.huge && !c.wide);
      const amount = ints.length > 0 ? rng.pick(ints).name : g.int(1, true).sql;
      select = `SELECT ${key.sql} AS k, SUM(${amount}) AS total, COUNT(*) AS n FROM ${src.name}${where(0.3)} GROUP BY ${key.sql}`;
      cols.push(outCol('k', key));
      cols.push({ name: 'total', kind: 'int', safe: true, wide: true, huge: false });
      cols.push({ name: 'n', kind: 'int', safe: true, wide: true, huge: false });
      break;
    }
    case 'histogram': {
      // The second half of "Double 11": how many keys fall in each bucket of a numeric column.
      const nums = src.cols.filter((c) => (c.kind === 'int' && c.safe && !c.huge) || c.kind === 'float');
      const c = nums.length > 0 ? rng.pick(nums) : undefined;
      const x = c === undefined ? g.int(1, true) : colExpr(c);
      const div = x.kind === 'float' ? '10.0' : '10';
      const bucket = `FLOOR(${x.sql} / ${div})`;
      select = `SELECT ${bucket} AS bucket, COUNT(*) AS sellers FROM ${src.name} GROUP BY ${bucket}`;
      cols.push({ name: 'bucket', kind: 'float', safe: false, wide: false, huge: false });
      cols.push({ name: 'sellers', kind: 'int', safe: true, wide: true, huge: false });
      break;
    }
    default:
      throw new Error(`unknown template ${template}`);
  }
  return {
    view: { name, select, template, source: src.name, depth: src.depth + 1 },
    rel: { name, cols, depth: src.depth + 1 },
  };
}

export interface Scenario {
  readonly tables: readonly GenTable[];
  readonly views: readonly GenView[];
}

const TEMPLATES: readonly (readonly [number, string])[] = [
  [3, 'project'],
  [2, 'distinct'],
  [5, 'group'],
  [2, 'global'],
  [1, 'sum-per-key'],
  [1, 'histogram'],
];

/** Tables plus 3–8 views, always including a 2–3 deep "Double 11" chain over a per-key SUM. */
export function randomScenario(
  rng: Rng,
  options: { minViews?: number; maxViews?: number; functions?: Rng } = {},
): Scenario {
  const fns = options.functions;
  const tables: GenTable[] = [randomTable(rng, 't0')];
  if (rng.chance(0.35)) tables.push(randomTable(rng, 't1'));
  const rels: Rel[] = tables.map(relOfTable);
  const views: GenView[] = [];
  const add = (b: BuiltView): Rel => {
    views.push(b.view);
    rels.push(b.rel);
    return b.rel;
  };
  const nViews = rng.int(options.minViews ?? 3, options.maxViews ?? 8);
  // The chain: per-key SUM → histogram → (sometimes) an aggregate or filter over the histogram.
  const base = rng.pick(rels.slice(0, tables.length));
  const totals = add(buildView(rng, `v${views.length}`, base, 'sum-per-key', fns));
  const hist = add(buildView(rng, `v${views.length}`, totals, 'histogram', fns));
  if (nViews >= 3 && rng.chance(0.6)) {
    add(buildView(rng, `v${views.length}`, hist, rng.pick(['global', 'project', 'group']), fns));
  }
  while (views.length < nViews) {
    const src = rng.chance(0.35) ? rng.pick(rels) : rng.pick(rels.slice(0, tables.length));
    const template = rng.weighted(
      src.depth >= 3 ? TEMPLATES.filter(([, t]) => t !== 'histogram') : TEMPLATES,
    );
    add(buildView(rng, `v${views.length}`, src, template, fns));
  }
  return { tables, views };
}

// ---------------------------------------------------------------------------------------------------
// SQL statements (INSERT / UPDATE / DELETE) as an alternative way into a table

/** One INSERT, UPDATE or DELETE statement, valid in Sluice and SQLite, never touching key columns. */
export function randomDml(rng: Rng, model: TableModel): string {
  const t = model.table;
  const kind = rng.weighted<'insert' | 'update' | 'delete'>([
    [3, 'insert'],
    [4, 'update'],
    [model.rows.length > 50 ? 3 : 1, 'delete'],
  ]);
  if (kind === 'insert') {
    const rows = Array.from({ length: rng.int(1, 5) }, () => model.freshRow(rng));
    const cols = t.columns.map((c) => c.name);
    const values = rows.map((r) => `(${cols.map((c) => sqlLiteral(r[c] ?? null)).join(', ')})`);
    return `INSERT INTO ${t.name} (${cols.join(', ')}) VALUES ${values.join(', ')}`;
  }
  const g = new ExprGen(rng, relOfTable(t));
  const where = rng.chance(0.9) ? ` WHERE ${g.bool(1).sql}` : '';
  if (kind === 'delete') return `DELETE FROM ${t.name}${where}`;
  const pk = new Set(t.primaryKey ?? []);
  const cols = t.columns.filter((c) => !pk.has(c.name) && c.kind !== 'huge');
  const sets = Array.from({ length: rng.int(1, 2) }, () => rng.pick(cols))
    .filter((c, i, xs) => xs.indexOf(c) === i)
    .map((c) => {
      const fresh = (): string => sqlLiteral(randomValue(rng, { ...c, nullable: false }));
      switch (c.kind) {
        case 'smallint':
        case 'int':
        case 'bigint':
          return `${c.name} = ${rng.chance(0.6) ? `${c.name} + ${rng.int(-3, 5)}` : fresh()}`;
        case 'double':
        case 'numeric':
          return `${c.name} = ${rng.chance(0.6) ? `${c.name} + ${rng.pick(['0.25', '-1.5', '3'])}` : fresh()}`;
        case 'text':
        case 'varchar':
          return `${c.name} = ${rng.pick([`UPPER(${c.name})`, `LOWER(${c.name})`, `SUBSTRING(${c.name}, 1, 2)`, fresh()])}`;
        case 'bool':
          return `${c.name} = ${rng.chance(0.6) ? `NOT ${c.name}` : fresh()}`;
        default:
          return `${c.name} = ${c.nullable && rng.chance(0.2) ? 'NULL' : fresh()}`;
      }
    });
  return `UPDATE ${t.name} SET ${sets.join(', ')}${where}`;
}
