// Summarises V8 sampling heap profiles (.heapprofile, e.g. `bench/topn.ts --alloc-profile DIR`): the
// bytes sampled by allocating function (self, as a share of all), or by source file.
//   node --import tsx bench/heapprofile-summary.ts [--top N] [--by-file] [--stacks] file.heapprofile...
// `--stacks` prints the heaviest allocating call chains (the four callers above each site) instead:
// an inlined builtin (`push`) is told apart by who called it. A profile written with the objects the
// collector freed kept in (as `--alloc-profile` writes it) counts garbage and kept state alike; one
// without them (node's `--heap-prof`) counts only what was alive when it was written.
import { readFileSync } from 'node:fs';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const args = process.argv.slice(2);
let top = 20;
let byFile = false;
let stacks = false;
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i] as string;
  if (a === '--top') top = Number(args[++i]);
  else if (a === '--by-file') byFile = true;
  else if (a === '--stacks') stacks = true;
  else if (a.startsWith('--')) throw new Error(`heapprofile-summary: unknown flag ${a}`);
  else files.push(a);
}
if (files.length === 0) throw new Error('heapprofile-summary: no .heapprofile given');

/** A frame's name: function and file (the file's path from src/ or bench/ on, else its last part). */
function frameName(frame: HeapNode['callFrame'], withFile: boolean): string {
  const url = frame.url;
  const at = Math.max(url.lastIndexOf('/src/'), url.lastIndexOf('/bench/'));
  const file = at >= 0 ? url.slice(at + 1) : (url.split('/').pop() ?? '');
  if (byFile) return file === '' ? '(native)' : file;
  const fn = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  return withFile && file !== '' ? `${fn} ${file}` : fn;
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };
  const sums = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, callers: readonly string[]): void => {
    const name = frameName(node.callFrame, true);
    total += node.selfSize;
    if (node.selfSize > 0) {
      const key = stacks ? [...callers.slice(-4), name].join(' < ') : name;
      sums.set(key, (sums.get(key) ?? 0) + node.selfSize);
    }
    const path = stacks ? [...callers, frameName(node.callFrame, false)] : callers;
    for (const child of node.children) walk(child, path);
  };
  walk(profile.head, []);
  console.log(`${file}: ${(total / 1e6).toFixed(1)} MB sampled`);
  for (const [name, bytes] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = `${((100 * bytes) / total).toFixed(1)}%`.padStart(6);
    console.log(`${share} ${(bytes / 1e6).toFixed(1).padStart(7)} MB  ${name}`);
  }
}
