// Kafka client throughput, side by side in one run against one real broker (tools/kafka): kafkajs
// (the engine's client) and @platformatic/kafka 1.x (the candidate). Produce: N small JSON orders
// to a 4-partition topic, acks=-1, in batches. Consume: the same N orders (one topic, written by
// kafkajs) read from the beginning, read-committed, offsets never committed, JSON.parse of every
// value included. Prints a human summary and one `RESULT {...}` line. See bench/README.md.
//
//   node --import tsx bench/kafka-clients.ts                       # 2,000,000 orders, 2 rounds
//   node --import tsx bench/kafka-clients.ts --messages 200000 --rounds 1 --batch 5000
import { loadavg } from 'node:os';
import { Kafka, logLevel, type Consumer as KjsConsumer } from 'kafkajs';
import { KAFKA_VERSION, startBroker, type Broker } from '../tools/kafka/broker.mjs';

interface Flags {
  messages: number;
  batch: number;
  rounds: number;
  clients: string[];
}

function parseFlags(argv: string[]): Flags {
  const f: Flags = { messages: 2_000_000, batch: 5_000, rounds: 2, clients: ['kafkajs', 'platformatic'] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--messages' && v) f.messages = Number(v.replace(/_/g, ''));
    else if (a === '--batch' && v) f.batch = Number(v);
    else if (a === '--rounds' && v) f.rounds = Number(v);
    else if (a === '--clients' && v) f.clients = v.split(',');
    else
      throw new Error(
        `unknown flag ${a} (--messages N, --batch N, --rounds N, --clients kafkajs,platformatic)`,
      );
    i++;
  }
  return f;
}

const PARTITIONS = 4;
const TS0 = Date.UTC(2026, 10, 11);

/** Order i, deterministic; amount has cents so the checksum exercises doubles. */
function order(i: number): { order_id: number; seller_id: number; amount: number; ts: number } {
  return { order_id: i, seller_id: (i * 7919) % 1000, amount: ((i * 104729) % 10000) / 100, ts: TS0 + i };
}

interface Checksum {
  count: number;
  amountCents: number;
  orderIds: number;
}

function emptySum(): Checksum {
  return { count: 0, amountCents: 0, orderIds: 0 };
}

function add(sum: Checksum, o: { order_id: number; amount: number }): void {
  sum.count++;
  sum.amountCents += Math.round(o.amount * 100);
  sum.orderIds += o.order_id;
}

function expectedSum(n: number): Checksum {
  const s = emptySum();
  for (let i = 0; i < n; i++) add(s, order(i));
  return s;
}

interface ProduceResult {
  msgs_per_s: number;
  seconds: number;
}
interface ConsumeResult {
  msgs_per_s: number;
  seconds: number;
  /** From the first message to the last, leaving out the group join and first fetch. */
  steady_msgs_per_s: number;
  join_ms: number;
}

const hr = () => Number(process.hrtime.bigint()) / 1e6;

function batchOf(start: number, size: number, n: number): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  for (let i = start; i < Math.min(start + size, n); i++) {
    const o = order(i);
    out.push({ key: String(o.seller_id), value: JSON.stringify(o) });
  }
  return out;
}

// ---- kafkajs -------------------------------------------------------------------------------------

function kjs(brokers: string): Kafka {
  return new Kafka({ clientId: 'bench', brokers: [brokers], logLevel: logLevel.NOTHING });
}

async function kafkajsProduce(brokers: string, topic: string, f: Flags): Promise<ProduceResult> {
  const producer = kjs(brokers).producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const t0 = hr();
  for (let i = 0; i < f.messages; i += f.batch) {
    await producer.send({ topic, acks: -1, messages: batchOf(i, f.batch, f.messages) });
  }
  const ms = hr() - t0;
  await producer.disconnect();
  return { msgs_per_s: Math.round(f.messages / (ms / 1000)), seconds: ms / 1000 };
}

