// Ad-hoc SELECTs over a large table against an in-process server: each probe's time and the slowest
// `/healthz` answer meanwhile (a second client polls it every 10 ms), one JSON line per probe.
//   node --import tsx bench/adhoc-select.ts [--root <checkout>] [--rows <n>]
// `--root` runs another checkout's server (e.g. the commit before a change) for before/after figures.
import { resolve } from 'node:path';

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(name);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const root = resolve(option('--root', '.'));
const ROWS = Number(option('--rows', '1000000'));

interface Helpers {
  startServer(): Promise<{ base: string; close(): Promise<void> }>;
  request(
    base: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: { error?: { code: string } } }>;
}
const { startServer, request } = (await import(`${root}/test/server/helpers.ts`)) as Helpers;

const PROBES = [
  "SELECT length(string_agg(CAST(k AS text), ',')) AS n FROM big",
  'SELECT count(DISTINCT v) AS d FROM big',
  'SELECT k, row_number() OVER (ORDER BY v) AS r FROM big LIMIT 3',
  `SELECT k FROM big ORDER BY v OFFSET ${ROWS - 10} LIMIT 3`,
];

const server = await startServer();
await request(server.base, 'POST', '/v1/sql', { sql: 'CREATE TABLE big (k bigint PRIMARY KEY, v bigint)' });
for (let at = 0; at < ROWS; at += 50_000) {
  const rows = Array.from({ length: Math.min(50_000, ROWS - at) }, (_, i) => ({
    k: at + i,
    v: ((at + i) * 7919) % 1_000_003,
  }));
  await request(server.base, 'POST', '/v1/tables/big/rows', rows);
}
for (const sql of PROBES) {
  let done = false;
  let slowest = 0;
  const prober = (async (): Promise<void> => {
    while (!done) {
      const started = performance.now();
      await request(server.base, 'GET', '/healthz');
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const started = performance.now();
  const answer = await request(server.base, 'POST', '/v1/sql', { sql });
  const ms = performance.now() - started;
  done = true;
  await prober;
  console.log(
    JSON.stringify({
      sql,
      status: answer.status,
      code: answer.body.error?.code,
      ms: Math.round(ms),
      slowestHealthzMs: Math.round(slowest),
    }),
  );
}
await server.close();
