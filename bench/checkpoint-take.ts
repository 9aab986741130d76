// What taking a checkpoint costs the server's thread before any entry is written: the Double 11
// pipeline over a keyed table of BENCH_ROWS rows (default 1.1M, what the server bench's throughput
// run leaves), then a full checkpoint taken and read in 10 ms slices with a 10-row epoch between
// slices (as the checkpoint writer reads it: a table's rows into column blocks, other state as
// stored JSON), then incremental ones after 40,000 new rows each.
// Prints JSON lines: the take's time split into the table and the views, the heap it allocated,
// the GC pauses during the take and the read (node:perf_hooks 'gc' entries), the longest slice.
//
//   node --import tsx bench/checkpoint-take.ts          (BENCH_ROWS, BENCH_ROUNDS)
import { PerformanceObserver } from 'node:perf_hooks';
import { Engine } from '../src/exec/engine.ts';
import { encodeStored } from '../src/common/json-codec.ts';
import { TableBlocks } from '../src/storage/table-blocks.ts';
import { orderFeeder, PIPELINE_SQL } from './checkpoint-pipeline.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const engine = new Engine();
engine.setStateTracking(true);
engine.execute(PIPELINE_SQL);
const insert = orderFeeder(engine);
for (let i = 0; i < ROWS / 1000; i++) insert(1000);
engine.takeCheckpoint(true); // the first delta: from here on the table is exported

const pauses: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) pauses.push(e.duration);
}).observe({ entryTypes: ['gc'] });

async function measure(kind: 'full' | 'incremental'): Promise<void> {
  if (kind === 'incremental') for (let i = 0; i < 40; i++) insert(1000);
  else insert(10);
  await new Promise((resolve) => setImmediate(resolve)); // let GC entries of the inserts arrive
  pauses.length = 0;
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const cp = engine.takeCheckpoint(kind === 'full');
  const takeMs = performance.now() - started;
  const heapDelta = process.memoryUsage().heapUsed - heapBefore;
  await new Promise((resolve) => setImmediate(resolve));
  const takePauses = [...pauses];
  let longest = 0;
  let n = 0;
  let sliceStart = performance.now();
  for (const o of cp.objects) {
    for (const p of o.parts) {
      // As the writer reads them: a table written whole into column blocks, the rest as JSON.
      const blocks = TableBlocks.of(p.stateId, p.delta.replaceAll);
      for (const [key, value] of p.delta.upserts) {
        if (blocks === null) encodeStored(value);
        else if (blocks.add(key, value)) blocks.ready();
        else throw new Error('a table row that is not a row');
        if ((++n & 255) === 0 && performance.now() - sliceStart >= 10) {
          longest = Math.max(longest, performance.now() - sliceStart);
          await new Promise((resolve) => setImmediate(resolve));
          insert(10);
          sliceStart = performance.now();
        }
      }
      blocks?.finish();
    }
  }
  longest = Math.max(longest, performance.now() - sliceStart);
  const round = (x: number): number => Number(x.toFixed(2));
  console.log(
    JSON.stringify({
      bench: 'checkpoint-take',
      kind,
      rows: ROWS,
      entries: n,
      take_ms: round(takeMs),
      take_heap_mb: round(heapDelta / 1e6),
      gc_in_take_ms: takePauses.map(round),
      gc_max_while_read_ms: round(Math.max(0, ...pauses)),
      longest_slice_ms: round(longest),
    }),
  );
}

for (let r = 0; r < ROUNDS; r++) {
  await measure('full');
  await measure('incremental');
}
