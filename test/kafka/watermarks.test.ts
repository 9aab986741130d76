// Per-partition watermarks of a Kafka source against a real broker, on the manual clock: over a topic
// of two partitions the source's watermark is the least of the partitions'; when one goes quiet for
// the source's idle_timeout (on the logical clock) a SET CLOCK tick lets the other one's watermark
// through and an EMIT ON WINDOW CLOSE view closes its windows with no new data; the quiet partition
// delivering again holds it back (its late row dropped and counted); a restart recovers the same.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { request, sqlOk, startServer, tempDir, type TestServer } from '../server/helpers.ts';

const at = (s: number): string => `2024-01-01 10:00:${String(s).padStart(2, '0')}`;

async function caughtUp(base: string, ends: Readonly<Record<number, number>>): Promise<void> {
  await waitFor(
    async () => {
      const r = await request(base, 'GET', '/v1/sources/bids');
      assert.equal(r.status, 200, r.text);
      if (r.body.state === 'failed') throw new Error(`source failed: ${JSON.stringify(r.body.error)}`);
      const parts = r.body.partitions as { partition: number; next: number }[];
      return Object.entries(ends).every(
        ([p, end]) => (parts.find((x) => x.partition === Number(p))?.next ?? -1) >= end,
      );
    },
    { what: `source bids caught up to ${JSON.stringify(ends)}` },
  );
}

async function rows(base: string, sql: string): Promise<Record<string, unknown>[]> {
  const r = await sqlOk(base, sql);
  return (r.body['results'] as { rows: Record<string, unknown>[] }[])[0]?.rows ?? [];
}

async function watermark(base: string): Promise<[unknown, unknown]> {
  const r = (await rows(base, 'SHOW WATERMARKS')).find((x) => x['name'] === 'bids');
  return [r?.['watermark'], r?.['late_rows']];
}

describe('Kafka source watermarks (real broker)', kafkaSuite('Kafka source watermarks'), () => {
  const fx = kafkaSuiteFixture('sluice-watermark-test');

  it('an idle partition stops holding the watermark back after idle_timeout, and windows close', async () => {
    const topic = uniqueName('bids-wm');
    await createTopic(fx.kafka, topic, 2);
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    const start = async (): Promise<TestServer> => {
      const s = await startServer({ dataDir: dir, clock: { mode: 'manual', tickMs: 0 } });
      fx.servers.push(s);
      return s;
    };
    const send = async (partition: number, id: number, sec: number): Promise<void> => {
      await fx.producer.send({
        topic,
        messages: [{ partition, value: JSON.stringify({ id, ts: at(sec) }) }],
      });
    };
    let s = await start();
    await sqlOk(
      s.base,
      `SET CLOCK TO '2024-06-01 00:00:00+00';
       CREATE SOURCE bids (id int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
         FROM KAFKA (brokers '${fx.brokers}', topic '${topic}', max_batch_ms 10, idle_timeout '10 seconds');
       CREATE MATERIALIZED VIEW per10 AS SELECT window_end, count(*) AS n
         FROM TUMBLE(bids, ts, INTERVAL '10' SECOND) GROUP BY window_end EMIT ON WINDOW CLOSE`,
    );
    await send(0, 1, 1);
    await send(1, 2, 3);
    await caughtUp(s.base, { 0: 1, 1: 1 });
    await send(0, 3, 25);
    await caughtUp(s.base, { 0: 2, 1: 1 });
    // Partition 1 (at 3 s) holds the watermark at 1 s although partition 0 is at 25 s.
    assert.deepEqual(await watermark(s.base), [at(1), 0]);
    assert.deepEqual(await rows(s.base, 'SELECT * FROM per10'), []);
    await sqlOk(s.base, "SET CLOCK TO '2024-06-01 00:00:09+00'");
    assert.deepEqual(await watermark(s.base), [at(1), 0], 'not idle before the timeout');
    // 10 s after partition 1's last record: it is idle; the tick lets partition 0's 23 s through.
    const tick = await sqlOk(s.base, "SET CLOCK TO '2024-06-01 00:00:10+00'");
    const tickEpoch = (tick.body['results'] as { epoch: number }[])[0]?.epoch;
    assert.deepEqual(await watermark(s.base), [at(23), 0]);
    assert.deepEqual(await rows(s.base, 'SELECT * FROM per10 ORDER BY window_end'), [
      { window_end: at(10), n: 2 },
    ]);
    // The REST read says which clock and watermark it reflects.
    const read = await request(s.base, 'GET', '/v1/views/per10');
    assert.equal(read.body['epoch'], tickEpoch);
    assert.equal(read.body['clock'], '2024-06-01 00:00:10+00');
    assert.deepEqual(read.body['watermarks'], { bids: at(23) });
    // Partition 1 wakes up behind the watermark: its row is late, and it holds the watermark again.
    await send(1, 4, 5);
    await caughtUp(s.base, { 0: 2, 1: 2 });
    assert.deepEqual(await watermark(s.base), [at(23), 1]);
    await send(0, 5, 40);
    await caughtUp(s.base, { 0: 3, 1: 2 });
    assert.deepEqual(await watermark(s.base), [at(23), 1], 'partition 1 (at 5 s) holds it again');
    const before = JSON.stringify([await watermark(s.base), await rows(s.base, 'SELECT * FROM per10')]);
    // A restart (journal and checkpoint) recovers the per-partition state: the same watermark, and
    // the same tick closes the same windows.
    await s.close();
    s = await start();
    assert.equal(
      JSON.stringify([await watermark(s.base), await rows(s.base, 'SELECT * FROM per10')]),
      before,
    );
    await sqlOk(s.base, "SET CLOCK TO '2024-06-01 00:00:30+00'");
    assert.deepEqual(await watermark(s.base), [at(38), 1]);
    assert.deepEqual(await rows(s.base, 'SELECT * FROM per10 ORDER BY window_end'), [
      { window_end: at(10), n: 2 },
      { window_end: at(30), n: 1 },
    ]);
  });
});
