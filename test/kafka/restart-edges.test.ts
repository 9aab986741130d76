// Durability of what Kafka sources accept, against a real broker and a server process killed with
// SIGKILL: json, upsert and Debezium sources fed every type's edge values (−0, 2^53±1, bigints at
// the ends of 64 bits, NaN and ±Infinity as text, 1e400 as a number, long and odd texts, deep and
// odd-keyed jsonb, NULLs, tombstones) and poison records. After a restart from the journal alone,
// after a checkpoint, and after a crash in the middle of a checkpoint, every source, errors relation
// and view reads back byte for byte; every record is applied once or listed once in the errors
// relation; positions resume at the topic's end; a view equals SQLite over the source's rows. Two
// tenants with the same table and source names each see only their own after a restart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import WebSocket from 'ws';
import type { Kafka, Producer } from 'kafkajs';
import { createTopic } from '../support/kafka-topics.ts';
import { connectProducer, kafkaSuite, uniqueName, waitFor } from '../support/kafka.ts';
import { killHard, spawnCrashable, type CrashableServer } from '../support/crash-harness.ts';
import { OPERATOR_TOKEN, call } from '../server/auth-helpers.ts';
import { removeDir, request, tempDir } from '../server/helpers.ts';

const COLUMNS =
  'id bigint NOT NULL, i int, si smallint, b bigint, d double precision, r real, n numeric(25,5), ' +
  't text, j jsonb, ok boolean, ts timestamptz, dt date, iv interval, PRIMARY KEY (id)';
const NO_CHECKPOINT = ['--checkpoint-interval-ms', '86400000', '--checkpoint-epochs', '1000000000'];
const FAST_CHECKPOINT = ['--checkpoint-interval-ms', '50', '--checkpoint-epochs', '1'];

function deepJson(depth: number): string {
  return '['.repeat(depth) + '{"__proto__": {"x": -0}, "constructor": 1, "": null}' + ']'.repeat(depth);
}

/** The edge rows as JSON texts (written by hand: numbers past 2^53 must reach the broker as written). */
function edgeValues(base: number): { body: string; poison: boolean }[] {
  const row = (id: number, rest: string): string => `{"id": ${base + id}${rest === '' ? '' : ', ' + rest}}`;
  return [
    { body: row(1, ''), poison: false }, // NULL everywhere
    { body: row(2, '"i": -0, "d": -0, "r": -0.0, "n": -0'), poison: false },
    { body: row(3, '"b": 9007199254740993, "d": 9007199254740993, "n": 9007199254740993'), poison: false },
    { body: row(4, '"b": 9223372036854775807, "i": 2147483647, "si": 32767'), poison: false },
    { body: row(5, '"b": -9223372036854775808, "i": -2147483648, "si": -32768'), poison: false },
    { body: row(6, '"b": 9223372036854775808'), poison: true },
    { body: row(7, '"d": "NaN", "r": "-Infinity"'), poison: false },
    { body: row(8, '"d": 1e400'), poison: true },
    { body: row(9, `"t": "${'x'.repeat(300_000)}😀"`), poison: false },
    { body: row(10, `"j": ${deepJson(200)}`), poison: false },
    {
      body: row(11, String.raw`"t": "a\u0000b\u2028 😀 e\u0301", "j": {"b": 1, "a": [1.50, -0, 1e-7]}`),
      poison: false,
    },
    {
      body: row(12, '"ts": "1970-01-01T00:00:00.000001Z", "dt": "0001-01-01", "iv": "-178000000 years"'),
      poison: false,
    },
    { body: row(13, '"n": "123456789012345.12345", "r": 3.4028235e38, "d": 5e-324'), poison: false },
    { body: row(14, '"si": 32768'), poison: true },
    { body: '{"id": ', poison: true },
    { body: row(15, '"ok": true, "n": 0.000005, "ts": "2262-04-11T23:47:16.854775807Z"'), poison: false },
    { body: row(2, '"i": 1, "d": -0, "t": ""'), poison: false }, // replaces id 2
  ];
}

