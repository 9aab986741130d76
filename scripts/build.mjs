// `npm run build`: compiles src/ to dist/ (ES modules, .d.ts, source maps; tsconfig.build.json) and
// copies what the compiled server reads at run time: the console's static assets and the browser
// client's TypeScript, which src/console/plugin.ts bundles with esbuild on first request (relative
// to its own file, so dist/console must hold the same layout as src/console).
import { cpSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(repo, 'src');
const dist = join(repo, 'dist');

// A clean tree each time: no output of a deleted or moved source file survives into the package.
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const built = spawnSync(process.execPath, [tsc, '-p', join(repo, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (built.status !== 0) {
  console.error('build: tsc failed');
  process.exit(built.status ?? 1);
}

const notTest = (path) => !path.endsWith('.test.ts');
for (const dir of ['console/assets', 'console/client', 'console/shared']) {
  cpSync(join(src, dir), join(dist, dir), { recursive: true, filter: notTest });
}
console.log('build: dist/ ready');
