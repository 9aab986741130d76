// A Kafka source runner over a scripted reader, as the source's unit tests build it
// (src/source/kafka/source-*.test.ts): a json source of one integer column `id`, its rows typed by
// the source's own typing or handed over as objects, every delivered batch collected. No broker.
import { KafkaSourceRunner } from '../../src/source/kafka/kafka-source.ts';
import type { ConnectorLogger, KafkaReader } from '../../src/source/kafka/kafka-client.ts';
import type {
  KafkaSourceConfig,
  SourceBatch,
  SourcePacer,
} from '../../src/source/kafka/kafka-source-types.ts';
import type { DecodeSpec } from '../../src/source/kafka/record-decoder.ts';

export interface ScriptedRunnerOptions {
  readonly maxBatchRows: number;
  readonly maxBatchMs: number;
  /** A typed json source reads its records in a loop of its own (kafka-source.ts). */
  readonly typed: boolean;
  readonly pacer?: SourcePacer;
  /** The decoding in place of the one integer column `id` (columns, key, typing). */
  readonly decode?: Partial<DecodeSpec>;
  /** More of the source's configuration (the engine's epoch-bound hooks). */
  readonly config?: Partial<KafkaSourceConfig>;
  readonly logger?: ConnectorLogger;
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
        ...options.decode,
      },
      ...options.config,
    },
    () => reader,
    new Map(),
    (batch) => delivered.push(batch),
    options.logger ?? { info: () => undefined, warn: () => undefined, error: () => undefined },
    options.pacer ?? null,
  );
  return { runner, delivered };
}
