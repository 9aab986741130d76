// kafka-e2e.ts's flags, constants and data: the orders, what the views must hold, producing them.
import { Kafka, logLevel } from 'kafkajs';
import type { Dist, Order } from './workload.ts';

export interface Flags {
  orders: number;
  partitions: number;
  maxBatchRows: number;
  dist: Dist;
  sellers: number;
  pk: boolean;
  produceBatch: number;
  latencyRate: number;
  latencySeconds: number;
  cpuProfile: string | null;
  rawRounds: number;
  /** Another checkout's root: its server catches up alternately with this one's (paired A/B, no latency). */
  ab: string | null;
  abRounds: number;
  /** Extra node flags for this checkout's servers in an A/B run (e.g. `--max-semi-space-size=64`). */
  aNodeFlags: string[];
  /** An A/B run's `max_batch_ms` for A's and B's sources (null: the default). */
  abMaxBatchMs: [number | null, number | null];
  /** An A/B run's `max_batch_rows` for A's and B's sources (null: `--max-batch-rows`). */
  abMaxBatchRows: [number | null, number | null];
}

/** `A,B` → A's and B's value (`default` or empty: null). */
export function pairOf(v: string): [number | null, number | null] {
  const [x, y] = v.split(',').map((t) => (t === '' || t === 'default' ? null : Number(t)));
  return [x ?? null, y ?? null];
}

export function parseFlags(argv: string[]): Flags {
  const f: Flags = {
    orders: 2_000_000,
    partitions: 4,
    maxBatchRows: 10_000,
    dist: 'uniform',
    sellers: 100_000,
    pk: true,
    produceBatch: 5_000,
    latencyRate: 1_000,
    latencySeconds: 20,
    cpuProfile: null,
    rawRounds: 2,
    ab: null,
    abRounds: 2,
    aNodeFlags: [],
    abMaxBatchMs: [null, null],
    abMaxBatchRows: [null, null],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    const num = (): number => Number((v ?? '').replace(/_/g, ''));
    if (a === '--orders' && v) f.orders = num();
    else if (a === '--partitions' && v) f.partitions = num();
    else if (a === '--max-batch-rows' && v) f.maxBatchRows = num();
    else if (a === '--dist' && (v === 'uniform' || v === 'zipf')) f.dist = v;
    else if (a === '--sellers' && v) f.sellers = num();
    else if (a === '--pk' && (v === 'on' || v === 'off')) f.pk = v === 'on';
    else if (a === '--produce-batch' && v) f.produceBatch = num();
    else if (a === '--latency-rate' && v) f.latencyRate = num();
    else if (a === '--latency-seconds' && v) f.latencySeconds = num();
    else if (a === '--cpu-profile' && v) f.cpuProfile = v;
    else if (a === '--raw-rounds' && v) f.rawRounds = num();
    else if (a === '--ab' && v) f.ab = v;
    else if (a === '--ab-rounds' && v) f.abRounds = num();
    else if (a === '--a-node-flags' && v) f.aNodeFlags = v.split(' ').filter((x) => x !== '');
    else if (a === '--ab-max-batch-ms' && v) f.abMaxBatchMs = pairOf(v);
    else if (a === '--ab-max-batch-rows' && v) f.abMaxBatchRows = pairOf(v);
    else
      throw new Error(
        `unknown flag ${a} (--orders N, --partitions N, --max-batch-rows N, --dist uniform|zipf, --sellers N, ` +
          `--pk on|off, --produce-batch N, --latency-rate N, --latency-seconds N, --cpu-profile DIR, --raw-rounds N, --ab DIR, --ab-rounds N, --a-node-flags "FLAGS", --ab-max-batch-ms A,B, --ab-max-batch-rows A,B)`,
      );
    i++;
  }
  return f;
}

export const TOPIC = 'orders';
/** Issue 12's target: events/s end to end (and ≥ 80% of raw kafkajs on the same topic). */
export const TARGET = 300_000;
/** Latency-phase orders use seller ids from here up, one new seller per order, so each is identifiable. */
export const LATENCY_SELLER_BASE = 1_000_000_000;
export const LATENCY_ORDER_BASE = 2_000_000_000;
export const hrMs = (): number => Number(process.hrtime.bigint()) / 1e6;
export const fmt = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
export const round2 = (x: number): number => Number(x.toFixed(2));
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function kjs(brokers: string, clientId: string): Kafka {
  return new Kafka({ clientId, brokers: [brokers], logLevel: logLevel.NOTHING });
}

export interface Expected {
  orders: number;
  amountSum: number;
  orderIdSum: number;
  totals: Map<number, number>;
  histogram: Map<number, number>;
}

export function expectedOf(rows: readonly Order[]): Expected {
  const totals = new Map<number, number>();
  let amountSum = 0;
  let orderIdSum = 0;
  for (const r of rows) {
    totals.set(r.seller_id, (totals.get(r.seller_id) ?? 0) + r.amount);
    amountSum += r.amount;
    orderIdSum += r.order_id;
  }
  const histogram = new Map<number, number>();
  for (const t of totals.values()) {
    const b = Math.floor(t / 10);
    histogram.set(b, (histogram.get(b) ?? 0) + 1);
  }
  return { orders: rows.length, amountSum, orderIdSum, totals, histogram };
}

export async function produceAll(
  brokers: string,
  rows: readonly Order[],
  f: Flags,
): Promise<{ msgs_per_s: number; seconds: number }> {
  const producer = kjs(brokers, 'bench-produce').producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const t0 = hrMs();
  // A few batches in flight at once (acks=-1 each); partition = order_id mod partitions (no key).
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const start = next;
      next = Math.min(rows.length, start + f.produceBatch);
      const byPartition: { partition: number; value: string }[] = [];
      for (let i = start; i < next; i++) {
        const o = rows[i] as Order;
        byPartition.push({ partition: o.order_id % f.partitions, value: JSON.stringify(o) });
      }
      await producer.send({ topic: TOPIC, acks: -1, messages: byPartition });
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  const ms = hrMs() - t0;
  await producer.disconnect();
  return { msgs_per_s: Math.round(rows.length / (ms / 1000)), seconds: round2(ms / 1000) };
}

export async function endOffsets(brokers: string): Promise<Map<number, number>> {
  const admin = kjs(brokers, 'bench-admin').admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(TOPIC);
  await admin.disconnect();
  return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
}
