// The window bench: 1,000,000 generated Nexmark bids through TUMBLE 10 s and HOP 2 s / 10 s
// aggregates per auction (COUNT and SUM) — plain, and EMIT ON WINDOW CLOSE over a table with a
// watermark (whose open-window state must stay flat) — beside the canonical pipeline (a GROUP BY and
// a view over it, the "Double 11" shape of canonical.ts) over the same bids as the reference. Each peer runs in
// a fresh child (--expose-gc), one after the other in the same run; at a few points of the run each
// child prints events per CPU second of the segment, its heap and its views' state as the engine
// estimates it; at the end it checks its views against a direct computation (exit code 1 if wrong)
// and measures what dropping them frees. The last line is the machine-readable result.
//
//   node --import tsx bench/windows.ts                 # 1M bids, 1,000 auctions, batch 10,000
//   node --import tsx bench/windows.ts --quick         # 100,000 bids
//   node --import tsx bench/windows.ts --bids 2000000 --batch 1000 --points 4
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Engine } from '../src/exec/engine.ts';
import type { Row } from '../src/common/types.ts';
import { formatEpochMicros } from '../src/common/time/time-window.ts';
import { sfc32 } from './workload.ts';

const PEERS = ['canonical', 'tumble', 'hop', 'tumble_eowc', 'hop_eowc'] as const;
type Peer = (typeof PEERS)[number];

interface Options {
  bids: number;
  auctions: number;
  batch: number;
  points: number;
  seed: number;
  /** A child stops after this many bids (then measures what dropping its views frees). */
  stop: number;
  child: Peer | null;
  /** The peers to run (`--peers canonical,tumble_eowc`): all by default. */
  peers: readonly Peer[];
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = {
    bids: 1_000_000,
    auctions: 1_000,
    batch: 10_000,
    points: 4,
    seed: 20261202,
    stop: 0,
    child: null,
    peers: PEERS,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = (): number => Number((argv[++i] ?? '').replace(/_/g, ''));
    if (a === '--quick') o.bids = 100_000;
    else if (a === '--bids') o.bids = next();
    else if (a === '--auctions') o.auctions = next();
    else if (a === '--batch') o.batch = next();
    else if (a === '--points') o.points = next();
    else if (a === '--seed') o.seed = next();
    else if (a === '--stop') o.stop = next();
    else if (a === '--child') o.child = argv[++i] as Peer;
    else if (a === '--peers') {
      const list = (argv[++i] ?? '').split(',');
      const unknown = list.find((p) => !(PEERS as readonly string[]).includes(p));
      if (unknown !== undefined)
        throw new Error(`bench: unknown peer ${unknown} (peers: ${PEERS.join(', ')})`);
      o.peers = list as Peer[];
    } else throw new Error(`bench: unknown flag ${a}`);
  }
  return o;
}

/** Event time: 10,000 bids per second from 2024-01-01, 5% of them up to 5 s late. */
const START_MS = Date.UTC(2024, 0, 1);

interface Bid {
  auction: number;
  bidder: number;
  price: number;
  ms: number;
}

function workload(o: Options): Bid[] {
  const rnd = sfc32(o.seed);
  const bids: Bid[] = [];
  for (let i = 0; i < o.bids; i++) {
    const now = START_MS + Math.floor(i / 10);
    const ms = rnd() < 0.05 ? now - Math.floor(rnd() * 5_000) : now;
    bids.push({
      auction: 1 + Math.floor(rnd() * o.auctions),
      bidder: 1 + Math.floor(rnd() * 100_000),
      price: 1 + Math.floor(rnd() * 100),
      ms,
    });
  }
  return bids;
}

const SQL: Record<Peer, string[]> = {
  canonical: [
    `CREATE MATERIALIZED VIEW auction_totals AS SELECT auction, SUM(price) AS total FROM bid GROUP BY auction`,
    `CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS auctions FROM auction_totals GROUP BY FLOOR(total / 10)`,
  ],
  tumble: [
    `CREATE MATERIALIZED VIEW tumble_10s AS SELECT auction, window_start, window_end, COUNT(*) AS n, SUM(price) AS total ` +
      `FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY auction, window_start, window_end`,
  ],
  hop: [
    `CREATE MATERIALIZED VIEW hop_2s_10s AS SELECT auction, window_start, window_end, COUNT(*) AS n, SUM(price) AS total ` +
      `FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) GROUP BY auction, window_start, window_end`,
  ],
  tumble_eowc: [
    `CREATE MATERIALIZED VIEW tumble_10s_closed AS SELECT auction, window_start, window_end, COUNT(*) AS n, SUM(price) AS total ` +
      `FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY auction, window_start, window_end EMIT ON WINDOW CLOSE`,
  ],
  hop_eowc: [
    `CREATE MATERIALIZED VIEW hop_2s_10s_closed AS SELECT auction, window_start, window_end, COUNT(*) AS n, SUM(price) AS total ` +
      `FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) GROUP BY auction, window_start, window_end EMIT ON WINDOW CLOSE`,
  ],
};

