// Idempotent ingest over real HTTP on the in-process server: a retry with the same Idempotency-Key gets
// the first answer and applies nothing (also concurrently, and across a graceful restart on the same
// SQLite file), a different body under the key is 409, bad keys are 400, and the window forgets keys
// after its time, count and byte bounds — on disk too.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { AppOptions } from '../../src/server/app.ts';
import { type TestServer, removeDir, request, sqlOk, startServer, tempDir, waitUntil } from './helpers.ts';

interface Answer {
  readonly status: number;
  readonly replayed: string | null;
  readonly body: { accepted?: number; epoch?: number; error?: { code: string; message: string } };
}

async function ingest(base: string, table: string, body: unknown, key?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== undefined) headers['idempotency-key'] = key;
  const res = await fetch(`${base}/v1/tables/${table}/rows`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed'),
    body: (await res.json()) as Answer['body'],
  };
}

/** The table's row count (its copies: the table has no primary key). */
async function rowCount(base: string, table: string): Promise<number> {
  const r = await request(base, 'GET', `/v1/tables/${table}`);
  assert.equal(r.status, 200, r.text);
  return r.body.rowCount as number;
}

/** A raw HTTP/1.1 request (for headers fetch will not send: repeated, non-ASCII). */
function rawIngest(
  port: number,
  headerLines: string[],
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => (data = Buffer.concat([data, d])));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = data.toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
    const bytes = Buffer.from(body);
    socket.write(
      Buffer.concat([
        Buffer.from(
          [
            'POST /v1/tables/t/rows HTTP/1.1',
            `Host: 127.0.0.1:${port}`,
            'Content-Type: application/json',
            `Content-Length: ${bytes.length}`,
            'Connection: close',
          ].join('\r\n') + '\r\n',
          'latin1',
        ),
        Buffer.concat(headerLines.map((l) => Buffer.from(`${l}\r\n`, 'latin1'))),
        Buffer.from('\r\n'),
        bytes,
      ]),
    );
  });
}

function portOf(server: TestServer): number {
  return Number(new URL(server.base).port);
}

async function withServer(
  options: Partial<AppOptions>,
  body: (server: TestServer) => Promise<void>,
): Promise<void> {
  const server = await startServer({ checkpoint: false, ...options });
  try {
    await sqlOk(server.base, 'CREATE TABLE t (x INTEGER); CREATE TABLE u (x INTEGER)');
    await body(server);
  } finally {
    await server.close();
  }
}

test('a retry with the same key gets the first answer and the table keeps one copy', async () => {
  await withServer({}, async (server) => {
    const rows = [{ x: 1 }, { x: 2 }];
    const first = await ingest(server.base, 't', rows, 'order-42');
    assert.equal(first.status, 200);
    assert.equal(first.replayed, null);
    assert.deepEqual(first.body, { accepted: 2, epoch: 1 });
    // Other writes happen in between: the retry still answers epoch 1.
    assert.equal((await ingest(server.base, 't', [{ x: 9 }])).body.epoch, 2);
    for (let i = 0; i < 3; i++) {
      const retry = await ingest(server.base, 't', rows, 'order-42');
      assert.equal(retry.status, 200);
      assert.equal(retry.replayed, 'true');
      assert.deepEqual(retry.body, { accepted: 2, epoch: 1 });
    }
    assert.equal(await rowCount(server.base, 't'), 3);
    // Without a key, the same body is a new batch every time (as before).
    await ingest(server.base, 't', rows);
    assert.equal(await rowCount(server.base, 't'), 5);
    // A new key for the same body is a new batch.
    const other = await ingest(server.base, 't', rows, 'order-43');
    assert.deepEqual([other.replayed, other.body.epoch], [null, 4]);
    assert.equal(await rowCount(server.base, 't'), 7);
  });
});

