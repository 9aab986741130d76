// Journal retention: table batches the durable checkpoint covers are deleted once they are older
// than the retention, a bounded slice per call. The journal is otherwise kept forever (the HTTP
// bench's ingest writes gigabytes an hour), and what is deleted is only ever a prefix of the table
// batches: recovery from the checkpoint reads the DDL (all kept), the last clock setting at or
// before the checkpoint (ticks are kept) and the entries after the checkpoint (never deleted).
// What retention costs is the whole-journal replay, the fallback when the checkpoint cannot be
// used: after a truncation that fallback is a refused start (`truncatedThrough`, recovery.ts).
import type { SqliteStore } from './sqlite-store.ts';

/** The meta row recording the highest journal offset at or below which table batches were deleted. */
const TRUNCATED_THROUGH_KEY = 'journal_truncated_through';
/** About this many payload bytes a slice deletes at most (at least one batch). */
const SLICE_BYTES = 4 * 1024 * 1024;

export interface JournalTrimSlice {
  /** Table batches deleted by this slice. */
  readonly deleted: number;
  /** Table batches at or below this offset are gone (0: none ever deleted). */
  readonly truncatedThrough: number;
  /** Whether more batches are due now (the caller runs another slice on a later turn). */
  readonly more: boolean;
}

export class JournalRetention {
  private readonly atOrAfterStmt;
  private readonly lastOffsetStmt;
  private readonly sliceStmt;
  private readonly deleteStmt;

  constructor(private readonly store: SqliteStore) {
    const db = store.db;
    // Point reads by offset (the journal's rowid): the search for what is due never scans the journal.
    this.atOrAfterStmt = db.prepare(
      'SELECT log_offset AS o, at FROM journal WHERE log_offset >= ? ORDER BY log_offset LIMIT 1',
    );
    this.lastOffsetStmt = db.prepare('SELECT MAX(log_offset) AS o FROM journal');
    // octet_length reads a payload's size from its record header, not its (overflow) pages.
    this.sliceStmt = db.prepare(
      "SELECT log_offset AS o, octet_length(payload) AS b FROM journal WHERE log_offset > ? AND log_offset <= ? AND kind = 'batch' AND target IS NOT NULL ORDER BY log_offset LIMIT ?",
    );
    this.deleteStmt = db.prepare('DELETE FROM journal WHERE log_offset = ?');
  }

  /**
   * The highest offset in (`from`, `checkpointOffset`] whose entry was journaled before `olderThan`
   * (null: none), below the journal's last entry, which is never deleted (its offset is where the
   * next append continues: TableLog reads MAX(log_offset)). Entries are journaled in offset order
   * with the wall clock's time, so a binary search over offsets finds it in ~40 point reads, every
   * prune, however long the journal; a clock stepped back makes it at most that much off.
   */
  private dueUpTo(from: number, checkpointOffset: number, olderThan: number): number | null {
    const last = (this.lastOffsetStmt.get() as { o: number | null }).o ?? 0;
    let low = from; // known due (or the prefix already deleted)
    let high = Math.min(checkpointOffset, last - 1) + 1; // known not due, or past the bound
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      const entry = this.atOrAfterStmt.get(mid) as { o: number; at: number } | undefined;
      // Offsets are dense above the deleted prefix, and every entry there is kept.
      if (entry === undefined || entry.o >= high || entry.at >= olderThan) high = mid;
      else low = entry.o;
    }
    return low > from ? low : null;
  }

  /** Table batches at or below this offset were deleted by retention (0: none). */
  get truncatedThrough(): number {
    const text = this.store.getMeta(TRUNCATED_THROUGH_KEY);
    const value = text === undefined ? 0 : Number(text);
    return Number.isSafeInteger(value) && value > 0 ? value : 0;
  }

  /**
   * Deletes up to `maxRows` table batches (and about `maxBytes` of their payloads: freeing a batch's
   * pages costs in proportion to its size) at or below `checkpointOffset` journaled before
   * `olderThan` (ms since the epoch), in order, inside the caller's open transaction, and records
   * how far the deleted prefix reaches in the same transaction (a crash leaves both or neither).
   */
  deleteSlice(
    checkpointOffset: number,
    olderThan: number,
    maxRows: number,
    maxBytes = SLICE_BYTES,
  ): JournalTrimSlice {
    const from = this.truncatedThrough;
    const due = this.dueUpTo(from, checkpointOffset, olderThan);
    if (due === null) return { deleted: 0, truncatedThrough: from, more: false };
    const candidates = this.sliceStmt.all(from, due, maxRows) as { o: number; b: number }[];
    let deleted = 0;
    let bytes = 0;
    for (const { o, b } of candidates) {
      if (deleted > 0 && bytes + b > maxBytes) break;
      this.deleteStmt.run(o);
      deleted += 1;
      bytes += b;
    }
    // A slice that stopped at a bound ends at its last batch; one that did not reached `due`
    // (only DDL and ticks between).
    const more = deleted < candidates.length || candidates.length === maxRows;
    const through = more ? (candidates[deleted - 1] as { o: number }).o : due;
    this.store.setMeta(TRUNCATED_THROUGH_KEY, String(through));
    return { deleted, truncatedThrough: through, more };
  }
}
