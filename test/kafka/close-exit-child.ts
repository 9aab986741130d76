// Child process of client-close.test.ts: against the broker in SLUICE_TEST_KAFKA_BROKERS it starts
// a Kafka reader, a second reader that only reports progress (a commit, for which kafkajs runs a
// consumer of its own) and a transactional writer; it closes the committing reader argv[3] ms into
// its commit, then the others, and then only returns from its main function: the process must exit
// on its own, with nothing of the clients left to keep it alive.
import { KafkajsReader, KafkajsTransactionalWriter } from '../../src/source/kafka/kafkajs-client.ts';

const brokers = (process.env.SLUICE_TEST_KAFKA_BROKERS ?? '').split(',');
const topic = process.argv[2] as string;
const closeAfterMs = Number(process.argv[3] ?? 0);
const tag = `${process.pid}-${Date.now()}`;
const newReader = (name: string): KafkajsReader =>
  new KafkajsReader({ brokers, topic, groupId: `exit-${name}-${tag}`, clientId: `exit-${name}-${tag}` });

const reader = newReader('reader');
let seen = 0;
await reader.start(
  new Map(),
  async (_p, records) => {
    seen += records.length;
  },
  () => undefined,
);
const deadline = Date.now() + 30_000;
while (seen < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

const writer = new KafkajsTransactionalWriter({
  brokers,
  topic,
  clientId: `exit-writer-${tag}`,
  transactionalId: `exit-tx-${tag}`,
  progressGroupId: `exit-progress-${tag}`,
});
await writer.connect();
await writer.writeEpoch(1, [{ key: null, value: 'x', headers: {} }]);

const committer = newReader('committer');
const commit = committer.commit(new Map([[0, 1]])).catch(() => undefined);
await new Promise((r) => setTimeout(r, closeAfterMs));
await committer.close();
await commit;
await reader.close();
await writer.close();
process.stdout.write(`closed after ${seen} records\n`);