/** The EMIT ON WINDOW CLOSE peers read a table with a watermark 5 s behind (the bids' lateness). */
const WATERMARK_DELAY_MS = 5_000;
const closing = (peer: Peer): boolean => peer === 'tumble_eowc' || peer === 'hop_eowc';

function tableSql(peer: Peer): string {
  const watermark = closing(peer)
    ? `, WATERMARK FOR date_time AS date_time - INTERVAL '${WATERMARK_DELAY_MS / 1000}' SECOND`
    : '';
  return `CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP${watermark})`;
}

/**
 * What an EMIT ON WINDOW CLOSE peer's table keeps of `bids` in batches of `batch` (a bid below the
 * watermark at the start of its batch is late and dropped), and the watermark at the end.
 */
function admitted(bids: readonly Bid[], batch: number): { kept: Bid[]; watermark: number } {
  const kept: Bid[] = [];
  let mark = -Infinity;
  for (let i = 0; i < bids.length; i += batch) {
    let max = -Infinity;
    for (const b of bids.slice(i, i + batch)) {
      if (b.ms < mark) continue;
      kept.push(b);
      max = Math.max(max, b.ms);
    }
    mark = Math.max(mark, max - WATERMARK_DELAY_MS);
  }
  return { kept, watermark: mark };
}

/** The groups each peer's (last) view must hold: key → [count, sum], computed directly. */
function expected(peer: Peer, given: readonly Bid[], batch: number): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  // EMIT ON WINDOW CLOSE: only the windows the watermark closed (end ≤ watermark), of the bids kept.
  const { kept, watermark } = closing(peer) ? admitted(given, batch) : { kept: given, watermark: Infinity };
  const add = (k: string, end: number, price: number): void => {
    if (end > watermark) return;
    const g = out.get(k) ?? [0, 0];
    g[0]++;
    g[1] += price;
    out.set(k, g);
  };
  for (const b of kept) {
    if (peer === 'tumble' || peer === 'tumble_eowc') {
      const start = b.ms - (b.ms % 10_000);
      add(`${b.auction}|${start}`, start + 10_000, b.price);
    } else if (peer === 'hop' || peer === 'hop_eowc') {
      const last = b.ms - (b.ms % 2_000);
      for (let s = last; s > b.ms - 10_000; s -= 2_000) add(`${b.auction}|${s}`, s + 10_000, b.price);
    } else add(String(b.auction), 0, b.price);
  }
  if (peer !== 'canonical') return out;
  const hist = new Map<string, [number, number]>();
  for (const [, [, total]] of out) {
    const k = String(Math.floor(total / 10));
    hist.set(k, [(hist.get(k)?.[0] ?? 0) + 1, 0]);
  }
  return hist;
}

/** Each peer's views in creation order; the first is the one whose groups are counted. */
const VIEWS: Record<Peer, readonly string[]> = {
  canonical: ['auction_totals', 'total_histogram'],
  tumble: ['tumble_10s'],
  hop: ['hop_2s_10s'],
  tumble_eowc: ['tumble_10s_closed'],
  hop_eowc: ['hop_2s_10s_closed'],
};

function actual(engine: Engine, peer: Peer): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  if (peer === 'canonical') {
    for (const r of engine.viewSnapshot('total_histogram').rows)
      out.set(String(Number(r['bucket'])), [Number(r['auctions']), 0]);
    return out;
  }
  for (const r of engine.viewSnapshot(VIEWS[peer][0] as string).rows) {
    const start = Date.parse(`${String(r['window_start']).replace(' ', 'T')}Z`);
    out.set(`${Number(r['auction'])}|${start}`, [Number(r['n']), Number(r['total'])]);
  }
  return out;
}

/** Bids between two measuring points (whole batches). */
function pointStep(o: Options): number {
  return Math.ceil(o.bids / o.points / o.batch) * o.batch;
}

