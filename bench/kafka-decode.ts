// The Kafka source's record decoding alone, without a broker: the bench's `orders` records (JSON
// `{"order_id","seller_id","amount"}`, bench/workload.ts) through `RecordDecoder.decodeTyped` with
// the real source typing of `CREATE SOURCE orders (...) FROM KAFKA (format 'json')` (the engine's
// `sourceRowTyping`, i.e. its normalizeRow). Prints CPU ns per record per round and the median, and
// how many records the flat reader read and left to the general path. See bench/README.md.
//
//   node --import tsx bench/kafka-decode.ts [--records 200000] [--rounds 8] [--root ../sluice-base]
// `--root DIR` decodes with another checkout's src/ (paired A/B: run both, alternating).
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
const decoder = new RecordDecoder({
  format: 'json',
  columns,
  primaryKey: ['order_id'],
  maxMessageBytes: 1 << 20,
  checkRow: () => null,
  typing,
});

const orders = generateRows({
  dist: 'uniform',
  sellers: 100_000,
  events: records,
  seed: 20111111,
  zipfS: 1.1,
});
const input: KafkaRecord[] = orders.map((o, i) => ({
  partition: i % 4,
  offset: i,
  key: null,
  value: Buffer.from(JSON.stringify({ order_id: o.order_id, seller_id: o.seller_id, amount: o.amount })),
}));

const perRecord: number[] = [];
let check = 0;
for (let round = 0; round < rounds; round++) {
  const started = process.cpuUsage();
  for (const record of input) check += Number(decoder.decodeTyped(record)[2]);
  const used = process.cpuUsage(started);
  perRecord.push(((used.user + used.system) * 1000) / records);
}
const sorted = [...perRecord].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)] as number;
console.log(`CPU ns per record by round: ${perRecord.map((n) => n.toFixed(0)).join(' ')}`);
console.log(
  `RESULT ${JSON.stringify({
    bench: 'kafka-decode',
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
