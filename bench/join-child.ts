// bench/join.ts's child process: one implementation, variant and batch size at a time, each phase timed
// and its result checked against a direct computation.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import {
  ReferenceTables,
  VARIANT_SQL,
  diffRows,
  digest,
  generatePhases,
  type JoinSpec,
  type Phase,
  type PhaseName,
  type Variant,
} from './join-workload.ts';
import { PREFIX_BATCH, type Impl, type Options } from './join-options.ts';
import { buildImpl, type JoinImpl } from './join-impls.ts';
import { getGc, settledMemory } from './bench-memory.ts';
import { collectAndSettle } from './gc-settle.ts';

export interface PhaseResult {
  phase: PhaseName;
  /** Changes applied untimed (in batches of PREFIX_BATCH) before the timed ones. */
  prefix: number;
  events: number;
  events_per_s: number;
  events_per_cpu_s: number;
  /** The process's CPU ms over the timed changes (every thread: the one events_per_cpu_s divides by). */
  cpu_ms: number;
  /**
   * The main thread's part of cpu_ms, and events by it: the rest is V8's background compiles and the
   * collector's helpers, which on a fresh engine's first phase are mostly re-optimising its generated
   * code, paid once by a long-running server (bench/README.md). Null where /proc is missing.
   */
  main_cpu_ms: number | null;
  events_per_main_cpu_s: number | null;
  p50_us: number;
  p99_us: number;
  /**
   * CPU the process used after the forced collection before the phase's clock started (the
   * collector's helper threads; 0 with --no-settle, where it falls inside the phase instead).
   */
  settle_cpu_ms: number;
  digest: string;
}

/** One run on a fresh instance. */
export interface RunResult {
  phases: PhaseResult[];
  /** Heap used + external after the run (workload dropped) minus before it (empty view built). */
  heap_delta_bytes: number;
  /** Live base rows (auctions + bids) at the end. */
  base_rows: number;
  /** Rows in the view at the end. */
  view_rows: number;
  /** Sluice: the view's operators' own estimate of their state (`viewNodeStats`). */
  state_bytes: number | null;
  /** Sluice: the join operator's part of it (its two arrangements). */
  join_state_bytes: number | null;
  state: string;
}

export interface ChildResult {
  child: true;
  impl: Impl;
  variant: Variant;
  batch: number;
  runs: RunResult[];
}

/** What a child reports when a phase's result is wrong or the implementation throws. */
export interface ChildFailure {
  child: true;
  failed: true;
  impl: Impl;
  variant: Variant;
  batch: number;
  sql: string;
  phase: PhaseName | 'create';
  message: string;
  code?: string;
  expected?: string;
  actual?: string;
  missing?: string[];
  extra?: string[];
}

class PhaseMismatch extends Error {
  constructor(
    readonly detail: Omit<ChildFailure, 'child' | 'failed' | 'impl' | 'variant' | 'batch' | 'sql'>,
  ) {
    super(detail.message);
  }
}

/**
 * The main thread's CPU time in ns (the scheduler's run time, /proc's schedstat): thread-cpu.ts's
 * ticks are 10 ms, a fifth of a 50 ms phase; null where /proc is missing.
 */
function mainThreadNs(): number | null {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx]!;
}

function cut<T>(xs: readonly T[], from: number, to: number, size: number): T[][] {
  const out: T[][] = [];
  for (let i = from; i < to; i += size) out.push(xs.slice(i, Math.min(i + size, to)));
  return out;
}

function specOf(o: Options): JoinSpec {
  return { auctions: o.auctions, bids: o.bids, mutate: o.mutate, categories: o.categories, seed: o.seed };
}

/** Expected digest after each phase, by a direct computation over the tables as they stand. */
function expectedDigests(
  phases: readonly Phase[],
  variant: Variant,
): { digests: string[]; baseRows: number } {
  const ref = new ReferenceTables();
  const digests: string[] = [];
  for (const ph of phases) {
    ref.apply(ph.changes);
    digests.push(digest(ref.result(variant)));
  }
  return { digests, baseRows: ref.auctions.size + ref.bids.size };
}