function heap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function child(o: Options, peer: Peer): void {
  const bids = workload(o);
  // All input in Sluice's row form before timing. One flat string per distinct time, shared by its
  // rows: otherwise V8 flattens concatenated strings and dedups them when it internalizes them (a
  // window's time used as a key does) during the run, freeing input memory measured in the baseline,
  // so the heap growth would depend on how the views touch the input, not on the state they keep.
  const times = new Map<number, string>();
  const timeText = (ms: number): string => {
    let t = times.get(ms);
    if (t === undefined) {
      t = JSON.parse(JSON.stringify(formatEpochMicros(ms * 1000, false))) as string;
      times.set(ms, t);
    }
    return t;
  };
  const rows: Row[] = bids.map((b) => ({
    auction: b.auction,
    bidder: b.bidder,
    price: b.price,
    date_time: timeText(b.ms),
  }));
  const warm = new Engine();
  const engine = new Engine();
  for (const e of [warm, engine]) {
    e.execute(tableSql(peer));
    for (const s of SQL[peer]) e.execute(s);
  }
  // Warm-up on a throwaway engine (other auctions), so the timed run sees optimised code.
  for (let i = 0; i < Math.min(100_000, rows.length / 10); i += o.batch) {
    const batch = rows
      .slice(i, i + o.batch)
      .map((r) => ({ ...r, auction: (r['auction'] as number) + o.auctions }));
    warm.applyChanges('bid', { insert: batch });
  }
  const base = heap();
  const step = pointStep(o);
  const end = o.stop > 0 ? Math.min(o.stop, rows.length) : rows.length;
  const views = VIEWS[peer];
  let cpuTotal = 0;
  for (let from = 0; from < end; from += step) {
    const to = Math.min(end, from + step);
    const cpu0 = process.cpuUsage();
    const wall0 = process.hrtime.bigint();
    for (let i = from; i < to; i += o.batch) {
      engine.applyChanges('bid', { insert: rows.slice(i, Math.min(to, i + o.batch)) });
    }
    const cpu = process.cpuUsage(cpu0);
    const wall = Number(process.hrtime.bigint() - wall0) / 1e9;
    const cpuS = (cpu.user + cpu.system) / 1e6;
    cpuTotal += cpuS;
    // The engine's own estimate of its views' state: the sum over their stateful nodes.
    const estimate = views.reduce(
      (n, v) => n + engine.viewNodeStats(v).reduce((m, st) => m + st.stateBytes, 0),
      0,
    );
    // The operators' part of it (the view's rows aside): for EMIT ON WINDOW CLOSE, the open windows.
    const operators = views.reduce(
      (n, v) =>
        n + engine.viewNodeStats(v).reduce((m, st) => m + (st.kind === 'output' ? 0 : st.stateBytes), 0),
      0,
    );
    console.log(
      JSON.stringify({
        peer,
        point: to,
        ev_per_cpu_s: Math.round((to - from) / cpuS),
        ev_per_s: Math.round((to - from) / wall),
        heap_bytes: heap() - base,
        view_state_estimate: estimate,
        operator_state_estimate: operators,
        groups: engine.viewSnapshot(views[0] as string).rows.length,
      }),
    );
  }
  const want = expected(peer, bids.slice(0, end), o.batch);
  const got = actual(engine, peer);
  const correct =
    want.size === got.size &&
    [...want].every(([k, [n, s]]) => got.get(k)?.[0] === n && got.get(k)?.[1] === s);
  // Measured view state: what dropping the views frees (the table kept), as canonical.ts measures it.
  const groups = engine.viewSnapshot(views[0] as string).rows.length;
  const before = heap();
  for (const v of [...views].reverse()) engine.execute(`DROP MATERIALIZED VIEW ${v}`);
  const viewBytes = before - heap();
  console.log(
    JSON.stringify({
      peer,
      done: true,
      ev_per_cpu_s: Math.round(end / cpuTotal),
      view_bytes: viewBytes,
      view_bytes_per_group: Math.round(viewBytes / groups),
      correct,
    }),
  );
  if (!correct) process.exitCode = 1;
}

interface Point {
  peer: Peer;
  point: number;
  ev_per_cpu_s: number;
  ev_per_s: number;
  heap_bytes: number;
  view_state_estimate: number;
  operator_state_estimate: number;
  groups: number;
}

interface Run {
  points: Point[];
  total: number;
  viewBytes: number;
  perGroup: number;
}

