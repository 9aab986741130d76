// Real-Kafka test support: the prerequisite rule, the run's shared broker, private brokers for
// fault injection, kafkajs clients and condition waits. Rule: without java (or mvn, while the jars
// are not cached) a Kafka suite is skipped loudly — and fails when CI=true.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, dirname } from 'node:path';
import { after, before, test } from 'node:test';
import { Kafka, logLevel, type KafkaConfig, type Producer } from 'kafkajs';
import { removeDir } from '../server/helpers.ts';
import {
  kafkaPrerequisites,
  startBroker,
  type Broker,
  type StartBrokerOptions,
} from '../../tools/kafka/broker.mjs';

export { kafkaPrerequisites };
export type { Broker };

/** Env var through which scripts/run-tests.mjs hands the shared broker's address to test files. */
export const SHARED_BROKERS_ENV = 'SLUICE_TEST_KAFKA_BROKERS';

process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= '1';

let prerequisites: { ok: boolean; missing: string[] } | undefined;

/**
 * Options for a Kafka suite's `describe(name, kafkaSuite(name), ...)`: `{}` when a broker can run,
 * `{ skip: message }` (after a banner on stderr) when a tool is missing. With CI=true a missing
 * tool throws instead, so the test file fails.
 */
export function kafkaSuite(suite: string): { skip?: string } {
  if (!process.env[SHARED_BROKERS_ENV]) prerequisites ??= kafkaPrerequisites();
  if (!prerequisites || prerequisites.ok) return {};
  const msg = `Kafka suite "${suite}" needs ${prerequisites.missing.join(' and ')} on PATH (missing)`;
  const ci = process.env.CI === 'true';
  const bar = '!'.repeat(Math.min(100, msg.length + 12));
  console.error(`\n${bar}\n!!! ${ci ? 'FAIL' : 'SKIPPED'}: ${msg}\n${bar}\n`);
  if (ci) throw new Error(`${msg}; CI=true makes a missing Kafka prerequisite a failure`);
  // Node 20 does not count a skipped describe() in its "skipped" total; a skipped test makes the
  // skip visible in the summary (and keeps run-tests' zero-tests guard from misreading it).
  test(`${suite} (needs a Kafka broker)`, { skip: msg }, () => {});
  return { skip: `SKIPPED: ${msg}` };
}

const privateBrokers = new Set<Broker>();
let ownShared: Promise<Broker> | undefined;
let exitHookInstalled = false;

// Brokers this process started are killed (SIGKILL, synchronous) when it exits, so a test file
// run directly never leaves a JVM behind; a watchdog in broker.mjs covers a killed process.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const b of privateBrokers) {
      if (b.pid === null) continue;
      try {
        process.kill(b.pid, 'SIGKILL');
      } catch {
        continue; // already gone
      }
      // A temp data dir is removed once the JVM is gone (an exit hook cannot wait for it).
      if (basename(b.dataDir).startsWith('sluice-kafka-') && dirname(b.dataDir) === tmpdir()) {
        const script = `while kill -0 ${b.pid} 2>/dev/null; do sleep 0.2; done; rm -rf '${b.dataDir}'`;
        spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
      }
    }
  });
}

/**
 * The bootstrap address of the broker shared by the whole test run: the one run-tests.mjs started
 * (SLUICE_TEST_KAFKA_BROKERS), else one started on first use by this process and killed at exit.
 */
export async function sharedBrokers(): Promise<string> {
  const given = process.env[SHARED_BROKERS_ENV];
  if (given) return given;
  if (!ownShared) {
    installExitHook();
    ownShared = startBroker({ unref: true, log: (m) => console.error(`[kafka] ${m}`) });
    // Registered for the exit hook once started (an exit hook cannot await).
    void ownShared.then((b) => privateBrokers.add(b)).catch(() => {});
  }
  return (await ownShared).brokers;
}

/** Alias of sharedBrokers() for readers who look for a with-prefix. */
export const withSharedBroker = sharedBrokers;

/**
 * A broker of the caller's own, for tests that kill, pause or restart it. Call `stop()` in an
 * `after` hook; it is also SIGKILLed when the process exits.
 */
export async function startPrivateBroker(options: StartBrokerOptions = {}): Promise<Broker> {
  installExitHook();
  const broker = await startBroker({ unref: true, log: (m) => console.error(`[kafka] ${m}`), ...options });
  privateBrokers.add(broker);
  const stop = broker.stop.bind(broker);
  broker.stop = async (opts) => {
    await stop(opts);
    privateBrokers.delete(broker);
  };
  return broker;
}

/** A kafkajs client, quiet unless KAFKAJS_LOG is set (the broker's transient "loading" errors are noise). */
export function kafkaClient(brokers: string, clientId: string, config: Partial<KafkaConfig> = {}): Kafka {
  const level = process.env.KAFKAJS_LOG;
  return new Kafka({
    clientId,
    brokers: brokers.split(','),
    logLevel: level
      ? (logLevel[level.toUpperCase() as keyof typeof logLevel] ?? logLevel.INFO)
      : logLevel.NOTHING,
    retry: { retries: 10 },
    ...config,
  });
}

/** What a suite's tests produce with: the shared broker, a client, and an idempotent producer. */
export interface SuiteProducer {
  readonly brokers: string;
  readonly kafka: Kafka;
  readonly producer: Producer;
}

/** The shared broker's address, a client named `clientId` and a connected idempotent producer. */
export async function connectProducer(clientId: string): Promise<SuiteProducer> {
  const brokers = await sharedBrokers();
  const kafka = kafkaClient(brokers, clientId);
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return { brokers, kafka, producer };
}

/** A suite's producer (connected before its tests) and what its tests register to be cleaned up. */
export interface KafkaSuiteFixture extends SuiteProducer {
  readonly servers: { close(): Promise<void> }[];
  readonly dirs: string[];
}

/**
 * Inside a `describe`: connects a producer named `clientId` before the suite's tests; after them,
 * closes the servers they pushed, disconnects the producer and removes the data directories pushed.
 */
export function kafkaSuiteFixture(clientId: string): KafkaSuiteFixture {
  // The producer's fields are filled in by `before`, before any test reads them.
  const fixture = { servers: [], dirs: [] } as unknown as KafkaSuiteFixture;
  before(async () => {
    Object.assign(fixture, await connectProducer(clientId));
  });
  after(async () => {
    for (const s of fixture.servers) await s.close().catch(() => undefined);
    await (fixture.producer as Producer | undefined)?.disconnect();
    for (const d of fixture.dirs) removeDir(d);
  });
  return fixture;
}

/** A name unique to this run, so reruns against one broker never see each other's topics or groups. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Resolves when `condition()` holds; rejects after `timeoutMs` with `what` and the last value
 * described. Polls; the timeout is generous because it bounds a failure, not the expected case.
 */
export async function waitFor<T>(
  condition: () => T | undefined | false | Promise<T | undefined | false>,
  {
    timeoutMs = 60_000,
    intervalMs = 50,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await condition();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
