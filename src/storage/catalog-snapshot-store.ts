// The live catalog's DDL entries (their journal offsets), stored in the server's SQLite file under
// the offset of the DDL entry after which the catalog is so, in the same transaction as that entry
// took effect. Recovery from a checkpoint replays these instead of every DDL entry up to the
// checkpoint (whose work grows with every statement ever run); a row that is missing or fails its
// checksum means the whole DDL history is replayed, as before these rows existed.
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS catalog_snapshots (
  ddl_offset INTEGER PRIMARY KEY,
  entries TEXT NOT NULL,
  checksum TEXT NOT NULL
);
`;

export class CatalogSnapshotStore {
  private readonly getStmt;
  private readonly putStmt;
  private readonly pruneStmt;
  private readonly lastDdlStmt;
  private readonly removeStmt;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    this.getStmt = db.prepare('SELECT entries, checksum FROM catalog_snapshots WHERE ddl_offset = ?');
    this.putStmt = db.prepare(
      'INSERT OR REPLACE INTO catalog_snapshots (ddl_offset, entries, checksum) VALUES (?, ?, ?)',
    );
    // Rows before the one a stored checkpoint at `?` needs are never read again.
    this.pruneStmt = db.prepare(
      `DELETE FROM catalog_snapshots WHERE ddl_offset < (
         SELECT COALESCE(MAX(log_offset), 0) FROM journal WHERE kind = 'ddl' AND log_offset <= ?)`,
    );
    this.removeStmt = db.prepare('DELETE FROM catalog_snapshots WHERE ddl_offset = ?');
    this.lastDdlStmt = db.prepare(
      "SELECT MAX(log_offset) AS o FROM journal WHERE kind = 'ddl' AND log_offset <= ?",
    );
  }

  /** The offset of the last DDL entry at or before `offset` (0: none). */
  lastDdlAt(offset: number): number {
    return (this.lastDdlStmt.get(offset) as { o: number | null }).o ?? 0;
  }

  /** Records the catalog after the DDL entry at `ddlOffset` as the entries at `offsets`. */
  write(ddlOffset: number, offsets: readonly number[]): void {
    const entries = offsets.join(',');
    this.putStmt.run(ddlOffset, entries, snapshotChecksum(ddlOffset, entries));
  }

  /**
   * The entries making the catalog after the DDL entry at `ddlOffset`, ascending; null when none
   * were recorded (a data file from before these rows, or pruned) or the row is damaged.
   */
  read(ddlOffset: number): number[] | null {
    const row = this.getStmt.get(ddlOffset) as { entries: string; checksum: string } | undefined;
    if (row === undefined || row.checksum !== snapshotChecksum(ddlOffset, row.entries)) return null;
    if (row.entries === '') return [];
    const offsets = row.entries.split(',').map(Number);
    const ascending = offsets.every(
      (o, i) =>
        Number.isSafeInteger(o) && o > 0 && o <= ddlOffset && (i === 0 || o > (offsets[i - 1] as number)),
    );
    return ascending ? offsets : null;
  }

  remove(ddlOffset: number): void {
    this.removeStmt.run(ddlOffset);
  }

  /** Forgets rows older than the one a checkpoint at journal offset `checkpointOffset` needs. */
  prune(checkpointOffset: number): void {
    this.pruneStmt.run(checkpointOffset);
  }
}

function snapshotChecksum(ddlOffset: number, entries: string): string {
  return createHash('sha1').update(`catalog\u0000${ddlOffset}\u0000${entries}`).digest('base64').slice(0, 16);
}
