// A large ingest request's journal text, written ahead of its epoch a slice per turn of the event
// loop (as its body was read, request-bodies.ts), so that the one block its epoch holds the loop
// no longer encodes the rows. Nothing is applied or journaled before the epoch: another request
// arriving meanwhile goes first, entirely, as its own epoch, and this one's epoch follows it.
import type { TableChanges } from '../exec/api.ts';
import type { Engine } from '../exec/engine.ts';
import { INSERTS_AHEAD_SLICE_ROWS, type InsertsAhead } from '../exec/engine-writes.ts';
import { yieldToLoop } from './runtime/base.ts';

/**
 * The journal text of `changes`' inserts into `table`, written a slice (INSERTS_AHEAD_SLICE_ROWS)
 * per turn of the event loop; undefined when the request is not one for it (small, with deletes,
 * not into a plain table, or nothing journals). Never throws: a row that fails is left to the
 * epoch, which refuses the request naming it.
 */
export async function writeInsertsAhead(
  engine: Engine,
  table: string,
  changes: TableChanges,
): Promise<{ readonly insertsAhead: InsertsAhead } | undefined> {
  const job = engine.insertsAhead(table, changes);
  if (job === null) return undefined;
  // A turn before each slice: the body's last slice, each of these and the epoch are each a turn.
  do await yieldToLoop();
  while (!job.step(INSERTS_AHEAD_SLICE_ROWS));
  await yieldToLoop();
  return { insertsAhead: job };
}
