// A real single-node Apache Kafka broker (KRaft, combined broker + controller) on loopback, run
// from the Maven Central jars in pom.xml — for tests and benchmarks. Plain Node ESM: a module
// (startBroker, fetchKafkaJars) and a CLI (`node tools/kafka/broker.mjs fetch|start|stop`).
// Invariants: the child pid IS the JVM (no wrapper shell, so SIGKILL/SIGSTOP hit the broker);
// a watchdog SIGKILLs the JVM if the process that started it dies without stopping it.
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const POM = join(here, 'pom.xml');
const LOG4J_CONFIG = join(here, 'log4j2.xml');
const MARKER = '.sluice-complete';
const STARTED_LINE = 'Kafka Server started';

/** The Kafka version pinned in pom.xml (the one source of truth). */
export const KAFKA_VERSION = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(readFileSync(POM, 'utf8'))?.[1];
if (!KAFKA_VERSION) throw new Error(`broker.mjs: no <kafka.version> in ${POM}`);

/** Where the jars are cached: $SLUICE_KAFKA_CACHE, else ~/.cache/sluice/kafka-<version> (outside the repo). */
export function kafkaLibsDir() {
  return resolve(
    process.env.SLUICE_KAFKA_CACHE || join(homedir(), '.cache', 'sluice', `kafka-${KAFKA_VERSION}`),
  );
}

function pomHash() {
  return createHash('sha256').update(readFileSync(POM)).digest('hex');
}

/** True when the jars are cached and complete (the marker is written last, after a full download). */
export function kafkaJarsPresent(dir = kafkaLibsDir()) {
  try {
    return readFileSync(join(dir, MARKER), 'utf8').trim() === pomHash();
  } catch {
    return false;
  }
}

function dirBytes(dir) {
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
  return total;
}

/**
 * Downloads the broker's jars with Maven into the cache folder, unless they are already there.
 * Downloads into a temporary sibling folder and renames it into place, so a half download
 * (interrupted, or a concurrent fetch) never looks complete.
 * @returns {{ dir: string, downloaded: boolean, ms: number, bytes: number, jars: number }}
 */
export function fetchKafkaJars({ log = () => {} } = {}) {
  const dir = kafkaLibsDir();
  const t0 = Date.now();
  if (kafkaJarsPresent(dir)) {
    return { dir, downloaded: false, ms: 0, bytes: dirBytes(dir), jars: countJars(dir) };
  }
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(3).toString('hex')}`;
  log(`fetching Kafka ${KAFKA_VERSION} jars with Maven into ${dir}`);
  const mvn = spawnSync(
    'mvn',
    ['-B', '-q', '-f', POM, 'dependency:copy-dependencies', `-Dkafka.libs.dir=${tmp}`],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (mvn.error || mvn.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    const why = mvn.error ? mvn.error.message : `exit ${mvn.status}`;
    const out = `${mvn.stdout ?? ''}${mvn.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n');
    throw new Error(`maven could not fetch the Kafka jars (${why})\n${out}`);
  }
  writeFileSync(join(tmp, MARKER), `${pomHash()}\n`);
  if (kafkaJarsPresent(dir)) {
    rmSync(tmp, { recursive: true, force: true }); // another process finished first
  } else {
    rmSync(dir, { recursive: true, force: true }); // a stale or half-filled folder
    renameSync(tmp, dir);
  }
  return { dir, downloaded: true, ms: Date.now() - t0, bytes: dirBytes(dir), jars: countJars(dir) };
}

function countJars(dir) {
  return readdirSync(dir).filter((n) => n.endsWith('.jar')).length;
}

function runs(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 30_000 });
  return !r.error && r.status === 0;
}

/**
 * What a real broker needs on this machine: java always; mvn only while the jars are not cached.
 * @returns {{ ok: boolean, missing: string[] }}
 */
export function kafkaPrerequisites() {
  const missing = [];
  if (!runs('java', ['-version'])) missing.push('java');
  if (!kafkaJarsPresent() && !runs('mvn', ['-v'])) missing.push('mvn');
  return { ok: missing.length === 0, missing };
}

/** A free TCP port on 127.0.0.1 (the OS picks it; a short race with other processes remains). */
export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? res(addr.port) : rej(new Error('no port'))));
    });
  });
}

