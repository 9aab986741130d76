// Per-view changelogs in SQLite: one stored `changes` message per view per epoch that changed it,
// kept for a retention window. A view's horizon is the oldest epoch a subscriber may resume from.
import type Database from 'better-sqlite3';

export interface Retention {
  /** Keep the changes of at most this many most recent epochs (null: no epoch limit). */
  readonly epochs: number | null;
  /** Keep changes younger than this many milliseconds (null: no time limit). */
  readonly ms: number | null;
}

export interface ViewLogInfo {
  /** Journal offset of the DDL that created this incarnation of the view. */
  readonly incarnation: number;
  readonly createdEpoch: number;
  /** resumeFrom must be ≥ this: changes of epochs ≤ horizon may be gone. */
  readonly horizon: number;
}

export interface StoredChange {
  readonly epoch: number;
  readonly message: string;
}

interface InfoRow {
  incarnation: number;
  created_epoch: number;
  horizon: number;
}

export class ChangelogStore {
  private readonly infoStmt;
  private readonly upsertInfoStmt;
  private readonly horizonStmt;
  private readonly appendStmt;
  private readonly readStmt;
  private readonly deleteUpToStmt;
  private readonly deleteViewStmt;
  private readonly deleteInfoStmt;
  private readonly timeCutStmt;
  private readonly oldestAtStmt;
  private readonly cache = new Map<string, ViewLogInfo>();

  constructor(private readonly db: Database.Database) {
    this.infoStmt = db.prepare(
      'SELECT incarnation, created_epoch, horizon FROM changelog_views WHERE view = ?',
    );
    this.upsertInfoStmt = db.prepare(
      `INSERT INTO changelog_views (view, incarnation, created_epoch, horizon) VALUES (?, ?, ?, ?)
       ON CONFLICT (view) DO UPDATE SET incarnation = excluded.incarnation,
         created_epoch = excluded.created_epoch, horizon = excluded.horizon`,
    );
    this.horizonStmt = db.prepare('UPDATE changelog_views SET horizon = ? WHERE view = ?');
    this.appendStmt = db.prepare(
      'INSERT OR IGNORE INTO changelog (view, epoch, at, message) VALUES (?, ?, ?, ?)',
    );
    this.readStmt = db.prepare(
      'SELECT epoch, message FROM changelog WHERE view = ? AND epoch > ? AND epoch <= ? ORDER BY epoch LIMIT ?',
    );
    this.deleteUpToStmt = db.prepare('DELETE FROM changelog WHERE view = ? AND epoch <= ?');
    this.deleteViewStmt = db.prepare('DELETE FROM changelog WHERE view = ? AND epoch > ?');
    this.deleteInfoStmt = db.prepare('DELETE FROM changelog_views WHERE view = ?');
    // Bounded scan from the oldest entry: expired entries are at the front (time grows with epochs);
    // a long expired run is removed over several prunes.
    this.timeCutStmt = db.prepare(
      'SELECT MAX(epoch) AS e FROM (SELECT epoch, at FROM changelog WHERE view = ? AND epoch > ? ORDER BY epoch LIMIT 5000) WHERE at < ?',
    );
    this.oldestAtStmt = db.prepare(
      'SELECT at FROM changelog WHERE view = ? AND epoch > ? ORDER BY epoch LIMIT 1',
    );
  }

  /** The time of the oldest stored entry after `after` (one index seek). */
  private oldestAt(view: string, after: number): number | undefined {
    const row = this.oldestAtStmt.get(view, after) as { at: number } | undefined;
    return row?.at;
  }

  info(view: string): ViewLogInfo | undefined {
    const cached = this.cache.get(view);
    if (cached !== undefined) return cached;
    const row = this.infoStmt.get(view) as InfoRow | undefined;
    if (row === undefined) return undefined;
    const info = { incarnation: row.incarnation, createdEpoch: row.created_epoch, horizon: row.horizon };
    this.cache.set(view, info);
    return info;
  }

  /**
   * Registers an incarnation of a view (created by the DDL at journal offset `incarnation`). A stored
   * record of the same or a later incarnation is kept and returned (replay after restart).
   */
  register(view: string, incarnation: number, createdEpoch: number): ViewLogInfo {
    const existing = this.info(view);
    // Same incarnation: a replay keeps its horizon. A later one: the caller's is historical.
    if (existing !== undefined && existing.incarnation >= incarnation) return existing;
    const info = { incarnation, createdEpoch, horizon: createdEpoch };
    this.upsertInfoStmt.run(view, incarnation, createdEpoch, createdEpoch);
    this.cache.set(view, info);
    return info;
  }

  /** Stores one epoch's message; an entry already stored (a replay after restart) is kept as is. */
  append(view: string, epoch: number, at: number, message: string): void {
    this.appendStmt.run(view, epoch, at, message);
  }

  /** Stored changes with after < epoch ≤ upTo, oldest first. */
  read(view: string, after: number, upTo: number, limit: number): StoredChange[] {
    return this.readStmt.all(view, after, upTo, limit) as StoredChange[];
  }

  /** The view's incarnation ended: forget its changes (those after `fromEpoch`) and its record. */
  drop(view: string, fromEpoch = -1): void {
    this.deleteViewStmt.run(view, fromEpoch);
    this.deleteInfoStmt.run(view);
    this.cache.delete(view);
  }

  /** Applies retention to one view; returns its horizon afterwards. */
  prune(
    view: string,
    currentEpoch: number,
    now: number,
    retention: Retention,
    /** Changes after this epoch are still needed (a sink has not written them yet). */
    keepAfter: number | null = null,
  ): number {
    const info = this.info(view);
    if (info === undefined) return currentEpoch;
    let cut = info.horizon;
    if (retention.epochs !== null) cut = Math.max(cut, currentEpoch - retention.epochs);
    // The scan runs only when the oldest entry has expired: most prunes find nothing to do and cost
    // one index seek instead of reading thousands of entries.
    const oldest = retention.ms !== null ? this.oldestAt(view, info.horizon) : undefined;
    if (retention.ms !== null && oldest !== undefined && oldest < now - retention.ms) {
      const row = this.timeCutStmt.get(view, info.horizon, now - retention.ms) as { e: number | null };
      if (row.e !== null) cut = Math.max(cut, row.e);
    }
    if (keepAfter !== null) cut = Math.max(info.horizon, Math.min(cut, keepAfter));
    if (cut > info.horizon) {
      this.deleteUpToStmt.run(view, cut);
      this.horizonStmt.run(cut, view);
      this.cache.set(view, { ...info, horizon: cut });
    }
    return cut;
  }

  count(view: string): number {
    const row = this.db.prepare('SELECT COUNT(*) AS n FROM changelog WHERE view = ?').get(view) as {
      n: number;
    };
    return row.n;
  }
}
