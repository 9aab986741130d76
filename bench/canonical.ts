// The canonical Sluice benchmark: orders → seller_totals (SUM per seller) → total_histogram (COUNT of
// sellers per FLOOR(total / 10)), a view over a view with retraction, fed append-only batches.
// Sluice, the peer @tanstack/db-ivm and a plain-`Map` reference (bench/plain-map.ts) run the same
// rows; each (impl, dist, batch, workers) runs in a fresh child process so heaps and JIT state do not
// interfere. See bench/README.md.
//
//   npm run bench                      # the full matrix: 3 impls, both dists, 3 batch sizes, 1 and 2 workers
//   npm run bench -- --quick           # a tenth of the events
//   npm run bench -- --impl sluice --dist zipf --batch 10000 --events 1000000
//   npm run bench -- --numeric          # NUMERIC(12,2) SUM/AVG next to INT (bench/numeric.ts)
//   npm run bench -- --impl sluice --workers 1     # Sluice alone, without worker threads
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import type { DbIvmVariant } from './dbivm.ts';
import {
  type Impl,
  TARGET_EVENTS_PER_S,
  TARGET_RATIO,
  TARGET_WORKER_SPEEDUP,
  PRELOAD_BATCH,
  type Options,
  parseArgs,
  eventsFor,
  preloadFor,
  settleFor,
} from './canonical-options.ts';
import { cpuSplit, threadTicks, type CpuSplit } from './thread-cpu.ts';
import {
  cut,
  generateRows,
  histogramEntries,
  referenceHistogram,
  sameHistogram,
  type Dist,
  type Order,
  type WorkloadSpec,
} from './workload.ts';
import { getGc, settledMemory } from './bench-memory.ts';
import { collectAndSettle } from './gc-settle.ts';

// ---------------------------------------------------------------------------------------------
// Child: one implementation, one distribution, one batch size.

interface ChildResult {
  child: true;
  impl: Impl;
  dist: Dist;
  batch: number;
  workers: number;
  events: number;
  preload: number;
  /** Of the preload, the last events applied at the timed batch size (canonical-options.ts settleFor). */
  settle: number;
  events_per_s: number;
  /** Timed events ÷ CPU time (user + system, all threads) of the timed loop: less sensitive to load. */
  events_per_cpu_s: number;
  /** CPU of the forced collection's sweep, waited out before the clock started (0 with --no-sweep-wait). */
  sweep_cpu_ms: number;
  /** The timed loop's CPU time by thread (Linux): the main thread, the busiest other (a worker). */
  cpu_split: CpuSplit | null;
  /** Every how many batches one was timed for p50/p99 (latencyStride). */
  latency_every: number;
  p50_us: number;
  p99_us: number;
  bytes_per_group: number;
  /** The views' own state per group (freed by dropping them; the table kept), when measured. */
  view_bytes_per_group: number | null;
  groups: number;
  entry: string;
  histogram: [number, number][];
  state: string;
}

interface Pipeline {
  entry: string;
  prepare: (rows: Order[]) => unknown;
  apply: (batch: unknown) => void;
  histogram: () => Map<number, number>;
  groups: (() => number) | null;
  describeState?: () => string;
  /** Drops the views, keeping the table: what that frees is the views' own state. */
  dropViews?: () => void;
  /** Ends the engine's worker threads. */
  close?: () => void;
}

async function buildPipeline(impl: Impl, variant: DbIvmVariant, workers: number): Promise<Pipeline> {
  if (impl === 'sluice') {
    const { buildSluice } = await import('./sluice.ts');
    return buildSluice(workers);
  }
  if (impl === 'map') {
    const { buildPlainMap } = await import('./plain-map.ts');
    return buildPlainMap();
  }
  const { buildDbIvm } = await import('./dbivm.ts');
  const p = buildDbIvm(variant);
  return {
    entry: `D2 ${variant}`,
    prepare: p.prepare,
    apply: p.apply as (batch: unknown) => void,
    histogram: p.histogram,
    groups: null,
  };
}

/**
 * Every how many batches the timed loop reads the clock around one, for the latency percentiles.
 * Two `process.hrtime.bigint()` reads cost ≈ 0.1 µs, about a tenth of what Sluice spends on a batch
 * of one event (and a hundredth of what db-ivm does), so timing every batch of one charged each
 * implementation the clock's cost and moved their ratio. From batch 64 up every batch is timed; below,
 * every (64 / batch)th, the same batches for every implementation: at batch 1 one in 64, still
 * thousands of samples for the p99. Throughput is the whole loop's wall and CPU time either way.
 */
