// End-to-end Kafka benchmark: a real broker (tools/kafka), N JSON orders pre-produced to a topic, the
// Sluice server as a child process reading them through CREATE SOURCE ... FROM KAFKA into the Double 11
// views (seller_totals, total_histogram). Measures, in one run:
//   - catch-up throughput: CREATE SOURCE → every partition's `next` at the topic's end offsets
//     (events/s, server CPU seconds, events per server CPU second), then checks the views exactly;
//   - the peer: raw kafkajs consumption of the same topic with the source's consumer settings
//     (eachBatch, JSON.parse of every value, read-committed) → msgs/s, and the Sluice/raw ratio;
//   - latency: produce → WebSocket delivery on seller_totals, per order, at a moderate rate, once
//     with the default max_batch_ms (100) and once with max_batch_ms 10 (a second server, which also
//     gives a second catch-up figure);
//   - with --cpu-profile DIR: the first server's CPU profile, summarised over the catch-up window.
// Prints a human table and one `RESULT {json}` line. See bench/README.md.
//
//   node --import tsx bench/kafka-e2e.ts                      # 2,000,000 orders, 4 partitions
//   node --import tsx bench/kafka-e2e.ts --orders 200000 --latency-seconds 5 --cpu-profile /tmp/kprof
// The parts: kafka-e2e-args.ts (flags, data), kafka-e2e-raw.ts (the raw peer), kafka-e2e-server.ts (the
// server, catch-up, checks), kafka-e2e-latency.ts, kafka-e2e-ab.ts (paired A/B), kafka-e2e-profile.ts.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Producer } from 'kafkajs';
import { KAFKA_VERSION, startBroker, type Broker } from '../tools/kafka/broker.mjs';
import { abRounds, type CatchUpRun } from './kafka-e2e-ab.ts';
import {
  endOffsets,
  expectedOf,
  fmt,
  kjs,
  LATENCY_SELLER_BASE,
  parseFlags,
  produceAll,
  round2,
  TARGET,
  TOPIC,
} from './kafka-e2e-args.ts';
import { latency, type Latency } from './kafka-e2e-latency.ts';
import { summariseProfile, type ProfileSummary } from './kafka-e2e-profile.ts';
import { rawConsume, warmUp, type RawResult } from './kafka-e2e-raw.ts';
import {
  catchUp,
  startServer,
  verify,
  verifyWithLatency,
  type CatchUp,
  type Server,
} from './kafka-e2e-server.ts';
import { stopServer } from './server-child.ts';
import { generateRows } from './workload.ts';

