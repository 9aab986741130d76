// Startup recovery: the checkpoint file (set aside when damaged), the journal checked against what was
// acknowledged, then a checkpoint and the journal after it, or the whole journal.
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SluiceError } from '../../common/errors.ts';
import { REPLAY_SQL_LIMITS } from '../../common/limits.ts';
import { CheckpointStore } from '../../storage/checkpoint-store.ts';
import type { StoredCheckpointData } from '../../storage/checkpoint-read.ts';
import { crashPoint } from '../crash-points.ts';
import { SqliteStore } from '../../storage/sqlite-store.ts';
import type { LoggedEntry } from '../../storage/table-log.ts';
import type { RecoveryReport } from './types.ts';
import { RuntimeSubscriptions } from './subscriptions.ts';
import { errorText } from './base.ts';

export abstract class RuntimeRecovery extends RuntimeSubscriptions {
  /**
   * Rebuilds the engine from the data file: with a usable checkpoint, the catalog by replaying the
   * DDL it covers, the state from the checkpoint, then the journal after it; without one (or when it
   * is damaged or belongs to another catalog), the whole journal. A damaged journal entry refuses
   * the start: state is never served from input that cannot be read back exactly.
   */
  protected recover(checkpointDamage: string | null): RecoveryReport {
    const started = performance.now();
    // CPU time too (this process, all threads): wall time on a shared machine says little.
    const cpu0 = process.cpuUsage();
    const cpuMs = (): number => {
      const c = process.cpuUsage(cpu0);
      return Math.round((c.user + c.system) / 1000);
    };
    const logger = this.options.logger;
    let fallbackReason: string | null = checkpointDamage;
    let stored: ReturnType<CheckpointStore['read']> = null;
    if (checkpointDamage !== null) this.refuseTruncatedReplay(checkpointDamage);
    if (this.options.checkpoint !== null && checkpointDamage === null) {
      try {
        stored = this.checkpoints.read();
      } catch (error) {
        fallbackReason = errorText(error);
        // Kept as it is: with the journal's start deleted, it is what a backup restore replaces.
        this.refuseTruncatedReplay(`the checkpoint cannot be read: ${fallbackReason}`);
        logger.error({ err: error }, 'the checkpoint is damaged; recovering from the whole journal instead');
        this.discardCheckpoints();
      }
    }
    if (stored === null) {
      this.refuseTruncatedReplay(
        this.options.checkpoint === null
          ? 'checkpoints are off (--checkpoint-interval-ms 0, or the option checkpoint: false), so recovery replays the whole journal'
          : 'the data directory holds no checkpoint',
      );
    }
    this.checkAcknowledged(stored?.journalOffset ?? null, stored?.checkpoint.epoch ?? null);
    // The journal replayed after a checkpoint is what the next (incremental) one writes: tracked.
    // Without a checkpoint the next one is full, and nothing is tracked until it is taken.
    this.setStateTracking(stored !== null);
    if (stored !== null && stored.journalOffset < this.journalRetention.truncatedThrough) {
      // An older checkpoint file than the journal (restored from another copy): its tail is gone.
      this.refuseTruncatedReplay(
        `the checkpoint covers the journal up to offset ${stored.journalOffset} only, and the batches after it that recovery would replay were deleted (is checkpoint.db an older copy than sluice.db?)`,
      );
    }
    if (stored !== null) {
      try {
        const report = this.recoverFromCheckpoint(stored.checkpoint, stored.journalOffset, started);
        logger.info({ ...report, epoch: this.engine.epoch, cpuMs: cpuMs() }, 'recovered from the checkpoint');
        this.recordRecoveredCatalog();
        this.buildDeferredWhileIdle();
        return report;
      } catch (error) {
        if (isJournalDamage(error)) throw error;
        fallbackReason = errorText(error);
        this.refuseTruncatedReplay(`recovery from the checkpoint failed: ${fallbackReason}`);
        // The journal is whole, so it alone gives the right state: recover from it, and say so.
        logger.error(
          { err: error, checkpointEpoch: stored.checkpoint.epoch },
          'recovery from the checkpoint failed; replaying the whole journal instead',
        );
        this.resetForFullReplay();
        this.discardCheckpoints();
      }
    }
    this.replayCompare = new Map();
    let replayedEntries: number;
    let compared: NonNullable<typeof this.replayCompare>;
    try {
      replayedEntries = this.replay(this.log.entries(0));
    } finally {
      compared = this.replayCompare;
      this.replayCompare = null;
    }
    this.endDivergedHistories(compared);
    const report: RecoveryReport = {
      checkpointEpoch: null,
      checkpointOffset: null,
      replayedEntries,
      rebuiltViews: [],
      fallbackReason,
      ms: performance.now() - started,
    };
    if (replayedEntries > 0) {
      logger.info({ ...report, epoch: this.engine.epoch, cpuMs: cpuMs() }, 'replayed the journal');
    }
    this.recordRecoveredCatalog();
    return report;
  }

