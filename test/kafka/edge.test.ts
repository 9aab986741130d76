// The Kafka side of the server's edge, against a real broker: records whose key or value is not
// well-formed text (a lone surrogate escape, bytes that are not UTF-8) are poison records under the
// source's on_error policy — never stored, so the data directory keeps starting — and what the errors
// relation keeps of them is itself well-formed; and the connector-host allow-list lets the normal
// path (a loopback broker, or one listed in --connector-hosts) through while refusing the rest.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTopic, readTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, restView, sql, sqlOk, startServer, tempDir } from '../server/helpers.ts';
import { loneSurrogateIndex } from '../../src/common/json-codec.ts';

async function sourceStatus(base: string, name: string): Promise<Record<string, unknown>> {
  const r = await request(base, 'GET', `/v1/sources/${name}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function caughtUp(base: string, name: string, partition: number, end: number): Promise<void> {
  await waitFor(
    async () => {
      const s = await sourceStatus(base, name);
      if (s.state === 'failed') throw new Error(`source failed: ${JSON.stringify(s.error)}`);
      const parts = s.partitions as { partition: number; next: number }[];
      return (parts.find((x) => x.partition === partition)?.next ?? -1) >= end;
    },
    { what: `source ${name} caught up to ${end}` },
  );
}

describe('Kafka edge (real broker)', kafkaSuite('Kafka edge'), () => {
  const fx = kafkaSuiteFixture('sluice-edge-test');

  it('ill-formed text in a record is poison (fail and skip), stored well-formed, and restarts work', async () => {
    const topic = uniqueName('orders-text');
    await createTopic(fx.kafka, topic, 1);
    const good = (id: number): string => JSON.stringify({ id, seller: 1, note: `ok ${id} 😀` });
    await fx.producer.send({
      topic,
      messages: [
        { value: good(1) },
        { value: String.raw`{"id": 2, "seller": 1, "note": "lone \ud800"}` }, // offset 1
        {
          value: Buffer.concat([
            Buffer.from('{"id": 3, "seller": 1, "note": "'),
            Buffer.from([0xed, 0xa0, 0x80]),
            Buffer.from('"}'),
          ]),
        }, // offset 2
        { value: String.raw`{"id": 4, "seller": 1, "no\udfffte": "x"}` }, // offset 3: in a key
        { value: good(5) },
      ],
    });
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    let s = await startServer({ dataDir: dir, checkpoint: { intervalMs: 200, epochs: 5 } });
    await sqlOk(
      s.base,
      `CREATE SOURCE strict_text (id int, seller int NOT NULL, note text) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', on_error 'fail');
       CREATE SOURCE lenient_text (id int, seller int NOT NULL, note text) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', on_error 'skip');
       CREATE MATERIALIZED VIEW lenient_ids AS SELECT id, note FROM lenient_text;`,
    );
    const failed = await waitFor(
      async () => {
        const st = await sourceStatus(s.base, 'strict_text');
        return st.state === 'failed' ? st : undefined;
      },
      { what: 'strict source to fail' },
    );
    const error = failed.error as { offset: number; reason: string };
    assert.equal(error.offset, 1);
    assert.match(
      error.reason,
      /value holds text that is not well-formed Unicode: lone surrogate U\+D800 in \$\.note/,
    );
    await caughtUp(s.base, 'lenient_text', 0, 5);
    const skipped = (await request(s.base, 'GET', '/v1/sources/lenient_text/errors')).body.errors as {
      offset: number;
      reason: string;
      raw: string;
    }[];
    assert.deepEqual(
      skipped.map((e) => e.offset),
      [1, 2, 3],
    );
    assert.match(skipped[1]?.reason ?? '', /value is not valid UTF-8/);
    assert.match(skipped[2]?.reason ?? '', /in the key/);
    // Kept as well-formed text: the escape as written, bytes that are not UTF-8 as \xHH.
    assert.equal(skipped[0]?.raw, String.raw`{"id": 2, "seller": 1, "note": "lone \ud800"}`);
    assert.equal(skipped[1]?.raw, String.raw`{"id": 3, "seller": 1, "note": "\xED\xA0\x80"}`);
    for (const e of skipped) {
      assert.equal(loneSurrogateIndex(e.raw), -1);
      assert.equal(loneSurrogateIndex(e.reason), -1);
    }
    const before = await restView(s.base, 'lenient_ids');
    assert.deepEqual(before.rows.map((r) => r.id).sort(), [1, 5]);
    // The journal holds only well-formed text: the data directory starts again, twice (the second
    // time from the checkpoint written at the clean stop).
    for (let i = 0; i < 2; i++) {
      await s.close();
      s = await startServer({ dataDir: dir, checkpoint: { intervalMs: 200, epochs: 5 } });
    }
    fx.servers.push(s);
    assert.deepEqual((await restView(s.base, 'lenient_ids')).rows, before.rows);
    const relation = await sqlOk(
      s.base,
      'SELECT kafka_offset, raw FROM lenient_text_errors ORDER BY kafka_offset',
    );
    const rows =
      (relation.body.results as { rows: { kafka_offset: number; raw: string }[] }[])[0]?.rows ?? [];
    assert.deepEqual(
      rows.map((r) => r.raw),
      skipped.map((e) => e.raw),
    );
  });

  it('connector hosts: a loopback or listed broker works end to end; others are refused at CREATE', async () => {
    const topic = uniqueName('orders-hosts');
    const out = uniqueName('totals-hosts');
    await createTopic(fx.kafka, topic, 1);
    await createTopic(fx.kafka, out, 1);
    await fx.producer.send({
      topic,
      messages: [1, 2, 3].map((id) => ({ value: JSON.stringify({ id, seller: id % 2 }) })),
    });
    const port = fx.brokers.split(':')[1] ?? '';

    // Default: loopback brokers pass (here as "localhost:<port>").
    const byDefault = await startServer({});
    fx.servers.push(byDefault);
    await sqlOk(
      byDefault.base,
      `CREATE SOURCE o (id int NOT NULL, seller int NOT NULL, PRIMARY KEY (id)) FROM KAFKA (brokers 'localhost:${port}', topic '${topic}');
       CREATE MATERIALIZED VIEW per_seller AS SELECT seller, COUNT(*) AS n FROM o GROUP BY seller;`,
    );
    await caughtUp(byDefault.base, 'o', 0, 3);
    const refused = await sql(
      byDefault.base,
      `CREATE SINK k FROM per_seller INTO KAFKA (brokers '10.255.255.1:${port}', topic '${out}', format 'upsert')`,
    );
    assert.equal(refused.body.error?.code, 'FORBIDDEN_BROKER');

    // An explicit list: only what it names.
    const listed = await startServer({ connectorHosts: [`127.0.0.1:${port}`] });
    fx.servers.push(listed);
    const viaName = await sql(
      listed.base,
      `CREATE SOURCE o (id int) FROM KAFKA (brokers 'localhost:${port}', topic '${topic}')`,
    );
    assert.equal(viaName.body.error?.code, 'FORBIDDEN_BROKER', 'localhost is not in the list');
    await sqlOk(
      listed.base,
      `CREATE SOURCE o (id int NOT NULL, seller int NOT NULL, PRIMARY KEY (id)) FROM KAFKA (brokers '127.0.0.1:${port}', topic '${topic}');
       CREATE MATERIALIZED VIEW per_seller AS SELECT seller, COUNT(*) AS n FROM o GROUP BY seller;
       CREATE SINK k FROM per_seller INTO KAFKA (brokers '127.0.0.1:${port}', topic '${out}', format 'upsert');`,
    );
    await caughtUp(listed.base, 'o', 0, 3);
    const written = await waitFor(
      async () => {
        const m = await readTopic(fx.kafka, out);
        return new Set(m.map((x) => x.key)).size >= 2 ? m : undefined;
      },
      { what: 'the sink to write the view' },
    );
    assert.deepEqual(written.map((m) => m.key).sort(), ['{"seller":0}', '{"seller":1}']);
  });
  it('connector hosts hold for the addresses the cluster advertises, not only the bootstrap brokers', async () => {
    // The broker advertises 127.0.0.1:<port>. A list that allows only the name "localhost" lets the
    // CREATE through (its bootstrap broker is listed) but never the advertised address.
    const topic = uniqueName('orders-advertised');
    await createTopic(fx.kafka, topic, 1);
    await fx.producer.send({ topic, messages: [{ value: JSON.stringify({ id: 1 }) }] });
    const port = fx.brokers.split(':')[1] ?? '';
    const s = await startServer({ connectorHosts: [`localhost:${port}`] });
    fx.servers.push(s);
    await sqlOk(
      s.base,
      `CREATE SOURCE adv (id int NOT NULL, PRIMARY KEY (id)) FROM KAFKA (brokers 'localhost:${port}', topic '${topic}')`,
    );
    const status = await waitFor(
      async () => {
        const st = await sourceStatus(s.base, 'adv');
        const error = st.error as { message?: string } | null;
        return error?.message?.includes('is not an allowed connector host') === true ? st : undefined;
      },
      { what: 'the source to report the refused advertised address' },
    );
    assert.match(
      String((status.error as { message: string }).message),
      new RegExp(`127\\.0\\.0\\.1:${port}`),
    );
    assert.notEqual(status.state, 'running');
    const rows = await sql(s.base, 'SELECT count(*) AS n FROM adv');
    assert.deepEqual((rows.body.results as { rows: unknown[] }[])[0]?.rows, [{ n: 0 }]);
  });
});
