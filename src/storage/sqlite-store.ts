// The server's one durable file: a SQLite database (WAL, synchronous=FULL) holding the journal
// (DDL + table batches in one ordered sequence) and the view changelogs. A transaction is opened on
// the first write of an engine call and committed once the call has fully applied
// (src/server/runtime/commit.ts).
//
// Deferred sync (group-committed ingest only): a transaction begun while `deferSync` is set runs at
// synchronous=NORMAL, so its COMMIT writes the WAL frames without waiting for the disk; the caller
// then makes them durable with an fdatasync of the WAL file, on the libuv pool (`syncAsync`), or at
// once (`commit`), before anything acknowledges the transaction. That is what synchronous=FULL does
// inside COMMIT, moved off the server's thread. Every other transaction, and every statement
// outside one, runs at FULL as before.
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { SluiceError } from '../common/errors.ts';
import { migrateChangelogHistory } from './changelog-history-migration.ts';

const FORMAT_VERSION = '1';
/** The page size of a new journal file (sluice.db); see the constructor. */
export const JOURNAL_PAGE_SIZE = 16384;
/**
 * WAL frames the store's own WAL checkpoint (`checkpointWalWhenIdle`) aims to run at: under SQLite's
 * autocheckpoint (1,000 frames, left on as the bound), which then runs only when the store's own
 * could not (a transaction open whenever a sync returned, as under steady load).
 */