  /**
   * Refuses the start when the whole journal would be replayed but retention deleted its start:
   * replaying what is left would serve a silently shorter history (every view missing the deleted
   * batches' rows). `why` says why the checkpoint path was not taken.
   */
  private refuseTruncatedReplay(why: string): void {
    const through = this.journalRetention.truncatedThrough;
    if (through === 0) return;
    throw new SluiceError(
      'STATE_ERROR',
      `cannot recover "${this.store.path}": the checkpoint cannot be used and journal retention deleted the table batches up to offset ${through}, so the whole journal can no longer be replayed`,
      {
        detail: `${why}; the table batches at journal offsets 1–${through} (older than the journal retention) were deleted once a checkpoint covered them, and only the checkpoint held their effect`,
        hint: 'restore the data directory from a backup, or start with a fresh data directory and load the data again; to keep a whole-journal fallback longer, raise --journal-retention-seconds (0 keeps all)',
      },
    );
  }

  /**
   * After a whole-journal replay: a view whose recomputed changes differ from its stored changelog
   * (an entry of another content, one stored that replay no longer makes, or the reverse) has rows
   * its history does not lead to — a data directory written by an earlier version that computed it
   * differently (a SUM(bigint) then bigint, now numeric; numerics then floats). A subscriber resuming
   * across that would silently hold rows the view no longer has, so the view's history ends at the
   * recovered epoch: a resume from it or earlier is RESUME_TOO_OLD and the client takes a snapshot.
   */
  private endDivergedHistories(
    compared: ReadonlyMap<string, { readonly replayed: number; readonly divergedAt: number | null }>,
  ): void {
    const ended: { view: string; from: number }[] = [];
    for (const [view, entry] of this.feeds) {
      if (!entry.writable) continue;
      const info = this.changelog.info(view);
      if (info === undefined) continue;
      const seen = compared.get(view);
      const stored = this.changelog.countAfter(view, info.horizon);
      const from = seen?.divergedAt ?? (stored !== (seen?.replayed ?? 0) ? info.horizon + 1 : null);
      if (from !== null) ended.push({ view, from });
    }
    this.endHistories(
      ended.map((e) => e.view),
      'replaying the journal gives these views other changes than their stored changelog (a data directory written by an earlier version that computed them differently); their subscribers must subscribe again with a snapshot',
      ended,
    );
  }

  /** Ends the stored histories of `views` at the recovered epoch (see endDivergedHistories), logged. */
  private endHistories(views: readonly string[], message: string, detail: unknown = views): void {
    if (views.length === 0) return;
    const epoch = this.engine.epoch;
    this.store.begin();
    try {
      for (const view of views) this.changelog.endHistory(view, epoch);
      this.store.commit();
    } catch (error) {
      this.store.rollback();
      throw error;
    }
    this.options.logger.warn({ views: detail, resumableAfter: epoch }, message);
  }

  /**
   * Records the recovered catalog when the data file has no record of it yet (one written before
   * the record existed), so that the next restart from a checkpoint replays only the live catalog.
   */
  private recordRecoveredCatalog(): void {
    const at = this.log.lastDdlOffset;
    if (at <= 0 || this.catalogSnapshots.read(at) !== null) return;
    this.store.begin();
    try {
      this.recordCatalog();
      this.store.commit();
    } catch (error) {
      this.store.rollback();
      throw error;
    }
  }

