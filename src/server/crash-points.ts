// Named crash points for the crash-equivalence tests: with SLUICE_CRASH_POINT=<name>[:<n>] the
// process kills itself with SIGKILL the n-th time (default: the first) execution passes <name>, so a
// test can stop the server at an exact moment no outside signal could hit. Unset (production), a
// pass costs one comparison.
import { writeSync } from 'node:fs';

export const CRASH_POINTS = [
  /** An engine call updated the state and appended to the journal; nothing is committed yet. */
  'before-commit',
  /** The transaction committed; no answer was sent and no subscriber was told. */
  'after-commit',
  /** Some subscribers were sent an epoch's changes, others not yet. */
  'while-publishing',
  /**
   * Inside the checkpoint transaction, after its state entries were written, before its header (in
   * the writer thread for a sliced checkpoint, which counts its own passes).
   */
  'during-checkpoint',
  /** Between two slices of a checkpoint write (epochs may have run since it was taken). */
  'between-checkpoint-slices',
  /** The checkpoint transaction committed. */
  'after-checkpoint',
  /** Journal retention deleted a slice of table batches; its transaction is not committed yet. */
  'during-journal-trim',
  /** A new tenant's directory and runtime exist; the row that lists it is not written yet. */
  'tenant-before-listed',
] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

function parse(spec: string | undefined): { point: CrashPoint; remaining: number } | null {
  if (spec === undefined || spec === '') return null;
  const [name, count] = spec.split(':');
  if (!(CRASH_POINTS as readonly string[]).includes(name ?? '')) {
    throw new Error(`SLUICE_CRASH_POINT names no crash point: "${spec}" (known: ${CRASH_POINTS.join(', ')})`);
  }
  const n = count === undefined ? 1 : Number(count);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`SLUICE_CRASH_POINT count must be ≥ 1: "${spec}"`);
  return { point: name as CrashPoint, remaining: n };
}

const armed = parse(process.env.SLUICE_CRASH_POINT);

export function crashPoint(point: CrashPoint): void {
  if (armed === null || armed.point !== point) return;
  armed.remaining -= 1;
  if (armed.remaining > 0) return;
  // A direct write: from the checkpoint writer thread, process.stderr goes through the main thread,
  // and the kill would come first.
  writeSync(2, `sluice: crash point "${point}" reached; killing the process\n`);
  process.kill(process.pid, 'SIGKILL');
}
