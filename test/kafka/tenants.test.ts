// Kafka connectors inside a tenant, against a real broker and a server with authentication: a source
// and a sink created in tenant "beta" run there (its view fills, its sink writes the topic); tenant
// "acme" cannot see, reference or drop them — every answer is byte for byte the one for a missing
// name; the connectors quota counts them per tenant; and a source over its tenant's ingest rate is
// paced — counted against the rate at every sample, nothing lost in the end — while a neighbour's
// unlimited source reads everything meanwhile.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kafka, Producer } from 'kafkajs';
import { createTopic, readTopic } from '../support/kafka-topics.ts';
import { kafkaClient, kafkaSuite, sharedBrokers, uniqueName, waitFor } from '../support/kafka.ts';
import { call, OPERATOR_TOKEN, startAuthServer, tenantAdmin, type Answer } from '../server/auth-helpers.ts';
import type { TestServer } from '../server/helpers.ts';

const sqlAs = (base: string, token: string, sql: string): Promise<Answer> =>
  call(base, 'POST', '/v1/sql', { token, body: { sql } });

/** Rows of a table or source (its total). */
const total = async (base: string, token: string, table: string): Promise<number> =>
  (await call(base, 'GET', `/v1/tables/${table}/rows?limit=1`, { token })).body.total as number;