async function main(): Promise<void> {
  const f = parseFlags(process.argv.slice(2));
  const load0 = loadavg();
  console.error(`loadavg before: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  const rows = generateRows({
    dist: f.dist,
    sellers: f.sellers,
    events: f.orders,
    seed: 20111111,
    zipfS: 1.1,
  });
  const exp = expectedOf(rows);
  const broker: Broker = await startBroker({ log: (m) => console.error(`[kafka] ${m}`) });
  const servers: Server[] = [];
  let latencyProducer: Producer | null = null;
  const raw: RawResult[] = [];
  const catchUps: CatchUpRun[] = [];
  const latencies: Latency[] = [];
  let profile = null as ProfileSummary | null;
  let profileError: string | undefined;
  let produce: { msgs_per_s: number; seconds: number };
  try {
    const admin = kjs(broker.brokers, 'bench-admin').admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: TOPIC, numPartitions: f.partitions }],
      waitForLeaders: true,
    });
    await admin.disconnect();
    console.error(`producing ${fmt(f.orders)} orders (${f.dist}, ${fmt(f.sellers)} sellers), acks=-1 …`);
    produce = await produceAll(broker.brokers, rows, f);
    console.error(`  ${fmt(produce.msgs_per_s)} msg/s, ${produce.seconds} s`);
    const ends = await endOffsets(broker.brokers);
    const endSum = [...ends.values()].reduce((a, b) => a + b, 0);
    if (endSum !== f.orders) throw new Error(`topic holds ${endSum} records, expected ${f.orders}`);

    // Peer first (round 1), then Sluice, then the peer again (round 2): neither gets only a warm cache.
    const runRaw = async (): Promise<void> => {
      const r = await rawConsume(broker.brokers, exp);
      raw.push(r);
      console.error(
        `raw kafkajs: ${fmt(r.msgs_per_s)} msg/s (steady ${fmt(r.steady_msgs_per_s)}, join ${r.join_ms} ms, ${r.cpu_s} CPU-s)`,
      );
    };
    console.error(`warm-up consumer group: joined and read a fetch in ${await warmUp(broker.brokers)} ms`);
    await runRaw();

    latencyProducer = kjs(broker.brokers, 'bench-latency').producer({ allowAutoTopicCreation: false });
    await latencyProducer.connect();
    let nextSeller = LATENCY_SELLER_BASE;
    let profileDir: string | null = null;
    if (f.cpuProfile !== null) {
      mkdirSync(f.cpuProfile, { recursive: true });
      profileDir = mkdtempSync(join(f.cpuProfile, 'server-'));
    }
    const readProfile = (c: CatchUp): void => {
      if (profileDir === null) return;
      try {
        // One file per thread; the main thread's is the big one.
        const files = readdirSync(profileDir).filter((x) => x.endsWith('.cpuprofile'));
        const size = (x: string) => statSync(join(profileDir as string, x)).size;
        const file = files.sort((a, b) => size(b) - size(a))[0];
        if (file === undefined) throw new Error(`no .cpuprofile in ${profileDir}`);
        profile = summariseProfile(join(profileDir, file), c.window_ns, 15);
      } catch (error) {
        profileError = error instanceof Error ? error.message : String(error);
      }
    };
    if (f.ab !== null)
      catchUps.push(
        ...(await abRounds(
          { f, other: f.ab, brokers: broker.brokers, exp, ends, profileDir, servers },
          readProfile,
        )),
      );
    for (const maxBatchMs of f.ab === null ? ([null, 10] as const) : []) {
      const s = await startServer(maxBatchMs === null ? profileDir : null);
      servers.push(s);
      // Each server reads the whole topic: the 2nd also reads the latency orders the 1st produced.
      const endsNow = await endOffsets(broker.brokers);
      const c = await catchUp(s, broker.brokers, f, maxBatchMs, endsNow);
      const expNow = nextSeller === LATENCY_SELLER_BASE ? exp : null;
      const verified =
        expNow !== null ? await verify(s, expNow) : await verifyWithLatency(s, exp, nextSeller);
      catchUps.push({ ...c, max_batch_ms: maxBatchMs, verified, tree: null });
      console.error(
        `sluice (max_batch_ms ${maxBatchMs ?? 'default'}): ${fmt(c.events_per_s)} events/s (steady ${fmt(c.steady_events_per_s)}), ` +
          `${c.seconds} s, ${c.server_cpu_s} server CPU-s, ${fmt(c.events_per_server_cpu_s)} ev/CPU-s; ${verified}`,
      );
      const l = await latency(s, latencyProducer, f, maxBatchMs ?? 100, nextSeller);
      nextSeller += l.produced;
      latencies.push(l);
      console.error(
        `latency (max_batch_ms ${l.max_batch_ms}): p50 ${l.p50_ms} ms, p95 ${l.p95_ms}, p99 ${l.p99_ms}, max ${l.max_ms} (${l.delivered}/${l.produced})`,
      );
      await stopServer(s);
      servers.pop();
      if (maxBatchMs === null) readProfile(c);
    }
    if (f.rawRounds > 1) await runRaw();
  } finally {
    await latencyProducer?.disconnect().catch(() => undefined);
    for (const s of servers) await stopServer(s).catch(() => undefined);
    await broker.stop();
  }
  const load1 = loadavg();
  const loadText1 = readFileSync('/proc/loadavg', 'utf8').trim();
  const bestRaw = raw.reduce((a, b) => (b.msgs_per_s > a.msgs_per_s ? b : a));
  const first = catchUps[0] as CatchUp;
  const summary = {
    bench: 'kafka-e2e',
    kafka: KAFKA_VERSION,
    node: process.version,
    orders: f.orders,
    partitions: f.partitions,
    dist: f.dist,
    sellers: f.sellers,
    primary_key: f.pk,
    max_batch_rows: f.maxBatchRows,
    loadavg_before: load0.map(round2),
    loadavg_after: load1.map(round2),
    produce,
    sluice: catchUps.map(({ window_ns: _w, ...c }) => c),
    raw_kafkajs: raw,
    ratio_sluice_raw: round2(first.events_per_s / bestRaw.msgs_per_s),
    ratio_sluice_raw_cpu: round2(first.events_per_server_cpu_s / bestRaw.msgs_per_cpu_s),
    target_events_per_s: TARGET,
    latency: latencies,
    ...(profile !== null ? { profile } : {}),
    ...(profileError !== undefined ? { profile_error: profileError } : {}),
  };
  console.log('');
  console.log(
    `Kafka ${KAFKA_VERSION}, ${fmt(f.orders)} JSON orders (${f.dist} over ${fmt(f.sellers)} sellers), ${f.partitions} partitions, ` +
      `max_batch_rows ${f.maxBatchRows}, PK ${f.pk ? 'on' : 'off'}, node ${process.version}`,
  );
  console.log(`loadavg before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${loadText1}`);
  console.log(`produce (kafkajs, acks=-1, batches of ${f.produceBatch}): ${fmt(produce.msgs_per_s)} msg/s`);
  console.log('');
  console.log('consumer                        events/s   steady ev/s   seconds    CPU-s   ev/CPU-s');
  for (const c of catchUps) {
    console.log(
      `${(c.tree ?? `sluice (max_batch_ms ${c.max_batch_ms ?? 100})`).slice(0, 28).padEnd(28)} ${fmt(c.events_per_s).padStart(12)} ${fmt(c.steady_events_per_s).padStart(13)} ${String(c.seconds).padStart(9)} ${String(c.server_cpu_s).padStart(8)} ${fmt(c.events_per_server_cpu_s).padStart(10)}`,
    );
  }
  raw.forEach((r, i) =>
    console.log(
      `${`raw kafkajs (round ${i + 1})`.padEnd(28)} ${fmt(r.msgs_per_s).padStart(12)} ${fmt(r.steady_msgs_per_s).padStart(13)} ${String(r.seconds).padStart(9)} ${String(r.cpu_s).padStart(8)} ${fmt(r.msgs_per_cpu_s).padStart(10)}`,
    ),
  );
  for (const c of catchUps) {
    const m = c.metrics;
    console.log(
      `  sluice (max_batch_ms ${c.max_batch_ms ?? 100}) during catch-up: ${c.batches} batches; ` +
        `${m.checkpoints} checkpoints took ${m.checkpoint_s} s (${fmt(m.checkpoint_bytes / 1e6)} MB written)`,
    );
  }
  console.log(
    `sluice / raw (best): ${summary.ratio_sluice_raw}× wall, ${summary.ratio_sluice_raw_cpu}× per CPU-s; target ${fmt(TARGET)} events/s: ${first.events_per_s >= TARGET ? 'met' : 'missed'}`,
  );
  console.log('');
  console.log(
    'latency (produce → WebSocket, ms)   p50      p95      p99      max   delivered   produce ack p50/p99',
  );
  for (const l of latencies) {
    console.log(
      `max_batch_ms ${String(l.max_batch_ms).padEnd(4)} @ ${l.rate}/s`.padEnd(34) +
        `${String(l.p50_ms).padStart(7)}  ${String(l.p95_ms).padStart(7)}  ${String(l.p99_ms).padStart(7)}  ${String(l.max_ms).padStart(7)}   ${`${l.delivered}/${l.produced}`.padEnd(11)} ${l.produce_ack_p50_ms}/${l.produce_ack_p99_ms}`,
    );
  }
  console.log('latency, second half only       p50      p99   >1 s   slowest sent at   checkpoints in phase');
  for (const l of latencies) {
    console.log(
      `max_batch_ms ${String(l.max_batch_ms)}`.padEnd(30) +
        `${String(l.late_half_p50_ms).padStart(7)}  ${String(l.late_half_p99_ms).padStart(7)}  ${String(l.over_1s).padStart(5)}   ${`${l.max_at_s} s`.padStart(15)}   ${l.metrics.checkpoints} (${l.metrics.checkpoint_s} s)`,
    );
  }
  if (profile !== null) {
    console.log('');
    console.log(
      `CPU profile (${profile.window}, ${fmt(profile.sampled_ms)} ms, ${fmt(profile.samples)} samples): ${profile.file}`,
    );
    for (const c of profile.categories)
      console.log(
        `  ${c.pct.toFixed(1).padStart(5)}%  ${String(c.self_ms).padStart(6)} ms  ${c.sample_pct.toFixed(1).padStart(5)}% of samples  ${c.category}`,
      );
    console.log('  top functions by self time:');
    for (const t of profile.top)
      console.log(
        `  ${t.pct.toFixed(1).padStart(5)}%  ${String(t.self_ms).padStart(6)} ms  ${t.sample_pct.toFixed(1).padStart(5)}% of samples  ${t.fn}`,
      );
  }
  if (profileError !== undefined) console.log(`profile: ${profileError}`);
  console.log(`RESULT ${JSON.stringify(summary)}`);
}

await main();
