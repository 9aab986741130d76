// How long one big request holds the server: each shape is POSTed to /v1/sql (or, for an ingest
// shape, to /v1/tables/{name}/rows) of a server child process (durable data dir) while a second
// client polls /healthz; prints one JSON line per shape with the request's time, its answer and the
// slowest /healthz answer seen meanwhile.
//   node --import tsx bench/sql-latency.ts [--root <checkout>] [--server-arg <arg>]... [--poll-ms 5] [shape ...]
// `--root` runs another checkout's server (e.g. the commit before a change) for before/after figures.
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const rootAt = args.indexOf('--root');
const root = rootAt >= 0 ? args.splice(rootAt, 2)[1]! : new URL('..', import.meta.url).pathname;
/** Extra arguments for the server's node (e.g. `--cpu-prof`), before its script. */
const serverArgs: string[] = [];
for (let at = args.indexOf('--server-arg'); at >= 0; at = args.indexOf('--server-arg'))
  serverArgs.push(args.splice(at, 2)[1]!);

/** How often the second client polls /healthz while a request runs (ms). */
const pollAt = args.indexOf('--poll-ms');
const POLL_MS = pollAt >= 0 ? Number(args.splice(pollAt, 2)[1]) : 5;

const list = (n: number, item: (i: number) => string, sep = ','): string =>
  Array.from({ length: n }, (_, i) => item(i)).join(sep);

/** Each shape: setup statements, then the statement measured. */
const SHAPES: Record<string, string> = {
  // What used to freeze the server (now rejected early with a limit's code).
  'select-1x12500': `SELECT ${list(12_500, () => '1')}`,
  'select-1x25000': `SELECT ${list(25_000, () => '1')}`,
  'in-1m': `SELECT 1 IN (${list(1_000_000, () => '1')})`,
  'plus-chain-10k': `SELECT ${list(10_000, () => '1', '+')}`,
  'parens-10k': `SELECT ${'('.repeat(10_000)}1${')'.repeat(10_000)}`,
  // Scalar functions over the longest text a function may build (16 Mi characters), and a to_char
  // template of a million characters (refused with INVALID_VALUE since it may have 4,096).
  'fn-left-16m': `SELECT length(left(repeat('ab', 8388608), -1))`,
  'fn-right-16m': `SELECT length(right(repeat('ab', 8388608), -1))`,
  'fn-substr-16m': `SELECT length(substr(repeat('ab', 8388608), 2))`,
  'fn-btrim-16m': `SELECT length(btrim(repeat('ab', 8388608), 'a'))`,
  'fn-reverse-16m': `SELECT length(reverse(repeat('ab', 8388608)))`,
  'fn-initcap-16m': `SELECT length(initcap(repeat('ab c', 4194304)))`,
  'fn-to-char-1m': `SELECT to_char(date '2024-01-05', repeat('-', 1000000))`,
  'fn-regexp-count-4m': `SELECT regexp_count(repeat('a', 4000000), 'a')`,
  // The largest accepted shapes of each kind, and the 600-view script.
  'select-1x1664': `SELECT ${list(1_664, () => '1')}`,
  'in-24k': `SELECT a FROM t WHERE a IN (${list(24_000, (i) => String(i))})`,
  'or-12k': `SELECT a FROM t WHERE ${list(12_000, (i) => `a = ${i}`, ' OR ')}`,
  'case-6k': `SELECT CASE ${list(6_000, (i) => `WHEN a = ${i} THEN ${i}`, ' ')} END FROM t`,
  // The largest under maxSelectTokens (12,000 tokens handed to the SQL library).
  'or-2900': `SELECT a FROM t WHERE ${list(2_900, (i) => `a = ${i}`, ' OR ')}`,
  'case-1400': `SELECT CASE ${list(1_400, (i) => `WHEN a = ${i} THEN ${i}`, ' ')} END FROM t`,
  'plus-chain-500': `SELECT ${list(500, () => 'a', '+')} FROM t`,
  'values-8k': `CREATE TABLE bulk (a INT, b TEXT); INSERT INTO bulk VALUES ${list(8_000, (i) => `(${i}, 'x')`)}`,
  'views-600': list(
    600,
    (i) => `CREATE MATERIALIZED VIEW v${i} AS SELECT a, count(*) FROM t GROUP BY a`,
    ';\n',
  ),
};