async function sqlText(base: string, statements: string, token?: string): Promise<string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const r = await fetch(`${base}/v1/sql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ sql: statements }),
  });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return text;
}

/** Every relation's contents as the server writes them (raw text, so -0 and bigints are compared exactly). */
async function snapshot(base: string, sources: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const s of sources) {
    parts.push(await sqlText(base, `SELECT * FROM ${s} ORDER BY id`));
    parts.push(
      await sqlText(base, `SELECT kafka_offset, reason, raw FROM ${s}_errors ORDER BY kafka_offset`),
    );
    parts.push(await sqlText(base, `SELECT * FROM ${s}_sums ORDER BY ok`));
  }
  parts.push(await sqlText(base, 'SELECT * FROM sa ORDER BY id, i'));
  parts.push(await sqlText(base, 'SELECT kafka_offset, reason, raw FROM sa_errors ORDER BY kafka_offset'));
  return parts.join('\n');
}

async function caughtUp(base: string, name: string, end: number): Promise<void> {
  await waitFor(
    async () => {
      const r = await request(base, 'GET', `/v1/sources/${name}`);
      if (r.body.state === 'failed') throw new Error(`source failed: ${r.text}`);
      const parts = r.body.partitions as { partition: number; next: number }[];
      return (parts.find((x) => x.partition === 0)?.next ?? -1) === end;
    },
    { what: `source ${name} at offset ${end}` },
  );
}

const started: CrashableServer[] = [];

async function listening(
  dir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CrashableServer> {
  const outcome = await spawnCrashable(dir, { args, env });
  if (outcome.kind !== 'listening') throw new Error(`server did not start:\n${outcome.output}`);
  started.push(outcome.server);
  return outcome.server;
}

describe('Kafka sources across kill -9 (real broker)', kafkaSuite('Kafka restart edges'), () => {
  let brokers = '';
  let kafka: Kafka;
  let producer: Producer;
  const dirs: string[] = [];
  let server: CrashableServer | undefined;

  before(async () => {
    ({ brokers, kafka, producer } = await connectProducer('sluice-restart-edges'));
  });
  after(async () => {
    for (const s of started) await killHard(s);
    await producer?.disconnect();
    for (const d of dirs) removeDir(d);
  });

  it('json, upsert and debezium edge values come back byte for byte; offsets resume; views equal SQLite', async () => {
    const topics = {
      json: uniqueName('edge-json'),
      upsert: uniqueName('edge-upsert'),
      dbz: uniqueName('edge-dbz'),
    };
    for (const t of Object.values(topics)) await createTopic(kafka, t, 1);
    const ends = { json: 0, upsert: 0, dbz: 0 };
    const poison = { json: [] as number[], upsert: [] as number[], dbz: [] as number[] };

    const produce = async (round: number): Promise<void> => {
      const edges = edgeValues(round * 100);
      await producer.send({ topic: topics.json, messages: edges.map((e) => ({ value: e.body })) });
      edges.forEach((e, i) => e.poison && poison.json.push(ends.json + i));
      ends.json += edges.length;
      // upsert: the key names the row, the value the rest (id in the value would be an unknown column).
      const upserts = edges.map((e) => {
        const m = /^\{"id": (\d+)(?:, )?(.*)\}$/s.exec(e.body);
        return m === null
          ? { key: '{"id": 1}', value: e.body, poison: true }
          : { key: `{"id": ${m[1]}}`, value: `{${m[2]}}`, poison: e.poison };
      });
      upserts.push({ key: `{"id": ${round * 100 + 5}}`, value: null as unknown as string, poison: false }); // tombstone
      upserts.push({ key: `{"id": ${round * 100 + 99}}`, value: null as unknown as string, poison: false }); // of nothing
      await producer.send({
        topic: topics.upsert,
        messages: upserts.map((u) => ({ key: u.key, value: u.value })),
      });
      upserts.forEach((u, i) => u.poison && poison.upsert.push(ends.upsert + i));
      ends.upsert += upserts.length;
      const dbz = edges.map((e) => ({
        value: e.poison && e.body.length < 10 ? e.body : `{"before": null, "after": ${e.body}, "op": "c"}`,
        poison: e.poison,
      }));
      dbz.push({
        value: `{"before": {"id": ${round * 100 + 4}}, "after": {"id": ${round * 100 + 40}, "b": 9007199254740991}, "op": "u"}`,
        poison: false,
      });
      dbz.push({ value: `{"before": {"id": ${round * 100 + 7}}, "after": null, "op": "d"}`, poison: false });
      dbz.push({ value: null as unknown as string, poison: false }); // Debezium's tombstone: ignored
      await producer.send({ topic: topics.dbz, messages: dbz.map((m) => ({ key: '{}', value: m.value })) });
      dbz.forEach((m, i) => m.poison && poison.dbz.push(ends.dbz + i));
      ends.dbz += dbz.length;
    };
    const names = ['sj', 'su', 'sd'] as const;
    const ddl =
      (['json', 'upsert', 'dbz'] as const)
        .map((f, i) => {
          const format = f === 'dbz' ? 'debezium' : f;
          const s = names[i];
          return `CREATE SOURCE ${s} (${COLUMNS}) FROM KAFKA (brokers '${brokers}', topic '${topics[f]}', format '${format}', on_error 'skip', max_batch_rows 3);
          CREATE MATERIALIZED VIEW ${s}_sums AS SELECT ok, COUNT(*) AS n, SUM(i) AS si, SUM(b) AS sb, COUNT(t) AS nt, COUNT(j) AS nj FROM ${s} GROUP BY ok;`;
        })
        .join('\n') +
      // Without a key every record is a row of its own: one applied twice would be a row too many.
      `CREATE SOURCE sa (${COLUMNS.replace(', PRIMARY KEY (id)', '')}) FROM KAFKA (brokers '${brokers}', topic '${topics.json}', on_error 'skip', max_batch_rows 3);`;
    const allCaughtUp = async (base: string): Promise<void> => {
      await caughtUp(base, 'sj', ends.json);
      await caughtUp(base, 'su', ends.upsert);
      await caughtUp(base, 'sd', ends.dbz);
      await caughtUp(base, 'sa', ends.json);
    };
    const checkOnce = async (base: string): Promise<void> => {
      const appended = JSON.parse(await sqlText(base, 'SELECT COUNT(*) AS n FROM sa')).results[0].rows[0].n;
      assert.equal(appended, ends.json - poison.json.length, 'every good record of the keyless source once');
      const skipped = JSON.parse(await sqlText(base, 'SELECT COUNT(*) AS n FROM sa_errors')).results[0]
        .rows[0].n;
      assert.equal(skipped, poison.json.length, 'every poison record of the keyless source once');
      for (const [s, f] of [
        ['sj', 'json'],
        ['su', 'upsert'],
        ['sd', 'dbz'],
      ] as const) {
        const text = await sqlText(
          base,
          `SELECT kafka_offset, reason FROM ${s}_errors ORDER BY kafka_offset`,
        );
        const offsets = (JSON.parse(text).results[0].rows as { kafka_offset: number }[]).map(
          (r) => r.kafka_offset,
        );
        assert.deepEqual(offsets, poison[f], `${s}: every poison record listed once: ${text.slice(0, 2000)}`);
        // The view against SQLite over the source's rows (integers read as text to keep 64 bits).
        const rows = JSON.parse(
          await sqlText(
            base,
            `SELECT id, ok, CAST(i AS text) AS i, CAST(b AS text) AS b, t IS NOT NULL AS ht, j IS NOT NULL AS hj FROM ${s}`,
          ),
        ).results[0].rows as {
          ok: boolean | null;
          i: string | null;
          b: string | null;
          ht: boolean;
          hj: boolean;
        }[];
        const db = new Database(':memory:');
        db.defaultSafeIntegers(true);
        db.exec('CREATE TABLE r (ok INTEGER, i INTEGER, b INTEGER, ht INTEGER, hj INTEGER)');
        const put = db.prepare('INSERT INTO r VALUES (?, ?, ?, ?, ?)');
        for (const r of rows)
          put.run(
            r.ok === null ? null : r.ok ? 1 : 0,
            r.i === null ? null : BigInt(r.i),
            r.b === null ? null : BigInt(r.b),
            r.ht ? 1 : 0,
            r.hj ? 1 : 0,
          );
        const want = (
          db
            .prepare(
              'SELECT ok, COUNT(*) AS n, CAST(SUM(i) AS TEXT) AS si, COUNT(*) FILTER (WHERE ht) AS nt, COUNT(*) FILTER (WHERE hj) AS nj FROM r GROUP BY ok ORDER BY ok',
            )
            .all() as Record<string, unknown>[]
        ).map((r) =>
          JSON.stringify([r.ok === null ? null : r.ok === 1n, Number(r.n), r.si, Number(r.nt), Number(r.nj)]),
        );
        const got = (
          JSON.parse(
            await sqlText(base, `SELECT ok, n, CAST(si AS text) AS si, nt, nj FROM ${s}_sums ORDER BY ok`),
          ).results[0].rows as Record<string, unknown>[]
        ).map((r) => JSON.stringify([r.ok, r.n, r.si, r.nt, r.nj]));
        assert.deepEqual(got.sort(), want.sort(), `${s}_sums equals SQLite`);
      }
    };

    const dir = tempDir('sluice-kafka-');
    dirs.push(dir);
    // Round 0: journal only.
    await produce(0);
    server = await listening(dir, NO_CHECKPOINT);
    await sqlText(server.base, ddl);
    await allCaughtUp(server.base);
    await checkOnce(server.base);
    let before = await snapshot(server.base, names);
    await killHard(server);
    server = await listening(dir, NO_CHECKPOINT);
    await allCaughtUp(server.base);
    assert.equal(await snapshot(server.base, names), before, 'journal only: byte for byte');

    // Round 1: more records, then a checkpoint, then kill -9.
    await produce(1);
    await killHard(server);
    server = await listening(dir, FAST_CHECKPOINT);
    await allCaughtUp(server.base);
    await checkOnce(server.base);
    before = await snapshot(server.base, names);
    await new Promise((r) => setTimeout(r, 500)); // several checkpoint intervals
    await killHard(server);
    server = await listening(dir, FAST_CHECKPOINT);
    await allCaughtUp(server.base);
    assert.equal(await snapshot(server.base, names), before, 'after a checkpoint: byte for byte');

    // Round 2: killed in the middle of a checkpoint while the records arrive.
    await killHard(server);
    await produce(2);
    const crashing = await spawnCrashable(dir, {
      args: FAST_CHECKPOINT,
      env: { SLUICE_CRASH_POINT: 'during-checkpoint' },
    });
    if (crashing.kind === 'listening') {
      started.push(crashing.server);
      server = crashing.server;
      assert.equal((await server.exited).signal, 'SIGKILL');
    }
    server = await listening(dir, NO_CHECKPOINT);
    await allCaughtUp(server.base);
    await checkOnce(server.base);
    before = await snapshot(server.base, names);
    await killHard(server);
    server = await listening(dir, NO_CHECKPOINT);
    await allCaughtUp(server.base);
    assert.equal(await snapshot(server.base, names), before, 'after a crash mid-checkpoint: byte for byte');
    await killHard(server);

    // Rounds 3-5: killed mid-consumption at the commit's crash points (the first group commit of the catch-up).
    for (const [round, point] of [
      [3, 'before-commit'],
      [4, 'after-commit'],
      [5, 'while-publishing'],
    ] as const) {
      await produce(round);
      const dying = await spawnCrashable(dir, { args: NO_CHECKPOINT, env: { SLUICE_CRASH_POINT: point } });
      if (dying.kind === 'listening') {
        started.push(dying.server);
        // A subscriber, so that publishing has someone to tell.
        const ws = new WebSocket(`${dying.server.wsBase}/v1/views/sj_sums/subscribe`);
        ws.on('error', () => undefined);
        const timeout = new Promise<null>((r) => setTimeout(() => r(null), 30_000).unref());
        const exit = await Promise.race([dying.server.exited, timeout]);
        ws.close();
        assert.match(dying.server.output(), new RegExp(`crash point "${point}" reached`), point);
        assert.equal(exit?.signal, 'SIGKILL', point);
      } else assert.match(dying.output, new RegExp(`crash point "${point}" reached`), point);
      server = await listening(dir, FAST_CHECKPOINT);
      await allCaughtUp(server.base);
      await checkOnce(server.base);
      before = await snapshot(server.base, names);
      await killHard(server);
      server = await listening(dir, FAST_CHECKPOINT);
      await allCaughtUp(server.base);
      assert.equal(await snapshot(server.base, names), before, `after ${point}: byte for byte`);
      await killHard(server);
    }
  });

  it('upsert keys (bare, not JSON, missing) and wrapped Debezium envelopes survive kill -9', async () => {
    const up = uniqueName('keys-upsert');
    const dbz = uniqueName('keys-dbz');
    await createTopic(kafka, up, 1);
    await createTopic(kafka, dbz, 1);
    await producer.send({
      topic: up,
      messages: [
        { key: '9223372036854775807', value: '{"v": "bare key"}' },
        { key: '{"id": -9223372036854775808}', value: '{"v": "object key"}' },
        { key: 'not json', value: '{"v": "poison key"}' }, // offset 2
        { key: null, value: '{"v": "no key"}' }, // offset 3
        { key: '{"id": 9223372036854775807}', value: '{"id": 1, "v": "id in value"}' }, // offset 4
        { key: '9223372036854775807', value: null },
        { key: '1', value: '{"v": "one"}' },
      ],
    });
    const after = (id: number, v: string): string => `{"id": ${id}, "v": "${v}"}`;
    await producer.send({
      topic: dbz,
      messages: [
        {
          value: `{"schema": {"type": "struct"}, "payload": {"before": null, "after": ${after(1, 'a')}, "op": "r"}}`,
        },
        { value: `{"before": ${after(1, 'a')}, "after": ${after(2, 'b')}, "op": "u"}` },
        { value: `{"before": null, "after": ${after(3, 'c')}, "op": "x"}` }, // offset 2: unknown op
        { value: `{"before": null, "after": null, "op": "c"}` }, // offset 3
        { value: `{"before": ${after(9, 'gone')}, "after": null, "op": "d"}` },
      ],
    });
    const dir = tempDir('sluice-kafka-');
    dirs.push(dir);
    server = await listening(dir, NO_CHECKPOINT);
    await sqlText(
      server.base,
      `CREATE SOURCE ku (id bigint NOT NULL, v text, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${up}', format 'upsert', on_error 'skip');
       CREATE SOURCE kd (id bigint NOT NULL, v text, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${dbz}', format 'debezium', on_error 'skip');`,
    );
    await caughtUp(server.base, 'ku', 7);
    await caughtUp(server.base, 'kd', 5);
    const read = (base: string): Promise<string> =>
      sqlText(
        base,
        `SELECT * FROM ku ORDER BY id; SELECT * FROM kd ORDER BY id;
         SELECT kafka_offset, reason FROM ku_errors ORDER BY kafka_offset; SELECT kafka_offset, reason FROM kd_errors ORDER BY kafka_offset`,
      );
    const before = await read(server.base);
    const [ku, kd, kuErrors, kdErrors] = (
      JSON.parse(before).results as { rows: Record<string, unknown>[] }[]
    ).map((r) => r.rows);
    assert.deepEqual(ku, [
      { id: '-9223372036854775808', v: 'object key' },
      { id: 1, v: 'one' },
    ]);
    assert.deepEqual(kd, [{ id: 2, v: 'b' }]);
    assert.deepEqual(
      kuErrors?.map((e) => e.kafka_offset),
      [2, 3, 4],
    );
    assert.deepEqual(
      kdErrors?.map((e) => e.kafka_offset),
      [2, 3],
    );
    await killHard(server);
    server = await listening(dir, NO_CHECKPOINT);
    await caughtUp(server.base, 'ku', 7);
    await caughtUp(server.base, 'kd', 5);
    assert.equal(await read(server.base), before);
    await killHard(server);
  });

  it('two tenants with the same names: each sees only its own rows after kill -9', async () => {
    const dir = tempDir('sluice-kafka-');
    dirs.push(dir);
    const env = { SLUICE_BOOTSTRAP_TOKEN: OPERATOR_TOKEN };
    server = await listening(dir, ['--auth', ...FAST_CHECKPOINT], env);
    const tokens: Record<string, string> = {};
    const topics: Record<string, string> = {};
    for (const name of ['acme', 'beta']) {
      assert.equal(
        (await call(server.base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name } })).status,
        201,
      );
      const r = await call(server.base, 'POST', `/v1/tenants/${name}/tokens`, {
        token: OPERATOR_TOKEN,
        body: { role: 'admin' },
      });
      tokens[name] = r.body.token as string;
      topics[name] = uniqueName(`tenant-${name}`);
      await createTopic(kafka, topics[name], 1);
      await producer.send({
        topic: topics[name],
        messages: [1, 2, 3].map((id) => ({ value: JSON.stringify({ id, who: name }) })),
      });
      await sqlText(
        server.base,
        `CREATE TABLE t (id int PRIMARY KEY, who text);
         INSERT INTO t VALUES (1, '${name}'), (2, '${name} ☃');
         CREATE SOURCE s (id int NOT NULL, who text, PRIMARY KEY (id)) FROM KAFKA (brokers '${brokers}', topic '${topics[name]}');
         CREATE MATERIALIZED VIEW v AS SELECT who, COUNT(*) AS n FROM s GROUP BY who;`,
        tokens[name],
      );
    }
    const read = async (name: string): Promise<string> => {
      const base = (server as CrashableServer).base;
      await waitFor(
        async () => {
          const r = await call(base, 'GET', '/v1/sources/s', { token: tokens[name] });
          return (r.body.partitions as { next: number }[] | undefined)?.[0]?.next === 3;
        },
        { what: `tenant ${name}'s source` },
      );
      return sqlText(
        base,
        'SELECT * FROM t ORDER BY id; SELECT * FROM s ORDER BY id; SELECT * FROM v',
        tokens[name],
      );
    };
    const seen = { acme: await read('acme'), beta: await read('beta') };
    assert.match(seen.acme, /"acme"/);
    assert.doesNotMatch(seen.acme, /beta/);
    assert.doesNotMatch(seen.beta, /acme/);
    await killHard(server);
    server = await listening(dir, ['--auth', ...NO_CHECKPOINT], env);
    assert.equal(await read('acme'), seen.acme);
    assert.equal(await read('beta'), seen.beta);
    await killHard(server);
  });
});
