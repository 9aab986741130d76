// The canonical pipeline beside K idle views (each a GROUP BY over a table of its own, never written):
// one-row epochs into `orders`, events per CPU second. What an epoch pays per view it has nothing for.
//   node --import tsx bench/idle-views.ts [checkout, default this tree] [K, default 200]
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadavg } from 'node:os';
import { CANONICAL_SQL } from './sluice.ts';
import { generateRows } from './workload.ts';

interface EngineLike {
  execute(sql: string): unknown;
  applyChanges(table: string, changes: { insert: unknown[] }): unknown;
}

const dir = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
const views = Number(process.argv[3] ?? '200');
const { Engine } = (await import(pathToFileURL(resolve(dir, 'src/index.ts')).href)) as {
  Engine: new () => EngineLike;
};
const engine = new Engine();
engine.execute(CANONICAL_SQL);
const ddl: string[] = [];
for (let i = 0; i < views; i++) {
  ddl.push(`CREATE TABLE x${i} (k INT NOT NULL, v INT NOT NULL);`);
  ddl.push(`CREATE MATERIALIZED VIEW xv${i} AS SELECT k, SUM(v) AS s FROM x${i} GROUP BY k;`);
}
engine.execute(ddl.join('\n'));
const rows = generateRows({ dist: 'uniform', sellers: 100_000, events: 500_000, seed: 20111111, zipfS: 1.1 });
for (let i = 0; i < 300_000; i += 10_000)
  engine.applyChanges('orders', { insert: rows.slice(i, i + 10_000) });
const requests = rows.slice(300_000).map((r) => ({ insert: [r as unknown] }));
const warm = 50_000; // untimed: the JIT settles
for (let i = 0; i < warm; i++) engine.applyChanges('orders', requests[i] as { insert: unknown[] });
const start = process.cpuUsage();
for (let i = warm; i < requests.length; i++)
  engine.applyChanges('orders', requests[i] as { insert: unknown[] });
const cpu = process.cpuUsage(start);
const events = requests.length - warm;
console.log(
  JSON.stringify({
    bench: 'idle-views',
    checkout: dir,
    views,
    events,
    events_per_cpu_s: Math.round(events / ((cpu.user + cpu.system) / 1e6)),
    loadavg: loadavg()[0],
  }),
);