/** An ingest shape: its setup script, then one POST of `rows()` to the table's rows URL. */
interface IngestShape {
  readonly setup: string;
  readonly table: string;
  readonly body: () => string;
}

/** `n` rows of about 50 bytes each as JSON: 300,000 of them are ≈ 15 MB, under the 16 MiB body limit. */
const smallRows = (n: number, from = 0): string =>
  `[${list(n, (i) => `{"id":${from + i},"g":${(from + i) % 97},"name":"n${String(from + i).padStart(20, '0')}"}`)}]`;
const SMALL_TABLE = 'id BIGINT, g INT, name TEXT';

// The largest ingest requests the default limits accept, by shape of the table they go into.
const INGEST_SHAPES: Record<string, IngestShape> = {
  'ingest-300k': { setup: `CREATE TABLE s1 (${SMALL_TABLE})`, table: 's1', body: () => smallRows(300_000) },
  'ingest-view-300k': {
    setup: `CREATE TABLE s2 (${SMALL_TABLE}); CREATE MATERIALIZED VIEW s2g AS SELECT g, count(*), sum(id) FROM s2 GROUP BY g`,
    table: 's2',
    body: () => smallRows(300_000),
  },
  // A sixth of the largest: how the part that cannot be sliced (the apply) scales with the rows.
  'ingest-view-50k': {
    setup: `CREATE TABLE s5 (${SMALL_TABLE}); CREATE MATERIALIZED VIEW s5g AS SELECT g, count(*), sum(id) FROM s5 GROUP BY g`,
    table: 's5',
    body: () => smallRows(50_000),
  },
  // The most rows a body under the limit holds: one small integer column, 9 bytes a row.
  'ingest-narrow-1.8m': {
    setup: 'CREATE TABLE s6 (a INT)',
    table: 's6',
    body: () => `[${list(1_800_000, (i) => `{"a":${i % 10}}`)}]`,
  },
  'ingest-jsonb-1m': {
    setup: 'CREATE TABLE s3 (id BIGINT, doc JSONB)',
    table: 's3',
    body: () => `[{"id":1,"doc":[${list(1_000_000, (i) => String(i % 10))}]}]`,
  },
  // A keyed table of 150,000 rows, then one request replacing every one of them (150,000 updates).
  'ingest-keyed-update-150k': {
    setup: `CREATE TABLE s4 (id BIGINT PRIMARY KEY, g INT, name TEXT); CREATE MATERIALIZED VIEW s4g AS SELECT g, count(*) FROM s4 GROUP BY g`,
    table: 's4',
    body: () => smallRows(150_000),
  },
};
/** Rows an ingest shape's table holds before its request (the keyed shape updates them). */
const PRELOAD: Record<string, () => string> = { 'ingest-keyed-update-150k': () => smallRows(150_000) };

/**
 * A DML shape: its setup script, rows ingested into `table` (100,000 of them), then one SQL
 * statement changing 99,000 of them — just under `--max-dml-rows`' default of 100,000.
 */
interface DmlShape {
  readonly setup: string;
  readonly table: string;
  readonly sql: string;
}
const DML_ROWS = 100_000;
const dmlRows = (n: number): string =>
  `[${list(n, (i) => `{"id":${i},"g":${i % 97},"v":${(i * 7919) % 1000}}`)}]`;
/** The three views of a `-3views` shape: a GROUP BY, a join with a small keyed table, a Top-N per group. */
const threeViews = (t: string): string =>
  `CREATE TABLE ${t}_dim (g INT PRIMARY KEY, label TEXT); ` +
  `INSERT INTO ${t}_dim VALUES ${list(97, (g) => `(${g}, 'g${g}')`)}; ` +
  `CREATE MATERIALIZED VIEW ${t}_g AS SELECT g, count(*), sum(v) FROM ${t} GROUP BY g; ` +
  `CREATE MATERIALIZED VIEW ${t}_j AS SELECT ${t}.id, ${t}.v, ${t}_dim.label FROM ${t} JOIN ${t}_dim ON ${t}.g = ${t}_dim.g; ` +
  `CREATE MATERIALIZED VIEW ${t}_top AS SELECT g, id, v FROM (SELECT g, id, v, ROW_NUMBER() OVER ` +
  `(PARTITION BY g ORDER BY v DESC, id) AS rn FROM ${t}) r WHERE rn <= 10`;
