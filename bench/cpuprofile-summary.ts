// Summarises V8 .cpuprofile files (from `node --cpu-prof`): top functions by self time.
//   node --import tsx bench/cpuprofile-summary.ts [--top N] [--under <function>] [--max-sample-us N] [--by-file]
//     [--window <from µs>-<to µs>] file.cpuprofile...
// `--by-file` sums self time by source file instead of by function (which stage of the pipeline a
// phase's time is in: the operator's files, the table's, the view Output's, GC).
// `--under recover` keeps only the samples with that function on the stack, plus the garbage
// collector's samples between its first and last one (a server start: recovery without module loading).
// `--window 123-456` keeps the samples taken in that stretch of the monotonic clock (µs, the profile's
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
  startTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

const args = process.argv.slice(2);
let top = 15;
let under: string | null = null;
// --max-sample-us: a sample's time counted up to this much. On a loaded machine the profiler's thread
// is itself held off a core, and the next sample then carries the whole gap (one sample of 281 ms
// once made a 1 us allocation the fourth line); 1500 with the default 1 ms interval keeps the rest.
let maxSampleUs = Infinity;
let byFile = false;
let window: [number, number] | null = null;
const files: string[] = [];
forEachFlag(args, (flag, value, _inline, arg) => {
  if (flag === '--top') top = intArg(flag, value());
  else if (flag === '--under') under = value();
  else if (flag === '--max-sample-us') maxSampleUs = intArg(flag, value());
  else if (flag === '--by-file') byFile = true;
  else if (flag === '--window') {
    const m = /^(\d+)-(\d+)$/.exec(value());
    if (m === null) throw new Error('bench: --window takes <from µs>-<to µs>');
    window = [Number(m[1]), Number(m[2])];
  } else if (flag.startsWith('--'))
    throw new Error(`bench: unknown option ${flag} (--top, --under, --max-sample-us, --by-file, --window)`);
  else files.push(arg);
});

for (const file of files) {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  // Self time per node: sum of the time deltas of the samples that landed in it.
  const selfUs = new Map<number, number>();
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  const keep = underFilter(prof, byId, samples);
  // Each sample's time: the profile's start plus the deltas up to it.
  let at = prof.startTime;
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i]!;
    at += deltas[i] ?? 0;
    if (window !== null && (at < window[0] || at > window[1])) continue;
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
  console.log(`${file}: ${(total / 1e3).toFixed(0)} ms sampled${under === null ? '' : ` under ${under}`}`);
  const rows = [...byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows)
    console.log(
      `  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1e3).toFixed(0).padStart(6)} ms  ${name}`,
    );
}

/** Which samples count: all, or (--under) those under the function and GC inside its window. */
function underFilter(
  prof: Profile,
  byId: Map<number, ProfileNode>,
  samples: number[],
): (i: number) => boolean {
  if (under === null) return () => true;
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, boolean>();
  const isUnder = (id: number): boolean => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const up = parent.get(id);
    const r = byId.get(id)?.callFrame.functionName === under || (up !== undefined && isUnder(up));
    memo.set(id, r);
    return r;
  };
  let first = -1;
  let last = -1;
  for (let i = 0; i < samples.length; i++) {
    if (!isUnder(samples[i]!)) continue;
    if (first < 0) first = i;
    last = i;
  }
  return (i) =>
    isUnder(samples[i]!) ||
    (i >= first && i <= last && byId.get(samples[i]!)?.callFrame.functionName === '(garbage collector)');
}
