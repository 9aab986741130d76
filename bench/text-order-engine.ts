// bench/text-order.ts --engine: two checkouts' Engines in one process over ASCII text, fed the same
// batches alternately (the side that goes first alternates), CPU ms summed per side and phase.
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

interface EngineLike {
  execute(sql: string): unknown;
  applyChanges(table: string, changes: { insert?: unknown[]; delete?: unknown[] }): unknown;
}
type EngineClass = new () => EngineLike;

const VIEWS = [
  'CREATE MATERIALIZED VIEW top5 AS SELECT g, id, s FROM (SELECT g, id, s, ROW_NUMBER() OVER (PARTITION BY g ORDER BY s, id) AS r FROM t) x WHERE r <= 5',
  'CREATE MATERIALIZED VIEW extremes AS SELECT g, MIN(s) AS lo, MAX(s) AS hi FROM t GROUP BY g',
  "CREATE MATERIALIZED VIEW early AS SELECT id, s FROM t WHERE s < 'seller_5'",
];
const BATCH = 2000;

async function engineOf(root: string, instance: string): Promise<EngineClass> {
  const url = `${pathToFileURL(resolve(root, 'src/index.ts')).href}?${instance}`;
  return ((await import(url)) as { Engine: EngineClass }).Engine;
}

export async function runEngine(o: {
  baseRoot: string;
  thisRoot: string;
  aa: boolean;
  rounds: number;
  rows: number;
}): Promise<void> {
  const classes = {
    base: await engineOf(o.baseRoot, 'base'),
    this: o.aa ? await engineOf(o.baseRoot, 'again') : await engineOf(o.thisRoot, 'this'),
  };
  const ms: Record<string, number> = {};
  const charge = (key: string, run: () => void): void => {
    const t0 = process.cpuUsage();
    run();
    const d = process.cpuUsage(t0);
    ms[key] = (ms[key] ?? 0) + (d.user + d.system) / 1000;
  };
  const loads: number[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const engines = { base: new classes.base(), this: new classes.this() };
    for (const e of Object.values(engines)) {
      e.execute('CREATE TABLE t (id integer PRIMARY KEY, g integer, s text)');
      for (const v of VIEWS) e.execute(v);
    }
    for (let at = 0, b = 0; at < o.rows; at += BATCH, b++) {
      const order = (b + r) % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const);
      for (const side of order) {
        const rows = Array.from({ length: Math.min(BATCH, o.rows - at) }, (_, i) => ({
          id: at + i,
          g: (at + i) % 1000,
          s: `seller_${((at + i) * 7919) % 1_000_003}`,
        }));
        charge(`views/${side}`, () => engines[side].applyChanges('t', { insert: rows }));
      }
    }
    for (let q = 0; q < 4; q++) {
      const order = (q + r) % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const);
      for (const side of order)
        charge(`orderBy/${side}`, () =>
          engines[side].execute(`SELECT id FROM t ORDER BY s OFFSET ${o.rows - 10} LIMIT 3`),
        );
    }
    loads.push(loadavg()[0] as number);
  }
  const out: Record<string, { base: string; this: string; ratio: string }> = {};
  for (const phase of ['views', 'orderBy']) {
    const b = ms[`${phase}/base`] ?? NaN;
    const t = ms[`${phase}/this`] ?? NaN;
    out[phase] = { base: b.toFixed(0), this: t.toFixed(0), ratio: (t / b).toFixed(3) };
  }
  console.log(
    JSON.stringify({
      bench: 'text-order --engine',
      aa: o.aa,
      rounds: o.rounds,
      rows: o.rows,
      load: loads.map((l) => l.toFixed(1)),
      cpuMs: out,
    }),
  );
}
