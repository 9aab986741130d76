// Interleaved A/B of a keyed view's Output: bench/join.ts's semi-join view (one row per bid, keyed by
// the bid's id, so most of the probe side's work past the semi-join is the Output's arrangement),
// this tree's Engine and another checkout's in one process, fed the same batches alternately (which
// side goes first alternates with the batch and the round), CPU time summed per side and phase, as
// topn-ab.ts does. Two separate processes minutes apart differ by ±25% on this shared machine.
//   node --expose-gc --import tsx bench/output-ab.ts --base ../sluice-base [--auctions 25000]
//        [--bids 250000] [--batch 100] [--rounds 3] [--variant semi|join|left|agg] [--subscribe]
//        [--tracking] [--mine DIR]
// `--subscribe` listens to the view (so every epoch builds its change list, as the server does);
// `--tracking` keeps checkpoint deltas (as a server with storage does).
// Both engines share one heap, so a GC may be charged to either side: read several rounds.
// Pairing (bench/ab-checkouts.ts): the process runs again under --no-concurrent-recompilation (with
// background compiles an A/A drifted 0.96–1.05 from one process to the next); `--swap` loads this
// tree's engine first and `--mine DIR` replaces it. Read a figure over several processes, half with
// `--swap`, against an A/A of a second copy of the tree (the same path twice shares one module).
import { loadavg } from 'node:os';
import { generatePhases, VARIANT_SQL, type Change, type Variant } from './join-workload.ts';
import { args, flag, loadPair } from './ab-checkouts.ts';

interface Side {
  applyChanges(table: string, changes: { insert?: unknown[]; delete?: unknown[] }): unknown;
  execute(sql: string): unknown;
  subscribe(view: string, listener: (set: { changes: unknown }) => void): () => void;
  setStateTracking(on: boolean): void;
}
type EngineClass = new () => Side;
/** One epoch: the changes of one table (as bench/join.ts applies them). */
interface Epoch {
  readonly table: 'auctions' | 'bids';
  readonly changes: { insert: unknown[]; delete: unknown[] };
}

const baseDir = flag('base', '');
if (baseDir === '') throw new Error('output-ab: --base <checkout> is required');
const auctions = Number(flag('auctions', '25000'));
const bids = Number(flag('bids', '250000'));
const batch = Number(flag('batch', '100'));
const rounds = Number(flag('rounds', '3'));
const subscribe = args.includes('--subscribe');
const tracking = args.includes('--tracking');
const variant = flag('variant', 'semi') as Variant;
if (!(variant in VARIANT_SQL)) throw new Error(`output-ab: unknown variant ${variant}`);

const { Base, Mine } = await loadPair<EngineClass>('output-ab');

const TABLES = [
  'CREATE TABLE auctions (id BIGINT PRIMARY KEY, seller INT NOT NULL, category TEXT NOT NULL)',
  'CREATE TABLE bids (id BIGINT PRIMARY KEY, auction BIGINT NOT NULL, bidder INT NOT NULL, amount INT NOT NULL)',
];
const VIEW = `CREATE MATERIALIZED VIEW v AS ${VARIANT_SQL[variant]}`;

/**
 * bench/join.ts's phases cut into batches, each batch one epoch per table it touches (an update is an
 * insert of a held key, a delete names the key). Regenerated per round and side (fresh objects).
 */
function phases(): { name: string; events: number; epochs: Epoch[] }[] {
  return generatePhases({ auctions, bids, mutate: 0.1, categories: 100, seed: 20111111 }).map((p) => {
    const epochs: Epoch[] = [];
    for (let i = 0; i < p.changes.length; i += batch) {
      const byTable = new Map<'auctions' | 'bids', Epoch>();
      for (const c of p.changes.slice(i, i + batch) as Change[]) {
        let e = byTable.get(c.table);
        if (e === undefined) {
          e = { table: c.table, changes: { insert: [], delete: [] } };
          byTable.set(c.table, e);
        }
        if (c.row !== null) e.changes.insert.push(c.row);
        else if (c.old !== null) e.changes.delete.push({ id: c.old.id });
      }
      epochs.push(...byTable.values());
    }
    return { name: p.name, events: p.changes.length, epochs };
  });
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const timed = (e: Side, epoch: Epoch): number => {
  const t = cpu();
  e.applyChanges(epoch.table, epoch.changes);
  return cpu() - t;
};

console.log(
  `output-ab: ${variant} view, ${auctions} auctions, ${bids} bids, batch ${batch}, subscribe ${subscribe}, ` +
    `tracking ${tracking}, base ${baseDir}`,
);
for (let r = 1; r <= rounds; r++) {
  // Which engine and which workload copy are made first alternates too (a fixed order biases a side).
  const made = (r % 2 === 1 ? [Base, Mine] : [Mine, Base]).map((E) => {
    const e = new E();
    for (const sql of TABLES) e.execute(sql);
    e.execute(VIEW);
    if (tracking) e.setStateTracking(true);
    // The listener reads nothing: the change list is built for it whether it reads or not.
    if (subscribe) e.subscribe('v', () => undefined);
    return { engine: e, work: phases() };
  });
  const [baseSide, mineSide] = r % 2 === 1 ? made : [made[1], made[0]];
  const base = (baseSide as { engine: Side }).engine;
  const mine = (mineSide as { engine: Side }).engine;
  const forMine = (mineSide as { work: ReturnType<typeof phases> }).work;
  (baseSide as { work: ReturnType<typeof phases> }).work.forEach((phase, p) => {
    const mineEpochs = (forMine[p] as { epochs: Epoch[] }).epochs;
    let tb = 0;
    let tm = 0;
    phase.epochs.forEach((e, i) => {
      const m = mineEpochs[i] as Epoch;
      if ((i + r) % 2 === 0) {
        tb += timed(base, e);
        tm += timed(mine, m);
      } else {
        tm += timed(mine, m);
        tb += timed(base, e);
      }
    });
    const rate = (us: number): number => Math.round(phase.events / (us / 1e6));
    console.log(
      JSON.stringify({
        bench: 'output-ab',
        variant,
        phase: phase.name,
        batch,
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
