// The time of past epochs in SQLite: each epoch's logical clock and the watermark of every watermarked
// table after it, stored only when they differ from the epoch before, so a read at a past epoch
// (`asOf`, a subscription resumed from a position) says that epoch's time, also after a restart.
import type Database from 'better-sqlite3';

export const EPOCH_TIMES_SCHEMA = `
CREATE TABLE IF NOT EXISTS epoch_times (
  epoch INTEGER PRIMARY KEY,
  clock INTEGER NOT NULL,
  watermarks TEXT NOT NULL
);
`;

/** An epoch's logical clock (µs) and each watermarked table's watermark after it (reads' text). */
export interface EpochTime {
  readonly clock: number;
  readonly watermarks: Readonly<Record<string, string | null>>;
}

interface TimeRow {
  epoch: number;
  clock: number;
  watermarks: string;
}

export class EpochTimeStore {
  private readonly putStmt;
  private readonly atStmt;
  private readonly pruneStmt;
  /** What the latest recorded epoch holds (its row, or the one before it when unchanged). */
  private last: { epoch: number; clock: number; watermarks: string } | null = null;

  constructor(db: Database.Database) {
    db.exec(EPOCH_TIMES_SCHEMA);
    this.putStmt = db.prepare(
      'INSERT OR REPLACE INTO epoch_times (epoch, clock, watermarks) VALUES (?, ?, ?)',
    );
    this.atStmt = db.prepare(
      'SELECT epoch, clock, watermarks FROM epoch_times WHERE epoch <= ? ORDER BY epoch DESC LIMIT 1',
    );
    // Keeps the row in force at `below` (the latest at or before it) and everything after.
    this.pruneStmt = db.prepare(
      'DELETE FROM epoch_times WHERE epoch < (SELECT MAX(epoch) FROM epoch_times WHERE epoch <= ?)',
    );
  }

  /**
   * Records epoch `epoch`'s time, in the caller's transaction: a row only when it differs from the
   * epoch before (read back from the store when that is not the epoch last recorded here, as after
   * loading a checkpoint), so a steady clock and still watermarks cost nothing.
   */
  record(epoch: number, clock: number, watermarks: Readonly<Record<string, string | null>>): void {
    const text = JSON.stringify(watermarks);
    let before = this.last;
    if (before === null || before.epoch !== epoch - 1) {
      const row = this.atStmt.get(epoch - 1) as TimeRow | undefined;
      before = row === undefined ? null : { epoch: epoch - 1, clock: row.clock, watermarks: row.watermarks };
    }
    if (before === null || before.clock !== clock || before.watermarks !== text) {
      this.putStmt.run(epoch, clock, text);
    }
    this.last = { epoch, clock, watermarks: text };
  }

  /** The time of epoch `epoch`, or undefined when none is stored at or before it. */
  at(epoch: number): EpochTime | undefined {
    const row = this.atStmt.get(epoch) as TimeRow | undefined;
    if (row === undefined) return undefined;
    return { clock: row.clock, watermarks: JSON.parse(row.watermarks) as Record<string, string | null> };
  }

  /** Forgets the rows no epoch at or after `below` needs. */
  prune(below: number): void {
    this.pruneStmt.run(below);
  }

  /** Forgets the cached latest row (a rolled-back transaction may have taken it away). */
  reset(): void {
    this.last = null;
  }
}
