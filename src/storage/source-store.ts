// Durable bookkeeping of the Kafka sources, in the server's SQLite file: each source's delivered
// positions, written in the same transaction as the epoch that applied them, so state and positions
// never disagree. (Skipped records are rows of the source's errors relation, in the engine.)
import type Database from 'better-sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS source_offsets (
  source TEXT PRIMARY KEY,
  incarnation INTEGER NOT NULL,
  next_offsets TEXT NOT NULL
);
`;

export class SourceStore {
  private readonly offsetsStmt;
  private readonly saveStmt;
  private readonly dropStmt;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    this.offsetsStmt = db.prepare('SELECT incarnation, next_offsets FROM source_offsets WHERE source = ?');
    this.saveStmt = db.prepare(
      `INSERT INTO source_offsets (source, incarnation, next_offsets) VALUES (?, ?, ?)
       ON CONFLICT (source) DO UPDATE SET incarnation = excluded.incarnation, next_offsets = excluded.next_offsets`,
    );
    this.dropStmt = db.prepare('DELETE FROM source_offsets WHERE source = ? AND incarnation = ?');
  }

  /** partition → next offset to apply; empty when this incarnation has applied nothing yet. */
  offsets(source: string, incarnation: number): Map<number, number> {
    const row = this.offsetsStmt.get(source) as { incarnation: number; next_offsets: string } | undefined;
    if (row === undefined || row.incarnation !== incarnation) return new Map();
    const parsed = JSON.parse(row.next_offsets) as Record<string, number>;
    return new Map(Object.entries(parsed).map(([p, o]) => [Number(p), o]));
  }

  /** Inside the epoch's transaction. */
  saveOffsets(source: string, incarnation: number, next: ReadonlyMap<number, number>): void {
    const json: Record<string, number> = {};
    for (const [p, o] of next) json[String(p)] = o;
    this.saveStmt.run(source, incarnation, JSON.stringify(json));
  }

  /** The source was dropped: its positions go. */
  drop(source: string, incarnation: number): void {
    this.dropStmt.run(source, incarnation);
  }
}
