// The join bench's auctions phase (bench/join.ts, agg view, or `--variant semi` and the others) with
// and without the view, in one process: each round inserts the same auctions into a fresh engine's
// keyed table in batches, once with the variant's view over bids and auctions defined and once with
// no view (the table's insert alone),
// which goes first alternating round by round; CPU time of the inserts only. The difference is what
// the view costs in that phase (the join's own arrangement of the auctions, its step, the epoch's
// view work), so the table-only time is the floor any sharing of the table's rows with the join
// could reach.
//   node --expose-gc --import tsx bench/join-auctions-floor.ts [--auctions 100000] [--batch 100] [--rounds 7]
//     [--variant agg|join|left|semi] [--no-settle]
// Each run starts after the forced collection's helper threads are done (gc-settle.ts: their
// sweep of the previous engine would otherwise be charged to the run); --no-settle times it as before.
// Prints one JSON line per round and the medians over every round after the first (which warms
// the JIT), with the load average.
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { Engine } from '../src/exec/engine.ts';
import { VARIANT_SQL, type Variant } from './join-workload.ts';
import { cpuMs } from './arrangement-rows.ts';
import { collectAndSettle } from './gc-settle.ts';
import { AUCTION_TABLES_SQL, auctionBatches } from './join-auctions-input.ts';

const { values } = parseArgs({
  options: {
    auctions: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '7' },
    variant: { type: 'string', default: 'agg' },
    'no-settle': { type: 'boolean', default: false },
  },
});
const auctionCount = Number(values.auctions);
const BATCH = Number(values.batch);
const rounds = Number(values.rounds);
if (!Object.hasOwn(VARIANT_SQL, values.variant)) throw new Error(`unknown variant "${values.variant}"`);
const variant = values.variant as Variant;

/** One fresh engine's insert of every auction, with or without the view; its CPU ms. */
async function run(withView: boolean): Promise<number> {
  const engine = new Engine();
  engine.execute(AUCTION_TABLES_SQL);
  if (withView) engine.execute(`CREATE MATERIALIZED VIEW v AS ${VARIANT_SQL[variant]}`);
  const input = auctionBatches(auctionCount, BATCH);
  const gc = globalThis.gc;
  if (gc !== undefined) {
    if (values['no-settle']) gc();
    else await collectAndSettle(gc);
  }
  const since = process.cpuUsage();
  for (const b of input) engine.applyChanges('auctions', b);
  const ms = cpuMs(since);
  engine.close();
  return ms;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const tableMs: number[] = [];
const viewMs: number[] = [];
for (let round = 0; round < rounds; round++) {
  const ms: Record<'table' | 'view', number> = { table: 0, view: 0 };
  for (const mode of round % 2 === 0 ? (['table', 'view'] as const) : (['view', 'table'] as const))
    ms[mode] = await run(mode === 'view');
  if (round > 0) {
    tableMs.push(ms.table);
    viewMs.push(ms.view);
  }
  console.log(
    JSON.stringify({
      bench: 'join-auctions-floor',
      round,
      variant,
      batch: BATCH,
      table_ms: Math.round(ms.table * 10) / 10,
      view_ms: Math.round(ms.view * 10) / 10,
      loadavg: loadavg().map((l) => Math.round(l * 10) / 10),
    }),
  );
}
const table = median(tableMs);
const view = median(viewMs);
console.log(
  JSON.stringify({
    bench: 'join-auctions-floor',
    variant,
    batch: BATCH,
    auctions: auctionCount,
    median_table_ms: Math.round(table * 10) / 10,
    median_view_ms: Math.round(view * 10) / 10,
    table_events_per_cpu_s: Math.round((auctionCount / table) * 1000),
    view_events_per_cpu_s: Math.round((auctionCount / view) * 1000),
    view_share: Math.round((1 - table / view) * 1000) / 1000,
  }),
);
