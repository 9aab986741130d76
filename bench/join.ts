// The join benchmark: auctions ⋈ bids (bids.auction = auctions.id) maintained incrementally, with a
// GROUP BY on top (agg), the join view itself (join) and a LEFT JOIN from auctions (left). Three
// phases: load the auctions, insert the bids (the probe side), then updates and deletes on both
// sides. Sluice in-process beside @tanstack/db-ivm and a hand-written Map implementation (the
// naive ceiling), each (impl, variant, batch) in a fresh child process that runs every repeat on a fresh
// instance; every phase's
// result is checked against a direct computation and the implementations against each other.
// See bench/README.md.
//
//   node --import tsx bench/join.ts                     # the full matrix
//   node --import tsx bench/join.ts --quick             # a 40th of the rows, one repeat, one process (< 60 s)
//   node --import tsx bench/join.ts --peers             # db-ivm and the Map only
//   node --import tsx bench/join.ts --impl sluice --variant agg --batch 10000 --repeat 1
//   node --import tsx bench/join.ts --impl sluice,db-ivm --variant agg --batch 100 --warmups 2   # the timed instance the third
//   node --cpu-prof --import tsx bench/join.ts --impl sluice --variant agg --batch 100 --repeat 1 --phase-windows
//     # each timed phase's window on the profile's clock: bench/cpuprofile-summary.ts --span <from>-<to>
//
// Every flag can also be given as an environment variable: BENCH_QUICK=1, BENCH_IMPL=sluice,
// BENCH_BATCH=100, BENCH_REPEAT=5, ... (flags win).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VARIANT_SQL, type PhaseName, type Variant } from './join-workload.ts';
import { envArgs } from './bench-args.ts';
import { PHASES, PREFIX_BATCH, SWITCHES, parseArgs, type Impl, type Options } from './join-options.ts';
import {
  runChild,
  type ChildFailure,
  type ChildResult,
  type PhaseResult,
  type RunResult,
} from './join-child.ts';

// ---------------------------------------------------------------------------------------------
// Parent: children, medians over repeats, the table, JSON lines and ratios.

function childArgs(
  o: Options,
  impls: readonly Impl[],
  variants: readonly Variant[],
  batches: readonly number[],
): string[] {
  const exec = [...process.execArgv];
  if (!exec.some((a) => a.includes('expose-gc'))) exec.push('--expose-gc');
  if (!exec.some((a, i) => a === 'tsx' && exec[i - 1] === '--import') && !exec.includes('--import=tsx'))
    exec.push('--import', 'tsx');
  const args = [
    fileURLToPath(import.meta.url),
    '--child',
    `--impl=${impls.join(',')}`,
    `--variant=${variants.join(',')}`,
    `--batch=${batches.join(',')}`,
    `--auctions=${o.auctions}`,
    `--bids=${o.bids}`,
    `--mutate=${o.mutate}`,
    `--categories=${o.categories}`,
    `--slice=${o.slice}`,
    `--seed=${o.seed}`,
    `--repeat=${o.repeat}`,
  ];
  args.push(`--warmups=${o.warmups}`);
  if (o.phaseWindows) args.push('--phase-windows');
  if (!o.settle) args.push('--no-settle');
  if (o.cpuProfile !== null) args.push(`--cpu-profile=${o.cpuProfile}`);
  return [...exec, ...args];
}