function latencyStride(batch: number): number {
  return Math.max(1, Math.ceil(64 / batch));
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx]!;
}

async function runChild(o: Options): Promise<void> {
  const impl = o.impls[0]!;
  const dist = o.dists[0]!;
  const batch = o.batches[0]!;
  const workers = o.workers[0] ?? 1;
  const events = eventsFor(o, batch);
  const preload = preloadFor(o, batch);
  const settle = settleFor(o, batch);
  const gc = getGc();
  const spec: WorkloadSpec = {
    dist,
    sellers: o.sellers,
    events: preload + events,
    seed: o.seed,
    zipfS: o.zipfS,
  };

  // Warm-up on a throwaway instance with different rows, so the timed run sees optimised code.
  const warmEvents = o.warmup ?? Math.min(Math.max(Math.ceil(events / 10), 2 * batch), 100_000);
  if (warmEvents > 0) {
    const warm = await buildPipeline(impl, o.variant, workers);
    const rows = generateRows({ ...spec, events: warmEvents, seed: o.seed + 1 });
    for (const b of cut(rows, 0, rows.length, batch)) warm.apply(warm.prepare(b));
    warm.close?.();
  }

  // The measured instance, and everything the timed loop needs, exist before the baseline.
  // (Worker threads are the engine's own: the warm-up's threads are not these. With --workers > 1,
  // give both sides the same --preload so the threads' code is optimised before the timed loop.)
  const p = await buildPipeline(impl, o.variant, workers);
  const nBatches = Math.ceil(events / batch);
  const stride = latencyStride(batch);
  const lat = new Float64Array(Math.ceil(nBatches / stride));
  const baseline = settledMemory(gc);

  // All input is generated (and the expected result computed) before timing.
  let rows: Order[] | null = generateRows(spec);
  const expected = referenceHistogram(rows);
  for (const b of cut(rows, 0, preload - settle, PRELOAD_BATCH)) p.apply(p.prepare(b));
  for (const b of cut(rows, preload - settle, preload, batch)) p.apply(p.prepare(b));
  let prepared: unknown[] | null = cut(rows, preload, rows.length, batch).map(p.prepare);
  rows = null;
  // The forced collection's sweep runs on helper threads after gc() returns; waiting for it keeps its
  // CPU out of the timed loop (gc-settle.ts), as the join bench does.
  let sweepCpuMs = 0;
  if (o.sweepWait) sweepCpuMs = (await collectAndSettle(gc)).cpuMs;
  else gc();

  // --cpu-profile FILE: a V8 CPU profile of the timed loop only (adds sampling overhead).
  let session: Session | null = null;
  if (o.cpuProfile !== null) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }

  const ticks0 = workers > 1 ? threadTicks() : null;
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < nBatches; i++) {
    if (i % stride !== 0) {
      p.apply(prepared[i]);
      continue;
    }
    const t0 = process.hrtime.bigint();
    p.apply(prepared[i]);
    lat[i / stride] = Number(process.hrtime.bigint() - t0);
  }
  const wallNs = Number(process.hrtime.bigint() - start);
  const cpu = process.cpuUsage(cpu0);
  const split = ticks0 === null ? null : cpuSplit(ticks0, threadTicks());
  const cpuUs = cpu.user + cpu.system;
  if (session !== null && o.cpuProfile !== null) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(o.cpuProfile, JSON.stringify(profile));
    session.disconnect();
  }

  prepared = null;
  const after = settledMemory(gc);
  const got = p.histogram();
  const groups = p.groups?.() ?? expected.groups;
  if (groups !== expected.groups)
    throw new Error(`bench: ${impl} seller_totals has ${groups} groups, expected ${expected.groups}`);
  if (!sameHistogram(got, expected.histogram)) {
    throw new Error(
      `bench: ${impl} histogram differs from the reference\n  got      ${JSON.stringify(histogramEntries(got))}\n` +
        `  expected ${JSON.stringify(histogramEntries(expected.histogram))}`,
    );
  }
  const state = p.describeState?.() ?? '';
  let viewBytes: number | null = null;
  if (p.dropViews !== undefined) {
    p.dropViews();
    viewBytes = Math.round((after - settledMemory(gc)) / groups);
  }
  p.close?.();
  lat.sort();
  const result: ChildResult = {
    child: true,
    impl,
    dist,
    batch,
    workers,
    events,
    preload,
    settle,
    events_per_s: Math.round(events / (wallNs / 1e9)),
    events_per_cpu_s: Math.round(events / (cpuUs / 1e6)),
    sweep_cpu_ms: Math.round(sweepCpuMs * 10) / 10,
    cpu_split: split,
    latency_every: stride,
    p50_us: Math.round(percentile(lat, 0.5) / 10) / 100,
    p99_us: Math.round(percentile(lat, 0.99) / 10) / 100,
    bytes_per_group: Math.round((after - baseline) / groups),
    view_bytes_per_group: viewBytes,
    groups,
    entry: p.entry,
    histogram: histogramEntries(got),
    state,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}