  /**
   * Refuses a start whose journal ends before what was committed earlier — by the high-water mark,
   * or by the checkpoint's own journal offset: SQLite's write-ahead log was lost or damaged, and
   * acknowledged writes with it. Serving the shorter journal would silently forget them.
   */
  private checkAcknowledged(checkpointOffset: number | null, checkpointEpoch: number | null): void {
    const mark = this.highWater?.read() ?? { kind: 'none' };
    if (mark.kind === 'damaged') {
      this.options.logger.warn(
        { file: this.highWater?.path, detail: mark.detail },
        'the high-water mark is unreadable; the journal is not checked against it this time',
      );
    }
    const candidates: { offset: number; epoch: number; by: string }[] = [];
    if (mark.kind === 'mark') candidates.push({ ...mark.mark, by: 'the high-water mark' });
    if (checkpointOffset !== null && checkpointEpoch !== null) {
      candidates.push({ offset: checkpointOffset, epoch: checkpointEpoch, by: 'the checkpoint' });
    }
    const ends = this.log.lastOffset;
    const beyond = candidates.filter((c) => c.offset > ends).sort((a, b) => b.offset - a.offset)[0];
    if (beyond === undefined) return;
    throw new SluiceError(
      'STATE_ERROR',
      `acknowledged writes are missing from "${this.store.path}": its journal ends at offset ${ends}, but ${beyond.by} records offset ${beyond.offset} (epoch ${beyond.epoch}) as committed`,
      {
        detail: `journal entries ${ends + 1}–${beyond.offset} are gone: the file's write-ahead log (${this.store.path}-wal) was deleted or damaged, or the file was replaced by an older copy`,
        hint: 'restore the whole data directory from a backup; to start on purpose from this older journal, remove sluice.hwm and checkpoint.db from the data directory first',
      },
    );
  }

  /**
   * The catalog by replaying the DDL the checkpoint covers, its state, then the journal after it —
   * checking every epoch replayed against the changelog stored before the restart, and that none
   * of those stored entries was left unmatched, so a checkpoint that is not the state of its
   * journal offset is found here instead of being served.
   */
  private recoverFromCheckpoint(
    checkpoint: StoredCheckpointData,
    journalOffset: number,
    started: number,
  ): RecoveryReport {
    let rebuiltViews = this.loadOverLiveCatalog(checkpoint, journalOffset);
    if (rebuiltViews === null) {
      this.replay(this.log.ddlEntries(journalOffset));
      rebuiltViews = this.engine.loadCheckpoint(checkpoint).rebuilt;
    }
    // A SET CLOCK before the checkpoint that made no epoch is in no checkpoint: set it again.
    const clockSetting = this.log.lastClockSetting(journalOffset);
    if (clockSetting !== null) this.engine.restoreClockSetting(clockSetting);
    if (rebuiltViews.length > 0) {
      this.options.logger.warn(
        { views: rebuiltViews },
        'views whose plan changed were rebuilt from their inputs',
      );
    }
    const matched = new Map<string, number>();
    this.replayCheck = matched;
    let replayedEntries: number;
    try {
      replayedEntries = this.replay(this.log.entries(journalOffset));
    } finally {
      this.replayCheck = null;
    }
    for (const [view, entry] of this.feeds) {
      if (!entry.writable) continue;
      const info = this.changelog.info(view);
      if (info === undefined) continue;
      const stored = this.changelog.countAfter(view, Math.max(checkpoint.epoch, info.horizon));
      if (stored !== (matched.get(view) ?? 0)) {
        throw new SluiceError(
          'STATE_ERROR',
          `the checkpoint disagrees with the journal: view "${view}" stored ${stored} changes after epoch ${checkpoint.epoch}, replaying the journal gives ${matched.get(view) ?? 0}`,
        );
      }
    }
    // A view rebuilt because this version plans it differently than the one that wrote the
    // checkpoint may hold other rows than its stored history leads to (nothing compares them: the
    // checkpoint kept the old plan's operator state, not its rows), so its history ends here too.
    this.endHistories(
      rebuiltViews,
      'views rebuilt because their plan changed (a data directory written by an earlier version) may hold other rows than their stored changelog leads to; their subscribers must subscribe again with a snapshot',
    );
    this.checkpointEpoch = checkpoint.epoch;
    this.checkpointOffset = journalOffset;
    return {
      checkpointEpoch: checkpoint.epoch,
      checkpointOffset: journalOffset,
      replayedEntries,
      rebuiltViews,
      fallbackReason: null,
      ms: performance.now() - started,
    };
  }

