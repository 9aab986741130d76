// What SQLite's WAL autocheckpoint costs the server's group commit, in-process: 1,200 transactions of
// 3 epochs each, written as the server writes them (a journal batch of 12 KB and changelog entries of
// 12.3 KB and 6.6 KB per epoch, ASCII text, about what the `server-e2e.ts` Double 11 run stores), on a
// file set up like `sluice.db` (16 KB pages, WAL, exclusive locking, the group's synchronous=NORMAL),
// with the default autocheckpoint (every 1,000 pages) and with none, alternating. Prints CPU (user +
// system), wall time, the time spent in COMMIT and the longest COMMIT: the checkpoint runs inside the
// COMMIT that passes the bound, on the thread that commits.
//   node --import tsx bench/wal-autocheckpoint.ts [--rounds 3] [--commits 1200] [--settings 1000,0]
// (--settings: the wal_autocheckpoint values to compare, in pages; 0 is none)
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { histogramText, journalText, sellerText } from './wal-texts.ts';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
}
const rounds = flag('rounds', 3);
const commits = flag('commits', 1200);
const settingsAt = process.argv.indexOf('--settings');
const settings = (settingsAt < 0 ? '1000,0' : (process.argv[settingsAt + 1] ?? '')).split(',').map(Number);

function run(autocheckpoint: number): void {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-wal-'));
  const db = new Database(join(dir, 'sluice.db'));
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('page_size = 16384');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
    db.exec(`CREATE TABLE journal (log_offset INTEGER PRIMARY KEY, payload TEXT NOT NULL);
      CREATE TABLE changelog (view TEXT NOT NULL, epoch INTEGER NOT NULL, message TEXT NOT NULL,
        PRIMARY KEY (view, epoch)) WITHOUT ROWID`);
    const journal = db.prepare('INSERT INTO journal VALUES (?, ?)');
    const changelog = db.prepare('INSERT INTO changelog VALUES (?, ?, ?)');
    let epoch = 0;
    let inCommit = 0;
    let longest = 0;
    const wall = performance.now();
    const cpu = process.cpuUsage();
    for (let c = 0; c < commits; c++) {
      db.exec('BEGIN IMMEDIATE');
      for (let k = 0; k < 3; k++) {
        epoch++;
        journal.run(epoch, journalText + epoch);
        changelog.run('seller_totals', epoch, sellerText + epoch);
        changelog.run('total_histogram', epoch, histogramText + epoch);
      }
      const t = performance.now();
      db.exec('COMMIT');
      const took = performance.now() - t;
      inCommit += took;
      longest = Math.max(longest, took);
    }
    const used = process.cpuUsage(cpu);
    console.log(
      JSON.stringify({
        bench: 'wal-autocheckpoint',
        wal_autocheckpoint: autocheckpoint,
        commits,
        cpu_ms: Math.round((used.user + used.system) / 1000),
        system_ms: Math.round(used.system / 1000),
        wall_ms: Math.round(performance.now() - wall),
        in_commit_ms: Math.round(inCommit),
        longest_commit_ms: Math.round(longest),
        load: Number(loadavg()[0]?.toFixed(2)),
      }),
    );
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (let r = 0; r < rounds; r++) {
  // The order alternates, so a drift of the machine is not charged to one setting.
  const order = r % 2 === 0 ? settings : [...settings].reverse();
  for (const setting of order) run(setting);
}