// ---------------------------------------------------------------------------------------------
// Parent: orchestrate children, print the table, JSON lines and ratios.

function childArgs(o: Options, impl: Impl, dist: Dist, batch: number, workers: number): string[] {
  const exec = [...process.execArgv];
  if (!exec.some((a) => a.includes('expose-gc'))) exec.push('--expose-gc');
  if (!exec.some((a, i) => a === 'tsx' && exec[i - 1] === '--import') && !exec.includes('--import=tsx'))
    exec.push('--import', 'tsx');
  const args = [
    fileURLToPath(import.meta.url),
    '--child',
    '--impl',
    impl,
    '--dist',
    dist,
    '--batch',
    String(batch),
    '--events',
    String(eventsFor(o, batch)),
    '--preload',
    String(preloadFor(o, batch)),
    '--sellers',
    String(o.sellers),
    '--seed',
    String(o.seed),
    '--zipf-s',
    String(o.zipfS),
    '--dbivm-variant',
    o.variant,
    '--workers',
    String(workers),
  ];
  if (o.warmup !== null) args.push('--warmup', String(o.warmup));
  if (o.settle !== null) args.push('--settle', String(o.settle));
  if (!o.sweepWait) args.push('--no-sweep-wait');
  if (o.cpuProfile !== null)
    args.push(
      '--cpu-profile',
      `${o.cpuProfile}.${impl}-${dist}-${batch}${workers > 1 ? `-w${workers}` : ''}.cpuprofile`,
    );
  return [...exec, ...args];
}

