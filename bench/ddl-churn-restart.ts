// What a long-running server keeps of DDL churn: a server child process (durable data dir) runs
// cycles of CREATE TABLE t / two views over it (one over the other) / an ingest / DROP TABLE t
// CASCADE, with an ingest into a table that stays between them; at each count it prints the server's
// RSS, open file descriptors and data directory size, then kills it (SIGKILL), starts it again and
// prints the recovery the server logged (wall ms, CPU ms, journal entries replayed after the
// checkpoint). Recovery replays every DDL statement of the journal up to the checkpoint, dropped
// objects' included, so its CPU grows with the number of statements ever run.
//   node --import tsx bench/ddl-churn-restart.ts [--root <checkout>] [--counts 300,1000,3000]
// `--root` runs another checkout's server, for before/after figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const root = option('--root') ?? new URL('..', import.meta.url).pathname;
const counts = (option('--counts') ?? '300,1000,3000').split(',').map(Number);
const dataDir = mkdtempSync(join(tmpdir(), 'sluice-bench-churn-'));

interface Recovery {
  readonly ms: number;
  readonly cpuMs: number;
  readonly replayedEntries: number;
}

interface Server {
  readonly child: ChildProcess;
  readonly base: string;
  readonly startMs: number;
  readonly recovery: Recovery | null;
}

async function startServer(): Promise<Server> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(root, 'src/cli.ts'), 'start', '--port', '0', '--data-dir', dataDir],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: root },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m === null) return;
      clearInterval(timer);
      resolve(m[1]!.replace(/\/$/, ''));
    }, 20);
    child.once('exit', () => reject(new Error(`server exited:\n${out}`)));
  });
  const startMs = Math.round(performance.now() - started);
  // The server logs its recovery (one JSON line) before it listens.
  const line = out
    .split('\n')
    .find((l) => l.includes('recovered from the checkpoint') || l.includes('replayed the journal'));
  const recovery = line === undefined ? null : (JSON.parse(line) as Recovery);
  return { child, base, startMs, recovery };
}

async function post(base: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
}

const sql = (base: string, text: string): Promise<void> => post(base, '/v1/sql', { sql: text });

async function cycle(base: string, i: number): Promise<void> {
  await sql(
    base,
    'CREATE TABLE t (k INT PRIMARY KEY, v INT); ' +
      'CREATE MATERIALIZED VIEW mv AS SELECT v % 7 AS b, count(*) AS c FROM t GROUP BY v % 7; ' +
      'CREATE MATERIALIZED VIEW mw AS SELECT b, c FROM mv WHERE c > 0',
  );
  await post(base, '/v1/tables/t/rows', [{ k: i, v: i }]);
  await post(base, '/v1/tables/kept/rows', [{ k: i % 100, v: i }]);
  await sql(base, 'DROP TABLE t CASCADE');
}

function dirKb(dir: string): number {
  let bytes = 0;
  for (const name of readdirSync(dir)) bytes += statSync(join(dir, name)).size;
  return Math.round(bytes / 1024);
}

function processFigures(pid: number): { rssMb: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(rssKb / 1024), fds: readdirSync(`/proc/${pid}/fd`).length };
}

async function kill(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
}

let server = await startServer();
try {
  await sql(server.base, 'CREATE TABLE kept (k INT PRIMARY KEY, v INT)');
  let done = 0;
  for (const count of counts) {
    const began = performance.now();
    for (; done < count; done++) await cycle(server.base, done);
    const figures = processFigures(server.child.pid!);
    const churnSeconds = Math.round((performance.now() - began) / 1000);
    await kill(server);
    server = await startServer();
    const r = server.recovery;
    console.log(
      JSON.stringify({
        cycles: count,
        ddlStatements: 1 + count * 4,
        churnSeconds,
        ...figures,
        dataDirKb: dirKb(dataDir),
        restartMs: server.startMs,
        recoveryMs: r === null ? null : Math.round(r.ms),
        recoveryCpuMs: r?.cpuMs ?? null,
        replayedAfterCheckpoint: r?.replayedEntries ?? null,
        load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
      }),
    );
  }
} finally {
  await kill(server);
  rmSync(dataDir, { recursive: true, force: true });
}
