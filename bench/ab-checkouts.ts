// What the paired A/B benches (bench/*-ab.ts, canonical-alloc.ts) share: their `--name value` flags,
// and the `Engine` class of a checkout loaded from its source, so this tree's engine and another
// checkout's run side by side in one process.
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const args = process.argv.slice(2);

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
