// Validation of a source's or sink's connector options (`KAFKA (brokers '...', topic '...', ...)`)
// into typed, defaulted settings kept in the catalog. Every error points at the offending token.
import type { ConnectorClause, ConnectorOption, Pos } from '../parser/ast.ts';
import { notSupported, SluiceError } from '../common/errors.ts';
import { parseInterval } from '../common/time/interval.ts';
import { USECS_PER_DAY } from '../common/time/calendar.ts';

export type KafkaSourceFormat = 'json' | 'upsert' | 'debezium';
export type KafkaSinkFormat = 'upsert' | 'debezium' | 'changelog';

/** Where a source starts reading when it has no stored position. */
export type KafkaStart =
  | 'earliest'
  | 'latest'
  /** `'<partition>:<offset>,...'`: explicit offsets; partitions not listed start at earliest. */
  | readonly { readonly partition: number; readonly offset: number }[];

/** A Kafka source's validated options, defaults filled in. */
export interface KafkaSourceOptions {
  readonly connector: 'kafka';
  /** `host:port` entries, in the order written. */
  readonly brokers: readonly string[];
  readonly topic: string;
  /** Default 'json'. `upsert` and `debezium` require the source to have a primary key. */
  readonly format: KafkaSourceFormat;
  /** Default 'earliest'. */
  readonly start: KafkaStart;
  /** Default 10000: most rows handed to the engine in one batch (one epoch). */
  readonly maxBatchRows: number;
  /** Default 100: longest a batch waits to fill before it is handed over. */
  readonly maxBatchMs: number;
  /** Default 'fail': a message that does not decode stops the source; 'skip' drops it. */
  readonly onError: 'fail' | 'skip';
  /** Consumer group id; absent: the connector chooses. */
  readonly groupId?: string;
  /** Largest message accepted; absent: the connector's default. */
  readonly maxMessageBytes?: number;
  /**
   * With a WATERMARK: a partition that delivered no message for this long (µs of the logical clock)
   * stops holding the source's watermark back until it delivers again. Default 30 s; set only on
   * a source with a WATERMARK.
   */
  readonly idleTimeoutMicros?: number;
}

/** The default of a source's `idle_timeout`: 30 seconds. */
export const DEFAULT_IDLE_TIMEOUT_MICROS = 30_000_000;

/** A Kafka sink's validated options. */
export interface KafkaSinkOptions {
  readonly connector: 'kafka';
  readonly brokers: readonly string[];
  readonly topic: string;
  /** Required. `upsert` requires the view to have a unique key. */
  readonly format: KafkaSinkFormat;
}

type OptionKind = 'string' | 'integer';

interface OptionSpec {
  readonly kind: OptionKind;
  /** Allowed string values (lowercase); any value of `kind` when absent. */
  readonly values?: readonly string[];
}

const sourceSpecs: Readonly<Record<string, OptionSpec>> = {
  brokers: { kind: 'string' },
  topic: { kind: 'string' },
  format: { kind: 'string', values: ['json', 'upsert', 'debezium'] },
  start: { kind: 'string' },
  max_batch_rows: { kind: 'integer' },
  max_batch_ms: { kind: 'integer' },
  on_error: { kind: 'string', values: ['fail', 'skip'] },
  group_id: { kind: 'string' },
  max_message_bytes: { kind: 'integer' },
  idle_timeout: { kind: 'string' },
};

const sinkSpecs: Readonly<Record<string, OptionSpec>> = {
  brokers: { kind: 'string' },
  topic: { kind: 'string' },
  format: { kind: 'string', values: ['upsert', 'debezium', 'changelog'] },
};

function invalid(message: string, position: Pos, hint?: string): SluiceError {
  return new SluiceError('INVALID_OPTION', message, { position, ...(hint !== undefined ? { hint } : {}) });
}

function quoteList(values: readonly string[]): string {
  return values.map((v) => `'${v}'`).join(', ');
}

