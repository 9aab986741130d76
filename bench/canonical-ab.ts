// Interleaved A/B of the canonical pipeline: this tree's Engine and another checkout's in one process,
// fed the same batches alternately (which one goes first alternates too), CPU time summed per side.
// On a machine shared with other work, paired runs in separate processes drift apart with the load;
// here both sides see the same load, batch by batch, so their ratio is the steadier figure.
//   node --expose-gc --import tsx bench/canonical-ab.ts --base ../sluice-base [--dist uniform|zipf]
//        [--batch 10000] [--events 1000000] [--rounds 4] [--workers 1] [--block 1] [--swap]
//        [--mine <checkout>] [--null-view]
// Each round builds a fresh engine on each side (after one untimed warm-up round of 100,000 other
// events); the side built and run first alternates round by round (`--swap` starts with this tree's,
// and loads it first). Prints both sides' events per CPU second, `median_block_ratio` (the median over
// timed blocks of base ÷ this tree's CPU time, > 1: this tree is faster; read this one) and `ratio`
// (the round's totals). Both engines share one heap, so a GC (a full one marks both sides' state) is
// charged to whichever side is running: at load 6–14 an A/A's round totals spread 0.57–2.36 while the
// block medians of the same rounds stayed within 0.93–1.05. The process runs again under
// `--no-concurrent-recompilation` (see ab-checkouts.ts): with background compiles, an A/A against a
// copy of this tree gave per-process medians of 0.96–1.05, steady within a process, sign varying
// between processes; without, 0.99–1.01. Two different trees still differ by ±3% from one process to
// the next (not from hash seeds nor GC threads: fixing them did not narrow it), so run at least four
// processes, half with `--swap`, and give every process's median. An A/A needs a second copy of the
// tree (`--base .` loads the same modules once: both sides share their code and its feedback).
// With `--workers N` both engines run N workers; the CPU is the whole process's (one side's threads
// wait while the other side steps) and `main_ms` the main thread's alone (/proc, 10 ms ticks summed).
// `--block K` times K consecutive batches of one side at a time (the sides still alternate, block by
// block): at batch 1 the two CPU-time reads around every one-event epoch cost a good part of it, and
// their own variation was most of the noise; make a block at least ~1 ms of work (batch 100: K ≥ 100).
// `--null-view` first runs, on each side once, a Reduce that writes NULLs and text into its changes (a
// text GROUP BY with NULL keys): what a server with such a view elsewhere does to V8's shared store
// sites, and so to the canonical views' change columns.
import { loadavg } from 'node:os';
import { CANONICAL_SQL } from './sluice.ts';
import { mainThreadTicks } from './thread-cpu.ts';
import { cut, generateRows, type Dist } from './workload.ts';
import { flag, loadPair, median, SWAP } from './ab-checkouts.ts';

interface Side {
  applyChanges(table: string, changes: { insert: unknown[] }): unknown;
  execute(sql: string): unknown;
  close(): void;
}
type EngineClass = new (options?: { workers?: number }) => Side;

const baseDir = flag('base', '');
const dist = flag('dist', 'uniform') as Dist;
const batch = Number(flag('batch', '10000'));
const events = Number(flag('events', '1000000'));
const rounds = Number(flag('rounds', '4'));
const workers = Number(flag('workers', '1'));
const block = Number(flag('block', '1'));
const nullView = process.argv.includes('--null-view');

const { Base, Mine } = await loadPair<EngineClass>('canonical-ab');
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

if (nullView)
  for (const Side of [Base, Mine]) {
    const e = new Side();
    e.execute(`CREATE TABLE tags (tag TEXT, v INT);
      CREATE MATERIALIZED VIEW tag_totals AS SELECT tag, COUNT(*) AS n, SUM(v) AS s FROM tags GROUP BY tag;`);
    for (let i = 0; i < 200; i++)
      e.applyChanges('tags', {
        insert: [{ tag: i % 3 === 0 ? null : `t${i % 7}`, v: i % 5 === 0 ? null : i }],
      });
    e.close();
  }
console.log(
  `canonical-ab: ${dist}, batch ${batch}, ${events} events a round, ${workers} worker(s), ` +
    `${block} batch(es) a timed block, base ${baseDir}${nullView ? ', NULL-writing view run first' : ''}`,
);
for (let r = 0; r <= rounds; r++) {
  // The side built (and run) first alternates round by round: this tree's second under `--swap`.
  const baseFirst = (r + (SWAP ? 1 : 0)) % 2 === 0;
  const first = baseFirst ? new Base({ workers }) : new Mine({ workers });
  const second = baseFirst ? new Mine({ workers }) : new Base({ workers });
  first.execute(CANONICAL_SQL);
  second.execute(CANONICAL_SQL);
  const base = baseFirst ? first : second;
  const mine = baseFirst ? second : first;
  const batches = cut(r === 0 ? warm : rows, 0, r === 0 ? warm.length : rows.length, batch);
  let tb = 0;
  let tm = 0;
  /** Per block, base ÷ this tree's CPU time: their median shrugs off a GC charged to one side. */
  const blockRatios: number[] = [];
  for (let from = 0, k = 0; from < batches.length; from += block, k++) {
    const to = Math.min(batches.length, from + block);
    let b: number;
    let m: number;
    if ((k % 2 === 0) === baseFirst) {
      b = timed(base, batches, from, to);
      m = timed(mine, batches, from, to);
    } else {
      m = timed(mine, batches, from, to);
      b = timed(base, batches, from, to);
    }
    tb += b;
    tm += m;
    if (m > 0) blockRatios.push(b / m);
  }
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
      ...(SWAP ? { swap: true } : {}),
      ...(nullView ? { null_view: true } : {}),
      round: r,
      base_events_per_cpu_s: rate(tb),
      events_per_cpu_s: rate(tm),
      median_block_ratio: Number(median(blockRatios).toFixed(3)),
      ratio: Number((tb / tm).toFixed(3)),
      ...(workers > 1 ? { workers, base_main_ms: baseMain * 10, main_ms: mineMain * 10 } : {}),
      loadavg: loadavg()[0],
    }),
  );
}
