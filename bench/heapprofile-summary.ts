// Summarises V8 sampling heap profiles (.heapprofile: `bench/topn.ts --alloc-profile DIR`, the server's
// preload bench/server-heap-sampler.ts, or node's `--heap-prof`): the bytes sampled by allocating
// function (self, as a share of all), by source file, or by call chain.
//
//   node --import tsx bench/heapprofile-summary.ts [--top N] [--by-file] [--stacks] [--batches N] [--under fn] file.heapprofile...
//
// `--stacks` prints the heaviest allocating call chains (the three callers nearest each site) instead:
// an inlined builtin (`push`) is told apart by who called it. `--batches N` adds bytes per request (a
// server run's requests, start-up included); `--under fn` counts only what `fn` and its callees
// allocated. A profile written with the objects the collector freed kept in (as both of this
// directory's samplers write it) counts garbage and kept state alike; one without them (node's
// `--heap-prof`) counts only what was alive when it was written.
import { readFileSync } from 'node:fs';

interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
}

const args = process.argv.slice(2);
let top = 20;
let byFile = false;
let stacks = false;
let batches: number | null = null;
let under: string | null = null;
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i] as string;
  if (a === '--top') top = Number(args[++i]);
  else if (a === '--by-file') byFile = true;
  else if (a === '--stacks') stacks = true;
  else if (a === '--batches') batches = Number(args[++i]);
  else if (a === '--under') under = args[++i] ?? null;
  else if (a.startsWith('--')) throw new Error(`heapprofile-summary: unknown flag ${a}`);
  else files.push(a);
}
if (files.length === 0) throw new Error('heapprofile-summary: no .heapprofile given');
if (batches !== null && !(batches > 0))
  throw new Error('heapprofile-summary: --batches takes a positive count');

/**
 * A frame's name: function and file (the path from src/, bench/ or node_modules/ on), with the line where
 * it is known (tsx compiles each file to one line: only a bundle or plain JavaScript has lines).
 */
function frameName(frame: HeapNode['callFrame'], withFile: boolean): string {
  const at = /\/(src|bench|node_modules)\//.exec(frame.url);
  const file = at !== null ? frame.url.slice(at.index + 1) : (frame.url.split('/').pop() ?? '');
  if (byFile) return file === '' ? '(native)' : file;
  const fn = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  const line = frame.lineNumber > 0 ? `:${frame.lineNumber + 1}` : '';
  return withFile && file !== '' ? `${fn} ${file}${line}` : fn;
}

const mb = (bytes: number): string => (bytes / 1e6).toFixed(1).padStart(7);
const perBatch = (bytes: number): string =>
  batches === null ? '' : `  ${Math.round(bytes / batches / 1024)} KiB/batch`;

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };
  const sums = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, callers: string[], inside: boolean): void => {
    const name = frameName(node.callFrame, true);
    const counted = inside || under === null || node.callFrame.functionName === under;
    if (counted && node.selfSize > 0) {
      total += node.selfSize;
      const key = stacks ? [name, ...callers.slice(-3).reverse()].join(' ← ') : name;
      sums.set(key, (sums.get(key) ?? 0) + node.selfSize);
    }
    callers.push(name);
    for (const child of node.children) walk(child, callers, counted);
    callers.pop();
  };
  walk(profile.head, [], false);
  console.log(
    `${file}: ${mb(total).trim()} MB sampled${under === null ? '' : ` under ${under}`}${perBatch(total)}`,
  );
  for (const [name, bytes] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = `${((100 * bytes) / Math.max(total, 1)).toFixed(1)}%`.padStart(6);
    console.log(`${share} ${mb(bytes)} MB${perBatch(bytes)}  ${name}`);
  }
}
