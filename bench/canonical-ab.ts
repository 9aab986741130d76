// Interleaved A/B of the canonical pipeline: this tree's Engine and another checkout's in one process,
// fed the same batches alternately (which one goes first alternates too), CPU time summed per side.
// On a machine shared with other work, paired runs in separate processes drift apart with the load;
// here both sides see the same load, batch by batch, so their ratio is the steadier figure.
//   node --import tsx bench/canonical-ab.ts --base ../sluice-base [--dist uniform|zipf] [--batch 10000]
//        [--events 1000000] [--rounds 4] [--workers 1] [--block 1]
// Each round builds a fresh engine on each side (after one untimed warm-up round of 100,000 other
// events) and prints both sides' events per CPU second and base ÷ this tree's CPU time (> 1: faster).
// Both engines share one heap, so a GC may be charged to either side: read several rounds. With
// `--workers N` both engines run N workers; the CPU is the whole process's (one side's threads wait
// while the other side steps) and `main_ms` the main thread's alone (/proc, 10 ms ticks summed).
// `--block K` times K consecutive batches of one side at a time (the sides still alternate, block by
// block): at batch 1 the two CPU-time reads around every one-event epoch cost a good part of it, and
// their own variation was most of the noise.
import { loadavg } from 'node:os';
import { CANONICAL_SQL } from './sluice.ts';
import { mainThreadTicks } from './thread-cpu.ts';
import { cut, generateRows, type Dist } from './workload.ts';
import { flag, loadEngine, THIS_CHECKOUT } from './ab-checkouts.ts';

interface Side {
  applyChanges(table: string, changes: { insert: unknown[] }): unknown;
  execute(sql: string): unknown;
  close(): void;
}
type EngineClass = new (options?: { workers?: number }) => Side;

const baseDir = flag('base', '');
if (baseDir === '') throw new Error('canonical-ab: --base <checkout> is required');
const dist = flag('dist', 'uniform') as Dist;
const batch = Number(flag('batch', '10000'));
const events = Number(flag('events', '1000000'));
const rounds = Number(flag('rounds', '4'));
const workers = Number(flag('workers', '1'));
const block = Number(flag('block', '1'));

const load = loadEngine<EngineClass>;
const Base = await load(baseDir);
const Mine = await load(THIS_CHECKOUT);

const rows = generateRows({ dist, sellers: 100_000, events, seed: 20111111, zipfS: 1.1 });
const warm = generateRows({ dist, sellers: 100_000, events: 100_000, seed: 7, zipfS: 1.1 });
const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
/** The main thread's CPU ticks spent by each side (10 ms each; summed over many batches). */
const mainTicks = new Map<Side, number>();
const timed = (e: Side, bs: readonly unknown[][], from: number, to: number): number => {
  // The main thread's ticks are read (from /proc, two file reads a batch) only when printed: at
  // batch 1 those reads took nine tenths of the wall time.
  const m = workers > 1 ? mainThreadTicks() : 0;
  const t = cpu();
  for (let i = from; i < to; i++) e.applyChanges('orders', { insert: bs[i] as unknown[] });
  const spent = cpu() - t;
  if (workers > 1) mainTicks.set(e, (mainTicks.get(e) ?? 0) + mainThreadTicks() - m);
  return spent;
};

console.log(
  `canonical-ab: ${dist}, batch ${batch}, ${events} events a round, ${workers} worker(s), ` +
    `${block} batch(es) a timed block, base ${baseDir}`,
);
for (let r = 0; r <= rounds; r++) {
  const base = new Base({ workers });
  const mine = new Mine({ workers });
  base.execute(CANONICAL_SQL);
  mine.execute(CANONICAL_SQL);
  const batches = cut(r === 0 ? warm : rows, 0, r === 0 ? warm.length : rows.length, batch);
  let tb = 0;
  let tm = 0;
  /** Per block, base ÷ this tree's CPU time (their median shrugs off a full GC charged to one side). */
  const blockRatios: number[] = [];
  for (let from = 0, k = 0; from < batches.length; from += block, k++) {
    const to = Math.min(batches.length, from + block);
    let b: number;
    let m: number;
    if (k % 2 === 0) {
      b = timed(base, batches, from, to);
      m = timed(mine, batches, from, to);
    } else {
      m = timed(mine, batches, from, to);
      b = timed(base, batches, from, to);
    }
    tb += b;
    tm += m;
    if (block > 1 && m > 0) blockRatios.push(b / m);
  }
  blockRatios.sort((x, y) => x - y);
  const baseMain = mainTicks.get(base) ?? 0;
  const mineMain = mainTicks.get(mine) ?? 0;
  mainTicks.clear();
  base.close();
  mine.close();
  if (r === 0) continue;
  const rate = (us: number): number => Math.round(events / (us / 1e6));
  console.log(
    JSON.stringify({
      bench: 'canonical-ab',
      dist,
      batch,
      ...(block > 1 ? { block } : {}),
      round: r,
      base_events_per_cpu_s: rate(tb),
      events_per_cpu_s: rate(tm),
      ratio: Number((tb / tm).toFixed(3)),
      ...(blockRatios.length > 0
        ? { median_block_ratio: Number((blockRatios[blockRatios.length >> 1] as number).toFixed(3)) }
        : {}),
      ...(workers > 1 ? { workers, base_main_ms: baseMain * 10, main_ms: mineMain * 10 } : {}),
      loadavg: loadavg()[0],
    }),
  );
}