function runChild(o: Options, peer: Peer, stop: number): Promise<Run> {
  const args = ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', peer];
  const flags = {
    '--bids': o.bids,
    '--auctions': o.auctions,
    '--batch': o.batch,
    '--points': o.points,
    '--seed': o.seed,
    '--stop': stop,
  };
  for (const [k, v] of Object.entries(flags)) args.push(k, String(v));
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('exit', (code) => {
      const lines = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const last = lines.pop();
      if (code !== 0 || last?.['correct'] !== true) {
        reject(new Error(`${peer} child failed (${code}): ${out}`));
        return;
      }
      resolve({
        points: lines as unknown as Point[],
        total: Number(last['ev_per_cpu_s']),
        viewBytes: Number(last['view_bytes']),
        perGroup: Number(last['view_bytes_per_group']),
      });
    });
  });
}

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  if (o.child !== null) return child(o, o.child);
  const start = loadavg();
  // Per peer one child per measuring point, each stopping there to measure its views by dropping
  // them; the last child (all bids) gives the throughput at every point.
  const runs = new Map<Peer, Run>();
  const dropped = new Map<Peer, { stop: number; bytes: number; perGroup: number }[]>();
  const stops = Array.from({ length: o.points }, (_, k) => Math.min(o.bids, pointStep(o) * (k + 1)));
  for (const peer of o.peers) {
    const list: { stop: number; bytes: number; perGroup: number }[] = [];
    for (const stop of stops) {
      const r = await runChild(o, peer, stop);
      list.push({ stop, bytes: r.viewBytes, perGroup: r.perGroup });
      if (stop === o.bids) runs.set(peer, r);
    }
    dropped.set(peer, list);
  }
  const end = loadavg();
  const fmt = (n: number): string => n.toLocaleString('en-US');
  const drop = (peer: Peer, stop: number): { bytes: number; perGroup: number } | undefined =>
    dropped.get(peer)?.find((d) => d.stop === stop);
  console.log(`load average at start ${start}, at end ${end}`);
  console.log(
    'peer             bids   ev/cpu-s  ev/s (wall)   groups   heap bytes  view state (est.)  operators (est.)  view bytes (drop)  B/group',
  );
  for (const peer of o.peers) {
    const r = runs.get(peer) as Run;
    for (const p of r.points) {
      console.log(
        [
          peer.padEnd(11),
          fmt(p.point).padStart(10),
          fmt(p.ev_per_cpu_s).padStart(10),
          fmt(p.ev_per_s).padStart(12),
          fmt(p.groups).padStart(8),
          fmt(p.heap_bytes).padStart(12),
          fmt(p.view_state_estimate).padStart(18),
          fmt(p.operator_state_estimate).padStart(17),
          fmt(drop(peer, p.point)?.bytes ?? NaN).padStart(18),
          fmt(drop(peer, p.point)?.perGroup ?? NaN).padStart(8),
        ].join(' '),
      );
    }
    console.log(
      `${peer}: ${fmt(r.total)} ev/cpu-s over the run; dropping its views frees ${fmt(r.viewBytes)} B = ${fmt(r.perGroup)} B/group`,
    );
  }
  const total = (peer: Peer): number => runs.get(peer)?.total ?? 0;
  const result = {
    bench: 'windows',
    bids: o.bids,
    auctions: o.auctions,
    batch: o.batch,
    ...Object.fromEntries(o.peers.map((p) => [`${p}_ev_per_cpu_s`, total(p)])),
    ...Object.fromEntries(o.peers.map((p) => [`${p}_view_bytes_per_group`, runs.get(p)?.perGroup ?? 0])),
    // Each window peer run beside the reference: its throughput as a fraction of the reference's.
    ...Object.fromEntries(
      o.peers
        .filter((p) => p !== 'canonical' && runs.has('canonical'))
        .map((p) => [`ratio_${p}_to_canonical`, Number((total(p) / total('canonical')).toFixed(3))]),
    ),
    // The open-window state of the EOWC peers at each point: flat when windows close and are freed.
    ...Object.fromEntries(
      o.peers
        .filter(closing)
        .map((p) => [
          `${p}_operator_state_by_point`,
          runs.get(p)?.points.map((x) => x.operator_state_estimate) ?? [],
        ]),
    ),
    loadavg_start: start,
    loadavg_end: end,
  };
  console.log(JSON.stringify(result));
}

await main();