function spawnChild(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    // The child must not read BENCH_* again: its command line is complete.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BENCH_')));
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
    let stdout = '';
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (d: string) => (stdout += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function row(cells: string[]): string {
  const widths = [7, 7, 7, 10, 9, 9, 12, 12, 9, 9, 12, 10, 11, 24];
  return cells.map((c, i) => (i < 4 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' ');
}

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function runParent(o: Options): Promise<number> {
  const startLoad = loadavg();
  console.log(
    `Sluice join bench: ${fmt(o.auctions)} auctions ⋈ ${fmt(o.bids)} bids on bids.auction = auctions.id, ` +
      `${o.categories} categories, ${Math.round(o.mutate * 100)}% of each side updated/deleted, seed ${o.seed}, ` +
      `median of ${o.repeat} run${o.repeat > 1 ? 's' : ''}${o.quick ? ', QUICK (every cell in one process: heap deltas are approximate)' : ''}; load average ${startLoad}`,
  );
  for (const v of o.variants) console.log(`  ${v.padEnd(4)}  ${VARIANT_SQL[v]}`);
  console.log(
    `batch 1 times only the last ${fmt(o.slice)} changes of each phase (the rest of the phase is applied ` +
      `first, untimed, in batches of ${fmt(PREFIX_BATCH)}); batches 100 and 10,000 time every change.\n` +
      `events/s: changes ÷ wall time (bids phase: probe-side events); ev/cpu-s: the same by CPU time.\n` +
      `cpu ms: the process's CPU over the timed changes; main ms: the main thread's part of it (the rest is\n` +
      `V8's background compiles and collector helpers); ev/main-s: changes ÷ the main thread's CPU.\n`,
  );
  console.log(
    row([
      'impl',
      'variant',
      'batch',
      'phase',
      'events',
      'prefix',
      'events/s',
      'ev/cpu-s',
      'cpu ms',
      'main ms',
      'ev/main-s',
      'p50 µs',
      'p99 µs',
      'runs',
    ]),
  );

  type Key = string;
  const results = new Map<Key, RunResult[]>();
  const failures: string[] = [];
  const k = (impl: Impl, variant: Variant, batch: number): Key => `${impl}|${variant}|${batch}`;
  const phaseMedian = (rs: readonly RunResult[], phase: PhaseName, f: (p: PhaseResult) => number): number =>
    median(rs.map((r) => f(r.phases.find((p) => p.phase === phase)!)));
  // The main thread's figures are null where /proc is missing (then in every run).
  const phaseMedianOrNull = (
    rs: readonly RunResult[],
    phase: PhaseName,
    f: (p: PhaseResult) => number | null,
  ): number | null => {
    const xs = rs.map((r) => f(r.phases.find((p) => p.phase === phase)!));
    return xs.some((x) => x === null) ? null : median(xs as number[]);
  };
  const fmtOrNa = (n: number | null, digits = 0): string => (n === null ? 'n/a' : fmt(n, digits));

  // One child per (impl, variant, batch); in --quick mode one child runs every cell (the engine's
  // modules load once). A (variant, batch) is reported as soon as all its cells have run.
  const failed = new Set<Key>();
  const cells = o.variants.flatMap((variant) => o.batches.map((batch) => ({ variant, batch })));
  const jobs = o.quick
    ? [{ impls: o.impls, variants: o.variants, batches: o.batches }]
    : cells.flatMap(({ variant, batch }) =>
        o.impls.map((i) => ({ impls: [i], variants: [variant], batches: [batch] })),
      );
  const pending = new Set(cells.map(({ variant, batch }) => `${variant}|${batch}`));
  for (const job of jobs) {
    const { code, stdout } = await spawnChild(childArgs(o, job.impls, job.variants, job.batches));
    const lines = stdout
      .split('\n')
      .filter((l) => l.startsWith('{"child":true'))
      .map((l) => JSON.parse(l) as ChildResult | ChildFailure);
    for (const variant of job.variants)
      for (const batch of job.batches)
        for (const impl of job.impls) {
          const parsed = lines.find((l) => l.impl === impl && l.variant === variant && l.batch === batch);
          if (parsed === undefined || 'failed' in parsed) {
            failed.add(k(impl, variant, batch));
            const f = parsed ?? null;
            const msg =
              f === null
                ? `${impl} ${variant} batch ${batch}: no result (child exited with ${code})`
                : `${impl} ${variant} batch ${batch}, phase ${f.phase}${f.code !== undefined ? ` [${f.code}]` : ''}: ` +
                  `${f.message}\n    SQL: ${f.sql}` +
                  (f.expected !== undefined ? `\n    expected ${f.expected}\n    actual   ${f.actual}` : '') +
                  (f.missing !== undefined && f.missing.length > 0
                    ? `\n    missing: ${f.missing.join(' ')}`
                    : '') +
                  (f.extra !== undefined && f.extra.length > 0 ? `\n    extra:   ${f.extra.join(' ')}` : '');
            failures.push(msg);
            console.log(`!!! FAILED ${msg}`);
            if (f !== null) console.log(JSON.stringify({ bench: 'join', failure: f }));
          } else results.set(k(impl, variant, batch), parsed.runs);
        }
    for (const variant of job.variants)
      for (const batch of job.batches) {
        const done = o.impls.every(
          (i) => results.has(k(i, variant, batch)) || failed.has(k(i, variant, batch)),
        );
        if (done && pending.delete(`${variant}|${batch}`)) report(variant, batch);
      }
  }

  function report(variant: Variant, batch: number): void {
    for (const impl of o.impls) {
      const rs = results.get(k(impl, variant, batch));
      if (rs === undefined) continue;
      for (const phase of PHASES) {
        const first = rs[0]!.phases.find((p) => p.phase === phase)!;
        const eps = phaseMedian(rs, phase, (p) => p.events_per_s);
        const cps = phaseMedian(rs, phase, (p) => p.events_per_cpu_s);
        const p50 = phaseMedian(rs, phase, (p) => p.p50_us);
        const p99 = phaseMedian(rs, phase, (p) => p.p99_us);
        const settleCpu = phaseMedian(rs, phase, (p) => p.settle_cpu_ms);
        const cpuMs = phaseMedian(rs, phase, (p) => p.cpu_ms);
        const mainMs = phaseMedianOrNull(rs, phase, (p) => p.main_cpu_ms);
        const mps = phaseMedianOrNull(rs, phase, (p) => p.events_per_main_cpu_s);
        const runs = rs.map((r) => r.phases.find((p) => p.phase === phase)!.events_per_s);
        console.log(
          row([
            impl,
            variant,
            fmt(batch),
            phase,
            fmt(first.events),
            fmt(first.prefix),
            fmt(eps),
            fmt(cps),
            fmt(cpuMs, 1),
            fmtOrNa(mainMs, 1),
            fmtOrNa(mps),
            fmt(p50, 1),
            fmt(p99, 1),
            runs.length > 1 ? runs.map((x) => `${Math.round(x / 1000)}k`).join(' ') : '',
          ]),
        );
        console.log(
          JSON.stringify({
            bench: 'join',
            impl,
            variant,
            batch,
            phase,
            events: first.events,
            prefix: first.prefix,
            events_per_s: Math.round(eps),
            events_per_cpu_s: Math.round(cps),
            cpu_ms: cpuMs,
            main_cpu_ms: mainMs,
            events_per_main_cpu_s: mps === null ? null : Math.round(mps),
            p50_us: p50,
            p99_us: p99,
            settle_cpu_ms: settleCpu,
            repeats: rs.length,
          }),
        );
      }
      const heap = median(rs.map((r) => r.heap_delta_bytes));
      const last = rs[rs.length - 1]!;
      const stateBytes = last.state_bytes;
      console.log(
        `        ${impl} state: heap delta ${fmt(heap / 2 ** 20, 1)} MiB = ${fmt(heap / last.base_rows)} B per base row ` +
          `(${fmt(last.base_rows)} rows; view ${fmt(last.view_rows)} rows)` +
          (stateBytes !== null
            ? `; engine's estimate: view state ${fmt(stateBytes / 2 ** 20, 1)} MiB, join arrangements ` +
              `${fmt(last.join_state_bytes! / last.base_rows)} B per arranged row`
            : ''),
      );
      if (last.state !== '') console.log(`        ${last.state}`);
      console.log(
        JSON.stringify({
          bench: 'join',
          impl,
          variant,
          batch,
          heap_delta_bytes: Math.round(heap),
          heap_bytes_per_row: Math.round(heap / last.base_rows),
          base_rows: last.base_rows,
          view_rows: last.view_rows,
          ...(stateBytes !== null
            ? {
                state_bytes: stateBytes,
                join_state_bytes: last.join_state_bytes,
                join_state_bytes_per_arranged_row: Math.round(last.join_state_bytes! / last.base_rows),
              }
            : {}),
        }),
      );
    }
    // Every implementation must end every phase with the same view (each matched the reference).
    const digestsOf = (impl: Impl): string | null => {
      const rs = results.get(k(impl, variant, batch));
      if (rs === undefined) return null;
      return rs.map((r) => r.phases.map((p) => p.digest).join(',')).join(';');
    };
    const ref = o.impls.map(digestsOf).find((d) => d !== null);
    for (const impl of o.impls) {
      const d = digestsOf(impl);
      if (d === null || ref === undefined) continue;
      if (d.split(';')[0] !== ref!.split(';')[0] || new Set(d.split(';')).size !== 1) {
        const msg = `MISMATCH: ${impl}'s views differ from the other implementations' (${variant}, batch ${batch})`;
        failures.push(msg);
        console.log(`!!! ${msg}\n  ${impl} ${d}\n  other ${ref}`);
      }
    }
  }

  const ratioLines: string[] = [];
  for (const peer of ['db-ivm', 'map'] as const) {
    for (const variant of o.variants)
      for (const batch of o.batches) {
        const s = results.get(k('sluice', variant, batch));
        const d = results.get(k(peer, variant, batch));
        if (s === undefined || d === undefined) continue;
        const cells: string[] = [];
        for (const phase of PHASES) {
          const value =
            phaseMedian(s, phase, (p) => p.events_per_s) / phaseMedian(d, phase, (p) => p.events_per_s);
          const valueCpu =
            phaseMedian(s, phase, (p) => p.events_per_cpu_s) /
            phaseMedian(d, phase, (p) => p.events_per_cpu_s);
          const sMain = phaseMedianOrNull(s, phase, (p) => p.events_per_main_cpu_s);
          const dMain = phaseMedianOrNull(d, phase, (p) => p.events_per_main_cpu_s);
          const valueMain = sMain === null || dMain === null ? null : sMain / dMain;
          cells.push(`${phase} ${fmt(value, 2)}× (cpu ${fmt(valueCpu, 2)}×, main ${fmtOrNa(valueMain, 2)}×)`);
          ratioLines.push(
            JSON.stringify({
              bench: 'join',
              ratio: `sluice/${peer}`,
              variant,
              batch,
              phase,
              value: Math.round(value * 100) / 100,
              value_cpu: Math.round(valueCpu * 100) / 100,
              value_main_cpu: valueMain === null ? null : Math.round(valueMain * 100) / 100,
            }),
          );
        }
        ratioLines.push(
          `  sluice/${peer.padEnd(6)} ${variant.padEnd(4)} batch ${fmt(batch).padStart(6)}: ${cells.join('  ')}`,
        );
      }
  }
  if (ratioLines.length > 0) {
    console.log('\nratios of median events/s (by wall time; cpu: by process CPU; main: by main-thread CPU):');
    for (const l of ratioLines) console.log(l);
  }
  const endLoad = loadavg();
  console.log(JSON.stringify({ bench: 'join', loadavg_start: startLoad, loadavg_end: endLoad }));
  console.log(`load average: start ${startLoad}, end ${endLoad}`);
  if (failures.length > 0) {
    console.log(`\nFAILED:\n  ${failures.join('\n  ')}`);
    return 1;
  }
  return 0;
}

const opts = parseArgs([...envArgs(SWITCHES), ...process.argv.slice(2)]);
if (opts.child) {
  await runChild(opts);
} else {
  process.exitCode = await runParent(opts);
}
