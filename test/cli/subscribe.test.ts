// `sluice subscribe` as a child process against real servers: a snapshot then the live changes of
// ingests made meanwhile, one line per change; after the server stops it resumes from the last
// epoch printed — across changes made while it was away and a restart on the same data directory —
// with no gap and no duplicate; the JSON format, --resume-from, --no-snapshot and an unknown view.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, test } from 'node:test';
import {
  type TestServer,
  removeDir,
  request,
  spawnServer,
  sqlOk,
  startServer,
  tempDir,
  waitUntil,
} from '../server/helpers.ts';
import { CLI, runCli } from './helpers.ts';

interface Subscription {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

const running: ChildProcess[] = [];
after(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
});

function subscribe(args: readonly string[]): Subscription {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'subscribe', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SLUICE_URL: '' },
  });
  running.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => out, stderr: () => err };
}

async function ingest(base: string, body: unknown): Promise<number> {
  const r = await request(base, 'POST', '/v1/tables/o/rows?wait=true', body);
  assert.equal(r.status, 200, r.text);
  return r.body.epoch as number;
}

const SETUP =
  'CREATE TABLE o (id BIGINT NOT NULL, seller INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (id)); ' +
  'CREATE MATERIALIZED VIEW totals AS SELECT seller, SUM(amount) AS total FROM o GROUP BY seller';

test(
  'prints the snapshot and live changes, and resumes after the server restarts on the same data dir',
  { timeout: 240_000 },
  async () => {
    const dataDir = tempDir('sluice-cli-sub-');
    let server = await spawnServer(dataDir);
    const port = new URL(server.base).port;
    try {
      await sqlOk(server.base, SETUP);
      assert.equal(await ingest(server.base, [{ id: 1, seller: 7, amount: 5 }]), 1);
      const sub = subscribe(['totals', '--url', server.base]);
      await waitUntil(() => sub.stdout().includes('+I'), 60_000, `the snapshot:\n${sub.stderr()}`);
      assert.equal(await ingest(server.base, [{ id: 2, seller: 7, amount: 6 }]), 2);
      assert.equal(await ingest(server.base, [{ id: 3, seller: 8, amount: 1 }]), 3);
      await waitUntil(() => /^ +3 \| \+I/m.test(sub.stdout()), 30_000, `epoch 3:\n${sub.stdout()}`);

      // The server stops (subscribers are told, close 1001); while the subscriber is away another
      // server on the same data dir makes epoch 4; then the server comes back on its port.
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
      await waitUntil(() => sub.stderr().includes('connection lost'), 30_000, 'the subscriber to notice');
      const meanwhile = await spawnServer(dataDir);
      assert.equal(await ingest(meanwhile.base, { delete: [{ id: 3 }] }), 4);
      meanwhile.child.kill('SIGTERM');
      assert.equal(await meanwhile.exited, 0);
      server = await spawnServer(dataDir, ['--port', port]);
      await waitUntil(
        () => sub.stderr().includes('resuming after epoch 3'),
        60_000,
        `the subscriber to resume:\n${sub.stderr()}`,
      );
      assert.equal(await ingest(server.base, [{ id: 4, seller: 9, amount: 2 }]), 5);
      await waitUntil(() => /^ +5 \| \+I/m.test(sub.stdout()), 30_000, `epoch 5:\n${sub.stdout()}`);

      sub.child.kill('SIGINT');
      assert.equal(await sub.exited, 0, sub.stderr());
      assert.equal(
        sub.stdout(),
        [
          '  epoch | op | seller | total',
          '--------+----+--------+-------',
          '      1 | +I |      7 |     5',
          '      2 | -U |      7 |     5',
          '      2 | +U |      7 |    11',
          '      3 | +I |      8 |     1',
          '      4 | -D |      8 |     1',
          '      5 | +I |      9 |     2',
          '',
        ].join('\n'),
      );
      assert.match(sub.stderr(), /subscribed to "totals" at epoch 1 with a snapshot\n/);
      assert.match(
        sub.stderr(),
        /connection lost \(UNAVAILABLE: [^)]*\); resuming after epoch 3 in \d+ ms\n/,
      );
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      removeDir(dataDir);
    }
  },
);

test('--format json, --resume-from, --no-snapshot and an unknown view', { timeout: 180_000 }, async () => {
  const server: TestServer = await startServer();
  try {
    await sqlOk(server.base, SETUP);
    await ingest(server.base, [{ id: 1, seller: 7, amount: 5 }]);
    await ingest(server.base, [{ id: 2, seller: 8, amount: 3 }]);

    // From the stored changelog: only the epochs after 1.
    const json = subscribe(['TOTALS', '--url', server.base, '--resume-from', '1', '--format', 'json']);
    // Live only: nothing of the past.
    const live = subscribe(['totals', '--url', server.base, '--no-snapshot']);
    await waitUntil(
      () => json.stdout().includes('"epoch":2') && live.stderr().includes('subscribed'),
      60_000,
      `both subscribers:\n${json.stderr()}\n${live.stderr()}`,
    );
    await ingest(server.base, { delete: [{ id: 1 }] });
    await waitUntil(
      () => json.stdout().includes('"epoch":3') && live.stdout().includes(' 3 |'),
      30_000,
      `epoch 3:\n${json.stdout()}\n${live.stdout()}`,
    );
    json.child.kill('SIGINT');
    live.child.kill('SIGINT');
    assert.equal(await json.exited, 0);
    assert.equal(await live.exited, 0);
    assert.deepEqual(
      json
        .stdout()
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
      [
        { epoch: 2, op: '+I', row: { seller: 8, total: 3 } },
        { epoch: 3, op: '-D', row: { seller: 7, total: 5 } },
      ],
    );
    assert.equal(
      live.stdout(),
      [
        '  epoch | op | seller | total',
        '--------+----+--------+-------',
        '      3 | -D |      7 |     5',
        '',
      ].join('\n'),
    );
    assert.match(live.stderr(), /subscribed to "totals" at epoch 2\n/);

    const unknown = await runCli(['subscribe', 'nope', '--url', server.base]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^sluice subscribe: cannot subscribe to "nope": UNKNOWN_VIEW: /);
    for (const args of [
      ['subscribe'],
      ['subscribe', 'v', '--format', 'xml'],
      ['subscribe', 'v', '--resume-from', 'x1'],
    ]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^sluice subscribe: .*\n\nUsage: sluice subscribe/);
    }
  } finally {
    await server.close();
  }
});
