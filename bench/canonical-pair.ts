// One side of a paired, separate-process A/B of the canonical pipeline: a checkout's Engine fed the
// same 1,000,000 orders at one batch size, timed by this process's CPU time around `applyChanges`
// alone (no per-epoch timer, no child process). Run it from each checkout in turn, alternating the
// order (A B B A ...): unlike bench/canonical-ab.ts the two engines do not share a heap, so what one
// side allocates is collected on its own account.
//   node --import tsx bench/canonical-pair.ts <checkout> [uniform|zipf] [batch] [rounds]
// Each round is a fresh engine after one untimed warm-up engine fed 200,000 other orders; prints
// the rounds' events per CPU second (millions) on one line.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CANONICAL_SQL } from './sluice.ts';
import { cut, generateRows, type Dist } from './workload.ts';

interface Side {
  execute(sql: string): unknown;
  applyChanges(table: string, changes: { insert: unknown[] }): unknown;
}

const [dir = '.', dist = 'uniform', batchArg = '10000', roundsArg = '2'] = process.argv.slice(2);
const { Engine } = (await import(pathToFileURL(resolve(dir, 'src/index.ts')).href)) as {
  Engine: new () => Side;
};
const batch = Number(batchArg);
const spec = { dist: dist as Dist, sellers: 100_000, zipfS: 1.1 };
const rows = generateRows({ ...spec, events: 1_000_000, seed: 20111111 });
const batches = cut(rows, 0, rows.length, batch);
const warm = new Engine();
warm.execute(CANONICAL_SQL);
for (const b of cut(generateRows({ ...spec, events: 200_000, seed: 7 }), 0, 200_000, batch))
  warm.applyChanges('orders', { insert: b });
const figures: string[] = [];
for (let r = 0; r < Number(roundsArg); r++) {
  const engine = new Engine();
  engine.execute(CANONICAL_SQL);
  const before = process.cpuUsage();
  for (const b of batches) engine.applyChanges('orders', { insert: b });
  const used = process.cpuUsage(before);
  figures.push((rows.length / (used.user + used.system)).toFixed(3));
}
console.log(`${dir} ${dist} batch ${batch}: ${figures.join(' ')} M events/cpu-s`);