/**
 * Runs the phases on `p`: per phase the untimed prefix (batch 1 only), then the timed changes at
 * `batch`; after each phase the view is checked against `expected` (throws PhaseMismatch).
 */
async function runPhases(
  p: JoinImpl,
  phases: readonly Phase[],
  expected: readonly string[],
  variant: Variant,
  batch: number,
  slice: number,
  gc: () => void,
  session: Session | null,
  onPhase: (name: PhaseName) => void = () => {},
  checkAll = true,
  /** Wait for the forced collection's helper threads before the clock starts (gc-settle.ts). */
  settle = true,
): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (let pi = 0; pi < phases.length; pi++) {
    const { name, changes } = phases[pi]!;
    onPhase(name);
    const timedFrom = batch === 1 ? Math.max(0, changes.length - slice) : 0;
    for (const b of cut(changes, 0, timedFrom, PREFIX_BATCH)) p.apply(p.prepare(b));
    let prepared: unknown[] | null = cut(changes, timedFrom, changes.length, batch).map(p.prepare);
    const lat = new Float64Array(prepared.length);
    let settleCpuMs = 0;
    if (settle) settleCpuMs = (await collectAndSettle(gc)).cpuMs;
    else gc();
    if (session !== null) await session.post('Profiler.start');
    const cpu0 = process.cpuUsage();
    const main0 = mainThreadNs();
    const start = process.hrtime.bigint();
    for (let i = 0; i < prepared.length; i++) {
      const t0 = process.hrtime.bigint();
      p.apply(prepared[i]);
      lat[i] = Number(process.hrtime.bigint() - t0);
    }
    const end = process.hrtime.bigint();
    const wallNs = Number(end - start);
    // A `node --cpu-prof` profile's timestamps are µs on this clock: the window cuts the phase out.
    if (phaseWindows)
      process.stderr.write(`bench: phase ${name} from ${start / 1000n} to ${end / 1000n} µs\n`);
    const cpu = process.cpuUsage(cpu0);
    const main1 = mainThreadNs();
    const mainMs = main0 === null || main1 === null ? null : (main1 - main0) / 1e6;
    if (session !== null) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(`${profilePath}.${name}.cpuprofile`, JSON.stringify(profile));
    }
    prepared = null;
    const events = changes.length - timedFrom;
    const got = checkAll || pi === phases.length - 1 ? digest(p.rows()) : (expected[pi] as string);
    if (got !== expected[pi]) {
      // Recompute the phase's expected rows (the workload is still alive) for the report.
      const ref = new ReferenceTables();
      for (let j = 0; j <= pi; j++) ref.apply(phases[j]!.changes);
      const d = diffRows(ref.result(variant), p.rows());
      throw new PhaseMismatch({
        phase: name,
        message: `the view after phase "${name}" differs from the direct computation`,
        expected: `${d.expectedRows} rows (digest ${expected[pi]})`,
        actual: `${d.actualRows} rows (digest ${got})`,
        missing: d.missing,
        extra: d.extra,
      });
    }
    lat.sort();
    results.push({
      phase: name,
      prefix: timedFrom,
      events,
      events_per_s: Math.round(events / (wallNs / 1e9)),
      events_per_cpu_s: Math.round(events / ((cpu.user + cpu.system) / 1e6)),
      cpu_ms: Math.round((cpu.user + cpu.system) / 100) / 10,
      main_cpu_ms: mainMs === null ? null : Math.round(mainMs * 10) / 10,
      events_per_main_cpu_s: mainMs === null ? null : Math.round(events / (mainMs / 1e3)),
      p50_us: Math.round(percentile(lat, 0.5) / 10) / 100,
      p99_us: Math.round(percentile(lat, 0.99) / 10) / 100,
      settle_cpu_ms: Math.round(settleCpuMs * 10) / 10,
      digest: got,
    });
  }
  return results;
}