describe('Kafka connectors in a tenant', kafkaSuite('Kafka connectors in a tenant'), () => {
  let brokers: string;
  let kafka: Kafka;
  let producer: Producer;
  let server: TestServer;
  let acme: string;
  let beta: string;

  before(async () => {
    brokers = await sharedBrokers();
    kafka = kafkaClient(brokers, 'tenants-test');
    producer = kafka.producer();
    await producer.connect();
    server = await startAuthServer({ connectorConnectTimeoutMs: 20_000 });
    acme = await tenantAdmin(server.base, 'acme');
    beta = await tenantAdmin(server.base, 'beta');
  });

  after(async () => {
    await server?.close();
    await producer?.disconnect();
  });

  const send = async (topic: string, from: number, count: number): Promise<void> => {
    const messages = Array.from({ length: count }, (_, i) => ({
      key: JSON.stringify({ id: from + i }),
      value: JSON.stringify({ amount: (from + i) % 7 }),
    }));
    await producer.send({ topic, messages });
  };

  it('a source and a sink in beta work there; acme cannot see, reference or drop them; the connectors quota counts them', async () => {
    const base = server.base;
    const inTopic = uniqueName('tenant-in');
    const outTopic = uniqueName('tenant-out');
    await createTopic(kafka, inTopic, 2);
    await createTopic(kafka, outTopic, 1);
    await send(inTopic, 0, 50);
    const created = await sqlAs(
      base,
      beta,
      `CREATE SOURCE b_orders (id int, amount int NOT NULL, PRIMARY KEY (id))
         FROM KAFKA (brokers '${brokers}', topic '${inTopic}', format 'upsert');
       CREATE MATERIALIZED VIEW b_totals AS SELECT COUNT(*) AS n, SUM(amount) AS total FROM b_orders;
       CREATE SINK b_sink FROM b_totals INTO KAFKA (brokers '${brokers}', topic '${outTopic}', format 'changelog')`,
    );
    assert.equal(created.status, 200, created.text);
    await waitFor(async () => (await total(base, beta, 'b_orders')) === 50, { what: 'beta’s source rows' });
    const totals = await call(base, 'GET', '/v1/views/b_totals/rows', { token: beta });
    assert.deepEqual(totals.body.rows, [
      { n: 50, total: Array.from({ length: 50 }, (_, i) => i % 7).reduce((a, b) => a + b) },
    ]);
    // The sink wrote beta's view into the topic.
    await waitFor(
      async () => {
        const s = await call(base, 'GET', '/v1/sinks/b_sink', { token: beta });
        return s.body.state === 'running' && (s.body.lagEpochs as number | null) === 0;
      },
      { what: 'beta’s sink to catch up' },
    );
    const written = await readTopic(kafka, outTopic);
    assert.ok(written.length > 0, 'the sink wrote messages');
    assert.ok(written.every((m) => m.value === null || /"n"/.test(m.value)));

    // acme: each answer about beta's connectors equals the answer about a name nobody has, once the
    // name is put back (byte for byte otherwise).
    const probes: { name: string; run: (n: string) => Promise<Answer> }[] = [
      { name: 'GET /v1/sources/{s}', run: (n) => call(base, 'GET', `/v1/sources/${n}`, { token: acme }) },
      {
        name: 'GET /v1/sources/{s}/errors',
        run: (n) => call(base, 'GET', `/v1/sources/${n}/errors`, { token: acme }),
      },
      { name: 'GET /v1/sinks/{s}', run: (n) => call(base, 'GET', `/v1/sinks/${n}`, { token: acme }) },
      { name: 'GET /v1/tables/{source}', run: (n) => call(base, 'GET', `/v1/tables/${n}`, { token: acme }) },
      {
        name: 'GET /v1/tables/{source}/rows',
        run: (n) => call(base, 'GET', `/v1/tables/${n}/rows`, { token: acme }),
      },
      { name: 'SQL SELECT from the source', run: (n) => sqlAs(base, acme, `SELECT * FROM ${n}`) },
      {
        name: 'SQL CREATE VIEW over the source',
        run: (n) => sqlAs(base, acme, `CREATE MATERIALIZED VIEW spy AS SELECT COUNT(*) AS c FROM ${n}`),
      },
      {
        name: 'SQL CREATE SINK from its view',
        run: (n) =>
          sqlAs(
            base,
            acme,
            `CREATE SINK spy_sink FROM ${n === 'b_orders' ? 'b_totals' : 'no_view'} INTO KAFKA (brokers '${brokers}', topic 'x', format 'changelog')`,
          ),
      },
      { name: 'SQL DROP SOURCE', run: (n) => sqlAs(base, acme, `DROP SOURCE ${n}`) },
      {
        name: 'SQL DROP SINK',
        run: (n) => sqlAs(base, acme, `DROP SINK ${n === 'b_orders' ? 'b_sink' : 'no_sink'}`),
      },
      { name: 'SQL INSERT into the source', run: (n) => sqlAs(base, acme, `INSERT INTO ${n} VALUES (1, 1)`) },
    ];
    const normal = (a: Answer, name: string): string =>
      JSON.stringify({ status: a.status, body: a.body })
        .replaceAll(name, '<name>')
        .replaceAll('b_totals', '<view>')
        .replaceAll('no_view', '<view>')
        .replaceAll('b_sink', '<sink>')
        .replaceAll('no_sink', '<sink>');
    const lines: string[] = [];
    const differing: string[] = [];
    for (const p of probes) {
      const other = normal(await p.run('b_orders'), 'b_orders');
      const missing = normal(await p.run('no_such'), 'no_such');
      lines.push(
        `${p.name.padEnd(34)} ${other === missing ? 'identical' : 'DIFFERENT'} ${missing.slice(0, 60)}`,
      );
      if (other !== missing) differing.push(`${p.name}\n  other:   ${other}\n  missing: ${missing}`);
      assert.doesNotMatch(other, /"status":20\d/, `${p.name} reached beta's connector`);
    }
    console.log(lines.join('\n'));
    assert.deepEqual(differing, []);
    // Listings and SHOW of acme hold none of them.
    for (const what of ['sources', 'sinks', 'tables', 'views'])
      assert.deepEqual((await call(base, 'GET', `/v1/${what}`, { token: acme })).body[what], [], what);
    assert.doesNotMatch(JSON.stringify((await sqlAs(base, acme, 'SHOW SOURCES; SHOW SINKS')).body), /b_/);
    // Beta's connectors are untouched by acme's attempts.
    assert.equal((await call(base, 'GET', '/v1/sources/b_orders', { token: beta })).body.state, 'running');
    assert.equal((await call(base, 'GET', '/v1/sinks/b_sink', { token: beta })).status, 200);
    await send(inTopic, 50, 10);
    await waitFor(async () => (await total(base, beta, 'b_orders')) === 60, { what: 'beta reads on' });

    // The connectors quota counts beta's source and sink, and only beta's.
    assert.equal(
      (await call(base, 'PATCH', '/v1/tenants/beta', { token: OPERATOR_TOKEN, body: { connectors: 2 } }))
        .status,
      200,
    );
    const third = await sqlAs(
      base,
      beta,
      `CREATE SOURCE b_more (id int, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${inTopic}', format 'upsert')`,
    );
    assert.equal(third.status, 403, third.text);
    assert.equal(third.body.error?.code, 'QUOTA_EXCEEDED');
    assert.match(third.body.error?.detail ?? '', /the tenant has 2 sources and sinks/);
    assert.equal(
      (await call(base, 'PATCH', '/v1/tenants/acme', { token: OPERATOR_TOKEN, body: { connectors: 1 } }))
        .status,
      200,
    );
    const acmeSource = await sqlAs(
      base,
      acme,
      `CREATE SOURCE a_orders (id int, amount int NOT NULL, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${inTopic}', format 'upsert')`,
    );
    assert.equal(acmeSource.status, 200, `acme's quota does not count beta's connectors: ${acmeSource.text}`);
    await waitFor(async () => (await total(base, acme, 'a_orders')) === 60, { what: 'acme’s own source' });
    // Dropping makes room in beta again; acme's source is acme's alone.
    assert.equal((await sqlAs(base, beta, 'DROP SINK b_sink')).status, 200);
    assert.equal(
      (
        await sqlAs(
          base,
          beta,
          `CREATE SOURCE b_more (id int, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${inTopic}', format 'upsert')`,
        )
      ).status,
      200,
    );
    assert.equal((await sqlAs(base, acme, 'DROP SOURCE a_orders')).status, 200);
    assert.equal((await call(base, 'GET', '/v1/sources/b_orders', { token: beta })).status, 200);
    for (const t of ['acme', 'beta'])
      await call(base, 'PATCH', `/v1/tenants/${t}`, { token: OPERATOR_TOKEN, body: { connectors: null } });
  });

  it('a source over its tenant’s ingest rate is paced, never drops a record; the neighbour’s source reads everything meanwhile', async () => {
    const base = server.base;
    const RATE = 100;
    const RECORDS = 700;
    const slowTopic = uniqueName('tenant-paced');
    const fastTopic = uniqueName('tenant-free');
    await createTopic(kafka, slowTopic, 3);
    await createTopic(kafka, fastTopic, 3);
    await send(slowTopic, 0, RECORDS);
    await send(fastTopic, 0, RECORDS);
    assert.equal(
      (
        await call(base, 'PATCH', '/v1/tenants/beta', {
          token: OPERATOR_TOKEN,
          body: { ingestRowsPerSecond: RATE },
        })
      ).status,
      200,
    );
    const started = Date.now();
    const [paced, free] = await Promise.all([
      sqlAs(
        base,
        beta,
        `CREATE SOURCE paced (id int, amount int NOT NULL, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${slowTopic}', format 'upsert')`,
      ),
      sqlAs(
        base,
        acme,
        `CREATE SOURCE free (id int, amount int NOT NULL, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${fastTopic}', format 'upsert')`,
      ),
    ]);
    assert.equal(paced.status, 200, paced.text);
    assert.equal(free.status, 200, free.text);
    // Sampled until the paced source has everything: at every sample what it admitted is within the
    // rate over the time so far (plus one second's burst and one batch of slack).
    const samples: string[] = [];
    let freeDoneAt: number | null = null;
    await waitFor(
      async () => {
        const rows = await total(base, beta, 'paced');
        const seconds = (Date.now() - started) / 1000;
        assert.ok(
          rows <= RATE * (seconds + 1) + RATE,
          `the paced source admitted ${rows} rows in ${seconds} s at ${RATE} rows/s`,
        );
        if (freeDoneAt === null && (await total(base, acme, 'free')) === RECORDS) {
          freeDoneAt = rows;
          samples.push(`acme's source had all ${RECORDS} records while beta's had ${rows}`);
        }
        return rows === RECORDS;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the paced source to read every record' },
    );
    console.log(samples.join('\n'));
    const status = await call(base, 'GET', '/v1/sources/paced', { token: beta });
    assert.ok((status.body.rateWaits as number) > 0, `the source waited (${String(status.body.rateWaits)})`);
    assert.equal(status.body.state, 'running');
    assert.equal(status.body.skipped, 0);
    const metrics = (await call(base, 'GET', '/metrics', { token: beta })).text;
    assert.match(metrics, /^sluice_source_rate_waits\{source="paced",tenant="beta"\} [1-9]\d*$/m);
    // Nothing lost or doubled: every id once, the sum of its amounts.
    const sum = await sqlAs(
      base,
      beta,
      'SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS ids, SUM(amount) AS s FROM paced',
    );
    const expected = Array.from({ length: RECORDS }, (_, i) => i % 7).reduce((a, b) => a + b);
    assert.deepEqual((sum.body.results as { rows: unknown[] }[])[0]?.rows, [
      { n: RECORDS, ids: RECORDS, s: expected },
    ]);
    // The neighbour without a quota was not held back by beta's limit: it had every record before beta did.
    assert.ok(
      freeDoneAt !== null && freeDoneAt < RECORDS,
      `acme finished first (beta had ${String(freeDoneAt)})`,
    );
    await call(base, 'PATCH', '/v1/tenants/beta', {
      token: OPERATOR_TOKEN,
      body: { ingestRowsPerSecond: null },
    });
  });
  it('a source pauses while its tenant is at its state quota — position kept, nothing skipped — and resumes once the state is below', async () => {
    const base = server.base;
    const gamma = await tenantAdmin(base, 'gamma');
    const topic = uniqueName('tenant-state');
    await createTopic(kafka, topic, 2);
    await send(topic, 0, 200);
    const quota = (stateBytes: number | null): Promise<Answer> =>
      call(base, 'PATCH', '/v1/tenants/gamma', { token: OPERATOR_TOKEN, body: { stateBytes } });
    const status = async (): Promise<Record<string, unknown>> =>
      (await call(base, 'GET', '/v1/sources/held', { token: gamma })).body as Record<string, unknown>;
    const nextSum = (st: Record<string, unknown>): number =>
      (st.partitions as { next: number }[]).reduce((n, p) => n + p.next, 0);
    try {
      const made = await sqlAs(
        base,
        gamma,
        `CREATE SOURCE held (id int, amount int NOT NULL, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${topic}', format 'upsert'); ` +
          'CREATE MATERIALIZED VIEW copy AS SELECT id, amount FROM held; ' +
          'CREATE MATERIALIZED VIEW copy2 AS SELECT id, amount + 1 AS a FROM held',
      );
      assert.equal(made.status, 200, made.text);
      await waitFor(async () => (await total(base, gamma, 'held')) === 200, {
        what: 'the first 200 records',
      });
      // The quota is the state the tenant holds now (the source's rows and the two views): it is at it.
      const state = async (): Promise<number> =>
        (await call(base, 'GET', '/v1/tenants/gamma/usage', { token: gamma })).body.stateBytes as number;
      const held200 = await state();
      assert.ok(held200 > 0);
      assert.equal((await quota(held200)).status, 200);
      await send(topic, 200, 300);
      await waitFor(async () => (await status()).pausedAtStateQuota === true, {
        timeoutMs: 30_000,
        what: 'the source to pause at the state quota',
      });
      // Paused: nothing more applied, the position where it was, the source still running, and shown
      // in its status and metrics.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const paused = await status();
      assert.equal(await total(base, gamma, 'held'), 200);
      assert.equal(nextSum(paused), 200, JSON.stringify(paused.partitions));
      assert.equal(paused.state, 'running');
      assert.equal(paused.stateQuotaPauses, 1);
      assert.equal(paused.skipped, 0);
      const metrics = (await call(base, 'GET', '/metrics', { token: gamma })).text;
      assert.match(metrics, /^sluice_source_paused_state_quota\{source="held",tenant="gamma"\} 1$/m);
      // Dropping the views brings the state below the quota: the source resumes (the 300 records may take
      // it past the quota again, and it pauses again: a raised quota then lets it read the rest).
      assert.equal((await sqlAs(base, gamma, 'DROP VIEW copy; DROP VIEW copy2')).status, 200);
      assert.ok((await state()) < held200, 'the views held state');
      await waitFor(async () => (await total(base, gamma, 'held')) > 200, {
        timeoutMs: 60_000,
        what: 'the source to resume after the DROP',
      });
      assert.equal((await quota(null)).status, 200);
      await waitFor(async () => (await total(base, gamma, 'held')) === 500, {
        timeoutMs: 60_000,
        what: 'every record after the quota was lifted',
      });
      const after = await status();
      assert.equal(nextSum(after), 500);
      assert.equal(after.pausedAtStateQuota, false);
      assert.equal(after.skipped, 0);
      const sum = await sqlAs(
        base,
        gamma,
        'SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS ids, SUM(amount) AS s FROM held',
      );
      const expected = Array.from({ length: 500 }, (_, i) => i % 7).reduce((a, b) => a + b);
      assert.deepEqual((sum.body.results as { rows: unknown[] }[])[0]?.rows, [
        { n: 500, ids: 500, s: expected },
      ]);
    } finally {
      await quota(null);
    }
  });
});