/** Option name → the option as written; unknown, duplicate and mistyped options are errors. */
function collect(
  clause: ConnectorClause,
  specs: Readonly<Record<string, OptionSpec>>,
  what: 'source' | 'sink',
): Map<string, ConnectorOption> {
  if (clause.connector !== 'kafka') {
    throw notSupported(`${what} connector "${clause.connector}"`, clause.pos, 'the only connector is KAFKA');
  }
  const seen = new Map<string, ConnectorOption>();
  const names = Object.keys(specs);
  for (const option of clause.options) {
    const spec = specs[option.name];
    if (spec === undefined) {
      throw invalid(
        `unknown option "${option.name}" for a Kafka ${what}`,
        option.pos,
        `options: ${names.join(', ')}`,
      );
    }
    if (seen.has(option.name)) throw invalid(`option "${option.name}" specified more than once`, option.pos);
    if (spec.kind === 'integer' && option.valueKind !== 'integer') {
      throw invalid(`option "${option.name}" must be a positive integer`, option.valuePos);
    }
    if (spec.kind === 'string' && option.valueKind !== 'string') {
      throw invalid(
        `option "${option.name}" must be a quoted string`,
        option.valuePos,
        spec.values !== undefined ? `write one of ${quoteList(spec.values)}` : `write ${option.name} '...'`,
      );
    }
    if (spec.values !== undefined && !spec.values.includes(option.value.toLowerCase())) {
      throw invalid(
        `invalid value '${option.value}' for option "${option.name}"`,
        option.valuePos,
        `expected one of ${quoteList(spec.values)}`,
      );
    }
    seen.set(option.name, option);
  }
  for (const required of ['brokers', 'topic']) {
    if (!seen.has(required)) {
      throw invalid(`missing required option "${required}" for a Kafka ${what}`, clause.pos);
    }
  }
  return seen;
}

function brokersOf(option: ConnectorOption): string[] {
  const brokers = option.value.split(',').map((b) => b.trim());
  for (const b of brokers) {
    const m = /^([^\s:]+|\[[0-9a-fA-F:.]+\]):(\d{1,5})$/.exec(b);
    const port = m !== null ? Number(m[2]) : 0;
    if (m === null || port < 1 || port > 65535) {
      throw invalid(
        `invalid broker address '${b}' in option "brokers"`,
        option.valuePos,
        "write brokers 'host:port[,host:port...]'",
      );
    }
  }
  return brokers;
}

function topicOf(option: ConnectorOption): string {
  // Kafka's own rule for topic names.
  if (!/^[A-Za-z0-9._-]{1,249}$/.test(option.value)) {
    throw invalid(
      `invalid Kafka topic name '${option.value}'`,
      option.valuePos,
      'topic names are 1 to 249 characters from letters, digits, ".", "_" and "-"',
    );
  }
  return option.value;
}

/** setTimeout's longest delay (2^31 − 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

function positiveInt(option: ConnectorOption): number {
  const n = Number(option.value);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw invalid(`option "${option.name}" must be a positive integer`, option.valuePos);
  }
  return n;
}

function startOf(option: ConnectorOption): KafkaStart {
  const lower = option.value.toLowerCase();
  if (lower === 'earliest' || lower === 'latest') return lower;
  const hint = "write 'earliest', 'latest' or '<partition>:<offset>,...', e.g. '0:42,1:7'";
  const out: { partition: number; offset: number }[] = [];
  for (const part of option.value.split(',')) {
    const m = /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec(part);
    const partition = m !== null ? Number(m[1]) : NaN;
    const offset = m !== null ? Number(m[2]) : NaN;
    if (!Number.isSafeInteger(partition) || !Number.isSafeInteger(offset) || partition > 2147483647) {
      throw invalid(`invalid value '${option.value}' for option "start"`, option.valuePos, hint);
    }
    if (out.some((p) => p.partition === partition)) {
      throw invalid(`partition ${partition} appears twice in option "start"`, option.valuePos);
    }
    out.push({ partition, offset });
  }
  return out;
}

/** `idle_timeout '30 seconds'`: a positive interval of days and time, in µs. */
function idleTimeoutOf(option: ConnectorOption): number {
  const value = parseInterval(option.value);
  const hint = "write an interval such as '30 seconds' or '2 minutes'";
  if (value === null || value.months !== 0) {
    throw invalid(`invalid value '${option.value}' for option "idle_timeout"`, option.valuePos, hint);
  }
  const micros = value.days * USECS_PER_DAY + value.micros;
  if (!Number.isSafeInteger(micros) || micros <= 0) {
    throw invalid('option "idle_timeout" must be a positive interval', option.valuePos, hint);
  }
  return micros;
}

