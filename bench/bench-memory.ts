// The benches' garbage collector handle and their measure of retained memory.
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';

/** global.gc, exposed at run time when node was started without --expose-gc. */
export function getGc(): () => void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return g;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Heap used plus off-heap memory (ArrayBuffers of typed arrays), after full collections. */
export function settledMemory(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}
