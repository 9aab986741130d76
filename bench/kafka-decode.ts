// The Kafka source's record decoding alone, without a broker: the bench's `orders` records (JSON
// `{"order_id","seller_id","amount"}`, bench/workload.ts) through `RecordDecoder.decodeTyped` with
// the real source typing of `CREATE SOURCE orders (...) FROM KAFKA (format 'json')` (the engine's
// `sourceRowTyping`, i.e. its normalizeRow). Prints CPU ns per record per round and the median, and
// how many records the flat reader read and left to the general path. See bench/README.md.
//
//   node --import tsx bench/kafka-decode.ts [--records 200000] [--rounds 8] [--root ../sluice-base]
//     [--path records|fetch|source] [--batch 1250]
// `--root DIR` decodes with another checkout's src/ (paired A/B: run both, alternating).
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Engine as EngineType } from '../src/exec/engine.ts';
import type { KafkaRecord } from '../src/source/kafka/kafka-client.ts';
import type { RecordDecoder as RecordDecoderType } from '../src/source/kafka/record-decoder.ts';
import { generateRows } from './workload.ts';

const argv = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const at = argv.indexOf(name);
  return at >= 0 ? Number((argv[at + 1] ?? '').replace(/_/g, '')) : fallback;
};
const records = flag('--records', 200_000);
const rounds = flag('--rounds', 8);
const rootAt = argv.indexOf('--root');
const root = resolve(rootAt >= 0 ? (argv[rootAt + 1] ?? '.') : new URL('..', import.meta.url).pathname);
const load = async <T>(path: string): Promise<T> =>
  (await import(pathToFileURL(resolve(root, path)).href)) as T;
const { Engine } = await load<{ Engine: typeof EngineType }>('src/exec/engine.ts');
const { RecordDecoder } = await load<{ RecordDecoder: typeof RecordDecoderType }>(
  'src/source/kafka/record-decoder.ts',
);

const engine = new Engine();
engine.execute(
  `CREATE SOURCE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL,
   PRIMARY KEY (order_id)) FROM KAFKA (brokers 'k1:9092', topic 'orders', format 'json')`,
);
const typing = engine.sourceRowTyping('orders');
if (typing === null) throw new Error('the source has no row typing');
const columns = ['order_id', 'seller_id', 'amount'];
const decoderSpec = {
  format: 'json' as const,
  columns,
  primaryKey: ['order_id'],
  maxMessageBytes: 1 << 20,
  checkRow: () => null,
  typing,
};
const decoder = new RecordDecoder(decoderSpec);

const orders = generateRows({
  dist: 'uniform',
  sellers: 100_000,
  events: records,
  seed: 20111111,
  zipfS: 1.1,
});
/** A checkout's records: the offset as `offsetNumber`, and as `offset` for checkouts before it. */
type BenchRecord = KafkaRecord & { readonly partition: number; readonly offset: number };
const input: BenchRecord[] = orders.map((o, i) => ({
  partition: i % 4,
  offset: i,
  offsetNumber: i,
  key: null,
  value: Buffer.from(JSON.stringify({ order_id: o.order_id, seller_id: o.seller_id, amount: o.amount })),
}));

/**
 * `--path fetch`: the whole reading of a fetch on the server's thread — the orders encoded by
 * kafkajs's own encoder as record batches of `--batch` records, one fetch buffer of them per
 * partition round; each round reads them with the record batch decoder kafkajs loads (the one
 * kafkajs-fast-records.ts installs), kafkajs's consumer Batch, the reader's records and
 * `decodeTyped`, as the source does.
 */
