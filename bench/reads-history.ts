// The reads that do more than walk an ordered index (docs/server.md, "Reading rows"), in-process on a
// view of N rows (default 200,000) and a table keyed by (g, id): `asOf` undoing C changed rows (default
// 100,000, the default --max-scan-rows) and 10% of that, `order=` off the key over a 100,000-row range,
// and for comparison a key-order page and a filtered page that scans 100,000 rows. Each read prints
// one JSON line {"bench":"reads-history",...} with its wall time and the largest event-loop delay
// measured while it ran (what every other request waited at most).
//
//   node --import tsx bench/reads-history.ts [--rows 200000] [--changes 100000]
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { request, sqlOk, startServer } from '../test/server/helpers.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '200000' }, changes: { type: 'string', default: '100000' } },
});
const N = Number(values.rows);
const C = Number(values.changes);
const BATCH = 20_000;

const server = await startServer({ checkpoint: false });
const post = async (table: string, rows: unknown[]): Promise<number> => {
  const r = await request(server.base, 'POST', `/v1/tables/${table}/rows`, rows);
  if (r.status !== 200) throw new Error(r.text);
  return r.body.epoch as number;
};
await sqlOk(
  server.base,
  `CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, v INT NOT NULL);
   CREATE MATERIALIZED VIEW m AS SELECT id, g, v FROM t;
   CREATE TABLE u (g INT NOT NULL, id INT NOT NULL, v INT NOT NULL, PRIMARY KEY (g, id))`,
);
for (let i = 0; i < N; i += BATCH) {
  const n = Math.min(BATCH, N - i);
  await post(
    't',
    Array.from({ length: n }, (_, j) => ({ id: i + j, g: (i + j) % 100, v: i + j })),
  );
  await post(
    'u',
    Array.from({ length: n }, (_, j) => ({ id: i + j, g: (i + j) % (N / 100_000), v: i + j })),
  );
}
const before = (await request(server.base, 'GET', '/v1/views/m/rows?limit=1')).body.epoch as number;
await request(server.base, 'GET', '/v1/tables/u/rows?limit=1');
// Each updated row is two change rows (-U, +U): C / 2 updates in batches of BATCH / 2.
const updates = C / 2;
let epochsAfter = 0;
for (let i = 0; i < updates; i += BATCH / 2) {
  const n = Math.min(BATCH / 2, updates - i);
  await post(
    't',
    Array.from({ length: n }, (_, j) => ({ id: ((i + j) * 4) % N, g: 1, v: -1 })),
  );
  epochsAfter += 1;
}

async function measure(read: string, path: string): Promise<void> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const started = performance.now();
  const r = await request(server.base, 'GET', path);
  const ms = performance.now() - started;
  delay.disable();
  console.log(
    JSON.stringify({
      bench: 'reads-history',
      read,
      rows: N,
      status: r.status,
      ms: Math.round(ms),
      maxLoopDelayMs: Math.round(delay.max / 1e6),
      returned: (r.body.rows as unknown[] | undefined)?.length ?? null,
      ...(r.body.error !== undefined ? { code: r.body.error.code } : {}),
    }),
  );
}

await measure('key order page (1000 rows)', '/v1/views/m/rows?limit=1000');
await measure('filter scanning 100k rows', '/v1/views/m/rows?g=eq.7&limit=1000');
await measure(`asOf undoing ${C} change rows`, `/v1/views/m/rows?asOf=${before}&limit=1000`);
const recent = Math.max(1, Math.round(epochsAfter / 10));
await measure(
  `asOf undoing ${Math.min(C, recent * BATCH)} change rows`,
  `/v1/views/m/rows?asOf=${before + epochsAfter - recent}&limit=1000`,
);
await measure('order=v.desc over a 100k-row key range', '/v1/tables/u/rows?g=1&order=v.desc&limit=1000');
await measure('order=v.desc over the whole table (refused past 100k)', '/v1/tables/u/rows?order=v.desc');
await server.close();