/**
 * Validates CREATE SOURCE's connector clause; `hasPrimaryKey` gates the keyed formats,
 * `hasWatermark` the idle timeout (which only a watermark reads).
 */
export function sourceOptions(
  clause: ConnectorClause,
  sourceName: string,
  hasPrimaryKey: boolean,
  hasWatermark = false,
): KafkaSourceOptions {
  const o = collect(clause, sourceSpecs, 'source');
  const format = (o.get('format')?.value.toLowerCase() ?? 'json') as KafkaSourceFormat;
  const formatOption = o.get('format');
  if (format !== 'json' && !hasPrimaryKey && formatOption !== undefined) {
    throw invalid(
      `format '${format}' requires a primary key on source "${sourceName}"`,
      formatOption.valuePos,
      `declare PRIMARY KEY (...) naming the columns of the Kafka message key, or use format 'json'`,
    );
  }
  const get = (name: string): ConnectorOption | undefined => o.get(name);
  const rows = get('max_batch_rows');
  const ms = get('max_batch_ms');
  const start = get('start');
  const onError = get('on_error');
  const groupId = get('group_id');
  const maxBytes = get('max_message_bytes');
  const idle = get('idle_timeout');
  if (idle !== undefined && !hasWatermark) {
    throw invalid(
      `option "idle_timeout" needs a WATERMARK on source "${sourceName}"`,
      idle.valuePos,
      "the idle timeout says when a quiet partition stops holding the watermark back: declare WATERMARK FOR ts AS ts - INTERVAL '...'",
    );
  }
  if (groupId !== undefined && groupId.value === '') {
    throw invalid('option "group_id" must not be empty', groupId.valuePos);
  }
  return {
    connector: 'kafka',
    brokers: brokersOf(o.get('brokers') as ConnectorOption),
    topic: topicOf(o.get('topic') as ConnectorOption),
    format,
    start: start !== undefined ? startOf(start) : 'earliest',
    maxBatchRows: rows !== undefined ? positiveInt(rows) : 10000,
    // At most setTimeout's longest delay: a longer one fires after 1 ms (Node's overflow rule). Capped,
    // not refused, so a statement journaled with a longer one replays as it was accepted.
    maxBatchMs: ms !== undefined ? Math.min(positiveInt(ms), MAX_TIMER_MS) : 100,
    onError: (onError?.value.toLowerCase() ?? 'fail') as 'fail' | 'skip',
    ...(groupId !== undefined ? { groupId: groupId.value } : {}),
    ...(maxBytes !== undefined ? { maxMessageBytes: positiveInt(maxBytes) } : {}),
    ...(hasWatermark
      ? { idleTimeoutMicros: idle !== undefined ? idleTimeoutOf(idle) : DEFAULT_IDLE_TIMEOUT_MICROS }
      : {}),
  };
}

/** Validates CREATE SINK's connector clause; `viewHasKey` gates the upsert format. */
export function sinkOptions(
  clause: ConnectorClause,
  viewName: string,
  viewHasKey: boolean,
): KafkaSinkOptions {
  const o = collect(clause, sinkSpecs, 'sink');
  const formatOption = o.get('format');
  if (formatOption === undefined) {
    throw invalid(
      'missing required option "format" for a Kafka sink',
      clause.pos,
      `one of ${quoteList(sinkSpecs['format']?.values ?? [])}`,
    );
  }
  const format = formatOption.value.toLowerCase() as KafkaSinkFormat;
  if (format === 'upsert' && !viewHasKey) {
    throw invalid(
      `format 'upsert' requires materialized view "${viewName}" to have a unique key`,
      formatOption.valuePos,
      "the view's rows have no key (GROUP BY, DISTINCT or a primary key carried through give one); use format 'changelog'",
    );
  }
  return {
    connector: 'kafka',
    brokers: brokersOf(o.get('brokers') as ConnectorOption),
    topic: topicOf(o.get('topic') as ConnectorOption),
    format,
  };
}
