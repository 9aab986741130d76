// A Kafka source's batch whose epoch would make a view's join pass the engine's bound
// (maxEpochJoinRows) is applied in several epochs that fit, real broker: each record of the source
// pairs with 10 rows of a table, under a bound of 50 rows, so a backlog of 40 records (400 join
// rows, one batch before) takes at least 8 epochs. The view equals SQLite's join of the same rows,
// positions are exact after a restart (nothing read twice), and a record that alone pairs with 60
// rows is applied whole and counted (`oversizedRecords`).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Engine } from '../../src/index.ts';
import { createTopic } from '../support/kafka-topics.ts';
import { kafkaSuite, kafkaSuiteFixture, uniqueName, waitFor } from '../support/kafka.ts';
import { rowsAsText } from '../support/sqlite-oracle.ts';
import { request, sqlOk, startServer, tempDir, type TestServer } from '../server/helpers.ts';

interface Status {
  partitions: { partition: number; next: number }[];
  batches: number;
  splitBatches: number;
  oversizedRecords: number;
}

const VIEW = 'SELECT a.id, a.k, b.x FROM a JOIN b ON a.k = b.k';

async function sourceStatus(base: string): Promise<Status> {
  const r = await request(base, 'GET', '/v1/sources/a');
  assert.equal(r.status, 200, r.text);
  return r.body as unknown as Status;
}

async function rowsOf(base: string, sql: string): Promise<Record<string, unknown>[]> {
  const r = await sqlOk(base, sql);
  return (r.body.results as { rows: Record<string, unknown>[] }[])[0]?.rows ?? [];
}

/** The view against SQLite running its SELECT over the rows the source and the table hold. */
async function assertViewMatchesSqlite(
  base: string,
  sent: readonly { id: number; k: number }[],
): Promise<void> {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  db.exec('CREATE TABLE a (id INTEGER, k INTEGER); CREATE TABLE b (k INTEGER, x INTEGER)');
  const insertA = db.prepare('INSERT INTO a VALUES (?, ?)');
  for (const r of sent) insertA.run(r.id, r.k);
  const insertB = db.prepare('INSERT INTO b VALUES (?, ?)');
  for (const r of await rowsOf(base, 'SELECT k, x FROM b'))
    insertB.run(BigInt(String(r.k)), BigInt(String(r.x)));
  const expected = rowsAsText(db.prepare(VIEW).all() as Record<string, unknown>[], String);
  db.close();
  assert.deepEqual(rowsAsText(await rowsOf(base, 'SELECT id, k, x FROM v'), String), expected);
}

describe('Kafka source batches cut at the epoch bound (real broker)', kafkaSuite('Kafka epoch split'), () => {
  const fx = kafkaSuiteFixture('sluice-epoch-split-test');
  const start = (dir: string): Promise<TestServer> =>
    startServer({ dataDir: dir, createEngine: () => new Engine({ maxEpochJoinRows: 50 }) });

  it('a backlog past the bound is applied in epochs that fit; positions exact after a restart', async () => {
    const topic = uniqueName('split');
    await createTopic(fx.kafka, topic, 2);
    const sent: { id: number; k: number }[] = [];
    const send = async (rows: { id: number; k: number }[]) => {
      sent.push(...rows);
      await fx.producer.send({
        topic,
        messages: rows.map((r) => ({ partition: r.id % 2, value: JSON.stringify(r) })),
      });
    };
    const dir = tempDir('sluice-kafka-');
    fx.dirs.push(dir);
    let s = await start(dir);
    fx.servers.push(s);
    const values = (k: number, n: number) => Array.from({ length: n }, (_, x) => `(${k}, ${x})`).join(', ');
    await sqlOk(
      s.base,
      `CREATE TABLE b (k bigint, x bigint); INSERT INTO b VALUES ${values(1, 10)}, ${values(2, 60)}`,
    );
    await sqlOk(
      s.base,
      `CREATE SOURCE a (id bigint, k bigint) FROM KAFKA (brokers '${fx.brokers}', topic '${topic}')`,
    );
    await sqlOk(s.base, `CREATE MATERIALIZED VIEW v AS ${VIEW}`);
    const read = (n0: number, n1: number) => async () => {
      const p = (await sourceStatus(s.base)).partitions;
      return p.find((x) => x.partition === 0)?.next === n0 && p.find((x) => x.partition === 1)?.next === n1;
    };
    // Sent at once: one fetch, one batch, before the change (one epoch).
    await send(Array.from({ length: 40 }, (_, id) => ({ id, k: 1 })));
    await waitFor(read(20, 20), { what: 'the first records' });
    const first = await sourceStatus(s.base);
    // 40 records × 10 join rows under a bound of 50: five records an epoch at most.
    assert.ok(first.batches >= 8, `${first.batches} epochs`);
    assert.ok(first.splitBatches >= 1);
    assert.equal(first.oversizedRecords, 0);
    await assertViewMatchesSqlite(s.base, sent);

    // A record of k = 2 pairs with 60 rows: past the bound alone, applied whole and counted.
    await send([
      { id: 40, k: 2 },
      { id: 42, k: 1 },
      { id: 41, k: 1 },
    ]);
    await waitFor(read(22, 21), { what: 'the oversized record' });
    assert.equal((await sourceStatus(s.base)).oversizedRecords, 1);
    await assertViewMatchesSqlite(s.base, sent);

    // A restart resumes at the delivered positions: nothing is read or applied twice.
    await s.close();
    s = await start(dir);
    fx.servers.push(s);
    await send(Array.from({ length: 10 }, (_, i) => ({ id: 43 + i, k: 1 })));
    await waitFor(read(27, 26), { what: 'the records after the restart' });
    await assertViewMatchesSqlite(s.base, sent);
    assert.equal((await rowsOf(s.base, 'SELECT count(*) AS n FROM a'))[0]?.n, 53);
  });
});