async function kafkajsConsume(brokers: string, topic: string, n: number): Promise<[ConsumeResult, Checksum]> {
  const consumer: KjsConsumer = kjs(brokers).consumer({
    groupId: `bench-kjs-${Date.now()}`,
    readUncommitted: false,
  });
  const sum = emptySum();
  const t0 = hr();
  let first = 0;
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const done = new Promise<number>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          if (first === 0) first = hr();
          for (const m of batch.messages) add(sum, JSON.parse(m.value?.toString() ?? 'null'));
          if (sum.count >= n) resolve(hr());
        },
      })
      .catch(reject);
  });
  const end = await done;
  await consumer.disconnect();
  return [
    {
      msgs_per_s: Math.round(n / ((end - t0) / 1000)),
      seconds: (end - t0) / 1000,
      steady_msgs_per_s: Math.round(n / ((end - first) / 1000)),
      join_ms: Math.round(first - t0),
    },
    sum,
  ];
}

// ---- @platformatic/kafka 1.x ---------------------------------------------------------------------

type Plt = typeof import('@platformatic/kafka');

async function platformaticProduce(
  plt: Plt,
  brokers: string,
  topic: string,
  f: Flags,
): Promise<ProduceResult> {
  const producer = new plt.Producer({
    clientId: 'bench',
    bootstrapBrokers: [brokers],
    serializers: plt.stringSerializers,
    acks: plt.ProduceAcks.ALL,
  });
  const t0 = hr();
  for (let i = 0; i < f.messages; i += f.batch) {
    await producer.send({ messages: batchOf(i, f.batch, f.messages).map((m) => ({ topic, ...m })) });
  }
  const ms = hr() - t0;
  await producer.close();
  return { msgs_per_s: Math.round(f.messages / (ms / 1000)), seconds: ms / 1000 };
}

async function platformaticConsume(
  plt: Plt,
  brokers: string,
  topic: string,
  n: number,
): Promise<[ConsumeResult, Checksum]> {
  const consumer = new plt.Consumer({
    groupId: `bench-plt-${Date.now()}`,
    clientId: 'bench',
    bootstrapBrokers: [brokers],
    deserializers: plt.stringDeserializers,
    autocommit: false,
    isolationLevel: plt.FetchIsolationLevels.READ_COMMITTED,
    // kafkajs's defaults, so both fetch alike (1 MB per partition, 10 MB per request)
    maxBytes: 10 * 1024 * 1024,
    maxBytesPerPartition: 1024 * 1024,
  });
  const sum = emptySum();
  const t0 = hr();
  let first = 0;
  const stream = await consumer.consume({
    topics: [topic],
    mode: plt.MessagesStreamModes.EARLIEST,
    autocommit: false,
    isolationLevel: plt.FetchIsolationLevels.READ_COMMITTED,
  });
  const end = await new Promise<number>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('data', (m: { value: string }) => {
      if (first === 0) first = hr();
      add(sum, JSON.parse(m.value));
      if (sum.count === n) resolve(hr());
    });
  });
  await stream.close();
  await consumer.close(true);
  return [
    {
      msgs_per_s: Math.round(n / ((end - t0) / 1000)),
      seconds: (end - t0) / 1000,
      steady_msgs_per_s: Math.round(n / ((end - first) / 1000)),
      join_ms: Math.round(first - t0),
    },
    sum,
  ];
}

// ---- main ----------------------------------------------------------------------------------------

async function createTopics(brokers: string, topics: string[]): Promise<void> {
  const admin = kjs(brokers).admin();
  await admin.connect();
  await admin.createTopics({
    topics: topics.map((topic) => ({ topic, numPartitions: PARTITIONS })),
    waitForLeaders: true,
  });
  await admin.disconnect();
}

function sameSum(a: Checksum, b: Checksum): boolean {
  return a.count === b.count && a.amountCents === b.amountCents && a.orderIds === b.orderIds;
}