function spawnChild(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (d: string) => (stdout += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function row(cells: string[]): string {
  const widths = [7, 8, 6, 10, 10, 12, 12, 11, 11, 12, 13, 8, 24];
  return cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' ');
}

async function runParent(o: Options): Promise<number> {
  console.log(
    `Sluice canonical bench: orders → seller_totals → total_histogram, ${fmt(o.sellers)} sellers, ` +
      `amounts 1..100, seed ${o.seed}, zipf s=${o.zipfS}, db-ivm variant ${o.variant}${o.repeat > 1 ? `, best of ${o.repeat} runs` : ''}${o.quick ? ', QUICK' : ''}`,
  );
  console.log(
    `targets: sluice ≥ ${fmt(TARGET_EVENTS_PER_S)} events/s at batch 10,000 (one core); ` +
      `sluice/db-ivm ≥ ${TARGET_RATIO}× at every batch size\n`,
  );
  console.log(
    row([
      'impl',
      'dist',
      'batch',
      'preload',
      'events',
      'events/s',
      'ev/cpu-s',
      'p50 µs',
      'p99 µs',
      'bytes/group',
      'view B/group',
      'groups',
      'target',
    ]),
  );
  const results = new Map<string, ChildResult>();
  const failures: string[] = [];
  for (const dist of o.dists) {
    for (const batch of o.batches) {
      for (const [impl, workers] of o.impls.flatMap((i) =>
        (i === 'sluice' ? o.workers : [1]).map((w) => [i, w] as const),
      )) {
        const label = workers > 1 ? `${impl} w${workers}` : impl;
        // With --repeat N, the run with the highest events/s is kept (every run must pass its checks).
        let r: ChildResult | null = null;
        for (let rep = 0; rep < o.repeat; rep++) {
          const { code, stdout } = await spawnChild(childArgs(o, impl, dist, batch, workers));
          const line = stdout.split('\n').find((l) => l.startsWith('{"child":true'));
          if (code !== 0 || line === undefined) {
            failures.push(`${label} ${dist} batch ${batch}: child exited with ${code}`);
            console.log(
              row([
                label,
                dist,
                String(batch),
                '',
                'FAILED',
                '',
                '',
                '',
                '',
                '',
                '',
                '',
                `exit code ${code}`,
              ]),
            );
            r = null;
            break;
          }
          const run = JSON.parse(line) as ChildResult;
          if (r === null || run.events_per_s > r.events_per_s) r = run;
        }
        if (r === null) continue;
        results.set(`${workers > 1 ? label : impl}|${dist}|${batch}`, r);
        let target = '';
        if (impl === 'sluice' && batch === 10_000)
          target = `≥${fmt(TARGET_EVENTS_PER_S)}: ${r.events_per_s >= TARGET_EVENTS_PER_S ? 'PASS' : 'MISS'}`;
        console.log(
          row([
            label,
            dist,
            fmt(batch),
            fmt(r.preload),
            fmt(r.events),
            fmt(r.events_per_s),
            fmt(r.events_per_cpu_s),
            fmt(r.p50_us, 1),
            fmt(r.p99_us, 1),
            fmt(r.bytes_per_group),
            r.view_bytes_per_group === null ? '' : fmt(r.view_bytes_per_group),
            fmt(r.groups),
            target,
          ]),
        );
        if (r.state !== '') console.log(`        ${r.state}`);
        console.log(
          JSON.stringify({
            bench: 'canonical',
            impl,
            dist,
            batch,
            ...(impl === 'sluice' ? { workers } : {}),
            events: r.events,
            ...(r.settle > 0 ? { settle: r.settle } : {}),
            events_per_s: r.events_per_s,
            p50_us: r.p50_us,
            p99_us: r.p99_us,
            bytes_per_group: r.bytes_per_group,
            ...(r.view_bytes_per_group === null ? {} : { view_bytes_per_group: r.view_bytes_per_group }),
            events_per_cpu_s: r.events_per_cpu_s,
            sweep_cpu_ms: r.sweep_cpu_ms,
            ...(r.cpu_split === null ? {} : { cpu_split: r.cpu_split }),
          }),
        );
      }
      // Every run must end with the same histogram (each already matched the reference).
      const runs = [...results.entries()].filter(([k]) => k.endsWith(`|${dist}|${batch}`));
      const [firstKey, first] = runs[0] ?? [];
      for (const [key, r] of runs.slice(1)) {
        if (first === undefined || JSON.stringify(r.histogram) === JSON.stringify(first.histogram)) continue;
        const [a, b] = [String(firstKey).split('|')[0], key.split('|')[0]];
        const msg = `MISMATCH: ${a} and ${b} histograms differ (${dist}, batch ${batch})`;
        failures.push(msg);
        console.log(
          `!!! ${msg}\n  ${a} ${JSON.stringify(first.histogram)}\n  ${b} ${JSON.stringify(r.histogram)}`,
        );
      }
    }
  }

  // Ratios of events/s (and of events per CPU-second) between two runs of the same dist and batch.
  const compare = (title: string, over: string, under: string, target: number | null): void => {
    const lines: string[] = [];
    for (const dist of o.dists)
      for (const batch of o.batches) {
        const a = results.get(`${over}|${dist}|${batch}`);
        const b = results.get(`${under}|${dist}|${batch}`);
        if (a === undefined || b === undefined) continue;
        const value = Math.round((a.events_per_s / b.events_per_s) * 100) / 100;
        const cpuValue = Math.round((a.events_per_cpu_s / b.events_per_cpu_s) * 100) / 100;
        const verdict = target === null ? '' : `target ≥${target}×: ${value >= target ? 'PASS' : 'MISS'}; `;
        lines.push(
          `  ${dist.padEnd(8)} batch ${fmt(batch).padStart(6)}: ${fmt(value, 2).padStart(8)}×  ` +
            `(${verdict}by CPU time ${fmt(cpuValue, 2)}×)`,
        );
        lines.push(
          JSON.stringify({ bench: 'canonical', ratio: title, dist, batch, value, value_cpu: cpuValue }),
        );
      }
    if (lines.length === 0) return;
    console.log(`\n${title} events/s:`);
    for (const l of lines) console.log(l);
  };
  compare('sluice/db-ivm', 'sluice', 'db-ivm', TARGET_RATIO);
  compare('sluice/map', 'sluice', 'map', null);
  for (const w of o.workers)
    if (w > 1)
      compare(`sluice w${w}/sluice`, `sluice w${w}`, 'sluice', w === 2 ? TARGET_WORKER_SPEEDUP : null);
  if (failures.length > 0) {
    console.log(`\nFAILED:\n  ${failures.join('\n  ')}`);
    return 1;
  }
  return 0;
}

// --numeric: SUM/AVG over NUMERIC(12,2) next to the integer version, in one process (bench/numeric.ts).
if (process.argv.includes('--numeric')) {
  const { runNumericBench } = await import('./numeric.ts');
  process.exit(await runNumericBench(process.argv.slice(2)));
}

const opts = parseArgs(process.argv.slice(2));
if (opts.child) {
  await runChild(opts);
} else {
  process.exitCode = await runParent(opts);
}
