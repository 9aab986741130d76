// Helpers of the epoch-bound suites (keyless and keyed joins, semi-joins, Top-N): a seeded draw, rows
// made by index, rows compared as sorted JSON (bigints marked), and the SluiceError a refused write
// throws.
import assert from 'node:assert/strict';
import { SluiceError } from '../../src/common/errors.ts';
import type { Row } from '../../src/common/types.ts';

/**
 * mulberry32, as a draw of an integer in [0, n): the same workload at every run of the seeded
 * random bound checks.
 */
export function drawFrom(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

export function rowsOf(n: number, make: (i: number) => Row): Row[] {
  return Array.from({ length: n }, (_, i) => make(i));
}

export function sorted(rows: readonly object[]): string[] {
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).sort();
}

/** The SluiceError `run` throws; fails the test when it throws none. */
export function refusal(run: () => unknown): SluiceError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof SluiceError, String(error));
    return error;
  }
  assert.fail('the write was not refused');
}

/** Distinct rows whose count differs between two snapshots of a view. */
export function changedRows(before: readonly string[], after: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const row of before) counts.set(row, (counts.get(row) ?? 0) + 1);
  for (const row of after) counts.set(row, (counts.get(row) ?? 0) - 1);
  let changed = 0;
  for (const c of counts.values()) if (c !== 0) changed++;
  return changed;
}