/** A KRaft cluster id: URL-safe base64 of 16 random bytes that does not start with '-'. */
export function newClusterId() {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function serverProperties({ logDir, port, controllerPort, serverProps }) {
  const props = {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': logDir,
    'num.partitions': '1',
    'offsets.topic.replication.factor': '1',
    'offsets.topic.num.partitions': '1',
    'transaction.state.log.replication.factor': '1',
    // Defaults to 2, which makes every transaction fail on a single broker.
    'transaction.state.log.min.isr': '1',
    'transaction.state.log.num.partitions': '1',
    'min.insync.replicas': '1',
    'group.initial.rebalance.delay.ms': '0',
    'auto.create.topics.enable': 'false',
    // After a SIGKILL the restarted broker's registration is refused (DUPLICATE_BROKER_REGISTRATION)
    // until the dead incarnation's session expires: 9 s by default, 4 s here.
    'broker.heartbeat.interval.ms': '500',
    'broker.session.timeout.ms': '4000',
    ...Object.fromEntries(Object.entries(serverProps ?? {}).map(([k, v]) => [k, String(v)])),
  };
  return `${Object.entries(props)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
}

function readTail(file, lines = 40) {
  try {
    const text = readFileSync(file, 'utf8');
    return text
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no broker log)';
  }
}

function javaArgs(libs, mainClass, args) {
  return [
    '-Xmx512m',
    '-XX:+UseSerialGC',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${LOG4J_CONFIG}`,
    '-cp',
    `${libs}/*`, // passed as one argument without a shell: Java expands the wildcard itself
    mainClass,
    ...args,
  ];
}

// SIGKILLs the JVM if our process dies first (a crashed, SIGKILLed or Ctrl-C'd test runner must
// not leave a broker behind), then removes the data dir when startBroker created it. Exits by
// itself, doing nothing, when the JVM goes first (stop, kill, or a crash the test wanted).
function spawnWatchdog(jvmPid, removeDir) {
  const rm = removeDir
    ? `n=0; while kill -0 ${jvmPid} 2>/dev/null && [ $n -lt 50 ]; do sleep 0.2; n=$((n+1)); done; rm -rf '${removeDir}'`
    : ':';
  const script =
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${jvmPid} 2>/dev/null; do sleep 1; done; ` +
    `if ! kill -0 ${process.pid} 2>/dev/null; then kill -9 ${jvmPid} 2>/dev/null; ${rm}; fi; exit 0`;
  const dog = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  dog.unref();
  return dog;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a broker. Every option is optional: a fresh temporary data dir (removed by stop()) and
 * free ports are used when not given.
 * @param {{ dataDir?: string, port?: number, controllerPort?: number,
 *           serverProps?: Record<string, string|number|boolean>, timeoutMs?: number,
 *           unref?: boolean, log?: (msg: string) => void }} [options]
 */
export async function startBroker(options = {}) {
  const { timeoutMs = 90_000, log = () => {} } = options;
  const { dir: libs } = fetchKafkaJars({ log });
  const ownDir = !options.dataDir;
  const dataDir = resolve(options.dataDir ?? mkdtempSync(join(tmpdir(), 'sluice-kafka-')));
  const logDir = join(dataDir, 'log');
  mkdirSync(logDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const controllerPort = options.controllerPort ?? (await freePort());
  const propsFile = join(dataDir, 'server.properties');
  const logFile = join(dataDir, 'broker.log');
  writeFileSync(
    propsFile,
    serverProperties({ logDir, port, controllerPort, serverProps: options.serverProps }),
  );

  if (!existsSync(join(logDir, 'meta.properties'))) {
    const fmt = spawnSync(
      'java',
      javaArgs(libs, 'kafka.tools.StorageTool', [
        'format',
        '-t',
        newClusterId(),
        '-c',
        propsFile,
        '--ignore-formatted',
      ]),
      { encoding: 'utf8', cwd: dataDir },
    );
    if (fmt.error || fmt.status !== 0) {
      const out = `${fmt.stdout ?? ''}${fmt.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
      throw new Error(`kafka storage format failed (${fmt.error?.message ?? `exit ${fmt.status}`})\n${out}`);
    }
  }

  let child = null;
  let exited = Promise.resolve();
  let paused = false;

  async function launch() {
    const fd = openSync(logFile, 'a');
    const from = statSync(logFile).size;
    const t0 = Date.now();
    const proc = spawn('java', javaArgs(libs, 'kafka.Kafka', [propsFile]), {
      cwd: dataDir,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    if (options.unref) proc.unref(); // the caller kills it at exit; it must not keep the process alive
    child = proc;
    paused = false;
    let exitInfo = null;
    exited = new Promise((res) => {
      proc.once('exit', (code, signal) => {
        exitInfo = { code, signal };
        if (child === proc) child = null;
        res();
      });
      proc.once('error', (err) => {
        exitInfo = { code: null, signal: null, err };
        if (child === proc) child = null;
        res();
      });
    });
    if (proc.pid) spawnWatchdog(proc.pid, ownDir && !process.env.SLUICE_KAFKA_KEEP ? dataDir : null);
    writeFileSync(join(dataDir, 'broker.pid'), `${proc.pid ?? ''}\n`);
    for (;;) {
      if (exitInfo) {
        const why = exitInfo.err
          ? exitInfo.err.message
          : `exit code ${exitInfo.code}, signal ${exitInfo.signal}`;
        throw new Error(
          `kafka broker exited during start-up (${why}); log ${logFile}:\n${readTail(logFile)}`,
        );
      }
      const text = readFileSync(logFile, 'utf8').slice(from);
      if (text.includes(STARTED_LINE)) break;
      if (Date.now() - t0 > timeoutMs) {
        proc.kill('SIGKILL');
        await exited;
        throw new Error(
          `kafka broker not started after ${timeoutMs} ms; log ${logFile}:\n${readTail(logFile)}`,
        );
      }
      await sleep(100);
    }
    const ms = Date.now() - t0;
    log(`kafka broker ${KAFKA_VERSION} pid ${proc.pid} on 127.0.0.1:${port} started in ${ms} ms`);
    return ms;
  }

  async function signalAndWait(signal, waitMs) {
    const proc = child;
    if (!proc) return true;
    proc.kill(signal);
    if (paused && signal !== 'SIGKILL') {
      proc.kill('SIGCONT'); // a stopped JVM handles SIGTERM only once it runs again
      paused = false;
    }
    let timer;
    const done = await Promise.race([
      exited.then(() => true),
      new Promise((r) => (timer = setTimeout(() => r(false), waitMs))),
    ]);
    clearTimeout(timer);
    return done;
  }

  let startMs;
  try {
    startMs = await launch();
  } catch (err) {
    if (ownDir && !process.env.SLUICE_KAFKA_KEEP) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }

  const broker = {
    brokers: `127.0.0.1:${port}`,
    port,
    controllerPort,
    dataDir,
    logFile,
    startMs,
    get pid() {
      return child?.pid ?? null;
    },
    get running() {
      return child !== null;
    },
    /** Clean shutdown (SIGTERM), SIGKILL after `graceMs`; removes a data dir startBroker created. */
    async stop({ graceMs = 20_000, keepData = false } = {}) {
      if (!(await signalAndWait('SIGTERM', graceMs))) await signalAndWait('SIGKILL', 10_000);
      if (ownDir && !keepData && !process.env.SLUICE_KAFKA_KEEP)
        rmSync(dataDir, { recursive: true, force: true });
    },
    /** A crash: SIGKILL, and wait until the process is gone. The data dir stays for restart(). */
    async kill() {
      await signalAndWait('SIGKILL', 10_000);
    },
    /** A stall: SIGSTOP (the JVM stops answering, its sockets stay open). */
    pause() {
      if (child) {
        child.kill('SIGSTOP');
        paused = true;
      }
    },
    resume() {
      if (child) {
        child.kill('SIGCONT');
        paused = false;
      }
    },
    /** Starts the broker again on the same data dir and ports (after stop({keepData}), kill(), or running). */
    async restart() {
      if (child && !(await signalAndWait('SIGTERM', 20_000))) await signalAndWait('SIGKILL', 10_000);
      broker.startMs = await launch();
      return broker.startMs;
    },
    /** The last lines of the broker's log, for error messages. */
    logTail(lines = 40) {
      return readTail(logFile, lines);
    },
  };
  return broker;
}

// ---- CLI ----------------------------------------------------------------------------------------

function parseFlags(argv) {
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else flags[a.slice(2)] = argv[++i];
  }
  return flags;
}

