// kafka-e2e.ts's latency phase: produce → WebSocket delivery on seller_totals at a steady rate.
import type { Producer } from 'kafkajs';
import WebSocket from 'ws';
import {
  hrMs,
  LATENCY_ORDER_BASE,
  LATENCY_SELLER_BASE,
  round2,
  sleep,
  TOPIC,
  type Flags,
} from './kafka-e2e-args.ts';
import { metricsDelta, serverMetrics, type Server, type ServerMetrics } from './kafka-e2e-server.ts';
import { processCpuSeconds } from './server-child.ts';

export interface Latency {
  max_batch_ms: number;
  rate: number;
  seconds: number;
  produced: number;
  delivered: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
  mean_ms: number;
  produce_ack_p50_ms: number;
  produce_ack_p99_ms: number;
  /** Orders produced in the phase's second half only (later than any stall right after catch-up). */
  late_half_p50_ms: number;
  late_half_p99_ms: number;
  /** When the slowest order was produced, seconds into the phase. */
  max_at_s: number;
  over_1s: number;
  server_cpu_s: number;
  metrics: ServerMetrics;
}

export async function latency(
  s: Server,
  producer: Producer,
  f: Flags,
  maxBatchMs: number,
  firstSeller: number,
): Promise<Latency> {
  const sent = new Map<number, number>();
  /** Produce request → broker ack, per batch (part of produce → delivery). */
  const acks: number[] = [];
  const arrived = new Map<number, number>();
  const ws = new WebSocket(`ws://127.0.0.1:${s.port}/v1/views/seller_totals/subscribe?snapshot=false`);
  ws.on('message', (data) => {
    const now = hrMs();
    const text = String(data);
    if (!text.startsWith('{"type":"changes"')) return;
    const m = JSON.parse(text) as { changes: { op: string; row: { seller_id: number } }[] };
    for (const c of m.changes) {
      const id = c.row.seller_id;
      if (id >= LATENCY_SELLER_BASE && (c.op === '+I' || c.op === '+U') && !arrived.has(id))
        arrived.set(id, now);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  // Ticks of 10 ms, rate/100 orders per tick, one small batch per tick (acks=-1, not awaited in line).
  const perTick = Math.max(1, Math.round(f.latencyRate / 100));
  const ticks = Math.round(f.latencySeconds * 100);
  const m0 = await serverMetrics(s);
  const cpu0 = processCpuSeconds(s.child.pid);
  const pending: Promise<unknown>[] = [];
  let seller = firstSeller;
  let orderId = LATENCY_ORDER_BASE + firstSeller - LATENCY_SELLER_BASE;
  const t0 = hrMs();
  for (let i = 0; i < ticks; i++) {
    const wait = t0 + i * 10 - hrMs();
    if (wait > 0) await sleep(wait);
    const messages: { partition: number; value: string }[] = [];
    const now = hrMs();
    for (let k = 0; k < perTick; k++) {
      const id = seller++;
      sent.set(id, now);
      messages.push({
        partition: id % f.partitions,
        value: JSON.stringify({ order_id: orderId++, seller_id: id, amount: 1 + (id % 100) }),
      });
    }
    pending.push(producer.send({ topic: TOPIC, acks: -1, messages }).then(() => acks.push(hrMs() - now)));
  }
  await Promise.all(pending);
  const until = hrMs() + 10_000;
  while (arrived.size < sent.size && hrMs() < until) await sleep(5);
  const cpu = processCpuSeconds(s.child.pid) - cpu0;
  const metrics = metricsDelta(m0, await serverMetrics(s));
  ws.close();
  const lat: number[] = [];
  const late: number[] = [];
  const half = t0 + (ticks * 10) / 2;
  let maxLat = -1;
  let maxAt = NaN;
  for (const [id, t] of sent) {
    const a = arrived.get(id);
    if (a === undefined) continue;
    lat.push(a - t);
    if (t >= half) late.push(a - t);
    if (a - t > maxLat) {
      maxLat = a - t;
      maxAt = (t - t0) / 1000;
    }
  }
  late.sort((a, b) => a - b);
  lat.sort((a, b) => a - b);
  acks.sort((a, b) => a - b);
  const pctOf = (xs: number[], p: number): number =>
    round2(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN);
  const pct = (p: number): number => pctOf(lat, p);
  return {
    max_batch_ms: maxBatchMs,
    rate: perTick * 100,
    seconds: f.latencySeconds,
    produced: sent.size,
    delivered: lat.length,
    p50_ms: pct(50),
    p95_ms: pct(95),
    p99_ms: pct(99),
    max_ms: round2(lat[lat.length - 1] ?? NaN),
    mean_ms: round2(lat.reduce((a, b) => a + b, 0) / Math.max(1, lat.length)),
    produce_ack_p50_ms: pctOf(acks, 50),
    produce_ack_p99_ms: pctOf(acks, 99),
    late_half_p50_ms: pctOf(late, 50),
    late_half_p99_ms: pctOf(late, 99),
    max_at_s: round2(maxAt),
    over_1s: lat.filter((x) => x > 1000).length,
    server_cpu_s: round2(cpu),
    metrics,
  };
}
