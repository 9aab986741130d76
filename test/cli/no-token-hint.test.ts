// A first-time user of `sluice sql` / `sluice token` against a server started with --auth, without
// a token: the error must say how to give one to this command (--token or SLUICE_TOKEN), not only
// the server's advice about the HTTP header, which a command-line user cannot act on.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestServer } from '../server/helpers.ts';
import { OPERATOR_TOKEN, startAuthServer } from '../server/auth-helpers.ts';
import { runCli } from './helpers.ts';

let server: TestServer;
before(async () => {
  server = await startAuthServer();
});
after(async () => {
  await server.close();
});

test('sluice sql without a token on an --auth server names --token and SLUICE_TOKEN', async () => {
  const run = await runCli(['sql', '--url', server.base, '-c', 'SELECT 1'], '', { SLUICE_TOKEN: '' });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /ERROR UNAUTHENTICATED/);
  assert.match(run.stderr, /HINT: the server requires a token: pass --token <token> or set SLUICE_TOKEN/);
  assert.doesNotMatch(run.stderr, /Authorization: Bearer/);
});

test('sluice token list without a token names --token too', async () => {
  const run = await runCli(['token', 'list', '--url', server.base], '', { SLUICE_TOKEN: '' });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /pass --token <token> or set SLUICE_TOKEN/);
});

test('with a token the server refuses, its own message and hint are kept', async () => {
  const wrong = OPERATOR_TOKEN.replace(/t+$/, (t) => 'u'.repeat(t.length));
  const run = await runCli(['sql', '--url', server.base, '--token', wrong, '-c', 'SELECT 1'], '', {
    SLUICE_TOKEN: '',
  });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /ERROR UNAUTHENTICATED/);
  assert.doesNotMatch(run.stderr, /pass --token/);
  const ok = await runCli(['sql', '--url', server.base, '-c', 'SELECT 1 AS one'], '', {
    SLUICE_TOKEN: OPERATOR_TOKEN,
  });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /\(1 row, epoch 0\)/);
});