test('the same key with a different body or table is 409 IDEMPOTENCY_KEY_REUSED and applies nothing', async () => {
  await withServer({}, async (server) => {
    assert.equal((await ingest(server.base, 't', [{ x: 1 }], 'k1')).status, 200);
    const otherBody = await ingest(server.base, 't', [{ x: 2 }], 'k1');
    assert.equal(otherBody.status, 409);
    assert.equal(otherBody.body.error?.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.match(otherBody.body.error?.message ?? '', /"k1" was already used for a different request/);
    const otherTable = await ingest(server.base, 'u', [{ x: 1 }], 'k1');
    assert.equal(otherTable.status, 409);
    assert.equal(otherTable.body.error?.code, 'IDEMPOTENCY_KEY_REUSED');
    // The body's exact bytes count: the same rows written differently are a different request.
    const res = await fetch(`${server.base}/v1/tables/t/rows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
      body: '[ {"x": 1} ]',
    });
    assert.equal(res.status, 409);
    assert.equal(await rowCount(server.base, 't'), 1);
    assert.equal(await rowCount(server.base, 'u'), 0);
    // The original request still replays.
    assert.equal((await ingest(server.base, 't', [{ x: 1 }], 'k1')).replayed, 'true');
  });
});

test('concurrent requests with one key apply once and all get the same answer', async () => {
  await withServer({}, async (server) => {
    const rows = [{ x: 7 }];
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => ingest(server.base, 't', rows, 'burst')),
    );
    for (const a of answers) assert.deepEqual([a.status, a.body], [200, { accepted: 1, epoch: 1 }]);
    assert.equal(answers.filter((a) => a.replayed === null).length, 1);
    assert.equal(await rowCount(server.base, 't'), 1);

    // Two calls in one event-loop turn: the second finds the first still in its open group commit.
    const runtime = server.app.sluice;
    const request = { key: 'same-turn', fingerprint: 'f' };
    const a = runtime.ingestIdempotent('t', { insert: [{ x: 8 }] }, request);
    const b = runtime.ingestIdempotent('t', { insert: [{ x: 8 }] }, request);
    const [ra, rb] = await Promise.all([a, b]);
    assert.deepEqual(ra, { answer: { accepted: 1, epoch: 2 }, replayed: false });
    assert.deepEqual(rb, { answer: { accepted: 1, epoch: 2 }, replayed: true });
    assert.equal(await rowCount(server.base, 't'), 2);
  });
});

test('a request that was rejected leaves its key free', async () => {
  await withServer({}, async (server) => {
    const bad = await ingest(server.base, 't', [{ x: 'not a number' }], 'k-fix');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error?.code, 'INVALID_VALUE');
    const fixed = await ingest(server.base, 't', [{ x: 3 }], 'k-fix');
    assert.deepEqual([fixed.status, fixed.replayed, fixed.body.epoch], [200, null, 1]);
    assert.equal(await rowCount(server.base, 't'), 1);
  });
});

test('a bad Idempotency-Key is 400 BAD_IDEMPOTENCY_KEY and changes nothing', async () => {
  await withServer({}, async (server) => {
    for (const key of ['', 'k'.repeat(256)]) {
      const r = await ingest(server.base, 't', [{ x: 1 }], key);
      assert.equal(r.status, 400, key);
      assert.equal(r.body.error?.code, 'BAD_IDEMPOTENCY_KEY');
    }
    // 255 printable characters, spaces inside, is a key.
    const longest = `a ${'~'.repeat(252)}z`;
    assert.equal(longest.length, 255);
    assert.equal((await ingest(server.base, 't', [{ x: 1 }], longest)).status, 200);

    const port = portOf(server);
    const twice = await rawIngest(port, ['Idempotency-Key: a', 'Idempotency-Key: b'], '[{"x":1}]');
    assert.equal(twice.status, 400);
    assert.match(twice.text, /BAD_IDEMPOTENCY_KEY/);
    assert.match(twice.text, /carries it 2 times/);
    const latin1 = await rawIngest(port, ['Idempotency-Key: caf\u00e9'], '[{"x":1}]');
    assert.equal(latin1.status, 400);
    assert.match(latin1.text, /BAD_IDEMPOTENCY_KEY/);
    assert.equal(await rowCount(server.base, 't'), 1);
  });
});

test('POST /v1/sql refuses an Idempotency-Key rather than ignore it', async () => {
  await withServer({}, async (server) => {
    const res = await fetch(`${server.base}/v1/sql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k' },
      body: JSON.stringify({ sql: 'INSERT INTO t VALUES (1)' }),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { code: string }; results: unknown[] };
    assert.equal(body.error.code, 'NOT_SUPPORTED');
    assert.deepEqual(body.results, []);
    assert.equal(await rowCount(server.base, 't'), 0);
  });
});

test('keys survive a graceful restart: the retry gets the first answer from the SQLite file', async () => {
  const dir = tempDir();
  try {
    let server = await startServer({ dataDir: dir });
    await sqlOk(server.base, 'CREATE TABLE t (x INTEGER)');
    const first = await ingest(server.base, 't', [{ x: 1 }, { x: 1 }], 'before-restart');
    assert.deepEqual(first.body, { accepted: 2, epoch: 1 });
    await ingest(server.base, 't', [{ x: 5 }], 'second');
    await server.close();

    server = await startServer({ dataDir: dir });
    try {
      assert.equal(server.app.sluice.idempotency.size, 2);
      const retry = await ingest(server.base, 't', [{ x: 1 }, { x: 1 }], 'before-restart');
      assert.deepEqual([retry.status, retry.replayed, retry.body], [200, 'true', { accepted: 2, epoch: 1 }]);
      assert.equal((await ingest(server.base, 't', [{ x: 2 }], 'before-restart')).status, 409);
      assert.equal(await rowCount(server.base, 't'), 3);
      // New epochs continue after the remembered ones.
      assert.equal((await ingest(server.base, 't', [{ x: 6 }], 'after-restart')).body.epoch, 3);
    } finally {
      await server.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('after the window a key applies again', async () => {
  await withServer({ idempotency: { windowMs: 200 } }, async (server) => {
    const first = await ingest(server.base, 't', [{ x: 1 }], 'short-lived');
    assert.equal(first.body.epoch, 1);
    // Well past the window (expiry only gets surer with delay).
    await new Promise((r) => setTimeout(r, 1000));
    const again = await ingest(server.base, 't', [{ x: 1 }], 'short-lived');
    assert.deepEqual([again.status, again.replayed, again.body.epoch], [200, null, 2]);
    assert.equal(await rowCount(server.base, 't'), 2);
  });
});

test('the window holds at most its count of keys: the oldest are forgotten first', async () => {
  await withServer({ idempotency: { maxKeys: 2 } }, async (server) => {
    for (const key of ['a', 'b', 'c']) await ingest(server.base, 't', [{ x: 1 }], key);
    assert.equal(server.app.sluice.idempotency.size, 2);
    assert.equal(server.app.sluice.idempotency.evictedEarly, 1);
    assert.equal((await ingest(server.base, 't', [{ x: 1 }], 'c')).replayed, 'true');
    assert.equal((await ingest(server.base, 't', [{ x: 1 }], 'b')).replayed, 'true');
    const a = await ingest(server.base, 't', [{ x: 1 }], 'a');
    assert.deepEqual([a.replayed, a.body.epoch], [null, 4]);
    assert.equal(await rowCount(server.base, 't'), 4);
  });
});

test('the window holds at most its bytes of keys', async () => {
  await withServer({ idempotency: { maxBytes: 8 * 1024 } }, async (server) => {
    const window = server.app.sluice.idempotency;
    for (let i = 0; i < 40; i++) await ingest(server.base, 't', [{ x: i }], `${'k'.repeat(200)}-${i}`);
    assert.ok(window.bytes <= 8 * 1024, `${window.bytes} bytes held`);
    assert.ok(window.size >= 5 && window.size < 40, `${window.size} keys held`);
    // The newest is remembered, the first was pushed out.
    assert.equal((await ingest(server.base, 't', [{ x: 39 }], `${'k'.repeat(200)}-39`)).replayed, 'true');
    assert.equal((await ingest(server.base, 't', [{ x: 0 }], `${'k'.repeat(200)}-0`)).replayed, null);
  });
});

test('expired keys are pruned from memory and from the data file; a restart loads only live ones', async () => {
  const dir = tempDir();
  try {
    let server = await startServer({ dataDir: dir, pruneIntervalMs: 20, idempotency: { windowMs: 300 } });
    await sqlOk(server.base, 'CREATE TABLE t (x INTEGER)');
    for (const key of ['p1', 'p2', 'p3']) await ingest(server.base, 't', [{ x: 1 }], key);
    await waitUntil(() => server.app.sluice.idempotency.size === 0, 20_000, 'the keys to expire');
    await server.close();
    const db = new Database(join(dir, 'sluice.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT COUNT(*) AS n FROM idempotency_keys').get() as { n: number };
      assert.equal(row.n, 0);
    } finally {
      db.close();
    }

    // Keys still on disk beyond a smaller count bound are dropped at start: only the newest load.
    server = await startServer({ dataDir: dir });
    for (const key of ['q1', 'q2', 'q3']) await ingest(server.base, 't', [{ x: 2 }], key);
    await server.close();
    server = await startServer({ dataDir: dir, idempotency: { maxKeys: 1 } });
    try {
      assert.equal(server.app.sluice.idempotency.size, 1);
      assert.equal((await ingest(server.base, 't', [{ x: 2 }], 'q3')).replayed, 'true');
      assert.equal((await ingest(server.base, 't', [{ x: 2 }], 'q1')).replayed, null);
    } finally {
      await server.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('a damaged key record refuses the start rather than risk applying a batch twice', async () => {
  const dir = tempDir();
  try {
    const server = await startServer({ dataDir: dir });
    await sqlOk(server.base, 'CREATE TABLE t (x INTEGER)');
    await ingest(server.base, 't', [{ x: 1 }], 'kept');
    await server.close();
    const db = new Database(join(dir, 'sluice.db'));
    try {
      db.prepare("UPDATE idempotency_keys SET epoch = 99 WHERE key = 'kept'").run();
    } finally {
      db.close();
    }
    await assert.rejects(startServer({ dataDir: dir }), (error: unknown) => {
      assert.match(String(error), /idempotency key record \d+ is damaged/);
      return true;
    });
  } finally {
    removeDir(dir);
  }
});

test('the OpenAPI document describes the header, the replay marker and the 409', async () => {
  await withServer({}, async (server) => {
    const doc = (await request(server.base, 'GET', '/openapi.json')).body as {
      paths: Record<string, { post: Record<string, unknown> }>;
    };
    const route = doc.paths['/v1/tables/{name}/rows']?.post as {
      parameters: { in: string; name: string; schema: { maxLength?: number } }[];
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    const header = route.parameters.find((p) => p.in === 'header' && p.name === 'idempotency-key');
    assert.equal(header?.schema.maxLength, 255);
    assert.ok(route.responses['409'] !== undefined);
    assert.ok(route.responses['200']?.headers?.['idempotent-replayed'] !== undefined);
  });
});
