// The shell's line history, kept between sessions in one file ($SLUICE_HISTORY, else
// ~/.sluice_history), bounded in entries and in what is read back, and private to the user (it can
// hold data typed into statements).
import { closeSync, openSync, readSync, fstatSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Entries kept (readline's historySize too). */
export const HISTORY_SIZE = 1000;
/** Bytes read back from the end of a history file at most, whatever its size. */
const MAX_READ = 1024 * 1024;

/** The history file: $SLUICE_HISTORY (empty: no history), else ~/.sluice_history. */
export function historyPath(env: NodeJS.ProcessEnv = process.env): string | null {
  const set = env.SLUICE_HISTORY;
  if (set !== undefined) return set === '' ? null : set;
  return join(homedir(), '.sluice_history');
}

/** The saved entries, newest first (readline's order); none if the file is missing or unreadable. */
export function loadHistory(path: string, size = HISTORY_SIZE): string[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const length = fstatSync(fd).size;
    const take = Math.min(length, MAX_READ);
    const buffer = Buffer.alloc(take);
    readSync(fd, buffer, 0, take, length - take);
    const lines = buffer.toString('utf8').split('\n');
    if (take < length) lines.shift(); // the first line may be cut
    return lines
      .filter((l) => l.trim() !== '')
      .slice(-size)
      .reverse();
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}

/** Writes the entries (newest first, as readline holds them), at most `size`, replacing the file. */
export function saveHistory(path: string, entries: readonly string[], size = HISTORY_SIZE): void {
  const lines = entries.slice(0, size).reverse();
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, lines.length === 0 ? '' : lines.join('\n') + '\n', { mode: 0o600 });
  renameSync(temporary, path);
}
