// What loading a checkpoint costs, in-process: the recovery bench's pipeline (orders with a primary
// key → seller_totals over 100,000 sellers → a histogram) over BENCH_ROWS rows (default 1,000,000),
// one full checkpoint written to a temporary file, then per round the CPU time of
// CheckpointStore.read() (SQLite rows, hash checks, decoding) and of Engine.loadCheckpoint into a
// fresh engine, then (`deferredBuildCpuMs`) of building the table rows that load left as columns
// (Engine.buildDeferredRows: what the server does in idle slices after a restart; 0 on a checkout
// without it). Prints one JSON line per round. `--root <checkout>` measures another checkout.
//
//   node --import tsx bench/checkpoint-load.ts [--root <checkout>]      (BENCH_ROWS, BENCH_ROUNDS)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';

const { values } = parseArgs({ options: { root: { type: 'string' } } });
const ROOT = values.root === undefined ? new URL('..', import.meta.url).pathname : resolve(values.root);
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DDL = `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount DOUBLE PRECISION NOT NULL, PRIMARY KEY (order_id));
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 100) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 100)`;

interface EngineLike {
  setStateTracking(on: boolean): void;
  execute(sql: string): unknown;
  applyChanges(table: string, changes: { insert: Record<string, unknown>[] }): unknown;
  loadCheckpoint(cp: unknown): unknown;
  buildDeferredRows?(maxRows: number): boolean;
}
interface StoreLike {
  checkpoint(source: unknown, journalOffset: number): { ms: number; entries: number };
  read(): { checkpoint: unknown } | null;
}
const { Engine } = (await import(join(ROOT, 'src/exec/engine.ts'))) as { Engine: new () => EngineLike };
const { CheckpointStore } = (await import(join(ROOT, 'src/storage/checkpoint-store.ts'))) as {
  CheckpointStore: new (db: Database.Database) => StoreLike;
};

const engine = new Engine();
engine.setStateTracking(true);
engine.execute(DDL);
let seed = 20111111;
function rnd(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
for (let start = 0; start < ROWS; start += 1000) {
  const rows = [];
  for (let i = start; i < Math.min(ROWS, start + 1000); i++)
    rows.push({ order_id: i, seller_id: i % 100_000, amount: Math.round(rnd() * 10000) / 100 });
  engine.applyChanges('orders', { insert: rows });
}
const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-ckload-'));
try {
  const db = new Database(join(dir, 'checkpoint.db'));
  db.pragma('journal_mode = WAL');
  const store = new CheckpointStore(db);
  const written = store.checkpoint(engine, 1);
  console.log(
    JSON.stringify({
      root: ROOT,
      rows: ROWS,
      fullWriteMs: Math.round(written.ms),
      storedRows: written.entries,
    }),
  );
  for (let round = 0; round < ROUNDS; round++) {
    const c0 = process.cpuUsage();
    const stored = store.read();
    const c1 = process.cpuUsage(c0);
    const fresh = new Engine();
    fresh.setStateTracking(true);
    fresh.execute(DDL);
    const c2 = process.cpuUsage();
    fresh.loadCheckpoint(stored?.checkpoint);
    const c3 = process.cpuUsage(c2);
    const c4 = process.cpuUsage();
    fresh.buildDeferredRows?.(Infinity);
    const c5 = process.cpuUsage(c4);
    console.log(
      JSON.stringify({
        round,
        readCpuMs: Math.round((c1.user + c1.system) / 1000),
        loadCheckpointCpuMs: Math.round((c3.user + c3.system) / 1000),
        deferredBuildCpuMs: Math.round((c5.user + c5.system) / 1000),
      }),
    );
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`loadavg ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`);
