// Lists a .cpuprofile's stalls: stretches of the thread with no idle sample longer than a bound,
// each with when it began and what ran in it (functions by self and by inclusive time).
//   node --import tsx bench/cpuprofile-stalls.ts [--min-ms 5] [--t0 <µs>] [--from <s>] [--top 6] file.cpuprofile
// `--t0` is the latency line's `t0_monotonic_us` from bench/server-e2e.ts: the profile's timestamps
// are on the same monotonic clock, so each stall is then placed in seconds into the latency phase.
// Only a profile taken with a fine `--cpu-prof-interval` (e.g. 250 µs) resolves stalls of a few ms.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

const args = process.argv.slice(2);
let minMs = 5;
let t0: number | null = null;
let top = 6;
let fromS = -Infinity;
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--min-ms') minMs = Number(args[++i]);
  else if (args[i] === '--t0') t0 = Number(args[++i]);
  else if (args[i] === '--top') top = Number(args[++i]);
  else if (args[i] === '--from') fromS = Number(args[++i]);
  else files.push(args[i]!);
}

const frameName = (n: ProfileNode): string => {
  const file = n.callFrame.url.split('/').slice(-2).join('/');
  const { functionName, lineNumber, columnNumber } = n.callFrame;
  // tsx emits a module on one line: the column tells its functions apart.
  const where = file === '' ? '' : ` ${file}:${lineNumber + 1}:${(columnNumber ?? 0) + 1}`;
  return `${functionName || '(anonymous)'}${where}`;
};

for (const file of files) {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  const at: number[] = [];
  let t = prof.startTime;
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    at.push(t);
  }
  const idle = (i: number): boolean => byId.get(samples[i]!)?.callFrame.functionName === '(idle)';
  const origin = t0 ?? prof.startTime;
  let i = 0;
  while (i < samples.length) {
    if (idle(i)) {
      i++;
      continue;
    }
    const from = i;
    while (i < samples.length && !idle(i)) i++;
    // The stall lasts from its first busy sample to the next idle one.
    const endUs = at[i] ?? at[at.length - 1]!;
    const ms = (endUs - at[from]!) / 1000;
    if (ms < minMs || (at[from]! - origin) / 1e6 < fromS) continue;
    const self = new Map<string, number>();
    const inclusive = new Map<string, number>();
    for (let k = from; k < i; k++) {
      const w = ((at[k + 1] ?? at[k]!) - at[k]!) / 1000;
      const leaf = byId.get(samples[k]!)!;
      self.set(frameName(leaf), (self.get(frameName(leaf)) ?? 0) + w);
      const seen = new Set<string>();
      for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
        const name = frameName(byId.get(id)!);
        if (seen.has(name)) continue;
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + w);
      }
    }
    const fmt = (m: Map<string, number>): string =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([name, w]) => `${w.toFixed(1)} ${name}`)
        .join(' | ');
    console.log(`${((at[from]! - origin) / 1e6).toFixed(3)}s ${ms.toFixed(1)} ms`);
    console.log(`  self: ${fmt(self)}`);
    const inc = new Map([...inclusive].filter(([name]) => !name.startsWith('(root)')));
    console.log(`  incl: ${fmt(inc)}`);
  }
}
