// Summarises V8 .cpuprofile files (from `node --cpu-prof`): top functions by self time.
//   node --import tsx bench/cpuprofile-summary.ts [--top N] file.cpuprofile...
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

const args = process.argv.slice(2);
let top = 15;
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i]);
  else files.push(args[i]!);
}

for (const file of files) {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  // Self time per node: sum of the time deltas of the samples that landed in it.
  const selfUs = new Map<number, number>();
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, deltas[i + 1] ?? deltas[i] ?? 0));
  }
  const byFn = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/^.*\/(src|bench|node_modules)\//, '$1/');
    // Under tsx every function reports line 1 (its output is one line), so the line is only shown when known.
    const line = n.callFrame.lineNumber > 0 ? `:${n.callFrame.lineNumber + 1}` : '';
    const name = `${n.callFrame.functionName || '(anonymous)'} ${url}${line}`;
    byFn.set(name, (byFn.get(name) ?? 0) + us);
    total += us;
  }
  console.log(`${file}: ${(total / 1e3).toFixed(0)} ms sampled`);
  const rows = [...byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows)
    console.log(
      `  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1e3).toFixed(0).padStart(6)} ms  ${name}`,
    );
}
