// Bytes allocated per event by the canonical pipeline's `applyChanges`, this tree against another
// checkout, in one process. Counts work, not time: the heap's used size is read around each batch,
// with a young generation large enough that most batches run without a collection; a batch during
// which one ran (the used size fell) is left out of the sum, and the others' growth is what they
// allocated (garbage and kept state alike). The sides alternate batch by batch, after a warm-up.
//   node --expose-gc --max-semi-space-size=64 --import tsx bench/canonical-alloc.ts --base ../sluice-base
//        [--dist uniform|zipf] [--batch 100] [--events 200000]
import { CANONICAL_SQL } from './sluice.ts';
import { cut, generateRows, type Dist } from './workload.ts';
import { flag, loadEngine, THIS_CHECKOUT } from './ab-checkouts.ts';

interface Side {
  applyChanges(table: string, changes: { insert: unknown[] }): unknown;
  execute(sql: string): unknown;
  close(): void;
}
type EngineClass = new (options?: { workers?: number }) => Side;

const baseDir = flag('base', '');
if (baseDir === '') throw new Error('canonical-alloc: --base <checkout> is required');
const dist = flag('dist', 'uniform') as Dist;
const batch = Number(flag('batch', '100'));
const events = Number(flag('events', '200000'));

const load = loadEngine<EngineClass>;
const Base = await load(baseDir);
const Mine = await load(THIS_CHECKOUT);

const rows = generateRows({ dist, sellers: 100_000, events, seed: 20111111, zipfS: 1.1 });
const warm = generateRows({ dist, sellers: 100_000, events: 100_000, seed: 7, zipfS: 1.1 });
const used = (): number => process.memoryUsage().heapUsed;

/** Per side: bytes its measured batches grew the heap by, and the events of those batches. */
const tally = new Map<Side, { bytes: number; events: number }>();
const measured = (e: Side, b: unknown[]): void => {
  const before = used();
  e.applyChanges('orders', { insert: b });
  const grown = used() - before;
  if (grown < 0) return; // a collection ran inside: not a count of this batch's allocations
  const t = tally.get(e) ?? { bytes: 0, events: 0 };
  t.bytes += grown;
  t.events += b.length;
  tally.set(e, t);
};

const base = new Base({ workers: 1 });
const mine = new Mine({ workers: 1 });
base.execute(CANONICAL_SQL);
mine.execute(CANONICAL_SQL);
for (const b of cut(warm, 0, warm.length, batch)) {
  base.applyChanges('orders', { insert: b });
  mine.applyChanges('orders', { insert: b });
}
tally.clear();
cut(rows, 0, rows.length, batch).forEach((b, i) => {
  if (i % 2 === 0) {
    measured(base, b);
    measured(mine, b);
  } else {
    measured(mine, b);
    measured(base, b);
  }
});
const perEvent = (s: Side): number => {
  const t = tally.get(s) ?? { bytes: 0, events: 1 };
  return Number((t.bytes / t.events).toFixed(1));
};
console.log(
  JSON.stringify({
    bench: 'canonical-alloc',
    dist,
    batch,
    base_bytes_per_event: perEvent(base),
    bytes_per_event: perEvent(mine),
    base_events_counted: tally.get(base)?.events ?? 0,
    events_counted: tally.get(mine)?.events ?? 0,
  }),
);
base.close();
mine.close();
