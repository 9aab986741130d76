// Brings a data file's records of ended view histories into one table. Files written before this
// version hold two: `changelog_history_ends` (view, incarnation, epoch: an incarnation whose rows were
// recomputed at recovery) and `changelog_drops` (view, epoch: the epoch the name's last view was
// dropped at). Both now live in `changelog_history_ends` with a `reason`, decided by one rule
// (changelog-store.ts resumeRefusal).
//
// Runs inside the caller's transaction (the store's schema transaction), so a crash part way leaves
// the old form as it was; idempotent, so a file opened again, or opened by an earlier version in
// between (which creates an empty `changelog_drops` and may write to it), is brought in again.
import type Database from 'better-sqlite3';

export interface MigrationHooks {
  /** Called after the rows are merged, before the old table goes (tests stop a migration there). */
  readonly beforeDropOld?: () => void;
}

/** Migrates the file `db` (in an open transaction) to the one-table form; a no-op once it is. */
export function migrateChangelogHistory(db: Database.Database, hooks: MigrationHooks = {}): void {
  const columns = db.pragma('table_info(changelog_history_ends)') as { name: string }[];
  if (!columns.some((c) => c.name === 'reason')) {
    // Under the old rule an end applied only to the incarnation it names: one of another (none is
    // left by that version, which deleted it on a drop) had no effect, and must not gain one.
    db.exec(`DELETE FROM changelog_history_ends WHERE NOT EXISTS (
      SELECT 1 FROM changelog_views v
      WHERE v.view = changelog_history_ends.view AND v.incarnation = changelog_history_ends.incarnation)`);
    db.exec("ALTER TABLE changelog_history_ends ADD COLUMN reason TEXT NOT NULL DEFAULT 'recomputed'");
  }
  const old = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'changelog_drops'")
    .get();
  if (old === undefined) return;
  // A drop record names the incarnation it ends the history of: the live view created at its epoch,
  // else none yet (0, which no journal offset is; ChangelogStore.register sets it). The version
  // before reads an end of the live incarnation as one of its own, so it keeps refusing these too.
  // Of two records of one name the later epoch is kept: a resume up to it is refused either way.
  db.exec(`INSERT INTO changelog_history_ends (view, incarnation, epoch, reason)
    SELECT d.view, COALESCE(v.incarnation, 0), d.epoch, 'dropped'
    FROM changelog_drops d LEFT JOIN changelog_views v ON v.view = d.view AND v.created_epoch <= d.epoch
    WHERE true
    ON CONFLICT (view) DO UPDATE SET incarnation = excluded.incarnation, epoch = excluded.epoch,
      reason = excluded.reason
    WHERE excluded.epoch > changelog_history_ends.epoch`);
  hooks.beforeDropOld?.();
  db.exec('DROP TABLE changelog_drops');
}