const oneView = (t: string): string =>
  `CREATE MATERIALIZED VIEW ${t}_g AS SELECT g, count(*), sum(v) FROM ${t} GROUP BY g`;
const keyed = (t: string): string => `CREATE TABLE ${t} (id BIGINT PRIMARY KEY, g INT, v INT)`;
const keyless = (t: string): string => `CREATE TABLE ${t} (id BIGINT, g INT, v INT)`;
const DML_SHAPES: Record<string, DmlShape> = {
  'dml-update-99k-1view': {
    setup: `${keyed('d1')}; ${oneView('d1')}`,
    table: 'd1',
    sql: 'UPDATE d1 SET v = v + 1 WHERE id < 99000',
  },
  'dml-delete-99k-1view': {
    setup: `${keyed('d2')}; ${oneView('d2')}`,
    table: 'd2',
    sql: 'DELETE FROM d2 WHERE id < 99000',
  },
  'dml-update-99k-3views': {
    setup: `${keyed('d3')}; ${threeViews('d3')}`,
    table: 'd3',
    sql: 'UPDATE d3 SET v = v + 1 WHERE id < 99000',
  },
  'dml-delete-99k-3views': {
    setup: `${keyed('d4')}; ${threeViews('d4')}`,
    table: 'd4',
    sql: 'DELETE FROM d4 WHERE id < 99000',
  },
  // A key change: every updated row leaves its key for another.
  'dml-update-key-99k-1view': {
    setup: `${keyed('d5')}; ${oneView('d5')}`,
    table: 'd5',
    sql: 'UPDATE d5 SET id = id + 1000000 WHERE id < 99000',
  },
  'dml-update-99k-keyless': {
    setup: `${keyless('d6')}; ${oneView('d6')}`,
    table: 'd6',
    sql: 'UPDATE d6 SET v = v + 1 WHERE id < 99000',
  },
  'dml-delete-99k-keyless': {
    setup: `${keyless('d7')}; ${oneView('d7')}`,
    table: 'd7',
    sql: 'DELETE FROM d7 WHERE id < 99000',
  },
};

const chosen =
  args.length > 0
    ? args
    : [...Object.keys(SHAPES), ...Object.keys(INGEST_SHAPES), ...Object.keys(DML_SHAPES)];
const dataDir = mkdtempSync(join(tmpdir(), 'sluice-bench-sql-'));
const child = spawn(
  process.execPath,
  [
    ...serverArgs,
    '--import',
    'tsx',
    join(root, 'src/cli.ts'),
    'start',
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--data-dir',
    dataDir,
    '--log-level',
    'warn',
  ],
  { stdio: ['ignore', 'pipe', 'pipe'], cwd: root },
);
let out = '';
child.stdout.on('data', (d: Buffer) => (out += d.toString()));
child.stderr.on('data', (d: Buffer) => (out += d.toString()));
const base = await new Promise<string>((resolve, reject) => {
  const timer = setInterval(() => {
    const m = /listening on (http:\/\/[^\s]+)/.exec(out);
    if (m !== null) {
      clearInterval(timer);
      resolve(m[1]!.replace(/\/$/, ''));
    }
  }, 20);
  child.once('exit', () => reject(new Error(`server exited:\n${out}`)));
});
let stopping = false;
child.once('exit', (code, signal) => {
  if (!stopping) console.error(`server exited (${code ?? signal}):\n${out}`);
});

