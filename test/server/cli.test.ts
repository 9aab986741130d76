// The `sluice` command: help and argument errors, `start` on loopback by default with the startup
// notice, environment configuration, graceful SIGTERM, and the --demo feed producing live changes.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { WsClient, removeDir, request, spawnServer, tempDir, waitUntil } from './helpers.ts';

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;
const BIN = new URL('../../bin/sluice.mjs', import.meta.url).pathname;

test('--help, --version and argument errors', () => {
  const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /Usage: sluice start/);
  assert.match(help.stdout, /--data-dir/);
  const version = spawnSync(process.execPath, ['--import', 'tsx', CLI, '--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0);
  assert.match(version.stdout, /^sluice \d+\.\d+\.\d+/);
  for (const args of [
    ['start', '--port', 'eighty'],
    ['start', '--bogus'],
    ['stop'],
    [],
    ['start', '--port', '70000'],
    ['start', '--log-level', 'loud'],
    // An empty or malformed host must not bind every interface.
    ['start', '--host', ''],
    ['start', '--host', ' '],
    ['start', '--host', 'not a host!'],
    ['start', '--allowed-origins', 'evil.example'],
    ['start', '--allowed-hosts', 'a b'],
    ['start', '--headers-timeout-ms', '5000', '--request-timeout-ms', '1000'],
    ['start', '--workers', '0'],
    ['start', '--workers', '65'],
    ['start', '--max-tokens-per-tenant', '0'],
    ['start', '--token-creates-per-minute', 'many'],
    ['start', '--revoked-token-retention-seconds', '-1'],
  ]) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { encoding: 'utf8' });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^sluice: /);
  }
});

test(
  'start: loopback by default with a notice, env configuration, graceful SIGTERM',
  { timeout: 60_000 },
  async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'nested', 'data');
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'start', '--log-level', 'silent'], {
      env: { ...process.env, PORT: '0', SLUICE_DATA_DIR: dataDir, SLUICE_WORKERS: '2' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitUntil(() => /listening on/.test(out), 30_000, 'the startup line');
      assert.match(out, /listening on http:\/\/127\.0\.0\.1:\d+/);
      assert.match(out, /running without authentication, loopback clients only/);
      assert.ok(out.includes(dataDir), 'SLUICE_DATA_DIR is used');
      assert.ok(existsSync(join(dataDir, 'sluice.db')));
      const port = Number(/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
      assert.equal((await request(`http://127.0.0.1:${port}`, 'GET', '/healthz')).status, 200);
      // SLUICE_WORKERS: the GROUP BY runs on two worker threads, which end with the server.
      const sql = (text: string) => request(`http://127.0.0.1:${port}`, 'POST', '/v1/sql', { sql: text });
      const made = await sql(
        'CREATE TABLE t (k INT, v INT); CREATE MATERIALIZED VIEW s AS SELECT k, SUM(v) AS n FROM t GROUP BY k; ' +
          'INSERT INTO t VALUES (1, 2), (1, 3), (2, 5)',
      );
      assert.equal(made.status, 200, JSON.stringify(made.body));
      const plan = await sql('EXPLAIN DATAFLOW SELECT k, SUM(v) AS n FROM t GROUP BY k');
      assert.match(JSON.stringify(plan.body), /runs in 2 hash partitions/);
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      await exited;
      removeDir(dir);
    }
  },
);

test('the token limits are read from their environment variables, a bad one a usage error', () => {
  for (const [name, value] of [
    ['SLUICE_MAX_TOKENS_PER_TENANT', 'x'],
    ['SLUICE_TOKEN_CREATES_PER_MINUTE', '0'],
    ['SLUICE_REVOKED_TOKEN_RETENTION_SECONDS', '1.5'],
  ] as const) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'start'], {
      encoding: 'utf8',
      env: { ...process.env, [name]: value },
    });
    assert.equal(r.status, 2, `${name}=${value}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /^sluice: --(max-tokens-per-tenant|token-creates-per-minute|revoked-token-retention-seconds) /,
    );
  }
});

test(
  'start: --max-tokens-per-tenant, --token-creates-per-minute and --revoked-token-retention-seconds apply',
  { timeout: 60_000 },
  async () => {
    const dir = tempDir();
    // One live token, two creations a minute, revoked tokens deleted at once.
    const server = await spawnServer(dir, [
      '--max-tokens-per-tenant',
      '1',
      '--token-creates-per-minute',
      '2',
      '--revoked-token-retention-seconds',
      '0',
    ]);
    const tokens = '/v1/tenants/default/tokens';
    const create = () => request(server.base, 'POST', tokens, { role: 'reader' });
    try {
      const first = await create();
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const overCap = await create();
      assert.equal(overCap.status, 403, JSON.stringify(overCap.body));
      assert.equal((overCap.body.error as { code: string }).code, 'QUOTA_EXCEEDED');
      assert.equal(
        (await request(server.base, 'DELETE', `${tokens}/${first.body.id as string}`)).status,
        200,
      );
      const second = await create();
      assert.equal(second.status, 201, JSON.stringify(second.body));
      // A retention of 0: the revoked first token is gone from the list once the next was created.
      const listed = await request(server.base, 'GET', tokens);
      assert.deepEqual(
        (listed.body.tokens as { id: string }[]).map((t) => t.id),
        [second.body.id],
      );
      assert.equal(
        (await request(server.base, 'DELETE', `${tokens}/${second.body.id as string}`)).status,
        200,
      );
      const overRate = await create();
      assert.equal(overRate.status, 429, JSON.stringify(overRate.body));
      assert.equal((overRate.body.error as { code: string }).code, 'RATE_LIMITED');
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
      removeDir(dir);
    }
  },
);

test('--host "" is a clear usage error, not a bind to every interface', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'start', '--host', ''], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^sluice: --host must be an IP address or a host name, not ""/);
});

test('127.0.0.2 is loopback: no "exposed" warning', { timeout: 60_000 }, async () => {
  const dir = tempDir();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CLI,
      'start',
      '--host',
      '127.0.0.2',
      '--port',
      '0',
      '--data-dir',
      dir,
      '--log-level',
      'silent',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await waitUntil(() => /API docs at/.test(out), 30_000, 'the startup lines');
    assert.match(out, /listening on http:\/\/127\.0\.0\.2:\d+/);
    assert.match(out, /without authentication, loopback clients only/);
    assert.doesNotMatch(out, /WARNING/);
    const port = Number(/127\.0\.0\.2:(\d+)/.exec(out)?.[1]);
    assert.equal((await request(`http://127.0.0.2:${port}`, 'GET', '/healthz')).status, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    await exited;
    removeDir(dir);
  }
});

test('--demo creates the Double 11 views and feeds them live', { timeout: 60_000 }, async () => {
  const dir = tempDir();
  const server = await spawnServer(dir, ['--demo', '--demo-rate', '200']);
  const sub = new WsClient(`${server.wsBase}/v1/views/total_histogram/subscribe?snapshot=false`);
  try {
    await sub.waitFor((m) => m.type === 'changes', 20_000, 'live demo changes');
    const views = await request(server.base, 'GET', '/v1/views');
    assert.deepEqual(
      (views.body.views as { name: string }[]).map((v) => v.name),
      ['seller_totals', 'total_histogram'],
    );
    await waitUntil(
      async () =>
        ((await request(server.base, 'GET', '/v1/views/total_histogram/rows')).body.total as number) > 0,
      20_000,
      'histogram rows',
    );
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  } finally {
    sub.close();
    server.child.kill('SIGKILL');
    await server.exited;
    removeDir(dir);
  }
});