const USAGE = `usage: node tools/kafka/broker.mjs <command>
  fetch                                   download the jars into ${kafkaLibsDir()} (skipped when present)
  start [--data-dir D] [--port P] [--controller-port C]
                                          run a broker in the foreground until Ctrl-C / SIGTERM
  stop --data-dir D                       SIGTERM the broker whose pid is in D/broker.pid
  libs                                    print the jar folder`;

async function cli(argv) {
  const [cmd, ...rest] = argv;
  const log = (m) => console.error(`broker: ${m}`);
  if (cmd === 'fetch') {
    const r = fetchKafkaJars({ log });
    console.log(
      `${r.downloaded ? 'downloaded' : 'already present'}: ${r.jars} jars, ${(r.bytes / 1e6).toFixed(1)} MB in ${r.dir}` +
        (r.downloaded ? ` (${(r.ms / 1000).toFixed(1)} s)` : ''),
    );
  } else if (cmd === 'libs') {
    console.log(kafkaLibsDir());
  } else if (cmd === 'start') {
    const f = parseFlags(rest);
    const broker = await startBroker({
      dataDir: f['data-dir'],
      port: f.port ? Number(f.port) : undefined,
      controllerPort: f['controller-port'] ? Number(f['controller-port']) : undefined,
      log,
    });
    console.log(`BROKERS ${broker.brokers}`);
    console.log(
      `pid ${broker.pid}, data ${broker.dataDir}, log ${broker.logFile}, started in ${broker.startMs} ms`,
    );
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      log('stopping');
      await broker.stop({ keepData: Boolean(f['data-dir']) });
      process.exit(0);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  } else if (cmd === 'stop') {
    const f = parseFlags(rest);
    if (!f['data-dir']) throw new Error('stop needs --data-dir');
    const pid = Number(readFileSync(join(f['data-dir'], 'broker.pid'), 'utf8').trim());
    process.kill(pid, 'SIGTERM');
    console.log(`sent SIGTERM to ${pid}`);
  } else {
    console.error(USAGE);
    process.exit(cmd ? 2 : 0);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli(process.argv.slice(2)).catch((err) => {
    console.error(`broker: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  });
}
