// What the paired A/B benches (bench/*-ab.ts, canonical-alloc.ts) share: their `--name value` flags,
// a V8 without concurrent recompilation, and the `Engine` classes of two checkouts loaded from their
// sources, so this tree's engine and another checkout's run side by side in one process.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const args = process.argv.slice(2);

// With TurboFan compiling on a background thread, two copies of one tree paired in one process at
// load 7–14 gave per-process median ratios of 0.96–1.05 whose sign changed from process to process
// but held for every round of a process (when and on what feedback each side's code is optimised
// varies with the load, and stays); under `--no-concurrent-recompilation` the same pairs gave
// 0.99–1.015. It must be set at startup, so a process started without it runs itself again with it
// (the compile time is then the main thread's, charged to the side being compiled).
const STEADY_JIT = '--no-concurrent-recompilation';
if (!process.execArgv.includes(STEADY_JIT) && process.env['SLUICE_AB_CONCURRENT_JIT'] !== '1') {
  const child = spawnSync(process.execPath, [STEADY_JIT, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
  });
  process.exit(child.status ?? 1);
}

/** The value after `--name`, or `fallback`. */
export function flag(name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
}

/** This checkout's root (the tree the bench runs from). */
export const THIS_CHECKOUT = fileURLToPath(new URL('..', import.meta.url));

/** The `Engine` exported by the checkout at `dir` (its src/index.ts). */
export async function loadEngine<E>(dir: string): Promise<E> {
  return ((await import(pathToFileURL(resolve(dir, 'src/index.ts')).href)) as { Engine: E }).Engine;
}

/** `--swap`: this tree's side is loaded, built and run first, the pairing the other way round. */
export const SWAP = args.includes('--swap');

/**
 * The `Engine` classes of `--base <dir>` and of `--mine <dir>` (default this tree), loaded base first
 * (this tree first under `--swap`). The same directory twice is one module instance, so an A/A that
 * shows the pairing's noise needs a second copy of the tree (e.g. `git worktree add`).
 */
export async function loadPair<E>(bench: string, defaultBase = ''): Promise<{ Base: E; Mine: E }> {
  const baseDir = flag('base', defaultBase);
  if (baseDir === '') throw new Error(`${bench}: --base <checkout> is required`);
  const mineDir = flag('mine', THIS_CHECKOUT);
  if (SWAP) {
    const Mine = await loadEngine<E>(mineDir);
    return { Base: await loadEngine<E>(baseDir), Mine };
  }
  const Base = await loadEngine<E>(baseDir);
  return { Base, Mine: await loadEngine<E>(mineDir) };
}

/** The median of `xs` (the upper one of an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1] ?? Number.NaN;
}
