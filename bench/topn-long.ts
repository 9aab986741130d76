// A Top-N over one long partition: the 10 highest of 1,000,000 bids (no PARTITION BY), so the
// operator keeps n + 2 rows sorted, up to 512 in an unordered tail and the rest (about a million) as
// far rows in sorted chunks. Three timed phases, batches of 1,000:
//   insert      1,000,000 bids (amounts uniform in 1..1,000,000)
//   delete-any  100,000 of them chosen at random: nearly all far rows (each a scan of the unordered
//               tail's 512 images, then a search of the far rows)
//   delete-top  the current top 1,000 bids, ten times over: each brings the next one in (a refill
//               from the tail and the far rows)
// Figures: events per CPU second of each phase (process.cpuUsage of the timed loop), and whether
// the final top 10 equals a direct computation (exit code 1 otherwise). One process per run; for a
// paired A/B, `--engine DIR` loads the engine from another checkout (e.g. ../sluice-base) and the
// runs alternate.
//
//   node --import tsx bench/topn-long.ts
//   node --import tsx bench/topn-long.ts --engine ../sluice-base
//   node --import tsx bench/topn-long.ts --bids 200000 --deletes 20000 --top-rounds 2
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Engine as EngineClass } from '../src/exec/engine.ts';
import type { Row } from '../src/common/types.ts';
import { sfc32 } from './workload.ts';

interface Options {
  bids: number;
  deletes: number;
  topRounds: number;
  batch: number;
  seed: number;
  /** A checkout whose src/exec/engine.ts runs instead of this one's. */
  engine: string | null;
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = {
    bids: 1_000_000,
    deletes: 100_000,
    topRounds: 10,
    batch: 1_000,
    seed: 20261203,
    engine: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = (): number => Number((argv[++i] ?? '').replace(/_/g, ''));
    if (a === '--bids') o.bids = next();
    else if (a === '--deletes') o.deletes = next();
    else if (a === '--top-rounds') o.topRounds = next();
    else if (a === '--batch') o.batch = next();
    else if (a === '--seed') o.seed = next();
    else if (a === '--engine') o.engine = argv[++i] ?? null;
    else throw new Error(`bench: unknown flag ${a}`);
  }
  return o;
}

interface Bid {
  readonly id: number;
  readonly amount: number;
}

const byAmount = (a: Bid, b: Bid): number => b.amount - a.amount || a.id - b.id;

const loadavg = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const start = loadavg();
  const rnd = sfc32(o.seed);
  const bids: Bid[] = [];
  for (let i = 0; i < o.bids; i++) bids.push({ id: i + 1, amount: 1 + Math.floor(rnd() * 1_000_000) });
  // A seeded permutation's prefix: random bids, almost all far past the top.
  const order = bids.map((_, i) => i);
  for (let i = 0; i < o.deletes; i++) {
    const j = i + Math.floor(rnd() * (order.length - i));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const anyDeleted = order.slice(0, o.deletes).map((i) => bids[i] as Bid);
  // The top rows at that point, best first, in rounds of one batch each.
  const gone = new Set(anyDeleted.map((b) => b.id));
  const remaining = bids.filter((b) => !gone.has(b.id)).sort(byAmount);
  const topDeleted = remaining.slice(0, o.topRounds * o.batch);
  const expected = remaining
    .slice(topDeleted.length, topDeleted.length + 10)
    .map((b) => b.id)
    .join(',');

  const root = o.engine === null ? new URL('..', import.meta.url) : pathToFileURL(resolve(o.engine) + '/');
  const { Engine } = (await import(new URL('src/exec/engine.ts', root).href)) as {
    Engine: typeof EngineClass;
  };
  const engine = new Engine();
  engine.execute('CREATE TABLE bid (id integer PRIMARY KEY, amount integer NOT NULL)');
  engine.execute(
    'CREATE MATERIALIZED VIEW top10 AS SELECT id, amount FROM bid ORDER BY amount DESC LIMIT 10',
  );
  const timed = (rows: readonly Bid[], apply: (batch: readonly Bid[]) => void): number => {
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < rows.length; i += o.batch) apply(rows.slice(i, i + o.batch));
    const cpu = process.cpuUsage(cpu0);
    return rows.length / ((cpu.user + cpu.system) / 1e6);
  };
  const insert = (batch: readonly Bid[]): void =>
    void engine.applyChanges('bid', { insert: batch as unknown as Row[] });
  const remove = (batch: readonly Bid[]): void =>
    void engine.applyChanges('bid', { delete: batch.map((b) => ({ id: b.id })) });
  const insertRate = timed(bids, insert);
  const anyRate = timed(anyDeleted, remove);
  const topRate = timed(topDeleted, remove);
  const rows = engine.viewSnapshot('top10').rows as unknown as Bid[];
  const got = [...rows]
    .sort(byAmount)
    .map((b) => b.id)
    .join(',');
  const correct = got === expected;
  console.log(
    JSON.stringify({
      bench: 'topn-long',
      engine: o.engine ?? 'this checkout',
      bids: o.bids,
      insert_ev_per_cpu_s: Math.round(insertRate),
      delete_any_ev_per_cpu_s: Math.round(anyRate),
      delete_top_ev_per_cpu_s: Math.round(topRate),
      correct,
      loadavg_start: start,
      loadavg_end: loadavg(),
    }),
  );
  if (!correct) process.exitCode = 1;
}

await main();
