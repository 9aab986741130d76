// The Top-N benchmark: the 10 highest bids of every auction, maintained while 1,000,000 bids arrive
// and 100,000 of them (some inside a top 10, which brings the next bid in) are deleted. Sluice runs
//   SELECT auction, id, amount FROM (SELECT auction, id, amount, ROW_NUMBER() OVER
//     (PARTITION BY auction ORDER BY amount DESC, id) AS rn FROM bid) b WHERE rn <= 10
// in-process; @tanstack/db-ivm runs its closest operator, groupedTopKWithFractionalIndex (limit 10,
// grouped by auction, the same order). Each implementation runs in a fresh child process
// (--expose-gc), the two alternating (paired runs), and each child checks its final top 10s against
// a direct computation. Figures: events per CPU second (process.cpuUsage of the timed loop, so the
// load of other processes matters less than in wall time), retained heap per auction, the load.
//
//   node --import tsx bench/topn.ts                  # 1M bids, 10,000 auctions, batch 1,000, 2 pairs
//   node --import tsx bench/topn.ts --quick          # a tenth of the rows, one pair
//   node --import tsx bench/topn.ts --batch 100 --pairs 3
//   node --import tsx bench/topn.ts --append-only    # inserts only, into an APPEND ONLY table
//   node --import tsx bench/topn.ts --append-only --keyless   # the same table without a primary key
//   node --expose-gc --import tsx bench/topn.ts --child sluice --profile DIR   # insert/delete.cpuprofile
//   node --expose-gc --import tsx bench/topn.ts --child sluice --alloc-profile DIR   # insert/delete.heapprofile
//   node --import tsx bench/heapprofile-summary.ts DIR/insert.heapprofile        # bytes allocated by function
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { D2, MultiSet, groupedTopKWithFractionalIndex, output } from '@tanstack/db-ivm';
import { Engine } from '../src/exec/engine.ts';
import type { Row } from '../src/common/types.ts';
import { collectAndSettle } from './gc-settle.ts';
import { sfc32 } from './workload.ts';

type Impl = 'sluice' | 'db-ivm';

interface Options {
  bids: number;
  auctions: number;
  deletes: number;
  batch: number;
  pairs: number;
  seed: number;
  child: Impl | null;
  /** A child writes a CPU profile of each timed phase here (insert.cpuprofile, delete.cpuprofile). */
  profile: string | null;
  /**
   * A child writes an allocation profile of each timed phase here (insert.heapprofile,
   * delete.heapprofile): V8's sampling heap profiler with the objects the collector freed kept in, so
   * it tells which code allocates (garbage included), where node's own `--heap-prof` keeps only what
   * is still alive when the process exits.
   */
  allocProfile: string | null;
  /**
   * Sluice's `bid` is `APPEND ONLY`, so its Top-N keeps only the rows that can still rank; no
   * deletes. db-ivm has no such declaration.
   */
  appendOnly: boolean;
  /** With appendOnly: `bid` has no primary key (as a keyless JSON Kafka source has none). */
  keyless: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = {
    bids: 1_000_000,
    auctions: 10_000,
    deletes: 100_000,
    batch: 1_000,
    pairs: 2,
    seed: 20261202,
    child: null,
    profile: null,
    allocProfile: null,
    appendOnly: false,
    keyless: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = (): number => Number((argv[++i] ?? '').replace(/_/g, ''));
    if (a === '--quick') {
      o.bids = 100_000;
      o.auctions = 1_000;
      o.deletes = 10_000;
      o.pairs = 1;
    } else if (a === '--bids') o.bids = next();
    else if (a === '--auctions') o.auctions = next();
    else if (a === '--deletes') o.deletes = next();
    else if (a === '--batch') o.batch = next();
    else if (a === '--pairs') o.pairs = next();
    else if (a === '--seed') o.seed = next();
    else if (a === '--child') o.child = argv[++i] as Impl;
    else if (a === '--profile') o.profile = argv[++i] ?? null;
    else if (a === '--alloc-profile') o.allocProfile = argv[++i] ?? null;
    else if (a === '--append-only') o.appendOnly = true;
    else if (a === '--keyless') o.keyless = true;
    else throw new Error(`bench: unknown flag ${a}`);
  }
  if (o.keyless && !o.appendOnly)
    throw new Error('bench: --keyless needs --append-only (deletes name the key)');
  if (o.appendOnly) o.deletes = 0;
  return o;
}

