// Per-view changelogs in SQLite: one stored `changes` message per view per epoch that changed it,
// kept for a retention window. A view's horizon is the oldest epoch a subscriber may resume from.
//
// Integrity: every entry carries a checksum over exactly what it stores and `prev`, the epoch of the
// view's previous entry (or a bound below it), so a read detects a changed, truncated or garbled
// entry and a missing one inside the range it returns, and refuses instead of handing a resumed
// subscriber a wrong changelog.
import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { SluiceError } from '../common/errors.ts';

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

/** Where a view's stored history ends, and why (changelog_history_ends; see historyEnd). */
export interface HistoryEnd {
  readonly epoch: number;
  readonly reason: 'recomputed' | 'dropped';
}

export interface StoredChange {
  readonly epoch: number;
  readonly message: string;
}

interface ChangeRow {
  epoch: number;
  message: string;
  prev: number | null;
  checksum: string | null;
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
  private readonly upsertEndStmt;
  private readonly getEndStmt;
  private readonly deleteEndsBeforeStmt;
  private readonly claimEndStmt;
  private readonly pruneEndsStmt;
  private readonly appendStmt;
  private readonly readStmt;
  private readonly deleteUpToStmt;
  private readonly deleteViewStmt;
  private readonly deleteInfoStmt;
  private readonly timeCutStmt;
  private readonly oldestAtStmt;
  private readonly prevStmt;
  private readonly getStmt;
  private readonly cache = new Map<string, ViewLogInfo>();
  /** The epoch of each view's last entry, once known (the next entry's `prev`). */
  private readonly lastEpoch = new Map<string, number>();

