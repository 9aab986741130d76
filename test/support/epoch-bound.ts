// Helpers of the epoch-bound suites (keyless and keyed joins): rows made by index, rows compared as
// sorted JSON (bigints marked), and the SluiceError a refused write throws.
import assert from 'node:assert/strict';
import { SluiceError } from '../../src/common/errors.ts';
import type { Row } from '../../src/common/types.ts';

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