/** One request on its own connection (a pooled keep-alive socket may be closed under us). */
function send(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    const req = httpRequest(`${base}${path}`, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
const post = (sql: string): Promise<{ status: number; text: string }> =>
  send('POST', '/v1/sql', JSON.stringify({ sql }));

/**
 * The server's own largest event-loop delay since the last scrape of /metrics (prom-client's
 * `nodejs_eventloop_lag_max_seconds`, which each scrape resets): what the request held the loop,
 * measured inside the server, so not this client's own scheduling.
 */
async function serverLoopLagMaxMs(): Promise<number> {
  const metrics = await send('GET', '/metrics');
  const m = /^nodejs_eventloop_lag_max_seconds ([0-9.e+-]+)$/m.exec(metrics.text);
  return m === null ? -1 : Math.round(Number(m[1]) * 1000);
}

/** CPU time the server process has used (ms, all its threads, 10 ms steps) from /proc, or -1. */
function serverCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15 of the file (11 and 12 after the command's closing paren).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return -1;
  }
}

/** The server process's resident set (MB) from /proc (Linux), or -1 where it cannot be read. */
function serverRssMb(): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return m === null ? -1 : Math.round(Number(m[1]) / 1024);
  } catch {
    return -1;
  }
}

try {
  await post("CREATE TABLE t (a INT, b TEXT); INSERT INTO t VALUES (1, 'x')");
  for (const shape of chosen) {
    const ingest = INGEST_SHAPES[shape];
    const dml = DML_SHAPES[shape];
    const sql = SHAPES[shape] ?? dml?.sql;
    if (sql === undefined && ingest === undefined) throw new Error(`unknown shape ${shape}`);
    let body: string;
    let path: string;
    if (dml !== undefined) {
      const setup = await post(dml.setup);
      if (setup.status !== 200) throw new Error(`setup of ${shape}: ${setup.status} ${setup.text}`);
      const loaded = await send('POST', `/v1/tables/${dml.table}/rows`, dmlRows(DML_ROWS));
      if (loaded.status !== 200) throw new Error(`preload of ${shape}: ${loaded.status} ${loaded.text}`);
      path = '/v1/sql';
      body = JSON.stringify({ sql });
    } else if (ingest !== undefined) {
      const setup = await post(ingest.setup);
      if (setup.status !== 200) throw new Error(`setup of ${shape}: ${setup.status} ${setup.text}`);
      path = `/v1/tables/${ingest.table}/rows`;
      const preload = PRELOAD[shape];
      if (preload !== undefined) {
        const loaded = await send('POST', path, preload());
        if (loaded.status !== 200) throw new Error(`preload of ${shape}: ${loaded.status} ${loaded.text}`);
      }
      body = ingest.body();
    } else {
      path = '/v1/sql';
      body = JSON.stringify({ sql });
    }
    await serverLoopLagMaxMs(); // resets the server's event-loop delay histogram (read at each scrape)
    const started = performance.now();
    let done = false;
    const answer = send('POST', path, body).then((r) => {
      const body = JSON.parse(r.text) as { error?: { code: string; position?: unknown } };
      done = true;
      return { status: r.status, code: body.error?.code ?? null, position: body.error?.position ?? null };
    });
    let healthzMaxMs = 0;
    // The server's resident memory, read from /proc by this process (not held by the server's loop).
    const rssBeforeMb = serverRssMb();
    const cpuBefore = serverCpuMs();
    let rssMaxMb = rssBeforeMb;
    const rssTimer = setInterval(() => (rssMaxMb = Math.max(rssMaxMb, serverRssMb())), 20);
    while (!done) {
      const t = performance.now();
      await send('GET', '/healthz');
      healthzMaxMs = Math.max(healthzMaxMs, performance.now() - t);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const result = await answer;
    const requestMs = Math.round(performance.now() - started);
    clearInterval(rssTimer);
    // The server's CPU over the request (its /healthz answers included): less moved by the machine's
    // load than the wall-clock figures.
    const serverCpuMsUsed = serverCpuMs() - cpuBefore;
    const line = { bench: 'sql-latency', shape, bytes: sql?.length ?? body.length, ...result, requestMs };
    const loopLagMaxMs = await serverLoopLagMaxMs();
    const rss = { serverCpuMs: serverCpuMsUsed, rssBeforeMb, rssMaxMb };
    console.log(JSON.stringify({ ...line, healthzMaxMs: Math.round(healthzMaxMs), loopLagMaxMs, ...rss }));
  }
} finally {
  stopping = true;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
