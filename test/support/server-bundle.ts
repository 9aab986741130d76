// The `sluice` CLI bundled once per test process (esbuild, dependencies left external), so tests that
// start and kill many server processes pay ~0.3 s per start instead of tsx's ~3 s transform of the
// whole tree. The bundle lives in <repo>/.test-build/ so that its `../package.json` and
// node_modules resolve as from src/; it serves the API only (the console's client sources are
// resolved relative to src/console and are not used by these tests). The checkpoint writer
// thread's module is bundled beside it.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let built: Promise<string> | undefined;

/** The path of a bundled CLI (`node <path> start ...`), built on first use. */
export function serverBundle(): Promise<string> {
  built ??= (async () => {
    const dir = join(repo, '.test-build');
    mkdirSync(dir, { recursive: true });
    // One file per test process: parallel test files never overwrite a bundle another is running.
    const outfile = join(dir, `cli-${process.pid}.mjs`);
    await build({
      entryPoints: [join(repo, 'src', 'cli.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outfile,
      logLevel: 'warning',
    });
    // The checkpoint writer thread's module beside it, as the built package has it. Several test
    // processes build the same file: each writes its own copy and renames it into place.
    const worker = await build({
      entryPoints: [join(repo, 'src', 'server', 'runtime', 'checkpoint-worker.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      write: false,
      logLevel: 'warning',
    });
    const workerFile = join(dir, `checkpoint-worker-${process.pid}.tmp`);
    writeFileSync(workerFile, worker.outputFiles[0]?.text ?? '');
    renameSync(workerFile, join(dir, 'checkpoint-worker.mjs'));
    // Removed at exit; a leftover from a killed run is harmless (and gitignored).
    process.once('exit', () => rmSync(outfile, { force: true }));
    return outfile;
  })();
  return built;
}
