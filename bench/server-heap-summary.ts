// Summarises a .heapprofile (V8's sampling heap profiler: bench/server-heap-sampler.ts, or node's
// `--heap-prof`): the bytes allocated in total, the functions that allocated most themselves (self)
// and the stacks they were called from, and, with --batches N, bytes per request.
//
//   node --import tsx bench/server-heap-summary.ts FILE.heapprofile [--top 25] [--batches 1020] [--under fn]
import { readFileSync } from 'node:fs';

interface HeapNode {
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
}

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const file = args.find((a, i) => !a.startsWith('--') && (i === 0 || !args[i - 1]!.startsWith('--')));
if (file === undefined)
  throw new Error('usage: server-heap-summary.ts FILE [--top N] [--batches N] [--under fn]');
const top = Number(flag('--top') ?? 25);
const batches = flag('--batches') === undefined ? null : Number(flag('--batches'));
const under = flag('--under');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };

const frameName = (n: HeapNode): string => {
  const f = n.callFrame;
  const where =
    f.url === '' ? '' : ` ${f.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
  return `${f.functionName === '' ? '(anonymous)' : f.functionName}${where}`;
};

const self = new Map<string, number>();
// The nearest three callers of each self line, to tell apart one function's call sites.
const stacks = new Map<string, number>();
let total = 0;
const walk = (n: HeapNode, path: string[], inside: boolean): void => {
  const name = frameName(n);
  const now = inside || under === undefined || n.callFrame.functionName === under;
  if (now && n.selfSize > 0) {
    total += n.selfSize;
    self.set(name, (self.get(name) ?? 0) + n.selfSize);
    const key = [name, ...path.slice(-3).reverse()].join(' ← ');
    stacks.set(key, (stacks.get(key) ?? 0) + n.selfSize);
  }
  path.push(name);
  for (const c of n.children) walk(c, path, now);
  path.pop();
};
walk(profile.head, [], false);

const mb = (b: number): string => (b / 1048576).toFixed(1);
const per = (b: number): string => (batches === null ? '' : `  ${Math.round(b / batches / 1024)} KiB/batch`);
console.log(`sampled ${mb(total)} MB${under === undefined ? '' : ` under ${under}`}${per(total)}`);
console.log('\nself:');
for (const [name, b] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${mb(b).padStart(8)} MB ${((100 * b) / total).toFixed(1).padStart(5)}%${per(b)}  ${name}`);
console.log('\nself, by the three nearest callers:');
for (const [name, b] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${mb(b).padStart(8)} MB ${((100 * b) / total).toFixed(1).padStart(5)}%  ${name}`);