  /**
   * `checkedFrom`: entries of epochs from here on must carry a checksum (older ones were written
   * before checksums existed; a file created with them has 0).
   */
  constructor(
    private readonly db: Database.Database,
    private readonly checkedFrom = 0,
  ) {
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
      'INSERT OR IGNORE INTO changelog (view, epoch, at, message, prev, checksum) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.readStmt = db.prepare(
      'SELECT epoch, message, prev, checksum FROM changelog WHERE view = ? AND epoch > ? AND epoch <= ? ORDER BY epoch LIMIT ?',
    );
    this.prevStmt = db.prepare('SELECT MAX(epoch) AS e FROM changelog WHERE view = ? AND epoch < ?');
    this.getStmt = db.prepare(
      'SELECT epoch, message, prev, checksum FROM changelog WHERE view = ? AND epoch = ?',
    );
    this.deleteUpToStmt = db.prepare('DELETE FROM changelog WHERE view = ? AND epoch <= ?');
    this.deleteViewStmt = db.prepare('DELETE FROM changelog WHERE view = ? AND epoch > ?');
    this.deleteInfoStmt = db.prepare('DELETE FROM changelog_views WHERE view = ?');
    // One record per name: a later end replaces an earlier one (epochs only grow, so it refuses
    // every resume the earlier one did).
    this.upsertEndStmt = db.prepare(
      `INSERT INTO changelog_history_ends (view, incarnation, epoch, reason) VALUES (?, ?, ?, ?)
       ON CONFLICT (view) DO UPDATE SET incarnation = excluded.incarnation, epoch = excluded.epoch,
         reason = excluded.reason`,
    );
    this.getEndStmt = db.prepare('SELECT epoch, reason FROM changelog_history_ends WHERE view = ?');
    this.deleteEndsBeforeStmt = db.prepare('DELETE FROM changelog_history_ends WHERE view = ? AND epoch < ?');
    this.claimEndStmt = db.prepare(
      'UPDATE changelog_history_ends SET incarnation = ? WHERE view = ? AND epoch >= ?',
    );
    // A name dropped before `epoch` and not created again: no view can be created at its drop epoch
    // any more (epochs only grow), so its record has done its work.
    this.pruneEndsStmt = db.prepare(
      'DELETE FROM changelog_history_ends WHERE epoch < ? AND view NOT IN (SELECT view FROM changelog_views)',
    );
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
    // An end before this epoch says nothing of this incarnation (historyEnd); one at it stays, and
    // names it (the rule reads epochs; an earlier version, opening the file, reads incarnations).
    this.deleteEndsBeforeStmt.run(view, createdEpoch);
    this.claimEndStmt.run(incarnation, view, createdEpoch);
    this.cache.set(view, info);
    return info;
  }

  /** The `prev` of a new entry at `epoch`: the view's last entry before it, else its horizon. */
  private prevOf(view: string, epoch: number): number {
    const known = this.lastEpoch.get(view);
    if (known !== undefined && known < epoch) return known;
    const row = this.prevStmt.get(view, epoch) as { e: number | null };
    return row.e ?? this.info(view)?.horizon ?? 0;
  }

  /** Stores one epoch's message; an entry already stored (a replay after restart) is kept as is. */
  append(view: string, epoch: number, at: number, message: string): void {
    // Text that is not well-formed Unicode would be stored as other bytes than it hashes to; the
    // server refuses such input at the door, so this only keeps a stored entry readable.
    const text = message.isWellFormed() ? message : message.toWellFormed();
    const prev = this.prevOf(view, epoch);
    this.appendStmt.run(view, epoch, at, text, prev, changeChecksum(view, epoch, prev, text));
    this.lastEpoch.set(view, epoch);
  }

  /** The stored entry of one epoch (verified), or undefined when there is none. */
  get(view: string, epoch: number): StoredChange | undefined {
    const row = this.getStmt.get(view, epoch) as ChangeRow | undefined;
    if (row === undefined) return undefined;
    this.check(view, row);
    return { epoch: row.epoch, message: row.message };
  }

  /**
   * Stored changes with after < epoch ≤ upTo, oldest first, verified: a damaged entry, or one
   * missing between `after` and the last entry returned, throws STATE_ERROR.
   */
  read(view: string, after: number, upTo: number, limit: number): StoredChange[] {
    const rows = this.readStmt.all(view, after, upTo, limit) as ChangeRow[];
    // Entries up to the horizon are pruned: only those after it can be missing.
    let previous = Math.max(after, this.info(view)?.horizon ?? after);
    const out: StoredChange[] = [];
    for (const row of rows) {
      this.check(view, row);
      // The entry before this one is at `prev`: it must be the one just read (or at or before
      // `after`, for the first); later than that means one in between is gone.
      if (row.prev !== null && row.prev > previous) {
        throw new SluiceError(
          'STATE_ERROR',
          `the changelog of view "${view}" is damaged: the entry of epoch ${row.prev} is missing`,
          {
            detail: `the entry of epoch ${row.epoch} follows epoch ${row.prev}, but the changelog holds nothing after epoch ${previous} before it`,
            hint: 'subscribe again with a snapshot; restore the data directory from a backup to repair the changelog',
          },
        );
      }
      previous = row.epoch;
      out.push({ epoch: row.epoch, message: row.message });
    }
    return out;
  }

  private check(view: string, row: ChangeRow): void {
    const ok =
      row.checksum === null
        ? row.epoch < this.checkedFrom
        : row.prev !== null && row.checksum === changeChecksum(view, row.epoch, row.prev, row.message);
    if (ok) return;
    throw new SluiceError(
      'STATE_ERROR',
      `the changelog entry of view "${view}" at epoch ${row.epoch} is damaged`,
      {
        detail: row.checksum === null ? 'it has no checksum' : 'its checksum does not match its contents',
        hint: 'subscribe again with a snapshot; restore the data directory from a backup to repair the changelog',
      },
    );
  }

  /**
   * The view's incarnation ended: forget its changes (those after `fromEpoch`) and its record. With
   * `droppedAt` (the epoch of the DROP), the name's history ends there ('dropped', see historyEnd).
   */
  drop(view: string, fromEpoch = -1, droppedAt: number | null = null): void {
    if (droppedAt !== null) {
      this.pruneEndsStmt.run(droppedAt);
      this.upsertEndStmt.run(view, this.info(view)?.incarnation ?? 0, droppedAt, 'dropped');
    }
    this.deleteViewStmt.run(view, fromEpoch);
    this.deleteInfoStmt.run(view);
    this.cache.delete(view);
    this.lastEpoch.delete(view);
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

  /**
   * Ends the view's stored history at `epoch` (the current one): a history its current rows no
   * longer follow from (recovery.ts). Its entries up to `epoch` are deleted, as retention would,
   * and — unlike retention — a resume from `epoch` itself is refused too (historyEnd): a client
   * there holds the rows that history led to. A snapshot taken from `epoch` on is unaffected.
   */
  endHistory(view: string, epoch: number): void {
    const info = this.info(view);
    if (info === undefined) return;
    if (epoch > info.horizon) {
      this.deleteUpToStmt.run(view, epoch);
      this.horizonStmt.run(epoch, view);
      this.cache.set(view, { ...info, horizon: epoch });
      this.lastEpoch.delete(view);
    }
    this.upsertEndStmt.run(view, info.incarnation, epoch, 'recomputed');
  }

  /**
   * Where the live view's history ends, or null: a resume from that epoch or before is not on it.
   * One rule for every reason: a record at epoch E ends the history of the incarnation created at
   * or before E. 'recomputed': this incarnation's rows were recomputed at E (endHistory).
   * 'dropped': an earlier view of the name was dropped at E and this one created at that same
   * epoch (a DROP and a CREATE with no write between, in one script, a query subscription's
   * temporary view made again): both have rows at E, and a resume from it cannot tell which the
   * client holds. A view created after E is not concerned (its creation epoch already bounds it).
   */
  historyEnd(view: string): HistoryEnd | null {
    const info = this.info(view);
    if (info === undefined) return null;
    const row = this.getEndStmt.get(view) as { epoch: number; reason: string } | undefined;
    if (row === undefined || row.epoch < info.createdEpoch) return null;
    return { epoch: row.epoch, reason: row.reason === 'dropped' ? 'dropped' : 'recomputed' };
  }

  /**
   * Whether a subscriber that applied the view's epochs up to `from` can be served the stored
   * changes after it (null) or must take a snapshot (RESUME_TOO_OLD, saying why): the one decision
   * for the WebSocket, NDJSON and query subscriptions. `horizon` is the view's after retention.
   */
  resumeRefusal(view: string, from: number, horizon: number): SluiceError | null {
    const ended = this.historyEnd(view);
    if (ended !== null && from <= ended.epoch) {
      return new SluiceError(
        'RESUME_TOO_OLD',
        ended.reason === 'dropped'
          ? `cannot resume view "${view}" from epoch ${from}: the view was created again at epoch ${ended.epoch}, when a view of the same name was dropped, and a client at that epoch may hold the dropped view's rows`
          : `cannot resume view "${view}" from epoch ${from}: its rows were recomputed at epoch ${ended.epoch}, when a data directory written by an earlier version of Sluice was opened by one that computes this view differently, and the changes up to that epoch do not lead to them`,
        {
          hint:
            ended.reason === 'dropped'
              ? 'subscribe again with a snapshot (a resume is served from the first epoch after the view was created)'
              : 'subscribe again with a snapshot',
        },
      );
    }
    if (from >= horizon) return null;
    const info = this.info(view);
    const created = info !== undefined && from < info.createdEpoch;
    return new SluiceError(
      'RESUME_TOO_OLD',
      `cannot resume view "${view}" from epoch ${from}: ${created ? `the view was created at epoch ${info.createdEpoch}` : `changes are retained after epoch ${horizon} only`}`,
      { hint: 'subscribe again with a snapshot' },
    );
  }

  /** How many entries of the view are stored after `epoch`. */
  countAfter(view: string, epoch: number): number {
    const row = this.db
      .prepare('SELECT COUNT(*) AS n FROM changelog WHERE view = ? AND epoch > ?')
      .get(view, epoch) as { n: number };
    return row.n;
  }

  count(view: string): number {
    const row = this.db.prepare('SELECT COUNT(*) AS n FROM changelog WHERE view = ?').get(view) as {
      n: number;
    };
    return row.n;
  }
}

/** A checksum over everything an entry holds (its view, epoch, predecessor and message). */
function changeChecksum(view: string, epoch: number, prev: number, message: string): string {
  return createHash('sha1')
    .update(`${view}\u0000${epoch}\u0000${prev}\u0000`)
    .update(message)
    .digest('base64')
    .slice(0, 16);
}