let profilePath = '';
let phaseWindows = false;

/** Every (variant, batch, impl) given, one after the other (one, except in --quick mode). */
export async function runChild(o: Options): Promise<void> {
  for (const variant of o.variants)
    for (const batch of o.batches) for (const impl of o.impls) await runCell(o, impl, variant, batch);
}

async function runCell(o: Options, impl: Impl, variant: Variant, batch: number): Promise<void> {
  phaseWindows = o.phaseWindows;
  const gc = getGc();
  const fail = (f: Omit<ChildFailure, 'child' | 'failed' | 'impl' | 'variant' | 'batch' | 'sql'>): void => {
    const out: ChildFailure = {
      child: true,
      failed: true,
      impl,
      variant,
      batch,
      sql: VARIANT_SQL[variant],
      ...f,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
    process.exitCode = 1;
  };
  const codeOf = (e: unknown): string | undefined =>
    typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : undefined;

  let phase: PhaseName | 'create' = 'create';
  try {
    // Warm-up on throwaway instances with a smaller, different workload, so the timed run sees
    // optimised code (their results are checked too).
    for (let w = 0; w < o.warmups; w++) {
      const warm = await buildImpl(impl, variant);
      const wspec: JoinSpec = {
        ...specOf(o),
        auctions: Math.ceil(o.auctions / 20),
        bids: Math.ceil(o.bids / 20),
        seed: o.seed + 1,
      };
      const wphases = generatePhases(wspec);
      const { digests } = expectedDigests(wphases, variant);
      await runPhases(
        warm,
        wphases,
        digests,
        variant,
        batch,
        Math.ceil(o.slice / 10),
        gc,
        null,
        undefined,
        true,
        false,
      );
    }

    // The expected views, once: generated, computed directly, dropped.
    const { digests, baseRows } = expectedDigests(generatePhases(specOf(o)), variant);

    let session: Session | null = null;
    if (o.cpuProfile !== null) {
      profilePath = `${o.cpuProfile}.${impl}-${variant}-${batch}`;
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
    }
    // Each repeat: a fresh instance, built before the baseline; the workload (regenerated, the same
    // rows) is made after it, so input rows an implementation keeps count as its state.
    const runs: RunResult[] = [];
    for (let rep = 0; rep < o.repeat; rep++) {
      phase = 'create';
      let p: JoinImpl | null = await buildImpl(impl, variant);
      const baseline = settledMemory(gc);
      let phases: Phase[] | null = generatePhases(specOf(o));
      phase = 'auctions';
      const results = await runPhases(
        p,
        phases,
        digests,
        variant,
        batch,
        o.slice,
        gc,
        rep === 0 ? session : null,
        (n) => {
          phase = n;
        },
        rep === 0, // every phase's view checked on the first run, the last phase's on the others
        o.settle,
      );
      phases = null;
      const after = settledMemory(gc);
      let viewRows = 0;
      for (const _ of p.rows()) viewRows++;
      const st = p.state?.() ?? null;
      runs.push({
        phases: results,
        heap_delta_bytes: after - baseline,
        base_rows: baseRows,
        view_rows: viewRows,
        state_bytes: st?.bytes ?? null,
        join_state_bytes: st?.joinBytes ?? null,
        state: st?.detail ?? '',
      });
      p = null;
    }
    session?.disconnect();
    const r: ChildResult = { child: true, impl, variant, batch, runs };
    process.stdout.write(JSON.stringify(r) + '\n');
  } catch (e) {
    if (e instanceof PhaseMismatch) fail(e.detail);
    else {
      const code = codeOf(e);
      if (e instanceof Error && e.stack !== undefined)
        process.stderr.write(`bench: ${impl} ${variant} batch ${batch}: ${e.stack}\n`);
      fail({
        phase,
        message: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
        ...(code !== undefined ? { code } : {}),
      });
    }
  }
}