  /**
   * The catalog a checkpoint at `journalOffset` belongs to, rebuilt by replaying only the DDL entries
   * of its live objects (recorded by syncCatalog) instead of every DDL entry before it, and the
   * checkpoint loaded over it. Null, with the engine as it was before, when there is no record of
   * that catalog (a data file from before the record existed), the replay does not give exactly the
   * recorded catalog, or a view's plan differs from the checkpoint's: the caller then replays the
   * whole DDL history, whatever it finds then being what recovery always found.
   */
  private loadOverLiveCatalog(checkpoint: StoredCheckpointData, journalOffset: number): string[] | null {
    const catalogAt = this.catalogSnapshots.lastDdlAt(journalOffset);
    const live = catalogAt === 0 ? null : this.catalogSnapshots.read(catalogAt);
    if (live === null) return null;
    let problem: string;
    try {
      this.replay(this.log.ddlEntriesAt(live));
      const replayed = this.catalogIncarnations.offsets();
      if (replayed.length === live.length && replayed.every((o, i) => o === live[i])) {
        // As after replaying every DDL entry up to the checkpoint: the next catalog change is later.
        this.log.lastDdlOffset = catalogAt;
        const rebuilt = this.engine.loadCheckpoint(checkpoint).rebuilt;
        if (rebuilt.length === 0) return rebuilt;
        problem = `views whose plan changed: ${rebuilt.join(', ')}`;
      } else {
        problem = `replaying its ${live.length} entries left a catalog of entries ${replayed.join(',')}`;
      }
    } catch (error) {
      if (isJournalDamage(error)) throw error;
      problem = errorText(error);
    }
    this.options.logger.warn(
      { catalogAt, problem },
      "the recorded live catalog did not rebuild the checkpoint's; replaying the whole DDL history instead",
    );
    this.resetForFullReplay();
    this.setStateTracking(true);
    return null;
  }

  /**
   * Opens the checkpoint file. One that cannot be opened or fails its integrity check is set aside
   * (renamed `checkpoint.db.damaged`) and a new one started: the journal holds everything, so a
   * damaged checkpoint costs a full replay, never the start. Returns what was wrong, if anything.
   */
  protected openCheckpoints(): { file: SqliteStore; store: CheckpointStore; damage: string | null } {
    const open = () => {
      const file = new SqliteStore({
        dataDir: this.options.dataDir,
        file: CHECKPOINT_FILE,
        journal: false,
        // The checkpoint writer thread opens it too (checkpoint-writer.ts).
        exclusive: false,
        ...(this.options.verifyOnOpen !== undefined ? { verifyOnOpen: this.options.verifyOnOpen } : {}),
      });
      try {
        const store = new CheckpointStore(file.db, {
          beforeHeader: () => crashPoint('during-checkpoint'),
          betweenSlices: () => crashPoint('between-checkpoint-slices'),
        });
        return { file, store };
      } catch (error) {
        file.close();
        throw error;
      }
    };
    try {
      return { ...open(), damage: null };
    } catch (error) {
      const dir = this.options.dataDir;
      if (dir === null) throw error;
      const damage = `the checkpoint file cannot be opened: ${errorText(error)}`;
      const aside = setAsideDamaged(dir, CHECKPOINT_FILE);
      this.options.logger.error(
        { err: error, setAside: aside },
        'the checkpoint file is damaged; it was set aside and the whole journal is replayed instead',
      );
      return { ...open(), damage };
    }
  }

  /**
   * Builds the table rows the checkpoint load left as columns (table-rows.ts), a slice per turn
   * of the event loop, so that the first request after a restart does not build them all at once
   * (a million keyed rows take ~0.3 s). Anything that needs them sooner builds the rest itself.
   */
  private buildDeferredWhileIdle(): void {
    const engine = this.engine;
    const step = (): void => {
      if (this.closing || this.engine !== engine) return;
      if (!engine.buildDeferredRows(DEFERRED_SLICE_ROWS)) setImmediate(step).unref();
    };
    setImmediate(step).unref();
  }

  /** Forgets the stored checkpoint after it was found unusable; the next one is full. */
  private discardCheckpoints(): void {
    try {
      this.checkpoints.clear();
      return;
    } catch (error) {
      const dir = this.options.dataDir;
      if (dir === null) throw error;
      // Too damaged even to be emptied: set aside like one that cannot be opened.
      this.checkpointFile.close();
      const aside = setAsideDamaged(dir, CHECKPOINT_FILE);
      this.options.logger.error({ err: error, setAside: aside }, 'the damaged checkpoint file was set aside');
      const fresh = this.openCheckpoints();
      this.checkpointFile = fresh.file;
      this.checkpoints = fresh.store;
    }
  }

