// `brokers` in CREATE SOURCE/SINK is bounded by an allow-list (--connector-hosts; default loopback
// plus the broker hosts of the connectors present at start): anything else is refused when the
// statement runs, with FORBIDDEN_BROKER at the option's position and no effect — no catalog
// entry, no journal entry, no connection. And a peer that is not a Kafka broker (answers garbage,
// or accepts and never answers) leaves a source or sink in an error state with a message and
// retrying, never "starting" with no error, and never takes the server down. A source's group_id
// may not name the server's own consumer groups. Real server, real TCP peers (no broker needed).
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import {
  type TestServer,
  removeDir,
  request,
  sql,
  sqlOk,
  startServer,
  tempDir,
  waitUntil,
} from './helpers.ts';

/** A TCP peer on loopback; `answer` decides what it does with each chunk it receives. */
async function fakePeer(
  answer: (socket: Socket, data: Buffer) => void,
): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (data) => answer(socket, data));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Status {
  name: string;
  state: string;
  error: { message: string } | null;
  retries: number;
}

async function status(base: string, kind: 'sources' | 'sinks', name: string): Promise<Status> {
  return (await request(base, 'GET', `/v1/${kind}/${name}`)).body as unknown as Status;
}

describe('connector hosts: an allow-list checked when CREATE SOURCE/SINK runs', () => {
  const dirs: string[] = [];
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
    for (const d of dirs) removeDir(d);
  });

  test('private and metadata addresses are refused at the brokers option, with no effect', async () => {
    const dir = tempDir();
    dirs.push(dir);
    let server = await startServer({ dataDir: dir });
    await sqlOk(
      server.base,
      'CREATE TABLE t (k INTEGER NOT NULL, PRIMARY KEY (k)); CREATE MATERIALIZED VIEW v AS SELECT k FROM t',
    );
    const refused = [
      '10.1.2.3:9092',
      '169.254.169.254:80',
      'metadata.google.internal:80',
      '[fd00::1]:9092',
      '127.0.0.1:9092,192.168.1.10:9092',
    ];
    for (const [i, brokers] of refused.entries()) {
      const r = await sql(
        server.base,
        `CREATE TABLE before_${i} (a INTEGER);\nCREATE SOURCE s (a INTEGER) FROM KAFKA (topic 't', brokers '${brokers}')`,
      );
      assert.equal(r.status, 400, brokers);
      assert.equal(r.body.error?.code, 'FORBIDDEN_BROKER', brokers);
      assert.deepEqual(r.body.error?.position, { line: 2, column: 60 }, brokers);
      assert.match(r.body.error?.message ?? '', /is not an allowed connector host/);
      const sink = await sql(
        server.base,
        `CREATE SINK k FROM v INTO KAFKA (brokers '${brokers}', topic 'x', format 'changelog')`,
      );
      assert.equal(sink.body.error?.code, 'FORBIDDEN_BROKER', brokers);
      assert.deepEqual(sink.body.error?.position, { line: 1, column: 42 });
    }
    assert.deepEqual((await request(server.base, 'GET', '/v1/sources')).body.sources, []);
    assert.deepEqual((await request(server.base, 'GET', '/v1/sinks')).body.sinks, []);
    const tables = (await request(server.base, 'GET', '/v1/tables')).body.tables as { name: string }[];
    assert.equal(
      tables.filter((t) => t.name.startsWith('before_')).length,
      refused.length,
      'the statements before it ran',
    );
    await server.close();
    server = await startServer({ dataDir: dir });
    servers.push(server);
    assert.deepEqual(
      (await request(server.base, 'GET', '/v1/sources')).body.sources,
      [],
      'nothing was journaled',
    );
    // Loopback is allowed by default (this one fails to connect later, which is fine here).
    await sqlOk(
      server.base,
      "CREATE SOURCE local_ok (a INTEGER) FROM KAFKA (brokers 'localhost:1', topic 't')",
    );
  });

  test("a source's group_id may not name one of the server's own consumer groups (sluice-…)", async () => {
    const server = await startServer();
    servers.push(server);
    for (const group of ['sluice-abc-sink-k-1-progress', 'Sluice-x']) {
      const r = await sql(
        server.base,
        `CREATE SOURCE s (a INTEGER) FROM KAFKA (brokers 'localhost:1', topic 't', group_id '${group}')`,
      );
      assert.equal(r.status, 400, group);
      assert.equal(r.body.error?.code, 'INVALID_OPTION', group);
      assert.match(r.body.error?.message ?? '', /is reserved/);
      assert.deepEqual(r.body.error?.position, { line: 1, column: 84 }, group);
    }
    assert.deepEqual((await request(server.base, 'GET', '/v1/sources')).body.sources, []);
    await sqlOk(
      server.base,
      "CREATE SOURCE s (a INTEGER) FROM KAFKA (brokers 'localhost:1', topic 't', group_id 'my-sluice-reader')",
    );
  });

  test('--connector-hosts: names, ports and address blocks; a refused CREATE never connects', async () => {
    const peer = await fakePeer(() => undefined);
    try {
      const server = await startServer({ connectorHosts: ['kafka.internal:9092', '10.0.0.0/8'] });
      servers.push(server);
      const local = await sql(
        server.base,
        `CREATE SOURCE s (a INTEGER) FROM KAFKA (brokers '127.0.0.1:${peer.port}', topic 't')`,
      );
      assert.equal(
        local.body.error?.code,
        'FORBIDDEN_BROKER',
        'an explicit list replaces the default, loopback included',
      );
      assert.match(String((local.body.error as { hint?: string } | undefined)?.hint), /--connector-hosts/);
      assert.equal(
        (
          await sql(
            server.base,
            "CREATE SOURCE s (a INTEGER) FROM KAFKA (brokers 'kafka.internal:9093', topic 't')",
          )
        ).body.error?.code,
        'FORBIDDEN_BROKER',
      );
      await sqlOk(
        server.base,
        "CREATE SOURCE s1 (a INTEGER) FROM KAFKA (brokers 'KAFKA.internal:9092', topic 't')",
      );
      await sqlOk(
        server.base,
        "CREATE SOURCE s2 (a INTEGER) FROM KAFKA (brokers '10.200.0.1:9092', topic 't')",
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(peer.connections(), 0, 'the refused broker was never contacted');
      await sqlOk(server.base, 'DROP SOURCE s1; DROP SOURCE s2');
    } finally {
      await peer.close();
    }
  });

  test('the default also allows the brokers of connectors present at start; a narrower list never connects them', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const peer = await fakePeer(() => undefined);
    try {
      let server = await startServer({ dataDir: dir, connectorHosts: ['*'], connectorConnectTimeoutMs: 500 });
      await sqlOk(
        server.base,
        "CREATE SOURCE old (a INTEGER) FROM KAFKA (brokers 'kafka-at-start.invalid:9092', topic 't')",
      );
      await server.close();
      server = await startServer({ dataDir: dir, connectorConnectTimeoutMs: 500 });
      await sqlOk(
        server.base,
        "CREATE SOURCE again (a INTEGER) FROM KAFKA (brokers 'kafka-at-start.invalid:9999', topic 'u')",
      );
      assert.equal(
        (
          await sql(
            server.base,
            "CREATE SOURCE other (a INTEGER) FROM KAFKA (brokers 'other.invalid:9092', topic 'u')",
          )
        ).body.error?.code,
        'FORBIDDEN_BROKER',
      );
      await server.close();
      // Restarted with a list that leaves the old broker out: the start succeeds (replay is not judged
      // again), and the source says why it does not read.
      server = await startServer({ dataDir: dir, connectorHosts: ['127.0.0.1'] });
      servers.push(server);
      await waitUntil(
        async () => (await status(server.base, 'sources', 'old')).error !== null,
        10_000,
        'the refusal in the status',
      );
      const old = await status(server.base, 'sources', 'old');
      assert.match(
        old.error?.message ?? '',
        /kafka-at-start\.invalid:9092" is not an allowed connector host/,
      );
    } finally {
      await peer.close();
    }
  });
});

