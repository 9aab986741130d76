// The journal file's WAL checkpoint, paired against a base checkout, in-process: 1,200 group commits
// of 3 epochs each (a journal batch of 12 KB and changelog entries of 12.3 KB and 6.6 KB per epoch,
// as in wal-autocheckpoint.ts), written through each checkout's own SqliteStore as the server's
// group commit writes them (the transaction at synchronous=NORMAL, COMMIT on this thread, the WAL's
// fdatasync on the libuv pool, the next group after it returns). Prints the thread's time in COMMIT,
// the longest COMMIT and how many passed 10 ms, the process's CPU (user + system, every thread) and
// wall time, alternating base and this checkout.
//   node --import tsx bench/wal-checkpoint-ab.ts --base ../sluice-base [--rounds 3] [--commits 1200]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { flag } from './ab-checkouts.ts';
import { histogramText, journalText, sellerText } from './wal-texts.ts';

interface Store {
  readonly db: { prepare(sql: string): { run(...args: unknown[]): unknown } };
  deferSync: boolean;
  begin(): void;
  commitUnsynced(): boolean;
  syncAsync(done: (error: Error | null) => void): void;
  close(): void;
  readonly walCheckpointer?: { readonly counts: object } | null;
}
type StoreClass = new (options: { dataDir: string }) => Store;

const rounds = Number(flag('rounds', '3'));
const commits = Number(flag('commits', '1200'));
const basePath = resolve(flag('base', '../sluice-base'));

async function run(label: string, Store: StoreClass): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-walab-'));
  const store = new Store({ dataDir: dir });
  try {
    store.deferSync = true;
    const journal = store.db.prepare(
      "INSERT INTO journal (log_offset, kind, epoch, target, payload, at) VALUES (?, 'batch', ?, 'orders', ?, 0)",
    );
    const changelog = store.db.prepare(
      'INSERT INTO changelog (view, epoch, at, message) VALUES (?, ?, 0, ?)',
    );
    let epoch = 0;
    let inCommit = 0;
    let longest = 0;
    let over10 = 0;
    const wall = performance.now();
    const cpu = process.cpuUsage();
    for (let c = 0; c < commits; c++) {
      store.begin();
      for (let k = 0; k < 3; k++) {
        epoch++;
        journal.run(epoch, epoch, journalText + epoch);
        changelog.run('seller_totals', epoch, sellerText + epoch);
        changelog.run('total_histogram', epoch, histogramText + epoch);
      }
      const t = performance.now();
      store.commitUnsynced();
      const took = performance.now() - t;
      inCommit += took;
      longest = Math.max(longest, took);
      if (took > 10) over10++;
      await new Promise<void>((done, fail) => store.syncAsync((e) => (e === null ? done() : fail(e))));
    }
    const used = process.cpuUsage(cpu);
    console.log(
      JSON.stringify({
        bench: 'wal-checkpoint-ab',
        version: label,
        commits,
        in_commit_ms: Math.round(inCommit),
        longest_commit_ms: Math.round(longest),
        commits_over_10ms: over10,
        cpu_ms: Math.round((used.user + used.system) / 1000),
        wall_ms: Math.round(performance.now() - wall),
        wal_checkpoints: store.walCheckpointer?.counts ?? null,
        load: Number(loadavg()[0]?.toFixed(2)),
      }),
    );
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const here = (await import('../src/storage/sqlite-store.ts')) as { SqliteStore: StoreClass };
const base = (await import(pathToFileURL(join(basePath, 'src/storage/sqlite-store.ts')).href)) as {
  SqliteStore: StoreClass;
};
for (let r = 0; r < rounds; r++) {
  const order: [string, StoreClass][] = [
    ['base', base.SqliteStore],
    ['this', here.SqliteStore],
  ];
  if (r % 2 === 1) order.reverse();
  for (const [label, Store] of order) await run(label, Store);
}
