// What the canonical pipeline's cache misses cost at a batch size: the same events timed in their
// generated order (each one-event epoch reads a random seller's group index cell, then its group
// record: two dependent misses) and with each window of `--window` events sorted by seller (a stable
// sort: every seller's own orders, and so its totals and the histogram's moves, stay the same; only
// which seller comes next changes, so the index's cells are read in ascending order and prefetched).
// The records are read by slot, allocated in first-appearance order: still random, unless
// `--ordered-slots` first applies one row of every seller in ascending id (slots then follow ids).
// The timed rows are made again in the order they are applied, on both sides, so the input objects
// are read in memory order either way. Each run is a fresh child process, the two orders
// alternating; prints each run's events per CPU second with the load beside it.
//   node --import tsx bench/canonical-locality.ts [--batch 1] [--events 2000000] [--window 100000]
//        [--pairs 3] [--dist uniform|zipf] [--ordered-slots]
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { buildSluice } from './sluice.ts';
import { cut, generateRows, referenceHistogram, sameHistogram, type Dist, type Order } from './workload.ts';
import { flag, median } from './ab-checkouts.ts';

const batch = Number(flag('batch', '1'));
const events = Number(flag('events', '2000000'));
const windowSize = Number(flag('window', '100000'));
const pairs = Number(flag('pairs', '3'));
const dist = flag('dist', 'uniform') as Dist;
const child = flag('child', '');
const orderedSlots = process.argv.includes('--ordered-slots');
const PRELOAD = 800_000;
const SELLERS = 100_000;

/** Sorts each window of `rows[from..)` by seller, stably (Array.prototype.sort is stable). */
function sortWindows(rows: Order[], from: number, size: number): void {
  for (let i = from; i < rows.length; i += size) {
    const part = rows.slice(i, i + size).sort((a, b) => a.seller_id - b.seller_id);
    for (let j = 0; j < part.length; j++) rows[i + j] = part[j] as Order;
  }
}

async function runChild(sorted: boolean): Promise<void> {
  // A warm-up on other rows, so the timed loop runs optimised code (as bench/canonical.ts does).
  const warm = await buildSluice(1);
  const warmRows = generateRows({ dist, sellers: SELLERS, events: 100_000, seed: 2, zipfS: 1.1 });
  for (const b of cut(warmRows, 0, warmRows.length, batch)) warm.apply(b);
  warm.close();
  const p = await buildSluice(1);
  const rows = generateRows({ dist, sellers: SELLERS, events: PRELOAD + events, seed: 1, zipfS: 1.1 });
  const extra: Order[] = [];
  // --ordered-slots: one row of every seller first, in ascending id, so the Reduce allocates group
  // slots in id order (they go in first-appearance order): sorted windows then read the records in
  // ascending order too, where otherwise only the group index's cells are (the slots are random).
  if (orderedSlots) {
    for (let i = 0; i < SELLERS; i++) extra.push({ order_id: -1 - i, seller_id: i + 1, amount: 1 });
    for (const b of cut(extra, 0, extra.length, 10_000)) p.apply(b);
  }
  for (const b of cut(rows, 0, PRELOAD, 10_000)) p.apply(b);
  if (sorted) sortWindows(rows, PRELOAD, windowSize);
  // Each timed row made again, in the order it is applied, on both sides: reordered, the generated
  // objects would be read in random memory order, a miss per event that the sort itself added.
  for (let i = PRELOAD; i < rows.length; i++) {
    const r = rows[i] as Order;
    rows[i] = { order_id: r.order_id, seller_id: r.seller_id, amount: r.amount };
  }
  const batches = cut(rows, PRELOAD, rows.length, batch);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < batches.length; i++) p.apply(batches[i]);
  const cpu = process.cpuUsage(cpu0);
  // Both orders end in the same state: checked against the histogram computed directly.
  if (!sameHistogram(p.histogram(), referenceHistogram([...extra, ...rows]).histogram))
    throw new Error('canonical-locality: the histogram differs from the reference');
  p.close();
  process.stdout.write(
    JSON.stringify({ sorted, ev_per_cpu_s: Math.round(events / ((cpu.user + cpu.system) / 1e6)) }) + '\n',
  );
}

if (child !== '') await runChild(child === 'sorted');
else {
  const self = fileURLToPath(import.meta.url);
  const ratios: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const got: Record<string, number> = {};
    // The side run first alternates pair by pair.
    for (const side of i % 2 === 0 ? ['generated', 'sorted'] : ['sorted', 'generated']) {
      const load = loadavg()[0]?.toFixed(1);
      const args = [
        '--import',
        'tsx',
        self,
        '--child',
        side,
        '--batch',
        String(batch),
        '--events',
        String(events),
      ];
      args.push('--window', String(windowSize), '--dist', dist);
      if (orderedSlots) args.push('--ordered-slots');
      const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`canonical-locality: child failed\n${r.stderr}`);
      const line = JSON.parse(r.stdout.trim().split('\n').pop() as string) as { ev_per_cpu_s: number };
      got[side] = line.ev_per_cpu_s;
      console.log(`${side.padEnd(9)} ${String(line.ev_per_cpu_s).padStart(9)} events/cpu-s  (load ${load})`);
    }
    ratios.push((got.sorted as number) / (got.generated as number));
  }
  const result = {
    bench: 'canonical-locality',
    dist,
    batch,
    events,
    window: windowSize,
    pairs,
    orderedSlots,
  };
  console.log(
    JSON.stringify({
      ...result,
      sorted_over_generated: ratios.map((r) => +r.toFixed(3)),
      median: +median(ratios).toFixed(3),
    }),
  );
}
