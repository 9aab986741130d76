// Checkpoint cost: a durable data file (WAL, synchronous=FULL, as the server opens it) holding the
// Double 11 pipeline with 100,000 seller groups, then incremental checkpoints with 1% of the groups
// dirty. Prints one JSON line per figure: ms and bytes (encoded entries, and WAL bytes appended)
// for the full checkpoint, for each incremental one, and the startup cost of read+verify and of
// loading the checkpoint into a fresh engine.
//
//   node --import tsx bench/checkpoint.ts            (BENCH_GROUPS, BENCH_ROWS, BENCH_ROUNDS)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../src/exec/engine.ts';
import { CheckpointStore } from '../src/storage/checkpoint-store.ts';
import { SqliteStore } from '../src/storage/sqlite-store.ts';
import type { Row } from '../src/common/types.ts';

const GROUPS = Number(process.env.BENCH_GROUPS ?? 100_000);
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DIRTY = Math.max(1, Math.floor(GROUPS / 100));

const DDL = `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total, MAX(amount) AS top FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)`;

let seed = 20111111;
function rnd(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

function emit(figure: string, values: Record<string, unknown>): void {
  console.log(JSON.stringify({ figure, groups: GROUPS, rows: ROWS, ...values }));
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-ckpt-'));
try {
  const sqlite = new SqliteStore({ dataDir: dir });
  // Let the WAL grow during the run so the bytes each checkpoint appends can be read off its size.
  sqlite.db.pragma('wal_autocheckpoint = 0');
  const store = new CheckpointStore(sqlite.db);
  const engine = new Engine();
  engine.setStateTracking(true);
  engine.execute(DDL);
  const batch = 10_000;
  const ingestStarted = performance.now();
  for (let start = 0; start < ROWS; start += batch) {
    const rows: Row[] = [];
    for (let i = start; i < Math.min(ROWS, start + batch); i++)
      rows.push({ order_id: i, seller_id: i % GROUPS, amount: 1 + Math.floor(rnd() * 100) });
    engine.applyChanges('orders', { insert: rows, delete: [] });
  }
  let offset = ROWS / batch;
  emit('ingest (for comparison: what a replay from the start re-does)', {
    ms: Math.round(performance.now() - ingestStarted),
  });

  let wal = walBytes(sqlite.path);
  const full = store.checkpoint(engine, offset);
  emit('full checkpoint', {
    ms: Math.round(full.ms),
    entries: full.entries,
    encodedBytes: full.bytes,
    walBytes: walBytes(sqlite.path) - wal,
  });
  sqlite.db.pragma('wal_checkpoint(TRUNCATE)');

  for (let round = 0; round < ROUNDS; round++) {
    // 1% of the sellers get one new order each (and one older order of theirs is deleted).
    const insert: Row[] = [];
    const del: Row[] = [];
    const first = Math.floor(rnd() * GROUPS);
    for (let j = 0; j < DIRTY; j++) {
      const seller = (first + j * 97) % GROUPS;
      insert.push({
        order_id: ROWS + round * DIRTY + j,
        seller_id: seller,
        amount: 1 + Math.floor(rnd() * 100),
      });
      del.push({ order_id: seller + GROUPS * round });
    }
    engine.applyChanges('orders', { insert, delete: del });
    offset++;
    wal = walBytes(sqlite.path);
    const inc = store.checkpoint(engine, offset);
    emit('incremental checkpoint, 1% of groups dirty', {
      round,
      ms: Math.round(inc.ms * 10) / 10,
      upserts: inc.upserts,
      deletes: inc.deletes,
      encodedBytes: inc.bytes,
      walBytes: walBytes(sqlite.path) - wal,
    });
  }

  let t = performance.now();
  store.verify();
  const verifyMs = performance.now() - t;
  t = performance.now();
  const stored = store.read();
  const readMs = performance.now() - t;
  if (stored === null) throw new Error('no checkpoint');
  const restored = new Engine();
  restored.execute(DDL);
  t = performance.now();
  restored.loadCheckpoint(stored.checkpoint);
  const loadMs = performance.now() - t;
  emit('startup: read + verify the checkpoint, then load it into a fresh engine', {
    verifyOnlyMs: Math.round(verifyMs),
    readVerifyMs: Math.round(readMs),
    loadMs: Math.round(loadMs),
    entries: store.info()?.entries,
    fileBytes: statSync(sqlite.path).size,
  });
  sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