describe('a peer that is not a Kafka broker: an error state with a message, retries, no crash', () => {
  test(
    'garbage answers and silence turn into retrying sources and sinks with a reason',
    { timeout: 360_000 },
    async () => {
      const peers = {
        // Four zero bytes: a response frame too short to hold a correlation id. The Kafka client threw
        // on it inside its socket handler, an uncaught exception that ended the server.
        zero: await fakePeer((s) => s.write(Buffer.alloc(4))),
        http: await fakePeer((s) => s.write('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n')),
        silent: await fakePeer(() => undefined),
      };
      const server = await startServer({ connectorConnectTimeoutMs: 1500 });
      try {
        await sqlOk(
          server.base,
          'CREATE TABLE t (k INTEGER NOT NULL, PRIMARY KEY (k)); CREATE MATERIALIZED VIEW v AS SELECT k FROM t',
        );
        for (const [name, peer] of Object.entries(peers)) {
          await sqlOk(
            server.base,
            `CREATE SOURCE src_${name} (a INTEGER) FROM KAFKA (brokers '127.0.0.1:${peer.port}', topic 't')`,
          );
        }
        await sqlOk(
          server.base,
          `CREATE SINK sink_silent FROM v INTO KAFKA (brokers '127.0.0.1:${peers.silent.port}', topic 'x', format 'changelog')`,
        );
        await sqlOk(
          server.base,
          `CREATE SINK sink_zero FROM v INTO KAFKA (brokers '127.0.0.1:${peers.zero.port}', topic 'x', format 'changelog')`,
        );
        const all: [kind: 'sources' | 'sinks', name: string, reason: RegExp][] = [
          ['sources', 'src_zero', /not the Kafka protocol/],
          ['sources', 'src_http', /not the Kafka protocol/],
          ['sources', 'src_silent', /no answer from brokers 127\.0\.0\.1:\d+ within 1\.5 s/],
          ['sinks', 'sink_silent', /no answer from brokers 127\.0\.0\.1:\d+ within 1\.5 s/],
          ['sinks', 'sink_zero', /not the Kafka protocol/],
        ];
        for (const [kind, name, reason] of all) {
          // Each attempt must answer within the 1.5 s connect timeout to show its peer's reason; on a
          // loaded machine (brokers of other suites starting) some attempts time out first, so the
          // bound is wide, and a timeout says what the status read instead.
          let last = '';
          await waitUntil(
            async () => {
              const s = await status(server.base, kind, name);
              last = `${s.state}: ${s.error?.message ?? 'no error'} (${s.retries} retries)`;
              return s.state === 'retrying' && s.error !== null && reason.test(s.error.message);
            },
            60_000,
            `${name} retrying with ${reason}`,
          ).catch((e: unknown) => {
            throw new Error(`${e instanceof Error ? e.message : String(e)}; last status ${last}`);
          });
        }
        // It keeps retrying (the backoff policy), and the server keeps serving.
        await waitUntil(
          async () => (await status(server.base, 'sources', 'src_silent')).retries >= 2,
          20_000,
          'a second retry',
        );
        assert.equal((await request(server.base, 'GET', '/healthz')).status, 200);
      } finally {
        await server.close();
        for (const p of Object.values(peers)) await p.close();
      }
    },
  );
});
