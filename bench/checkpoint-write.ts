// What a full checkpoint written through the server's writer thread costs the main thread, in-process:
// the Double 11 pipeline over a keyed `orders` table of BENCH_ROWS rows (default 1,100,000, what the
// server bench's throughput run leaves), then per round one full checkpoint through
// OffThreadCheckpointWriter into a durable file (WAL, synchronous=FULL, as the server opens it), in
// 10 ms slices, with a 10-row epoch every millisecond while it is written (as ingest would; few
// enough that the main thread's CPU is mostly the checkpoint's). Every round is full. One JSON line
// per round: the writer's own figures (busy_ms: the main thread's time in slices, take_ms,
// longest_slice_ms, wall_ms), CPU by thread over the write (main_cpu_ms includes the 10-row epochs;
// writer_cpu_ms is the busiest other thread), the epochs run meanwhile, the longest time the event
// loop ran no epoch (and how long before the write's end that gap ended), and the GC pauses, with
// the young-generation ones counted (gc_scavenges: what the write allocates, a semi-space each)
// (BENCH_JOURNAL=1 adds a durable commit of the main thread's own per tick, timed).
// BENCH_INCR_ROWS=N makes every round after the first incremental, after N more rows; BENCH_SLICE_MS
// sets the slice budget.
// `--root <checkout>` measures another checkout (its engine, store and writer).
//
//   node --import tsx bench/checkpoint-write.ts [--root <checkout>]     (BENCH_ROWS, BENCH_ROUNDS, BENCH_SLICE_MS)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { cpuSplit, threadTicks } from './thread-cpu.ts';
import { orderFeeder, PIPELINE_SQL } from './checkpoint-pipeline.ts';

const { values } = parseArgs({ options: { root: { type: 'string' } } });
const ROOT = values.root === undefined ? new URL('..', import.meta.url).pathname : resolve(values.root);
const ROWS = Number(process.env.BENCH_ROWS ?? 1_100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_INCR_ROWS=N: round 0 is full, each later round incremental after N more rows (tracked). */
const INCR_ROWS = Number(process.env.BENCH_INCR_ROWS ?? 0);
/** BENCH_SLICE_MS: the slice budget (the server's `--checkpoint-slice-ms`, default 10). */
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 10);

interface EngineLike {
  setStateTracking(on: boolean): void;
  execute(sql: string): unknown;
  applyChanges(table: string, changes: { insert: Record<string, unknown>[] }): unknown;
  takeCheckpoint(full?: boolean): unknown;
}
interface WriteStats {
  busyMs: number;
  ms: number;
  takeMs?: number;
  longestSliceMs?: number;
  slices?: number;
  maxSliceEntries?: number;
  entries: number;
  bytes: number;
}
interface WriterLike {
  write(source: unknown, journalOffset: number, sliceMs?: number): Promise<WriteStats>;
  close(): void;
}
const { Engine } = (await import(join(ROOT, 'src/exec/engine.ts'))) as { Engine: new () => EngineLike };
const { CheckpointStore } = (await import(join(ROOT, 'src/storage/checkpoint-store.ts'))) as {
  CheckpointStore: new (db: Database.Database) => { requireFull(): void };
};
const { OffThreadCheckpointWriter, checkpointWorkerEntry } = (await import(
  join(ROOT, 'src/server/runtime/checkpoint-writer.ts')
)) as {
  OffThreadCheckpointWriter: new (entry: string, path: string, store: unknown, logger: unknown) => WriterLike;
  checkpointWorkerEntry: () => string | null;
};

const engine = new Engine();
engine.setStateTracking(true);
engine.execute(PIPELINE_SQL);
const insert = orderFeeder(engine);
for (let i = 0; i < ROWS / 1000; i++) insert(1000);

const pauses: number[] = [];
// Young-generation collections among them: each one's cost is what survives it, and their number is
// what the write allocates (a semi-space's worth each).
let scavenges = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    pauses.push(e.duration);
    const kind = (e as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
  }
}).observe({ entryTypes: ['gc'] });

