// The journal's size on disk under a long ingest, with journal retention and without: an in-process
// durable runtime ingests rounds of batches into a keyless table (one GROUP BY view over it), takes
// a checkpoint after each round, and runs retention's slices with the clock moved past the
// retention (so every batch the checkpoint covers is due); after each round it prints sluice.db's
// size, its WAL's, SQLite's page and free-page counts, the journal's rows, and the longest slice.
// Freed pages go on SQLite's free list and the next rounds' inserts reuse them: with retention the
// journal's part of the file stops growing at about what the batches after one checkpoint take (the
// rest grows with the changelogs, which have their own retention).
//   node --import tsx bench/journal-retention.ts [--rounds 20] [--batches 200] [--rows 500] [--keep-all]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../src/exec/engine.ts';
import { DEFAULTS } from '../src/server/defaults.ts';
import { SluiceRuntime } from '../src/server/runtime.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const rounds = option('--rounds', 20);
const batches = option('--batches', 200);
const rowsPerBatch = option('--rows', 500);
const keepAll = args.includes('--keep-all');
const RETENTION_MS = 60_000;

const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-journal-'));
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const rt = new SluiceRuntime({
  dataDir: dir,
  retention: DEFAULTS.retention,
  limits: DEFAULTS.subscriberLimits,
  heartbeatMs: 60_000,
  snapshotChunkRows: 1000,
  pruneIntervalMs: 3_600_000,
  createEngine: () => new Engine(),
  logger: quiet,
  checkpoint: { intervalMs: 1e9, epochs: 1e9 },
  journalRetention: { ms: keepAll ? null : RETENTION_MS, sliceRows: DEFAULTS.journalRetention.sliceRows },
});

const size = (file: string): number => {
  try {
    return statSync(join(dir, file)).size;
  } catch {
    return 0;
  }
};
const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);

try {
  rt.executeScript(`CREATE TABLE events (id BIGINT, k INTEGER, note TEXT);
CREATE MATERIALIZED VIEW per_k AS SELECT k, COUNT(*) AS n FROM events GROUP BY k`);
  console.log(
    `retention ${keepAll ? 'off (keep all)' : `${RETENTION_MS / 1000} s, slices of ${DEFAULTS.journalRetention.sliceRows} batches`}; ${batches} batches × ${rowsPerBatch} rows a round`,
  );
  console.log(
    'round  rows ingested  sluice.db MB  -wal MB  pages  free pages  journal rows  journal payload MB  changelog MB  deleted  slices  longest slice ms',
  );
  let id = 0;
  for (let round = 1; round <= rounds; round++) {
    for (let b = 0; b < batches; b++) {
      const insert = [];
      for (let r = 0; r < rowsPerBatch; r++, id++)
        insert.push({ id, k: id % 97, note: `event number ${id}` });
      rt.ingest('events', { insert });
    }
    rt.flush();
    rt.checkpoint();
    let deleted = 0;
    let slices = 0;
    let longest = 0;
    for (;;) {
      const t0 = performance.now();
      const slice = rt.trimJournalSlice(Date.now() + 2 * RETENTION_MS);
      longest = Math.max(longest, performance.now() - t0);
      if (slice === null) break;
      slices += 1;
      deleted += slice.deleted;
      if (!slice.more) break;
    }
    const db = rt.store.db;
    const pages = db.pragma('page_count', { simple: true }) as number;
    const free = db.pragma('freelist_count', { simple: true }) as number;
    const journal = db
      .prepare('SELECT COUNT(*) AS n, TOTAL(LENGTH(payload)) AS bytes FROM journal')
      .get() as {
      n: number;
      bytes: number;
    };
    const changelog = db.prepare('SELECT TOTAL(LENGTH(message)) AS bytes FROM changelog').get() as {
      bytes: number;
    };
    console.log(
      [
        round,
        id,
        mb(size('sluice.db')),
        mb(size('sluice.db-wal')),
        pages,
        free,
        journal.n,
        mb(journal.bytes),
        mb(changelog.bytes),
        deleted,
        slices,
        longest.toFixed(1),
      ]
        .map(String)
        .join('  '),
    );
  }
} finally {
  rt.close();
  rmSync(dir, { recursive: true, force: true });
}
