// Summarises V8 .cpuprofile files (from `node --cpu-prof`): top functions by self time.
//   node --import tsx bench/cpuprofile-summary.ts [--top N] [--under <function>] [--window <function>] [--max-sample-us N] [--by-file]
//     [--span <from µs>-<to µs>] file.cpuprofile...
// `--by-file` sums self time by source file instead of by function (which stage of the pipeline a
// phase's time is in: the operator's files, the table's, the view Output's, GC).
// `--under recover` keeps only the samples with that function on the stack, plus the garbage
// collector's samples between its first and last one (a server start: recovery without module loading).
// `--window ingestGrouped` keeps every sample (idle excepted) between the first and the last one with
// that function on the stack: the whole thread over a phase (HTTP parsing, GC, the group commit and
// the WAL checkpoint beside the ingest path), without start-up and shutdown.
// `--span 123-456` keeps the samples taken in that stretch of the monotonic clock (µs, the profile's
// own): one timed phase of `bench/join.ts --phase-windows`, which prints each phase's.
import { readFileSync } from 'node:fs';
import { forEachFlag, intArg } from './bench-args.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
}

const args = process.argv.slice(2);
let top = 15;
let under: string | null = null;
let windowOf: string | null = null;
let span: [number, number] | null = null;
// --max-sample-us: a sample's time counted up to this much. On a loaded machine the profiler's thread
// is itself held off a core, and the next sample then carries the whole gap (one sample of 281 ms
// once made a 1 us allocation the fourth line); 1500 with the default 1 ms interval keeps the rest.
let maxSampleUs = Infinity;
let byFile = false;
const files: string[] = [];
forEachFlag(args, (flag, value, _inline, arg) => {
  if (flag === '--top') top = intArg(flag, value());
  else if (flag === '--under') under = value();
  else if (flag === '--window') windowOf = value();
  else if (flag === '--max-sample-us') maxSampleUs = intArg(flag, value());
  else if (flag === '--by-file') byFile = true;
  else if (flag === '--span') {
    const m = /^(\d+)-(\d+)$/.exec(value());
    if (m === null) throw new Error('bench: --span takes <from µs>-<to µs>');
    span = [Number(m[1]), Number(m[2])];
  } else if (flag.startsWith('--'))
    throw new Error(
      `bench: unknown option ${flag} (--top, --under, --window, --span, --max-sample-us, --by-file)`,
    );
  else files.push(arg);
});

for (const file of files) {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  // Self time per node: sum of the time deltas of the samples that landed in it.
  const selfUs = new Map<number, number>();
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  const keepUnder = underFilter(prof, byId, samples, under);
  const inWindow = windowFilter(prof, byId, samples, windowOf);
  const keep = (i: number): boolean => keepUnder(i) && inWindow(i);
  // Each sample's time: the profile's start plus the deltas up to it.
  let at = prof.startTime;
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i]!;
    at += deltas[i] ?? 0;
    if (span !== null && (at < span[0] || at > span[1])) continue;
    if (!keep(i)) continue;
    const us = Math.min(maxSampleUs, Math.max(0, deltas[i + 1] ?? deltas[i] ?? 0));
    selfUs.set(id, (selfUs.get(id) ?? 0) + us);
  }
  const byFn = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/^.*\/(src|bench|node_modules)\//, '$1/');
    // Under tsx every function reports line 1 (its output is one line), so the line is only shown when known.
    const line = n.callFrame.lineNumber > 0 ? `:${n.callFrame.lineNumber + 1}` : '';
    const fn = n.callFrame.functionName || '(anonymous)';
    // By file: a function without a file (GC, generated code, the runtime) is its own entry.
    const name = byFile ? url || fn : `${fn} ${url}${line}`;
    byFn.set(name, (byFn.get(name) ?? 0) + us);
    total += us;
  }
  const within = windowOf === null ? '' : ` from the first to the last ${windowOf} (idle left out)`;
  console.log(
    `${file}: ${(total / 1e3).toFixed(0)} ms sampled${under === null ? '' : ` under ${under}`}${within}`,
  );
  const rows = [...byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows)
    console.log(
      `  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1e3).toFixed(0).padStart(6)} ms  ${name}`,
    );
}

/** Whether a node has the function on its stack (itself or a caller). */
function stackHolds(prof: Profile, byId: Map<number, ProfileNode>, fn: string): (id: number) => boolean {
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, boolean>();
  const isUnder = (id: number): boolean => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const up = parent.get(id);
    const r = byId.get(id)?.callFrame.functionName === fn || (up !== undefined && isUnder(up));
    memo.set(id, r);
    return r;
  };
  return isUnder;
}

/** The first and last sample index with the function on the stack (-1, -1 when none). */
function spanOf(samples: number[], isUnder: (id: number) => boolean): [number, number] {
  let first = -1;
  let last = -1;
  for (let i = 0; i < samples.length; i++) {
    if (!isUnder(samples[i]!)) continue;
    if (first < 0) first = i;
    last = i;
  }
  return [first, last];
}

/** Which samples count: all, or (--under) those under the function and GC inside its window. */
function underFilter(
  prof: Profile,
  byId: Map<number, ProfileNode>,
  samples: number[],
  fn: string | null,
): (i: number) => boolean {
  if (fn === null) return () => true;
  const isUnder = stackHolds(prof, byId, fn);
  const [first, last] = spanOf(samples, isUnder);
  return (i) =>
    isUnder(samples[i]!) ||
    (i >= first && i <= last && byId.get(samples[i]!)?.callFrame.functionName === '(garbage collector)');
}

/** Which samples count: all, or (--window) the busy ones from the first to the last under the function. */
function windowFilter(
  prof: Profile,
  byId: Map<number, ProfileNode>,
  samples: number[],
  fn: string | null,
): (i: number) => boolean {
  if (fn === null) return () => true;
  const [first, last] = spanOf(samples, stackHolds(prof, byId, fn));
  return (i) => i >= first && i <= last && byId.get(samples[i]!)?.callFrame.functionName !== '(idle)';
}