const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-ckwrite-'));
const logger = { info() {}, warn() {}, error() {}, debug() {} };
const round2 = (x: number): number => Number(x.toFixed(2));
try {
  const path = join(dir, 'checkpoint.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const store = new CheckpointStore(db);
  // BENCH_JOURNAL=1: every tick also commits a row to a durable file of the main thread's own (WAL,
  // synchronous=FULL, in the same directory), as the server's journal does: does the writer
  // thread's COMMIT make it wait on the disk?
  const journalDb = process.env.BENCH_JOURNAL === '1' ? new Database(join(dir, 'journal.db')) : null;
  journalDb?.pragma('journal_mode = WAL');
  journalDb?.pragma('synchronous = FULL');
  journalDb?.exec('CREATE TABLE j (id INTEGER, body TEXT)');
  const journal = journalDb?.prepare('INSERT INTO j VALUES (?, ?)') ?? null;
  const entry = checkpointWorkerEntry() ?? assertNever('no writer thread module');
  const writer = new OffThreadCheckpointWriter(entry, path, store, logger);
  for (let round = 0; round < ROUNDS; round++) {
    const incremental = INCR_ROWS > 0 && round > 0;
    if (incremental) for (let i = 0; i < INCR_ROWS / 1000; i++) insert(1000);
    insert(10);
    await new Promise((r) => setTimeout(r, 50)); // GC entries of the inserts arrive
    pauses.length = 0;
    scavenges = 0;
    let epochs = 0;
    let writing = true;
    // The longest the event loop went without running a tick (due every ms), and when it ended.
    let lastTick = performance.now();
    let maxGap = 0;
    let maxGapAt = 0;
    const commits: number[] = [];
    let commitMax = 0;
    let commitMaxAt = 0;
    const tick = (): void => {
      if (!writing) return;
      const now = performance.now();
      if (now - lastTick > maxGap) [maxGap, maxGapAt] = [now - lastTick, now];
      if (journal !== null) {
        // A durable commit on this thread, as the server's journal makes one per group of requests.
        const t0 = performance.now();
        journal.run(epochs, 'x'.repeat(200));
        const ms = performance.now() - t0;
        commits.push(ms);
        if (ms > commitMax) [commitMax, commitMaxAt] = [ms, performance.now()];
      }
      insert(10);
      epochs++;
      lastTick = performance.now();
      setTimeout(tick, 1);
    };
    if (!incremental) store.requireFull();
    const before = threadTicks();
    setTimeout(tick, 1);
    const stats = await writer.write(engine, round + 1, SLICE_MS);
    const ended = performance.now();
    writing = false;
    const split = cpuSplit(before, threadTicks());
    console.log(
      JSON.stringify({
        bench: 'checkpoint-write',
        root: ROOT,
        round,
        rows: ROWS,
        incremental,
        stored_rows: stats.entries,
        busy_ms: round2(stats.busyMs),
        take_ms: round2(stats.takeMs ?? 0),
        longest_slice_ms: round2(stats.longestSliceMs ?? 0),
        slices: stats.slices ?? null,
        max_slice_entries: stats.maxSliceEntries ?? null,
        wall_ms: round2(stats.ms),
        main_cpu_ms: split?.main_ms ?? null,
        writer_cpu_ms: split?.busiest_other_ms ?? null,
        epochs_meanwhile: epochs,
        max_loop_gap_ms: round2(maxGap),
        max_loop_gap_before_end_ms: round2(ended - maxGapAt),
        ...(journal !== null
          ? {
              journal_commit_p50_ms: round2(commits.sort((a, b) => a - b)[commits.length >> 1] ?? 0),
              max_journal_commit_ms: round2(commitMax),
              max_commit_before_end_ms: round2(ended - commitMaxAt),
            }
          : {}),
        gc_max_ms: round2(Math.max(0, ...pauses)),
        gc_total_ms: round2(pauses.reduce((a, b) => a + b, 0)),
        gc_scavenges: scavenges,
      }),
    );
  }
  writer.close();
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`);

function assertNever(message: string): never {
  throw new Error(message);
}
