// kafka-e2e.ts's peer: raw kafkajs consumption of the topic with the source's consumer settings.
import { FETCH_BYTES_PER_PARTITION } from '../src/source/kafka/kafka-client.ts';
import { hrMs, kjs, LATENCY_ORDER_BASE, round2, TOPIC, type Expected } from './kafka-e2e-args.ts';
import type { Order } from './workload.ts';

export interface RawResult {
  msgs_per_s: number;
  steady_msgs_per_s: number;
  seconds: number;
  join_ms: number;
  cpu_s: number;
  msgs_per_cpu_s: number;
}

export async function rawConsume(brokers: string, exp: Expected): Promise<RawResult> {
  // The source's consumer settings (src/source/kafka/kafkajs-client.ts): read-committed, 100 ms max
  // wait, the same bytes per partition and fetch, one partition at a time; offsets never committed.
  const consumer = kjs(brokers, 'bench-raw').consumer({
    groupId: `bench-raw-${Date.now()}`,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
    maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
  });
  let count = 0;
  let amountSum = 0;
  let orderIdSum = 0;
  const cpu0 = process.cpuUsage();
  const t0 = hrMs();
  let first = 0;
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const end = await new Promise<number>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch }) => {
          if (first === 0) first = hrMs();
          for (const m of batch.messages) {
            const o = JSON.parse(m.value?.toString() ?? 'null') as Order;
            // Round 2 also finds the latency phases' orders (order ids from 2e9 up): not counted.
            if (o.order_id >= LATENCY_ORDER_BASE) continue;
            count++;
            amountSum += o.amount;
            orderIdSum += o.order_id;
          }
          if (count >= exp.orders) resolve(hrMs());
        },
      })
      .catch(reject);
  });
  const cpu = process.cpuUsage(cpu0);
  await consumer.disconnect();
  if (count !== exp.orders || amountSum !== exp.amountSum || orderIdSum !== exp.orderIdSum)
    throw new Error(`raw consumer checksum ${count}/${amountSum}/${orderIdSum} differs`);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  return {
    msgs_per_s: Math.round(exp.orders / ((end - t0) / 1000)),
    steady_msgs_per_s: Math.round(exp.orders / ((end - first) / 1000)),
    seconds: round2((end - t0) / 1000),
    join_ms: Math.round(first - t0),
    cpu_s: round2(cpuS),
    msgs_per_cpu_s: Math.round(exp.orders / cpuS),
  };
}

/**
 * A throw-away consumer group that joins and reads one fetch, before anything is timed: a fresh
 * broker's first group join (and this process's first kafkajs consumer) took 0.76–1.37 s against
 * 0.12–0.36 s later, which the raw peer's first round alone paid, so its msg/s read 20–30% low.
 */
export async function warmUp(brokers: string): Promise<number> {
  const consumer = kjs(brokers, 'bench-warm').consumer({
    groupId: `bench-warm-${Date.now()}`,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
  });
  const t0 = hrMs();
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async () => resolve(),
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return Math.round(hrMs() - t0);
}
