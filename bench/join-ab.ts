// Interleaved A/B of the whole join bench (bench/join.ts's tables and view, by default the agg view:
// bids ⋈ auctions with a GROUP BY on top): this tree's Engine and another checkout's in one process,
// fed the same batches of the same seeded workload (bench/join-workload.ts) alternately, which one
// goes first alternating too, CPU time summed per side and phase. Two processes' CPU figures move
// ±30% on this shared machine, more than a per-epoch saving moves them; interleaved, both sides see
// the same caches and the same neighbours batch by batch.
//   node --expose-gc --import tsx bench/join-ab.ts --base ../sluice-base [--variant agg] [--batch 100]
//        [--auctions 25000] [--bids 250000] [--rounds 3] [--phases auctions,bids,mutations]
// `--phases` times only the phases named: a round stops after the last of them, and a phase before
// it not named is applied to both sides untimed (`--phases auctions --rounds 20`: many short rounds
// of the auctions phase alone, whose 100,000 rows take tens of ms, less than one round's noise).
// Each round builds a fresh engine on each side (after one untimed warm-up round at a tenth of the
// size) and prints one JSON line per phase: each side's events per CPU second and base ÷ this
// tree's CPU time (> 1: this tree faster); at the end, that ratio per phase over all rounds. After
// each phase both views must hold the same rows.
// Both engines share one heap, so a GC may be charged to either side: read rounds in pairs (the
// order flips every round) and their sums.
// Pairing (bench/ab-checkouts.ts): the process runs again under --no-concurrent-recompilation (with
// background compiles an A/A drifted 0.96–1.05 from one process to the next); `--swap` loads this
// tree's engine first and `--mine DIR` replaces it. Read a figure over several processes, half with
// `--swap`, against an A/A of a second copy of the tree (the same path twice shares one module).
import { loadavg } from 'node:os';
import { type Change, type Variant, VARIANT_SQL, roundPhases } from './join-workload.ts';
import { flag, loadPair } from './ab-checkouts.ts';

interface Side {
  applyChanges(table: string, changes: { insert: unknown[]; delete: unknown[] }): unknown;
  execute(sql: string): unknown;
  viewSnapshot(name: string): { rows: readonly Record<string, unknown>[] };
  close(): void;
}
type EngineClass = new () => Side;

const baseDir = flag('base', '../sluice-base');
const variant = flag('variant', 'agg') as Variant;
const batch = Number(flag('batch', '100'));
const auctions = Number(flag('auctions', '25000'));
const bids = Number(flag('bids', '250000'));
const rounds = Number(flag('rounds', '3'));
const phasesTimed = flag('phases', 'auctions,bids,mutations').split(',');

const TABLES_SQL = `
CREATE TABLE auctions (id BIGINT PRIMARY KEY, seller INT NOT NULL, category TEXT NOT NULL);
CREATE TABLE bids (id BIGINT PRIMARY KEY, auction BIGINT NOT NULL, bidder INT NOT NULL, amount INT NOT NULL);
`;

const { Base, Mine } = await loadPair<EngineClass>('join-ab', '../sluice-base');

interface TableBatch {
  insert: unknown[];
  delete: unknown[];
}
/** One batch as bench/join.ts's Sluice driver applies it: a table's changes per epoch. */
type Prepared = [table: string, changes: TableBatch][];

function prepare(changes: readonly Change[]): Prepared {
  const byTable = new Map<string, TableBatch>();
  for (const c of changes) {
    let side = byTable.get(c.table);
    if (side === undefined) byTable.set(c.table, (side = { insert: [], delete: [] }));
    // Each side gets its own row objects: an engine never shares them with another.
    if (c.row !== null) side.insert.push({ ...c.row });
    else if (c.old !== null) side.delete.push({ id: c.old.id });
  }
  // Auctions first, as bench/join.ts applies them.
  return [...byTable].sort(([a], [b]) => (a === b ? 0 : a === 'auctions' ? -1 : 1));
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const timed = (e: Side, b: Prepared): number => {
  const t = cpu();
  for (const [table, changes] of b) e.applyChanges(table, changes);
  return cpu() - t;
};
const contents = (e: Side): string =>
  e
    .viewSnapshot('v')
    .rows.map((r) => JSON.stringify(r, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)))
    .sort()
    .join('\n');

console.log(
  `join-ab: ${variant}, batch ${batch}, ${auctions} auctions, ${bids} bids, ${rounds} rounds, base ${baseDir}`,
);
const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => {});
/** CPU µs per phase summed over the timed rounds: [base, this tree]. */
const totals = new Map<string, [number, number]>();
for (let r = 0; r <= rounds; r++) {
  const phases = roundPhases(r, auctions, bids);
  const base = new Base();
  const mine = new Mine();
  for (const e of [base, mine]) {
    e.execute(TABLES_SQL);
    e.execute(`CREATE MATERIALIZED VIEW v AS ${VARIANT_SQL[variant]}`);
  }
  const lastTimed = Math.max(...phasesTimed.map((name) => phases.findIndex((p) => p.name === name)));
  for (const phase of phases.slice(0, lastTimed + 1)) {
    if (!phasesTimed.includes(phase.name)) {
      for (let i = 0; i < phase.changes.length; i += batch) {
        const slice = phase.changes.slice(i, i + batch);
        timed(base, prepare(slice));
        timed(mine, prepare(slice));
      }
      continue;
    }
    const batches: [Prepared, Prepared][] = [];
    for (let i = 0; i < phase.changes.length; i += batch) {
      const slice = phase.changes.slice(i, i + batch);
      batches.push([prepare(slice), prepare(slice)]);
    }
    gc();
    let tb = 0;
    let tm = 0;
    batches.forEach(([forBase, forMine], i) => {
      // Which side goes first flips every batch and every round: state grows (and a collection of
      // both engines' heap falls due) at the same batches on both sides, so within one round it is
      // charged to one side more often than not; the next round, to the other. Read rounds in pairs.
      if ((i + r) % 2 === 0) {
        tb += timed(base, forBase);
        tm += timed(mine, forMine);
      } else {
        tm += timed(mine, forMine);
        tb += timed(base, forBase);
      }
    });
    if (contents(base) !== contents(mine))
      throw new Error(`join-ab: the two views differ after phase ${phase.name} of round ${r}`);
    if (r === 0) continue;
    const sum = totals.get(phase.name) ?? [0, 0];
    totals.set(phase.name, [sum[0] + tb, sum[1] + tm]);
    const events = phase.changes.length;
    const rate = (us: number): number => Math.round(events / (us / 1e6));
    console.log(
      JSON.stringify({
        bench: 'join-ab',
        variant,
        batch,
        round: r,
        phase: phase.name,
        base_events_per_cpu_s: rate(tb),
        events_per_cpu_s: rate(tm),
        ratio: Number((tb / tm).toFixed(3)),
        loadavg: loadavg()[0],
      }),
    );
  }
  base.close();
  mine.close();
}
// Over all rounds (an even number of rounds cancels the order's bias, see above).
for (const [phase, [tb, tm]] of totals)
  console.log(
    JSON.stringify({ bench: 'join-ab', variant, batch, rounds, phase, ratio: Number((tb / tm).toFixed(3)) }),
  );
