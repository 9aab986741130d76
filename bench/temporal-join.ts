// Nexmark q13 as a processing-time temporal join (`FOR SYSTEM_TIME AS OF PROCTIME()`) beside the same
// query as a plain join: bids arrive in batches against a keyed side input; what the view's
// dataflow holds (heap growth after a full GC, and the engine's own state accounting) and how long
// the bids take. A process per run, the two modes alternating, so heaps and JIT state do not mix.
// Prints one JSON line per run.
//   node --import tsx bench/temporal-join.ts [--bids 200000] [--side 10000] [--batch 1000] [--runs 2]
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    bids: { type: 'string', default: '200000' },
    side: { type: 'string', default: '10000' },
    batch: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '2' },
    mode: { type: 'string' },
  },
});
const BIDS = Number(values.bids);
const SIDE = Number(values.side);
const BATCH = Number(values.batch);

if (values.mode === undefined) {
  for (let r = 0; r < Number(values.runs); r++) {
    for (const mode of ['temporal', 'plain']) {
      const args = ['--expose-gc', '--import', 'tsx', new URL(import.meta.url).pathname];
      const out = execFileSync(process.execPath, [...args, ...process.argv.slice(2), '--mode', mode], {
        encoding: 'utf8',
      });
      process.stdout.write(out);
    }
  }
} else {
  const { Engine } = await import('../src/index.ts');
  const gc = (globalThis as { gc?: () => void }).gc as () => void;
  const engine = new Engine();
  engine.execute(`CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP);
    CREATE TABLE side_input (key BIGINT PRIMARY KEY, value VARCHAR);`);
  engine.applyChanges('side_input', {
    insert: Array.from({ length: SIDE }, (_, i) => ({ key: i, value: `side-${i}` })),
  });
  const asOf = values.mode === 'temporal' ? 'FOR SYSTEM_TIME AS OF PROCTIME()' : '';
  engine.execute(
    `CREATE MATERIALIZED VIEW q13 AS SELECT B.auction, B.bidder, B.price, B.date_time, S.value ` +
      `FROM bid B JOIN side_input ${asOf} S ON mod(B.auction, ${SIDE}) = S.key`,
  );
  // Every batch generated before timing.
  const batches = Array.from({ length: Math.ceil(BIDS / BATCH) }, (_, b) =>
    Array.from({ length: Math.min(BATCH, BIDS - b * BATCH) }, (_, j) => {
      const i = b * BATCH + j;
      return {
        auction: 1000 + ((i * 7919) % 50_000),
        bidder: i,
        price: i % 997,
        date_time: '2024-01-01 00:00:00',
      };
    }),
  );
  gc();
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  for (const insert of batches) engine.applyChanges('bid', { insert });
  const ms = performance.now() - t0;
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  const stateBytes = engine.viewNodeStats('q13').reduce((sum, n) => sum + n.stateBytes, 0);
  console.log(
    JSON.stringify({
      bench: 'temporal-join',
      mode: values.mode,
      bids: BIDS,
      side: SIDE,
      batch: BATCH,
      ms: Math.round(ms),
      usPerBid: +((ms * 1000) / BIDS).toFixed(2),
      heapBytesPerBid: Math.round(heap / BIDS),
      stateBytesPerBid: Math.round(stateBytes / BIDS),
      rows: engine.viewSnapshot('q13').rows.length,
    }),
  );
}
