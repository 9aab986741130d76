// What each view of the canonical pipeline adds to a one-row epoch at steady state: an engine with the
// `orders` table alone, then with `seller_totals`, then with `total_histogram` too (or another second
// view over `seller_totals`, to tell the histogram's Reduce from the fixed cost of any view over a
// view), each preloaded in batches of 10,000 and then fed one-row `applyChanges` calls, CPU ns per
// event. Each (views, run) is a fresh child process, the configurations alternating run by run; the
// parent prints each one's runs, minimum and median (on a loaded machine the minimum is the steadier).
//   node --import tsx bench/view-step-cost.ts [--views table,seller,histogram,filter,count]
//        [--dist uniform|zipf] [--preload 700000] [--events 1000000] [--runs 4]
// `--child <views>` runs one configuration and prints one JSON line (scavenges counted too).
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Row } from '../src/common/types.ts';
import { Engine } from '../src/index.ts';
import { flag } from './ab-checkouts.ts';
import { generateRows, type Dist, type Order } from './workload.ts';

const TABLE = 'CREATE TABLE orders (order_id BIGINT, seller_id INT NOT NULL, amount INT NOT NULL)';
const SELLER_TOTALS =
  'CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id';
/** The second view over seller_totals, by configuration name. */
const SECOND: Readonly<Record<string, string>> = {
  histogram:
    'SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)',
  // emits nothing: the fixed cost of a view reading a view's -old/+new
  filter: 'SELECT seller_id FROM seller_totals WHERE total < 0',
  // one global group
  count: 'SELECT COUNT(*) AS n FROM seller_totals',
};

const dist = flag('dist', 'uniform') as Dist;
const preload = Number(flag('preload', '700000'));
const events = Number(flag('events', '1000000'));
const child = flag('child', '');

if (child !== '') runChild(child);
else runParent();

function runChild(views: string): void {
  const rows = generateRows({ dist, sellers: 100_000, events: preload + events, seed: 20111111, zipfS: 1.1 });
  const engine = new Engine();
  engine.execute(TABLE);
  if (views !== 'table') engine.execute(SELLER_TOTALS);
  const second = SECOND[views];
  if (second !== undefined) engine.execute(`CREATE MATERIALIZED VIEW v2 AS ${second}`);
  else if (views !== 'table' && views !== 'seller')
    throw new Error(`view-step-cost: unknown --views ${views}`);
  const asRows = (orders: readonly Order[]): Row[] => orders as unknown as Row[];
  for (let i = 0; i < preload; i += 10_000)
    engine.applyChanges('orders', { insert: asRows(rows.slice(i, Math.min(preload, i + 10_000))) });
  const one = rows.slice(preload).map((r) => ({ insert: asRows([r]) }));
  let scavenges = 0;
  const gc = new PerformanceObserver((list) => {
    scavenges += list.getEntries().length;
  });
  gc.observe({ entryTypes: ['gc'] });
  const u0 = process.cpuUsage();
  for (let i = 0; i < one.length; i++) engine.applyChanges('orders', one[i] as { insert: Row[] });
  const u = process.cpuUsage(u0);
  // the observer reports after the loop's task
  setTimeout(() => {
    gc.disconnect();
    const ns = ((u.user + u.system) * 1000) / one.length;
    console.log(JSON.stringify({ views, dist, ns_per_event: Math.round(ns), gcs: scavenges }));
  }, 10);
}

function runParent(): void {
  const configs = flag('views', 'table,seller,histogram,filter').split(',');
  const runs = Number(flag('runs', '4'));
  const self = fileURLToPath(import.meta.url);
  const byConfig = new Map<string, number[]>(configs.map((c) => [c, []]));
  console.log(`view-step-cost: ${dist}, preload ${preload}, ${events} one-row epochs, ${runs} runs`);
  for (let r = 0; r < runs; r++) {
    // the order rotates with the run, so no configuration always runs first
    for (let k = 0; k < configs.length; k++) {
      const views = configs[(k + r) % configs.length] as string;
      const out = execFileSync(
        process.execPath,
        [
          ...process.execArgv,
          self,
          '--child',
          views,
          '--dist',
          dist,
          '--preload',
          String(preload),
          '--events',
          String(events),
        ],
        { encoding: 'utf8' },
      );
      const line = JSON.parse(out.trim().split('\n').pop() as string) as { ns_per_event: number };
      byConfig.get(views)?.push(line.ns_per_event);
    }
  }
  for (const [views, ns] of byConfig) {
    const sorted = [...ns].sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        bench: 'view-step-cost',
        views,
        dist,
        ns_per_event: ns,
        min: sorted[0],
        median: sorted[sorted.length >> 1],
        loadavg: Number((loadavg()[0] as number).toFixed(2)),
      }),
    );
  }
}
