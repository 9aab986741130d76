// `sluice start` (what `npm start` runs) on a port another process holds: a first-time user must be
// told what to do, not only Node's "listen EADDRINUSE". The port is held by a plain TCP listener in
// this process; the server is the real CLI in a child process.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { listenFailureMessage } from '../../src/cli/listen-error.ts';
import { runCli } from './helpers.ts';

test('sluice start on a port in use exits 1 and says how to pick another port', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as AddressInfo).port;
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-port-in-use-'));
  try {
    const run = await runCli(
      ['start', '--port', String(port), '--data-dir', dataDir, '--log-level', 'silent'],
      '',
      {
        PORT: '',
      },
    );
    assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    assert.match(run.stderr, new RegExp(`sluice: hint: another process is listening on port ${port}`));
    assert.match(run.stderr, /--port <n> or PORT=<n>/);
    assert.doesNotMatch(run.stdout, /listening on/);
  } finally {
    holder.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a listen failure names the fix for the codes a user meets, and only the reason otherwise', () => {
  const failure = (code: string): Error => Object.assign(new Error(`listen ${code}: x`), { code });
  assert.match(listenFailureMessage(failure('EACCES'), '127.0.0.1', 80), /hint: port 80 needs privileges/);
  assert.match(
    listenFailureMessage(failure('EADDRNOTAVAIL'), '10.9.9.9', 8080),
    /hint: 10\.9\.9\.9 is not an address/,
  );
  assert.equal(
    listenFailureMessage(failure('EOTHER'), '127.0.0.1', 8080),
    'sluice: cannot listen on 127.0.0.1:8080: listen EOTHER: x\n',
  );
});
