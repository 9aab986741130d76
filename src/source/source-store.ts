// Durable bookkeeping of the Kafka sources, in the server's SQLite file: each source's delivered
// positions (written in the same transaction as the epoch that applied them, so state and positions
// never disagree) and the records its on_error = 'skip' policy skipped (queryable, never silent).
import type Database from 'better-sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS source_offsets (
  source TEXT PRIMARY KEY,
  incarnation INTEGER NOT NULL,
  next_offsets TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_errors (
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  incarnation INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  topic TEXT NOT NULL,
  partition INTEGER NOT NULL,
  "offset" INTEGER NOT NULL,
  reason TEXT NOT NULL,
  raw TEXT,
  at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS source_errors_by_source ON source_errors (source, id);
`;

export interface SkippedRecordRow {
  readonly id: number;
  readonly epoch: number;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly reason: string;
  readonly raw: string | null;
  readonly at: string;
}

interface ErrorRow {
  id: number;
  epoch: number;
  topic: string;
  partition: number;
  offset: number;
  reason: string;
  raw: string | null;
  at: number;
}

export class SourceStore {
  private readonly offsetsStmt;
  private readonly saveStmt;
  private readonly dropStmt;
  private readonly errorStmt;
  private readonly errorsStmt;
  private readonly countStmt;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    this.offsetsStmt = db.prepare('SELECT incarnation, next_offsets FROM source_offsets WHERE source = ?');
    this.saveStmt = db.prepare(
      `INSERT INTO source_offsets (source, incarnation, next_offsets) VALUES (?, ?, ?)
       ON CONFLICT (source) DO UPDATE SET incarnation = excluded.incarnation, next_offsets = excluded.next_offsets`,
    );
    this.dropStmt = db.prepare('DELETE FROM source_offsets WHERE source = ? AND incarnation = ?');
    this.errorStmt = db.prepare(
      `INSERT INTO source_errors (source, incarnation, epoch, topic, partition, "offset", reason, raw, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.errorsStmt = db.prepare(
      `SELECT id, epoch, topic, partition, "offset" AS offset, reason, raw, at FROM source_errors
       WHERE source = ? AND incarnation = ? AND id > ? ORDER BY id LIMIT ?`,
    );
    this.countStmt = db.prepare(
      'SELECT COUNT(*) AS n FROM source_errors WHERE source = ? AND incarnation = ?',
    );
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

  /** Inside the epoch's transaction. */
  recordSkipped(
    source: string,
    incarnation: number,
    epoch: number,
    r: { topic: string; partition: number; offset: number; reason: string; raw: string | null },
  ): void {
    this.errorStmt.run(
      source,
      incarnation,
      epoch,
      r.topic,
      r.partition,
      r.offset,
      r.reason,
      r.raw,
      Date.now(),
    );
  }

  skipped(source: string, incarnation: number, afterId: number, limit: number): SkippedRecordRow[] {
    return (this.errorsStmt.all(source, incarnation, afterId, limit) as ErrorRow[]).map((r) => ({
      ...r,
      at: new Date(r.at).toISOString(),
    }));
  }

  skippedCount(source: string, incarnation: number): number {
    return (this.countStmt.get(source, incarnation) as { n: number }).n;
  }

  /** The source was dropped: its positions go (its skipped records stay until the file is reset). */
  drop(source: string, incarnation: number): void {
    this.dropStmt.run(source, incarnation);
  }
}
