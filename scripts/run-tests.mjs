// Runs every test file explicitly: node 20's `node --test <dir>` can run zero tests and exit 0,
// so we expand the list ourselves, refuse an empty list, and check the runner's own count.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const roots = ['src', 'test'];
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.test.ts')) files.push(path);
  }
}
for (const root of roots) walk(root);
const only = process.argv.slice(2);
const selected = only.length > 0 ? files.filter((f) => only.some((o) => f.includes(o))) : files;
if (selected.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
console.log(`run-tests: ${selected.length} test files`);
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...selected], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
// The runner's summary (ℹ pass N / ℹ fail N) can be followed by a long failure list, so remember
// the last summary lines seen rather than a tail of the output.
let pending = '';
let passLine = '';
let failLine = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const lines = (pending + chunk.toString()).split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    if (/^ℹ pass \d+/.test(line)) passLine = line;
    if (/^ℹ fail \d+/.test(line)) failLine = line;
  }
});
child.on('close', (code) => {
  const passMatch = /ℹ pass (\d+)/.exec(passLine);
  const failMatch = /ℹ fail (\d+)/.exec(failLine);
  const passed = passMatch ? Number(passMatch[1]) : 0;
  const failed = failMatch ? Number(failMatch[1]) : 0;
  if (code === 0 && passed === 0) {
    console.error('run-tests: the runner reported zero passing tests');
    process.exit(1);
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code ?? 1);
});
