// Idempotency keys across a SIGKILL, on a real server process: killed right after the commit of a
// keyed batch (crash point `after-commit`: durable, never answered), the restarted server recognises
// the client's retry and applies nothing; killed right before the commit, the batch and its key are
// gone together and the retry applies once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type CrashableServer,
  isConnectionError,
  killHard,
  spawnCrashable,
} from '../support/crash-harness.ts';
import { removeDir, request, sqlOk, tempDir } from './helpers.ts';

const ROWS = [{ x: 1 }, { x: 2 }, { x: 3 }];

async function listening(dir: string, env: Record<string, string> = {}): Promise<CrashableServer> {
  const outcome = await spawnCrashable(dir, { env });
  if (outcome.kind !== 'listening') throw new Error(`the server did not start:\n${outcome.output}`);
  return outcome.server;
}

function keyed(base: string, key: string): Promise<Response> {
  return fetch(`${base}/v1/tables/t/rows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(ROWS),
  });
}

async function rowCount(base: string): Promise<number> {
  const r = await request(base, 'GET', '/v1/tables/t');
  assert.equal(r.status, 200, r.text);
  return r.body.rowCount as number;
}

/** Sends a keyed batch to a server armed to die at `point`; the answer never arrives. */
async function sendIntoCrash(dir: string, point: string, key: string): Promise<void> {
  const server = await listening(dir, { SLUICE_CRASH_POINT: point });
  try {
    await assert.rejects(keyed(server.base, key), (error: unknown) => isConnectionError(error));
    const exit = await server.exited;
    assert.equal(exit.signal, 'SIGKILL', server.output());
    assert.match(server.output(), new RegExp(`crash point "${point}" reached`));
  } finally {
    await killHard(server);
  }
}

async function prepared(dir: string): Promise<void> {
  const server = await listening(dir);
  try {
    await sqlOk(server.base, 'CREATE TABLE t (x INTEGER)');
    // One batch before, so the keyed one is not the first epoch.
    assert.equal((await request(server.base, 'POST', '/v1/tables/t/rows', [{ x: 0 }])).status, 200);
  } finally {
    await killHard(server);
  }
}

test(
  'killed right after the commit, the restarted server recognises the retry',
  { timeout: 120_000 },
  async () => {
    const dir = tempDir();
    let server: CrashableServer | undefined;
    try {
      await prepared(dir);
      await sendIntoCrash(dir, 'after-commit', 'lost-answer');
      server = await listening(dir);
      // The batch committed before the kill, though its answer was lost.
      assert.equal(await rowCount(server.base), 4);
      const retry = await keyed(server.base, 'lost-answer');
      assert.equal(retry.status, 200);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await retry.json(), { accepted: 3, epoch: 2 });
      assert.equal(await rowCount(server.base), 4);
      // Still remembered after a second, graceful restart.
      server.child.kill('SIGTERM');
      assert.equal((await server.exited).code, 0, server.output());
      server = await listening(dir);
      const again = await keyed(server.base, 'lost-answer');
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await again.json(), { accepted: 3, epoch: 2 });
      assert.equal(await rowCount(server.base), 4);
    } finally {
      await killHard(server);
      removeDir(dir);
    }
  },
);

test(
  'killed before the commit, the batch and its key are gone: the retry applies once',
  { timeout: 120_000 },
  async () => {
    const dir = tempDir();
    let server: CrashableServer | undefined;
    try {
      await prepared(dir);
      await sendIntoCrash(dir, 'before-commit', 'never-committed');
      server = await listening(dir);
      assert.equal(await rowCount(server.base), 1);
      const retry = await keyed(server.base, 'never-committed');
      assert.equal(retry.status, 200);
      assert.equal(retry.headers.get('idempotent-replayed'), null);
      assert.deepEqual(await retry.json(), { accepted: 3, epoch: 2 });
      assert.equal(await rowCount(server.base), 4);
      const second = await keyed(server.base, 'never-committed');
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(await rowCount(server.base), 4);
    } finally {
      await killHard(server);
      removeDir(dir);
    }
  },
);