interface Bid {
  readonly id: number;
  readonly auction: number;
  readonly bidder: number;
  readonly amount: number;
}

/** The bids, then the ids deleted (a seeded permutation's prefix: any bid, in or out of a top 10). */
function workload(o: Options): { bids: Bid[]; deleted: number[] } {
  const rnd = sfc32(o.seed);
  const bids: Bid[] = [];
  for (let i = 0; i < o.bids; i++) {
    bids.push({
      id: i + 1,
      auction: 1 + Math.floor(rnd() * o.auctions),
      bidder: Math.floor(rnd() * 50_000),
      amount: 1 + Math.floor(rnd() * 1_000_000),
    });
  }
  const ids = bids.map((b) => b.id);
  for (let i = 0; i < o.deletes; i++) {
    const j = i + Math.floor(rnd() * (ids.length - i));
    [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
  }
  return { bids, deleted: ids.slice(0, o.deletes) };
}

const byAmount = (a: Bid, b: Bid): number => b.amount - a.amount || a.id - b.id;

/** auction → its top-10 bid ids in order, as one string, for comparing the implementations. */
function digest(top: Map<number, number[]>): string {
  return [...top.keys()]
    .sort((a, b) => a - b)
    .map((a) => `${a}:${(top.get(a) as number[]).join(',')}`)
    .join(';');
}

function expected(bids: readonly Bid[], deleted: readonly number[]): string {
  const gone = new Set(deleted);
  const per = new Map<number, Bid[]>();
  for (const b of bids) {
    if (gone.has(b.id)) continue;
    const list = per.get(b.auction) ?? [];
    list.push(b);
    per.set(b.auction, list);
  }
  const top = new Map<number, number[]>();
  for (const [a, list] of per)
    top.set(
      a,
      list
        .sort(byAmount)
        .slice(0, 10)
        .map((b) => b.id),
    );
  return digest(top);
}

/**
 * One implementation. A batch is converted to its input form (`insertBatch`, `removeBatch`) before
 * timing, so the timed loop measures only `apply`, as in the canonical benchmark.
 */
interface Runner<Input> {
  insertBatch(bids: readonly Bid[]): Input;
  removeBatch(bids: readonly Bid[]): Input;
  apply(batch: Input): void;
  top(): Map<number, number[]>;
}

type SluiceInput = { insert: Row[] } | { delete: Row[] };

function sluice(o: Options): Runner<SluiceInput> {
  const engine = new Engine();
  engine.execute(
    `CREATE TABLE bid (id integer ${o.keyless ? 'NOT NULL' : 'PRIMARY KEY'}, auction integer NOT NULL, ` +
      `bidder integer NOT NULL, amount integer NOT NULL)${o.appendOnly ? ' APPEND ONLY' : ''}`,
  );
  engine.execute(
    'CREATE MATERIALIZED VIEW top10 AS SELECT auction, id, amount FROM (SELECT auction, id, amount, ' +
      'ROW_NUMBER() OVER (PARTITION BY auction ORDER BY amount DESC, id) AS rn FROM bid) b WHERE rn <= 10',
  );
  return {
    insertBatch: (bids) => ({ insert: bids as unknown as Row[] }),
    removeBatch: (bids) => ({ delete: bids.map((b) => ({ id: b.id })) }),
    apply: (batch) => void engine.applyChanges('bid', batch),
    top: () => {
      const rows = engine.viewSnapshot('top10').rows as unknown as Bid[];
      const top = new Map<number, Bid[]>();
      for (const r of rows) top.set(r.auction, [...(top.get(r.auction) ?? []), r]);
      return new Map([...top].map(([a, list]) => [a, list.sort(byAmount).map((b) => b.id)]));
    },
  };
}

function dbIvm(): Runner<MultiSet<[number, Bid]>> {
  const graph = new D2();
  const input = graph.newInput<[number, Bid]>();
  const kept = new Map<number, { bid: Bid; count: number }>();
  input.pipe(
    groupedTopKWithFractionalIndex<number, Bid>(byAmount, { limit: 10, groupKeyFn: (_k, v) => v.auction }),
    output((message) => {
      for (const [[id, [bid]], weight] of message.getInner()) {
        const at = kept.get(id);
        const count = (at?.count ?? 0) + weight;
        if (count === 0) kept.delete(id);
        else kept.set(id, { bid, count });
      }
    }),
  );
  graph.finalize();
  const multiset = (bids: readonly Bid[], weight: number): MultiSet<[number, Bid]> =>
    new MultiSet(bids.map((b) => [[b.id, b], weight] as [[number, Bid], number]));
  return {
    insertBatch: (bids) => multiset(bids, 1),
    removeBatch: (bids) => multiset(bids, -1),
    apply: (batch) => {
      input.sendData(batch);
      graph.run();
    },
    top: () => {
      const top = new Map<number, Bid[]>();
      for (const { bid } of kept.values()) top.set(bid.auction, [...(top.get(bid.auction) ?? []), bid]);
      return new Map([...top].map(([a, list]) => [a, list.sort(byAmount).map((b) => b.id)]));
    },
  };
}

function heap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Posts an inspector command and waits for its reply (the session answers synchronously in-thread). */
function post(session: Session, method: string): unknown {
  let result: unknown;
  let error: Error | null = null;
  session.post(method, (err, res) => {
    error = err;
    result = res;
  });
  if (error !== null) throw error;
  return result;
}

/**
 * Profiles one phase into `<--profile dir>/<name>.cpuprofile` (or its allocations, `--alloc-profile`):
 * a profile per phase, so the insert and the delete path are read apart (`node --cpu-prof` would mix
 * them in one file).
 */
function profiled(o: Options, name: string, run: () => number): number {
  if (o.allocProfile !== null) return allocProfiled(o.allocProfile, name, run);
  const dir = o.profile;
  if (dir === null) return run();
  const session = new Session();
  session.connect();
  post(session, 'Profiler.enable');
  // Every 100 µs, not V8's 1 ms: a delete phase is a few hundred ms of CPU, too few samples for lines.
  session.post('Profiler.setSamplingInterval', { interval: 100 }, () => undefined);
  post(session, 'Profiler.start');
  const rate = run();
  const { profile } = post(session, 'Profiler.stop') as { profile: unknown };
  writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
  session.disconnect();
  return rate;
}

/** Samples one phase's allocations into `dir/<name>.heapprofile` (one sample per 4 KiB allocated). */
function allocProfiled(dir: string, name: string, run: () => number): number {
  const session = new Session();
  session.connect();
  post(session, 'HeapProfiler.enable');
  // The two flags are in V8's protocol, not in @types/node's copy of it (hence no literal here):
  // without them a sample is dropped when its object is collected, and garbage never shows.
  const params = {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  };
  session.post('HeapProfiler.startSampling', params, () => undefined);
  const rate = run();
  const { profile } = post(session, 'HeapProfiler.stopSampling') as { profile: unknown };
  writeFileSync(join(dir, `${name}.heapprofile`), JSON.stringify(profile));
  session.disconnect();
  return rate;
}

/**
 * Both phases of one runner, each batch in the runner's input form built before its phase's timing;
 * the batches are dropped before the heap is measured (`bytes`: minus `base`, with the runner held until
 * after, as its top 10s are read only then). Before each phase's clock starts (under
 * --expose-gc) the heap is collected and the collector's threads let finish (gc-settle.ts): the
 * batches just built are young, all live until the phase ends, and each scavenge inside the phase
 * would copy them (and the last phase's garbage be swept on the clock) — the bench's own input, not
 * the pipeline's work, charged to whichever implementation runs. Collected first, they sit in the old
 * generation; the phase's own garbage is still collected inside it.
 */
async function measure<Input>(
  o: Options,
  runner: Runner<Input>,
  bids: readonly Bid[],
  removed: readonly Bid[],
  base: number,
): Promise<{ insertRate: number; deleteRate: number | null; bytes: number; top: Map<number, number[]> }> {
  const batches = (rows: readonly Bid[], form: (batch: readonly Bid[]) => Input): Input[] => {
    const out: Input[] = [];
    for (let i = 0; i < rows.length; i += o.batch) out.push(form(rows.slice(i, i + o.batch)));
    return out;
  };
  const timed = (input: readonly Input[], events: number): number => {
    const cpu0 = process.cpuUsage();
    for (const batch of input) runner.apply(batch);
    const cpu = process.cpuUsage(cpu0);
    return events / ((cpu.user + cpu.system) / 1e6);
  };
  const gc = (globalThis as { gc?: () => void }).gc;
  const settle = async (): Promise<void> => {
    if (gc !== undefined) await collectAndSettle(gc);
  };
  const inserts = batches(bids, (b) => runner.insertBatch(b));
  await settle();
  const insertRate = profiled(o, 'insert', () => timed(inserts, bids.length));
  inserts.length = 0;
  const deletes = batches(removed, (b) => runner.removeBatch(b));
  if (removed.length > 0) await settle();
  const deleteRate =
    removed.length === 0 ? null : profiled(o, 'delete', () => timed(deletes, removed.length));
  deletes.length = 0;
  const bytes = heap() - base;
  return { insertRate, deleteRate, bytes, top: runner.top() };
}

/**
 * The bids of `ids`, looked up in a Map of its own: built in a function, so the Map is garbage before
 * the heap is first measured (held in the caller's frame, it was counted in the baseline and could
 * be freed before the second measure, which read the state that much smaller).
 */
function bidsOf(bids: readonly Bid[], ids: readonly number[]): Bid[] {
  const byId = new Map(bids.map((b) => [b.id, b]));
  return ids.map((id) => byId.get(id) as Bid);
}

async function child(o: Options, impl: Impl): Promise<void> {
  if (o.profile !== null && o.allocProfile !== null)
    throw new Error('bench: --profile and --alloc-profile profile the same phases: one at a time');
  const { bids, deleted } = workload(o);
  const removed = bidsOf(bids, deleted);
  const base = heap();
  const { insertRate, deleteRate, bytes, top } =
    impl === 'sluice'
      ? await measure(o, sluice(o), bids, removed, base)
      : await measure(o, dbIvm(), bids, removed, base);
  const ok = digest(top) === expected(bids, deleted);
  console.log(
    JSON.stringify({
      impl,
      insert_ev_per_cpu_s: Math.round(insertRate),
      delete_ev_per_cpu_s: deleteRate === null ? null : Math.round(deleteRate),
      state_bytes_per_auction: Math.round(bytes / o.auctions),
      correct: ok,
      digest: digest(top).length,
    }),
  );
  if (!ok) process.exitCode = 1;
}

function runChild(o: Options, impl: Impl): Promise<Record<string, unknown>> {
  const args = [
    '--expose-gc',
    '--import',
    'tsx',
    fileURLToPath(import.meta.url),
    '--child',
    impl,
    '--bids',
    String(o.bids),
    '--auctions',
    String(o.auctions),
    '--deletes',
    String(o.deletes),
    '--batch',
    String(o.batch),
    '--seed',
    String(o.seed),
    ...(o.appendOnly ? ['--append-only'] : []),
    ...(o.keyless ? ['--keyless'] : []),
  ];
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0) reject(new Error(`${impl} child failed (${code}): ${out}`));
      else resolve(JSON.parse(line) as Record<string, unknown>);
    });
  });
}

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  if (o.child !== null) return child(o, o.child);
  const start = loadavg();
  const runs: Record<string, unknown>[] = [];
  for (let pair = 0; pair < o.pairs; pair++) {
    for (const impl of ['sluice', 'db-ivm'] as const) {
      const r = await runChild(o, impl);
      console.log(`pair ${pair + 1}: ${JSON.stringify(r)}`);
      runs.push(r);
    }
  }
  const median = (impl: Impl, field: string): number => {
    const xs = runs
      .filter((r) => r['impl'] === impl)
      .map((r) => Number(r[field]))
      .sort((a, b) => a - b);
    return xs[Math.floor(xs.length / 2)] ?? 0;
  };
  const result = {
    bench: 'topn',
    bids: o.bids,
    auctions: o.auctions,
    deletes: o.deletes,
    batch: o.batch,
    pairs: o.pairs,
    append_only: o.appendOnly,
    keyless: o.keyless,
    sluice_insert_ev_per_cpu_s: median('sluice', 'insert_ev_per_cpu_s'),
    dbivm_insert_ev_per_cpu_s: median('db-ivm', 'insert_ev_per_cpu_s'),
    sluice_delete_ev_per_cpu_s: o.deletes === 0 ? null : median('sluice', 'delete_ev_per_cpu_s'),
    dbivm_delete_ev_per_cpu_s: o.deletes === 0 ? null : median('db-ivm', 'delete_ev_per_cpu_s'),
    sluice_state_bytes_per_auction: median('sluice', 'state_bytes_per_auction'),
    dbivm_state_bytes_per_auction: median('db-ivm', 'state_bytes_per_auction'),
    loadavg_start: start,
    loadavg_end: loadavg(),
  };
  console.log(JSON.stringify(result));
}

await main();
