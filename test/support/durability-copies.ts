// The durability attack's copies of a killed server's data directory (durability-run.ts): the journal
// alone (checkpoint.db removed: the whole journal replayed, or, once retention deleted its start, a
// refused start), and what a power loss could leave (checkpoint.db as of its last fsync, recorded by
// bench/fsync-shadow.c). Each is started on a copy, read over the API, and killed.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { killHard, spawnCrashable } from './crash-harness.ts';
import { type ServedState, readServed } from './durability-state.ts';
import { removeDir, tempDir } from '../server/helpers.ts';

const CHECKPOINT_FILES = ['checkpoint.db', 'checkpoint.db-wal', 'checkpoint.db-shm'];

export type CopyOutcome =
  /** The copy started; what it served, and its log (for the recovery checks). */
  | { readonly kind: 'served'; readonly served: ServedState; readonly output: string }
  /** A journal-only copy refused to start because retention deleted its start, as it must. */
  | { readonly kind: 'refused'; readonly through: number }
  | { readonly kind: 'failed'; readonly why: string };

/** How far journal retention deleted in a data directory (its meta row; 0: nothing deleted). */
export function truncatedThroughOf(dir: string): number {
  const db = new Database(join(dir, 'sluice.db'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = 'journal_truncated_through'").get() as
      { value: string } | undefined;
    return row === undefined ? 0 : Number(row.value);
  } finally {
    db.close();
  }
}

/** Starts a server on `copy` and reads what it serves; 'failed' when it does not start. */
async function serve(copy: string, args: readonly string[], what: string): Promise<CopyOutcome> {
  const outcome = await spawnCrashable(copy, { args });
  if (outcome.kind === 'exited') return { kind: 'failed', why: `${what} did not start:\n${outcome.output}` };
  try {
    const served = await readServed(outcome.server.base);
    return { kind: 'served', served, output: outcome.server.output() };
  } finally {
    await killHard(outcome.server);
  }
}

/**
 * A copy of `dataDir` without its checkpoint: the journal replayed whole. Once retention deleted
 * table batches, it must refuse to start with STATE_ERROR naming how far (replaying the rest would
 * serve a silently shorter history).
 */
export async function startJournalOnlyCopy(dataDir: string): Promise<CopyOutcome> {
  const copy = tempDir('sluice-durability-journal-');
  try {
    cpSync(dataDir, copy, { recursive: true });
    for (const f of CHECKPOINT_FILES) rmSync(join(copy, f), { force: true });
    const through = truncatedThroughOf(copy);
    const args = ['--checkpoint-interval-ms', '0', '--checkpoint-epochs', '1000000'];
    if (through === 0) return await serve(copy, args, 'the journal-only copy');
    const outcome = await spawnCrashable(copy, { args });
    if (outcome.kind === 'listening') {
      await killHard(outcome.server);
      return {
        kind: 'failed',
        why: `the journal-only copy started although retention deleted through offset ${through}`,
      };
    }
    if (!outcome.output.includes('STATE_ERROR') || !outcome.output.includes(`up to offset ${through}`))
      return {
        kind: 'failed',
        why: `the journal-only copy did not refuse with STATE_ERROR naming offset ${through}:\n${outcome.output}`,
      };
    return { kind: 'refused', through };
  } finally {
    removeDir(copy);
  }
}

/**
 * A copy of `dataDir` as a power loss at this moment could leave it, for what journal retention
 * risks: sluice.db as the kill left it (every deletion retention made kept) and checkpoint.db and its
 * WAL as of their last fsync (`shadowDir`; every unsynced checkpoint lost). It must start from its
 * checkpoint, and serve what the restart from the newest checkpoint does.
 */
export async function startPowerLossCopy(dataDir: string, shadowDir: string): Promise<CopyOutcome> {
  const copy = tempDir('sluice-durability-powerloss-');
  try {
    cpSync(dataDir, copy, { recursive: true });
    for (const f of CHECKPOINT_FILES) {
      rmSync(join(copy, f), { force: true });
      if (f !== 'checkpoint.db-shm' && existsSync(join(shadowDir, f)))
        cpSync(join(shadowDir, f), join(copy, f));
    }
    // Recovers from the checkpoint it holds; writes none of its own, and deletes nothing.
    const args = ['--checkpoint-interval-ms', '3600000', '--checkpoint-epochs', '1000000'];
    return await serve(copy, args, 'the power-loss copy (checkpoint.db as of its last fsync)');
  } finally {
    removeDir(copy);
  }
}