async function fetchPathRound(throughSource = false): Promise<() => Promise<number>> {
  const { loadKafkajs } = await load<{ loadKafkajs: () => unknown }>(
    'src/source/kafka/kafkajs-fast-records.ts',
  );
  loadKafkajs();
  const client = await load<{
    recordsOfBatch?: (...args: unknown[]) => readonly KafkaRecord[];
  }>('src/source/kafka/kafkajs-client.ts');
  const requireKafkajs = createRequire(resolve(root, 'src/source/kafka/kafkajs-client.ts'));
  const kafkajsModule = <T>(path: string): T => requireKafkajs(`kafkajs/src/${path}`) as T;
  type Decoder = { offset: number; buffer: Buffer; canReadBytes(n: number): boolean };
  const DecoderClass = kafkajsModule<new (b: Buffer) => Decoder>('protocol/decoder.js');
  const Long = kafkajsModule<{ fromValue(v: unknown): unknown }>('utils/long.js');
  const encodeRecord = kafkajsModule<(r: unknown) => unknown>('protocol/recordBatch/record/v0/index.js');
  const { RecordBatch } = kafkajsModule<{
    RecordBatch: (spec: Record<string, unknown>) => Promise<{ buffer: Buffer }>;
  }>('protocol/recordBatch/v0/index.js');
  const decodeBatch = kafkajsModule<(d: Decoder) => Promise<{ records: { offset: string }[] }>>(
    'protocol/recordBatch/v0/decoder.js',
  );
  const Batch =
    kafkajsModule<
      new (topic: string, fetched: string, data: unknown) => { messages: readonly { offset: string }[] }
    >('consumer/batch.js');
  // Checkouts before recordsOfBatch existed: the same loop, inline; before it dropped its
  // partition argument, that argument.
  const ofBatch = client.recordsOfBatch;
  const recordsOf = (
    partition: number,
    messages: readonly unknown[],
    floor: number,
  ): readonly KafkaRecord[] => {
    if (ofBatch !== undefined)
      return ofBatch.length === 3 ? ofBatch(partition, messages, floor) : ofBatch(messages, floor);
    const out: BenchRecord[] = [];
    for (const m of messages as { offset: string; key: Buffer | null; value: Buffer | null }[]) {
      const offset = Number(m.offset);
      if (offset < floor) continue;
      out.push({ partition, offset, offsetNumber: offset, key: m.key ?? null, value: m.value ?? null });
    }
    return out;
  };
  const perBatch = flag('--batch', 1250);
  const fetchBytes = 1 << 20;
  const fetches: { partition: number; first: number; buffer: Buffer }[] = [];
  const offsets = [0, 0, 0, 0];
  const byPartition: (typeof input)[] = [[], [], [], []];
  for (const r of input) byPartition[r.partition]?.push(r);
  for (let p = 0; p < 4; p++) {
    const rows = byPartition[p] as BenchRecord[];
    let pending: Buffer[] = [];
    let size = 0;
    let first = offsets[p] as number;
    for (let i = 0; i < rows.length; i += perBatch) {
      const chunk = rows.slice(i, i + perBatch);
      const base = offsets[p] as number;
      const encoded = await RecordBatch({
        compression: 0,
        firstOffset: Long.fromValue(String(base)),
        firstTimestamp: 1_764_000_000_000,
        maxTimestamp: 1_764_000_000_000,
        lastOffsetDelta: chunk.length - 1,
        records: chunk.map((r, k) =>
          encodeRecord({ offsetDelta: k, timestampDelta: 0, key: null, value: r.value }),
        ),
      });
      offsets[p] = base + chunk.length;
      pending.push(encoded.buffer);
      size += encoded.buffer.length;
      if (size >= fetchBytes || i + perBatch >= rows.length) {
        fetches.push({ partition: p, first, buffer: Buffer.concat(pending) });
        pending = [];
        size = 0;
        first = offsets[p] as number;
      }
    }
  }
  return async () => {
    // A runner of its own per round: positions only move forward, and each round reads from offset 0.
    const source = throughSource ? await sourceRunner() : null;
    let sum = 0;
    for (const f of fetches) {
      const decoder = new DecoderClass(f.buffer);
      const messages: { offset: string }[] = [];
      while (decoder.canReadBytes(49)) messages.push(...(await decodeBatch(decoder)).records);
      const batch = new Batch('orders', String(f.first), {
        partition: f.partition,
        highWatermark: String(offsets[f.partition]),
        abortedTransactions: [],
        messages,
      });
      const records = recordsOf(f.partition, batch.messages, f.first);
      if (source !== null) {
        await source.fetch(f.partition, records, offsets[f.partition] as number);
        continue;
      }
      for (const record of records) sum += Number(decoder_.decodeTyped(record)[2]);
    }
    return source === null ? sum : await source.delivered();
  };
}