async function main(): Promise<void> {
  const f = parseFlags(process.argv.slice(2));
  const fmt = (x: number) => x.toLocaleString('en-US');
  const load0 = loadavg();
  let plt: Plt | undefined;
  let pltError: string | undefined;
  if (f.clients.includes('platformatic')) {
    try {
      plt = await import('@platformatic/kafka');
    } catch (err) {
      pltError = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      console.error(`@platformatic/kafka did not load: ${pltError}`);
    }
  }
  const expected = expectedSum(f.messages);
  const broker: Broker = await startBroker({ log: (m) => console.error(`[kafka] ${m}`) });
  const produce: Record<string, ProduceResult> = {};
  const consume: Record<string, ConsumeResult[]> = {};
  const errors: Record<string, string> = {};
  try {
    await createTopics(broker.brokers, ['orders-kafkajs', 'orders-platformatic']);
    console.error(`producing ${fmt(f.messages)} orders per client, batches of ${fmt(f.batch)}, acks=-1 …`);
    // kafkajs writes the topic both consumers read.
    produce.kafkajs = await kafkajsProduce(broker.brokers, 'orders-kafkajs', f);
    console.error(`  kafkajs      ${fmt(produce.kafkajs.msgs_per_s)} msg/s`);
    if (plt) {
      try {
        produce.platformatic = await platformaticProduce(plt, broker.brokers, 'orders-platformatic', f);
        console.error(`  platformatic ${fmt(produce.platformatic.msgs_per_s)} msg/s`);
      } catch (err) {
        errors.platformatic_produce = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        console.error(`  platformatic produce failed: ${errors.platformatic_produce}`);
      }
    }
    for (let round = 1; round <= f.rounds; round++) {
      // Alternate who goes first, so page-cache and JIT order effects do not favour one client.
      const order = round % 2 === 1 ? ['kafkajs', 'platformatic'] : ['platformatic', 'kafkajs'];
      for (const client of order) {
        if (client === 'platformatic' && !plt) continue;
        if (!f.clients.includes(client)) continue;
        try {
          const [r, sum] =
            client === 'kafkajs'
              ? await kafkajsConsume(broker.brokers, 'orders-kafkajs', f.messages)
              : await platformaticConsume(plt as Plt, broker.brokers, 'orders-kafkajs', f.messages);
          if (!sameSum(sum, expected))
            throw new Error(`checksum ${JSON.stringify(sum)} != ${JSON.stringify(expected)}`);
          (consume[client] ??= []).push(r);
          console.error(
            `round ${round} consume ${client.padEnd(12)} ${fmt(r.msgs_per_s)} msg/s (steady ${fmt(r.steady_msgs_per_s)}, join ${r.join_ms} ms)`,
          );
        } catch (err) {
          errors[`${client}_consume`] = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
          console.error(`round ${round} consume ${client} failed: ${errors[`${client}_consume`]}`);
        }
      }
    }
  } finally {
    await broker.stop();
  }
  const load1 = loadavg();
  const best = (rs: ConsumeResult[] | undefined) =>
    rs && rs.length > 0 ? rs.reduce((a, b) => (b.msgs_per_s > a.msgs_per_s ? b : a)) : undefined;
  const summary = {
    bench: 'kafka-clients',
    kafka: KAFKA_VERSION,
    node: process.version,
    messages: f.messages,
    partitions: PARTITIONS,
    produce_batch: f.batch,
    rounds: f.rounds,
    loadavg_before: load0.map((x) => Number(x.toFixed(2))),
    loadavg_after: load1.map((x) => Number(x.toFixed(2))),
    produce,
    consume_best: Object.fromEntries(Object.entries(consume).map(([k, v]) => [k, best(v)])),
    consume_rounds: consume,
    ...(pltError ? { platformatic_load_error: pltError } : {}),
    ...(Object.keys(errors).length > 0 ? { errors } : {}),
  };
  console.log('');
  console.log(
    `Kafka ${KAFKA_VERSION}, ${fmt(f.messages)} JSON orders, ${PARTITIONS} partitions, node ${process.version}`,
  );
  console.log(
    `loadavg before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${load1.map((x) => x.toFixed(2)).join(' ')}`,
  );
  console.log('client          produce msg/s   consume msg/s (best)   steady msg/s');
  for (const client of ['kafkajs', 'platformatic']) {
    const p = produce[client];
    const c = best(consume[client]);
    console.log(
      `${client.padEnd(15)} ${(p ? fmt(p.msgs_per_s) : '-').padStart(13)}   ${(c ? fmt(c.msgs_per_s) : '-').padStart(20)}   ${(c ? fmt(c.steady_msgs_per_s) : '-').padStart(12)}`,
    );
  }
  console.log(`RESULT ${JSON.stringify(summary)}`);
}

await main();
