// Interleaved A/B of the Top-N view (bench/topn.ts's view and workload): this tree's Engine and another
// checkout's in one process, fed the same batches alternately (which side goes first alternates with
// the batch and the round), CPU time summed per side and phase, like table-ab.ts. On this shared
// machine two separate processes minutes apart differ by ±25%; two engines stepped batch by batch
// see the same load, so a change of a few percent shows in a few rounds.
//   node --expose-gc --import tsx bench/topn-ab.ts --base ../sluice-base [--bids 1000000]
//        [--auctions 10000] [--deletes 100000] [--batch 1000] [--rounds 3] [--mine DIR]
// Both engines share one heap, so a GC may be charged to either side: read several rounds.
// Pairing (bench/ab-checkouts.ts): the process runs again under --no-concurrent-recompilation (with
// background compiles an A/A drifted 0.96–1.05 from one process to the next); `--swap` loads this
// tree's engine first and `--mine DIR` replaces it. Read a figure over several processes, half with
// `--swap`, against an A/A of a second copy of the tree (the same path twice shares one module).
// The last lines (`"summary":true`) give each phase's ratio over the rounds after the first. An A/A
// read 1.05–1.09 on deletes in favour of the `--mine` side in every run of 2026-12-05 (bench/README.md).
import { loadavg } from 'node:os';
import { sfc32 } from './workload.ts';
import { flag, loadPair } from './ab-checkouts.ts';

interface Side {
  applyChanges(table: string, changes: { insert?: unknown[]; delete?: unknown[] }): unknown;
  execute(sql: string): unknown;
}
type EngineClass = new () => Side;
type Batch = { insert?: unknown[]; delete?: unknown[] };

const baseDir = flag('base', '');
if (baseDir === '') throw new Error('topn-ab: --base <checkout> is required');
const bids = Number(flag('bids', '1000000'));
const auctions = Number(flag('auctions', '10000'));
const deletes = Number(flag('deletes', '100000'));
const batch = Number(flag('batch', '1000'));
const rounds = Number(flag('rounds', '3'));

const { Base, Mine } = await loadPair<EngineClass>('topn-ab');

const TABLE =
  'CREATE TABLE bid (id integer PRIMARY KEY, auction integer NOT NULL, bidder integer NOT NULL, amount integer NOT NULL)';
const VIEW =
  'CREATE MATERIALIZED VIEW top10 AS SELECT auction, id, amount FROM (SELECT auction, id, amount, ' +
  'ROW_NUMBER() OVER (PARTITION BY auction ORDER BY amount DESC, id) AS rn FROM bid) b WHERE rn <= 10';

/**
 * bench/topn.ts's workload (same seed, same draws): the bids inserted, then the first `deletes` of a
 * seeded permutation of their ids deleted by key. Regenerated per round and side (fresh objects).
 */
function phases(): { name: string; batches: Batch[] }[] {
  const rnd = sfc32(20261202);
  const rows: { id: number; auction: number; bidder: number; amount: number }[] = [];
  for (let i = 0; i < bids; i++)
    rows.push({
      id: i + 1,
      auction: 1 + Math.floor(rnd() * auctions),
      bidder: Math.floor(rnd() * 50_000),
      amount: 1 + Math.floor(rnd() * 1_000_000),
    });
  const ids = rows.map((b) => b.id);
  for (let i = 0; i < deletes; i++) {
    const j = i + Math.floor(rnd() * (ids.length - i));
    [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
  }
  const inserts: Batch[] = [];
  for (let i = 0; i < rows.length; i += batch) inserts.push({ insert: rows.slice(i, i + batch) });
  const removes: Batch[] = [];
  for (let i = 0; i < deletes; i += batch)
    removes.push({ delete: ids.slice(i, Math.min(deletes, i + batch)).map((id) => ({ id })) });
  return [
    { name: 'insert', batches: inserts },
    { name: 'delete', batches: removes },
  ];
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const timed = (e: Side, b: Batch): number => {
  const t = cpu();
  e.applyChanges('bid', b);
  return cpu() - t;
};

/** Per phase, over the rounds after the first (which warms the compiler): CPU µs summed per side, and each round's ratio. */
const summary = new Map<string, { base: number; mine: number; ratios: number[] }>();

console.log(
  `topn-ab: ${bids} bids, ${auctions} auctions, ${deletes} deletes, batch ${batch}, base ${baseDir}`,
);
for (let r = 1; r <= rounds; r++) {
  // Which engine and which workload copy are made first alternates too: with both sides the same
  // code (`--mine ../sluice-base`), a fixed order showed a bias of a few percent.
  const made = (r % 2 === 1 ? [Base, Mine] : [Mine, Base]).map((E) => {
    const e = new E();
    e.execute(TABLE);
    e.execute(VIEW);
    return { engine: e, work: phases() };
  });
  const [baseSide, mineSide] = r % 2 === 1 ? made : [made[1], made[0]];
  const base = (baseSide as { engine: Side }).engine;
  const mine = (mineSide as { engine: Side }).engine;
  const forMine = (mineSide as { work: { batches: Batch[] }[] }).work;
  (baseSide as { work: { name: string; batches: Batch[] }[] }).work.forEach((phase, p) => {
    const mineBatches = (forMine[p] as { batches: Batch[] }).batches;
    let tb = 0;
    let tm = 0;
    let events = 0;
    phase.batches.forEach((b, i) => {
      const m = mineBatches[i] as Batch;
      events += (b.insert?.length ?? 0) + (b.delete?.length ?? 0);
      if ((i + r) % 2 === 0) {
        tb += timed(base, b);
        tm += timed(mine, m);
      } else {
        tm += timed(mine, m);
        tb += timed(base, b);
      }
    });
    const rate = (us: number): number => Math.round(events / (us / 1e6));
    if (r > 1) {
      const sum = summary.get(phase.name) ?? { base: 0, mine: 0, ratios: [] };
      sum.base += tb;
      sum.mine += tm;
      sum.ratios.push(tb / tm);
      summary.set(phase.name, sum);
    }
    console.log(
      JSON.stringify({
        bench: 'topn-ab',
        phase: phase.name,
        round: r,
        base_events_per_cpu_s: rate(tb),
        events_per_cpu_s: rate(tm),
        ratio: Number((tb / tm).toFixed(3)),
        loadavg: loadavg()[0],
      }),
    );
  });
  (globalThis as { gc?: () => void }).gc?.();
}
// One line to read: base ÷ this by CPU summed over the rounds after the first, and the geometric
// mean of those rounds' ratios (a round that a collection lands in moves the sum more than the mean).
for (const [phase, sum] of summary) {
  const geo = Math.exp(sum.ratios.reduce((a, x) => a + Math.log(x), 0) / sum.ratios.length);
  console.log(
    JSON.stringify({
      bench: 'topn-ab',
      phase,
      summary: true,
      rounds: sum.ratios.length,
      ratio: Number((sum.base / sum.mine).toFixed(3)),
      geomean_ratio: Number(geo.toFixed(3)),
      loadavg: loadavg()[0],
    }),
  );
}