/**
 * `--path source`: the fetches handed to a real `KafkaSourceRunner` (the bench's options:
 * max_batch_rows 10,000, a pacer that never waits, as the server's) by a reader standing in for
 * kafkajs; its batches are delivered to nothing, so this is the runner's own per-record work on top of
 * `--path fetch`: decoding, positions, batch cutting.
 */
async function sourceRunner(): Promise<{
  fetch(partition: number, records: readonly KafkaRecord[], high: number): Promise<void>;
  delivered(): Promise<number>;
}> {
  type Handler = (p: number, records: readonly KafkaRecord[], high: number, next: number) => Promise<void>;
  type Runner = new (...args: unknown[]) => { start(): void; stop(): Promise<void> };
  const { KafkaSourceRunner } = await load<{ KafkaSourceRunner: Runner }>('src/source/kafka/kafka-source.ts');
  let handler: Handler | null = null;
  const reader = {
    watermarks: async () => [0, 1, 2, 3].map((partition) => ({ partition, low: 0, high: 0 })),
    start: async (_from: unknown, onRecords: Handler) => {
      handler = onRecords;
    },
    commit: async () => undefined,
    close: async () => undefined,
  };
  let sum = 0;
  const runner = new KafkaSourceRunner(
    {
      name: 'orders',
      topic: 'orders',
      maxBatchRows: 10_000,
      maxBatchMs: 100,
      onError: 'skip',
      start: 'earliest',
      decode: decoderSpec,
    },
    () => reader,
    new Map(),
    (batch: { typedUpserts?: readonly (readonly unknown[])[]; records: number }) => {
      const rows = batch.typedUpserts ?? [];
      for (let i = 0; i < rows.length; i++) sum += Number((rows[i] as readonly unknown[])[2]);
    },
    { info: () => undefined, warn: () => undefined, error: () => undefined },
    { wait: () => 0, bound: () => ({ rows: null, bytes: null }) },
  );
  runner.start();
  while (handler === null) await new Promise((r) => setTimeout(r, 1));
  return {
    async fetch(partition, records, high) {
      const last = records[records.length - 1];
      // `offset`: a checkout before `offsetNumber`.
      const lastOffset =
        last === undefined ? -1 : (last.offsetNumber ?? (last as unknown as BenchRecord).offset);
      await (handler as Handler)(partition, records, high, lastOffset + 1);
    },
    async delivered() {
      await runner.stop();
      return sum;
    },
  };
}
const decoder_ = decoder;
const path = argv.includes('--path') ? argv[argv.indexOf('--path') + 1] : 'records';
const fetchRound = path === 'fetch' || path === 'source' ? await fetchPathRound(path === 'source') : null;

const perRecord: number[] = [];
let check = 0;
for (let round = 0; round < rounds; round++) {
  const started = process.cpuUsage();
  if (fetchRound !== null) check += await fetchRound();
  else for (const record of input) check += Number(decoder.decodeTyped(record)[2]);
  const used = process.cpuUsage(started);
  perRecord.push(((used.user + used.system) * 1000) / records);
}
const sorted = [...perRecord].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)] as number;
console.log(`CPU ns per record by round: ${perRecord.map((n) => n.toFixed(0)).join(' ')}`);
console.log(
  `RESULT ${JSON.stringify({
    bench: 'kafka-decode',
    path,
    records,
    rounds,
    median_ns_per_record: Math.round(median),
    root,
    // Absent on a checkout without the flat reader.
    flat_read: (decoder as { flat?: { read: number } }).flat?.read ?? null,
    flat_declined: (decoder as { flat?: { declined: number } }).flat?.declined ?? null,
    check,
  })}`,
);
