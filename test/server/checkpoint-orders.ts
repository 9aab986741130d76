// The orders workload of the server's checkpoint tests: a keyed orders table with its per-seller
// totals, and orders loaded through the runtime's ingest in requests of 5,000.
import assert from 'node:assert/strict';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import { openRuntime, removeDir, sortedRows, tempDir } from './helpers.ts';

export const ORDERS_SCHEMA = `CREATE TABLE orders (id BIGINT NOT NULL, seller INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (id));
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY seller`;

/** Orders `from` … `from + count - 1` (seller: id % 997, amount: id * 7 % 100). */
export function orderRows(from: number, count: number): { id: number; seller: number; amount: number }[] {
  const out = [];
  for (let id = from; id < from + count; id++) out.push({ id, seller: id % 997, amount: (id * 7) % 100 });
  return out;
}

/** Ingests orders `from` … `from + count - 1`, 5,000 a request. */
export function loadOrders(rt: SluiceRuntime, from: number, count: number): void {
  for (let start = from; start < from + count; start += 5000) {
    rt.ingest('orders', { insert: orderRows(start, Math.min(5000, from + count - start)) });
  }
}

/**
 * Closes `rt` and opens its data directory `dir` again: `seller_totals` comes back as it was (from
 * the checkpoint written and the journal after it).
 */
export function assertReopensAlike(rt: SluiceRuntime, dir: string, checkpoint: CheckpointPolicy): void {
  let expected: unknown;
  try {
    expected = sortedRows(rt.engine.viewSnapshot('seller_totals').rows);
  } finally {
    rt.close();
  }
  const reopened = openRuntime(dir, { checkpoint });
  try {
    assert.deepEqual(sortedRows(reopened.engine.viewSnapshot('seller_totals').rows), expected);
  } finally {
    reopened.close();
  }
}

/**
 * Runs `body` on a runtime over a fresh data directory with the orders schema (`policy` its
 * checkpoints), then closes it (a second close, after assertReopensAlike, does nothing) and removes
 * the directory.
 */
export async function withOrdersRuntime(
  policy: CheckpointPolicy,
  body: (rt: SluiceRuntime, dir: string) => Promise<void>,
): Promise<void> {
  const dir = tempDir();
  try {
    const rt = openRuntime(dir, { checkpoint: policy });
    try {
      rt.executeScript(ORDERS_SCHEMA);
      await body(rt, dir);
    } finally {
      rt.close();
    }
  } finally {
    removeDir(dir);
  }
}
