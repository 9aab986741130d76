// A Kafka source runner over a scripted reader, as the source's unit tests build it
// (src/source/kafka/source-*.test.ts): a json source of one integer column `id`, its rows typed by
// the source's own typing or handed over as objects, every delivered batch collected. No broker.
import { KafkaSourceRunner } from '../../src/source/kafka/kafka-source.ts';
import type { KafkaReader } from '../../src/source/kafka/kafka-client.ts';
import type { SourceBatch, SourcePacer } from '../../src/source/kafka/kafka-source-types.ts';

export interface ScriptedRunnerOptions {
  readonly maxBatchRows: number;
  readonly maxBatchMs: number;
  /** A typed json source reads its records in a loop of its own (kafka-source.ts). */
  readonly typed: boolean;
  readonly pacer?: SourcePacer;
}

/** The runner, not started, and the batches it will deliver. */
export function scriptedRunner(
  reader: KafkaReader,
  options: ScriptedRunnerOptions,
): { runner: KafkaSourceRunner; delivered: SourceBatch[] } {
  const delivered: SourceBatch[] = [];
  const runner = new KafkaSourceRunner(
    {
      name: 's',
      topic: 't',
      maxBatchRows: options.maxBatchRows,
      maxBatchMs: options.maxBatchMs,
      onError: 'skip',
      start: 'earliest',
      decode: {
        format: 'json',
        columns: ['id'],
        primaryKey: null,
        maxMessageBytes: 1000,
        checkRow: () => null,
        typing: options.typed ? { typed: (row) => [row.id as number], eventTime: null } : null,
      },
    },
    () => reader,
    new Map(),
    (batch) => delivered.push(batch),
    { info: () => undefined, warn: () => undefined, error: () => undefined },
    options.pacer ?? null,
  );
  return { runner, delivered };
}