  /** Forgets a partly recovered engine and its feeds, so the whole journal can be replayed. */
  private resetForFullReplay(): void {
    this.checkpointEpoch = -1;
    this.checkpointOffset = -1;
    this.store.rollback();
    for (const entry of this.feeds.values()) entry.unsubscribe();
    this.feeds.clear();
    this.ddlSinceSync = false;
    this.catalogIncarnations.clear();
    this.log.lastDdlOffset = 0;
    this.engine.close(); // its worker threads, if any: the replacement starts its own
    this.engine = this.options.createEngine();
    this.epochTimes.reset();
    this.watchEpochs();
    // The checkpoint is discarded: the next one is full, so nothing is tracked until it is taken.
    this.setStateTracking(false);
  }

  /** Applies journal entries to the engine, reproducing their epochs; returns how many. */
  private replay(entries: Iterable<LoggedEntry>): number {
    this.replaying = true;
    this.engine.setJournal(null);
    // Epochs take their journaled clocks; nothing in replay reads the time.
    this.engine.setClockFrozen(true);
    let applied = 0;
    try {
      for (const entry of entries) {
        this.store.begin();
        this.replayAt = entry.at;
        try {
          if (entry.kind === 'ddl') {
            if (this.ddlSinceSync) this.syncCatalog();
            this.log.lastDdlOffset = entry.offset;
            // Accepted once, so replayed whatever today's limits say (an older data file may exceed them).
            this.engine.execute(entry.sql, { limits: REPLAY_SQL_LIMITS, rules: entry.rules });
            this.ddlSinceSync = true;
          } else if (entry.kind === 'clock') {
            this.engine.restoreClockSetting(entry.clock);
          } else if (entry.kind === 'tick') {
            if (this.ddlSinceSync) this.syncCatalog();
            const result = this.engine.tick({ clock: entry.clock });
            if (result.epoch !== entry.epoch) {
              throw new SluiceError(
                'STATE_ERROR',
                `replay diverged: log offset ${entry.offset} (a clock tick) produced epoch ${result.epoch}, logged as ${entry.epoch}`,
              );
            }
          } else {
            if (this.ddlSinceSync) this.syncCatalog();
            const fromSource = this.engine.writtenByConnector(entry.table);
            const result = this.engine.applyChanges(
              entry.table,
              { insert: entry.inserts, delete: entry.deletes },
              // A batch from before the clock existed reads as the wall-clock time it was journaled at.
              { positions: entry.positions, fromSource, clock: entry.clock ?? entry.at * 1000 },
            );
            if (result.epoch !== entry.epoch) {
              throw new SluiceError(
                'STATE_ERROR',
                `replay diverged: log offset ${entry.offset} produced epoch ${result.epoch}, logged as ${entry.epoch}`,
              );
            }
          }
        } catch (error) {
          if (error instanceof SluiceError && error.code === 'STATE_ERROR') throw error;
          throw new SluiceError('STATE_ERROR', `replay of log offset ${entry.offset} failed`, {
            detail: errorText(error),
          });
        }
        applied += 1;
        if (applied % 256 === 0) this.store.commit();
      }
      if (this.ddlSinceSync) this.syncCatalog();
      this.store.commit();
    } catch (error) {
      this.store.rollback();
      throw error;
    } finally {
      this.replaying = false;
      this.engine.setClockFrozen(false);
    }
    // A manual clock stands where the replayed epochs left it (SHOW CLOCK's source), never behind.
    this.engine.restoreClockSetting(this.engine.clock);
    return applied;
  }
}

const CHECKPOINT_FILE = 'checkpoint.db';
/** Deferred table rows built per turn of the event loop (a few ms). */
const DEFERRED_SLICE_ROWS = 8192;

/**
 * Renames a damaged SQLite file and its write-ahead log to `<file>.damaged[-wal]` (replacing an
 * earlier one), so a new file can start in its place and the old one stays for inspection. A
 * stale `-wal` must not stay beside a new file: SQLite would apply it. Returns the new path.
 */
function setAsideDamaged(dir: string, file: string): string {
  const target = join(dir, `${file}.damaged`);
  for (const suffix of ['', '-wal', '-shm']) {
    const from = join(dir, file + suffix);
    if (existsSync(from)) renameSync(from, target + suffix);
    else rmSync(target + suffix, { force: true });
  }
  return target;
}

function isJournalDamage(error: unknown): boolean {
  return error instanceof SluiceError && error.code === 'STATE_ERROR' && /^journal entry/.test(error.message);
}