const WAL_CHECKPOINT_TARGET_FRAMES = 800;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS journal (
  log_offset INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('ddl', 'batch')),
  epoch INTEGER NOT NULL,
  target TEXT,
  payload TEXT NOT NULL,
  positions TEXT,
  at INTEGER NOT NULL,
  checksum TEXT
);
CREATE INDEX IF NOT EXISTS journal_ddl ON journal (log_offset) WHERE kind = 'ddl';
-- A rowid table, (view, epoch) in its own index. A message is 5-50 KB; a WITHOUT ROWID table keeps
-- every entry in the key's b-tree, its interior pages holding entries' first KBs too, and the same
-- epochs then cost about a third more CPU and a quarter more WAL bytes to write (bench/README.md,
-- server-e2e.ts, 2026-12-07). A file made before has that layout and keeps it: every statement
-- of changelog-store.ts reads and writes both alike.
CREATE TABLE IF NOT EXISTS changelog (
  view TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  at INTEGER NOT NULL,
  message TEXT NOT NULL,
  prev INTEGER,
  checksum TEXT,
  PRIMARY KEY (view, epoch)
);
CREATE TABLE IF NOT EXISTS changelog_views (
  view TEXT PRIMARY KEY,
  incarnation INTEGER NOT NULL,
  created_epoch INTEGER NOT NULL,
  horizon INTEGER NOT NULL
);
-- Where a view name's stored history ends (changelog-store.ts resumeRefusal): no resume from this
-- epoch or before, for an incarnation created at or before it. reason: 'recomputed' (its rows were
-- recomputed at recovery by a version that computes it differently) or 'dropped' (the name's view
-- was dropped then; one created again at that epoch holds other rows there). Older files are
-- migrated when they are opened (changelog-history-migration.ts).
CREATE TABLE IF NOT EXISTS changelog_history_ends (
  view TEXT PRIMARY KEY,
  incarnation INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  reason TEXT NOT NULL DEFAULT 'recomputed'
);
`;

export interface StoreOptions {
  /** Directory holding `sluice.db`; created if missing. `null` keeps everything in memory (tests). */
  readonly dataDir: string | null;
  /**
   * Run `PRAGMA quick_check` on open (default true): a damaged file is refused at start instead of
   * failing later on a page recovery happens not to read.
   */
  readonly verifyOnOpen?: boolean;
  /** The file in `dataDir` (default `sluice.db`). */
  readonly file?: string;
  /** Create the journal and changelog tables and the format row (default true: the main file). */
  readonly journal?: boolean;
  /**
   * Hold the file's lock for the whole connection (default true): a second server on the same
   * directory fails at once. False lets a second connection of this process (the checkpoint
   * writer thread) open it; the main file's lock still keeps other servers out of the directory.
   */
  readonly exclusive?: boolean;
}

export class SqliteStore {
  readonly db: Database.Database;
  readonly path: string;
  /** Transactions begun while this is set commit without waiting for the disk (see the header). */
  deferSync = false;
  /** The WAL file, for its fdatasync (opened at the first deferred transaction); null: none yet. */
  private walFd: number | null = null;
  /** False once the WAL could not be opened (in memory, or a file without one): no deferral. */
  private walUsable: boolean;
  /** The open transaction runs at synchronous=NORMAL: its COMMIT leaves a sync owed. */
  private openDeferred = false;
  /** Deferred commits made, and how many of them (the first n) a WAL sync has made durable. */
  private deferredCommits = 0;
  private transactionsBegun = 0;
  private syncedCommits = 0;
  private syncsInFlight = 0;
  /**
   * Syncs issued, oldest first, with the deferred commits each covers: `syncedCommits` moves only
   * through syncs that returned without an error and after every earlier one did (the pool may
   * finish them in either order, and a later sync's success is not taken for an earlier one's,
   * which may yet report a write error of the earlier commits' frames). The one place of that rule:
   * the runtime completes its groups from it (`durableCommits`, src/server/runtime/commit.ts).
   */
  private syncQueue: { readonly through: number; returned: boolean; failed: boolean }[] = [];
  /**
   * The WAL's fdatasync on the libuv pool (`fs.fdatasync`): a test replaces it to hold a sync's
   * completion or report an error, with the store's own bookkeeping around it as in service.
   */
  walSync: (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void = fdatasync;
  /**
   * More descriptors of the WAL file, free for a sync while another is in flight. Linux reports a
   * write-back error once per open file description, to the first fsync on it that checks: two syncs
   * in flight on one descriptor could hand an earlier commit's error to the later sync alone, so each
   * sync in flight holds a descriptor of its own (an error then fails every sync whose frames it holds).
   */
  private spareWalFds: number[] = [];
  /** Whether `walFd` itself is held by a sync in flight. */
  private walFdBusy = false;
  /** Deferred commits since the store's own last WAL checkpoint, and how many it waits for. */
  private commitsSinceWalCheckpoint = 0;
  private walCheckpointEvery = 64;
  private walCheckpointScheduled = false;
  /** The WAL header's restart count at the store's own last WAL checkpoint. */
  private walRestartsAtCheckpoint = -1;
  /** WAL checkpoints the store ran itself, between requests (tests count them). */
  walCheckpoints = 0;

  constructor(options: StoreOptions) {
    if (options.dataDir === null) {
      this.path = ':memory:';
    } else {
      mkdirSync(options.dataDir, { recursive: true });
      this.path = join(options.dataDir, options.file ?? 'sluice.db');
    }
    try {
      // A short busy timeout: a locked file means another server owns it, so fail fast.
      this.db = new Database(this.path, { timeout: 250 });
      // One process owns the data directory: a second server on it fails here instead of
      // interleaving journals.
      if (options.exclusive !== false) this.db.pragma('locking_mode = EXCLUSIVE');
      // A new journal file gets 16 KB pages (a file that exists keeps its own: WAL fixes the size).
      // Every group commit writes ~100-300 KB of journal and changelog text into the WAL, one
      // write per page: 4 KB pages made that a few hundred syscalls a commit, and SQLite's CPU for
      // the same bytes fell by about a third with 16 KB (bench/README, server-e2e.ts, 2026-12-03).
      if (options.journal !== false) this.db.pragma(`page_size = ${JOURNAL_PAGE_SIZE}`);
      this.db.pragma('journal_mode = WAL');
      // FULL: a committed transaction survives power loss, so an acknowledged write is durable.
      this.db.pragma('synchronous = FULL');
      if (options.journal !== false) {
        this.db.exec('BEGIN EXCLUSIVE');
        this.db.exec(SCHEMA);
        addColumnIfMissing(this.db, 'journal', 'checksum', 'TEXT');
        addColumnIfMissing(this.db, 'changelog', 'prev', 'INTEGER');
        addColumnIfMissing(this.db, 'changelog', 'checksum', 'TEXT');
        // In the same transaction: a crash before its COMMIT leaves the file as it was.
        migrateChangelogHistory(this.db);
        this.db.exec('COMMIT');
      }
      this.walUsable = this.path !== ':memory:' && options.journal !== false;
    } catch (error) {
      throw new SluiceError('STATE_ERROR', `cannot open data file "${this.path}"`, {
        detail: error instanceof Error ? error.message : String(error),
        hint: 'is another Sluice server using the same data directory, or is the file damaged?',
      });
    }
    if (options.verifyOnOpen !== false && this.path !== ':memory:') this.verify();
    if (options.journal === false) return;
    if (this.getMeta('instance') === undefined) this.setMeta('instance', randomUUID().slice(0, 8));
    if (this.getMeta('checksummed_from') === undefined) {
      // Everything written from now on carries a checksum; a file from before checksums keeps its
      // older entries readable without one. A new file: every entry must have one.
      const journal = this.db.prepare('SELECT MAX(log_offset) AS o FROM journal').get() as {
        o: number | null;
      };
      const changelog = this.db.prepare('SELECT MAX(epoch) AS e FROM changelog').get() as {
        e: number | null;
      };
      this.setMeta(
        'checksummed_from',
        JSON.stringify({ journal: (journal.o ?? 0) + 1, changelog: (changelog.e ?? -1) + 1 }),
      );
    }
    const format = this.getMeta('format');
    if (format === undefined) this.setMeta('format', FORMAT_VERSION);
    else if (format !== FORMAT_VERSION) {
      throw new SluiceError(
        'STATE_ERROR',
        `data file "${this.path}" has format ${format}, expected ${FORMAT_VERSION}`,
      );
    }
  }

  /** `PRAGMA quick_check`: structural damage (torn pages, broken b-trees) → STATE_ERROR. */
  verify(): void {
    let problems: string[];
    try {
      problems = (this.db.pragma('quick_check(20)') as { quick_check: string }[]).map((r) => r.quick_check);
    } catch (error) {
      problems = [error instanceof Error ? error.message : String(error)];
    }
    if (problems.length === 1 && problems[0] === 'ok') return;
    this.db.close();
    throw new SluiceError('STATE_ERROR', `data file "${this.path}" is damaged`, {
      detail: problems.join('; '),
      hint: 'restore the data directory from a backup; the server does not start on a damaged file',
    });
  }

  /** The first journal offset and changelog epoch whose entries must carry a checksum. */
  get checksummedFrom(): { readonly journal: number; readonly changelog: number } {
    const text = this.getMeta('checksummed_from');
    const parsed =
      text === undefined ? null : (JSON.parse(text) as { journal?: unknown; changelog?: unknown });
    if (parsed === null || typeof parsed.journal !== 'number' || typeof parsed.changelog !== 'number') {
      throw new SluiceError(
        'STATE_ERROR',
        `data file "${this.path}" is damaged: its checksum record is unreadable`,
      );
    }
    return { journal: parsed.journal, changelog: parsed.changelog };
  }

  /** A short id of this data directory (names its Kafka consumer groups and transactional ids). */
  get instanceId(): string {
    return this.getMeta('instance') ?? 'sluice';
  }

  getMeta(key: string): string | undefined {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as
      { value: string } | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.db
      .prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  /** Counts the write transactions begun: two writes with the same value went into one. */
  get transactionSerial(): number {
    return this.transactionsBegun;
  }

  /** Opens the write transaction of the current engine call unless one is open already. */
  begin(): void {
    if (this.db.inTransaction) return;
    this.transactionsBegun += 1;
    // The level can only change outside a transaction (SQLite refuses it inside one).
    const deferred = this.deferSync && this.openWal();
    if (deferred) this.db.pragma('synchronous = NORMAL');
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      if (deferred) this.db.pragma('synchronous = FULL');
      throw error;
    }
    this.openDeferred = deferred;
  }

  /** Commits durably: the open transaction, and any deferred commit not yet synced. */
  commit(): void {
    this.commitUnsynced();
    if (this.syncOwed) {
      this.syncWalNow();
      this.syncedCommits = this.deferredCommits;
    }
  }

  /**
   * Commits the open transaction; true when that (or an earlier deferred commit) is not yet known
   * durable: the caller acknowledges it only after `syncAsync` or `commit` has synced.
   */
  commitUnsynced(): boolean {
    if (this.db.inTransaction) {
      this.db.exec('COMMIT');
      if (this.openDeferred) {
        this.openDeferred = false;
        this.deferredCommits += 1;
        this.commitsSinceWalCheckpoint += 1;
        this.db.pragma('synchronous = FULL');
      }
    }
    return this.syncOwed;
  }

  /**
   * Checkpoints the WAL in the next check phase when enough deferred commits have gone into it and,
   * by then, no transaction is open and no sync is owed. Called once a group's answers are resolved
   * (their replies are written before the check phase): SQLite's autocheckpoint runs inside the
   * COMMIT that crosses its bound, with its fsyncs, so the request committing waited for it; here it
   * runs between requests, with the same fsyncs (SQLite's own checkpoint, at synchronous=FULL).
   */
  checkpointWalWhenIdle(): void {
    if (this.walCheckpointScheduled || this.walFd === null) return;
    if (this.commitsSinceWalCheckpoint < this.walCheckpointEvery) return;
    this.walCheckpointScheduled = true;
    setImmediate(() => {
      this.walCheckpointScheduled = false;
      if (!this.db.open || this.db.inTransaction || this.syncOwed || this.walFd === null) return;
      const restarts = walRestartCount(this.walFd);
      const [result] = this.db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      this.walCheckpoints += 1;
      // How many commits the next waits for: the frames this one found, per commit, against the
      // target; halved when SQLite's autocheckpoint ran meanwhile (the WAL was started over more
      // than once since the last), since its frame count then covers only part of the commits.
      const frames = result?.log ?? 0;
      const autocheckpointed =
        this.walRestartsAtCheckpoint >= 0 && restarts > this.walRestartsAtCheckpoint + 1;
      if (autocheckpointed) this.walCheckpointEvery = Math.max(1, this.walCheckpointEvery >> 1);
      else if (frames > 0) {
        const perCommit = frames / this.commitsSinceWalCheckpoint;
        this.walCheckpointEvery = Math.min(
          4096,
          Math.max(1, Math.floor(WAL_CHECKPOINT_TARGET_FRAMES / perCommit)),
        );
      }
      this.walRestartsAtCheckpoint = restarts;
      this.commitsSinceWalCheckpoint = 0;
    });
  }

  /** Whether a deferred commit waits for its WAL sync. */
  get syncOwed(): boolean {
    return this.syncedCommits < this.deferredCommits;
  }

  /** Deferred commits made so far: a commit is durable once `durableCommits` reaches its count. */
  get deferredCommitCount(): number {
    return this.deferredCommits;
  }

  /** How many deferred commits (the first n) are known durable. */
  get durableCommits(): number {
    return this.syncedCommits;
  }

  /**
   * WAL syncs issued by `syncAsync` and not yet taken into account: one that returned stays counted
   * while an earlier one is out (or for good once one failed), since only the in-order prefix moves
   * `durableCommits`.
   */
  get syncsOutstanding(): number {
    return this.syncQueue.length;
  }

  /**
   * Makes every deferred commit made so far durable (an fdatasync of the WAL file on the libuv
   * pool), then calls `done`; the error when the sync failed (nothing made since may be trusted).
   * When `done` runs, `durableCommits` already counts what this sync, and every one issued before it,
   * made durable: with an earlier sync still out, that is less than this sync covers.
   */
  syncAsync(done: (error: Error | null) => void): void {
    const through = this.deferredCommits;
    if (this.walFd === null || !this.syncOwed) {
      setImmediate(() => done(null));
      return;
    }
    let fd: number;
    try {
      fd = this.takeWalFd();
    } catch (error) {
      setImmediate(() => done(error as Error));
      return;
    }
    const entry = { through, returned: false, failed: false };
    this.syncQueue.push(entry);
    this.syncsInFlight += 1;
    this.walSync(fd, (error) => {
      this.syncsInFlight -= 1;
      this.giveWalFd(fd);
      entry.returned = true;
      entry.failed = error !== null;
      while (this.syncQueue.length > 0) {
        const first = this.syncQueue[0] as { readonly through: number; returned: boolean; failed: boolean };
        if (!first.returned || first.failed) break;
        this.syncQueue.shift();
        if (first.through > this.syncedCommits) this.syncedCommits = first.through;
      }
      if (!this.db.open) this.closeWal();
      done(error);
    });
  }

  /** A descriptor of the WAL file no sync in flight holds (`walFd` when free), for one sync. */
  private takeWalFd(): number {
    if (!this.walFdBusy) {
      this.walFdBusy = true;
      return this.walFd as number;
    }
    return this.spareWalFds.pop() ?? this.openWalAgain();
  }

  private giveWalFd(fd: number): void {
    if (fd === this.walFd) this.walFdBusy = false;
    else this.spareWalFds.push(fd);
  }

  /** An fdatasync of the WAL on this thread, on a descriptor of its own (see `spareWalFds`). */
  private syncWalNow(): void {
    const fd = this.takeWalFd();
    try {
      fdatasyncSync(fd);
    } finally {
      this.giveWalFd(fd);
    }
  }

  /** Another descriptor of the WAL file SQLite writes (checked by inode against the first). */
  private openWalAgain(): number {
    const fd = openSync(`${this.path}-wal`, 'r+');
    if (fstatSync(fd).ino !== fstatSync(this.walFd as number).ino) {
      closeSync(fd);
      throw new SluiceError('STATE_ERROR', `data file "${this.path}-wal" was replaced while the server ran`);
    }
    return fd;
  }

  rollback(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    if (this.openDeferred) {
      this.openDeferred = false;
      this.db.pragma('synchronous = FULL');
    }
  }

  close(): void {
    if (!this.db.open) return;
    this.rollback();
    // A deferred commit not yet synced is synced now, as a commit at FULL would have been.
    if (this.syncOwed) {
      this.syncWalNow();
      this.syncedCommits = this.deferredCommits;
    }
    this.db.close();
    this.closeWal();
  }

  /**
   * Opens the WAL file for its syncs; false where there is none to open (in memory). It is the
   * file SQLite writes: in WAL mode the one connection keeps it (truncated at most, never replaced)
   * until it closes, and the inode is checked against the path once here.
   */
  private openWal(): boolean {
    if (this.walFd !== null) return true;
    if (!this.walUsable) return false;
    const walPath = `${this.path}-wal`;
    try {
      const fd = openSync(walPath, 'r+');
      if (fstatSync(fd).ino !== statSync(walPath).ino) {
        closeSync(fd);
        this.walUsable = false;
        return false;
      }
      this.walFd = fd;
      return true;
    } catch {
      this.walUsable = false;
      return false;
    }
  }

  private closeWal(): void {
    if (this.walFd === null || this.syncsInFlight > 0) return;
    closeSync(this.walFd);
    this.walFd = null;
    for (const fd of this.spareWalFds) closeSync(fd);
    this.spareWalFds = [];
  }
}

/**
 * How many times the WAL was started over: its header's checkpoint sequence number (bytes 12–15,
 * big-endian), which SQLite bumps at each restart; -1 when the header cannot be read.
 */
export function walRestartCount(walFd: number): number {
  const header = Buffer.alloc(16);
  return readSync(walFd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : -1;
}

export function addColumnIfMissing(db: Database.Database, table: string, column: string, type: string): void {
  const columns = db.pragma(`table_info(${table})`) as { name: string }[];
  if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
}
