// Runs every test file explicitly: node 20's `node --test <dir>` can run zero tests and exit 0,
// so we expand the list ourselves, refuse an empty list, and check the runner's own count.
// When a selected file is under test/kafka/, one real Kafka broker is started first for the whole
// run (address in SLUICE_TEST_KAFKA_BROKERS) and stopped at the end, also on failure or a signal.
import { readdirSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { spawn } from 'node:child_process';

const roots = ['src', 'test'];
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.test.ts')) files.push(path);
  }
}
for (const root of roots) walk(root);
const only = process.argv.slice(2);
const selected = only.length > 0 ? files.filter((f) => only.some((o) => f.includes(o))) : files;
if (selected.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
console.log(`run-tests: ${selected.length} test files`);

const env = { ...process.env };
let broker = null;
if (selected.some((f) => f.startsWith(join('test', 'kafka') + sep))) {
  const { kafkaPrerequisites, startBroker } = await import('../tools/kafka/broker.mjs');
  const pre = kafkaPrerequisites();
  if (!pre.ok) {
    // Each Kafka suite then skips itself loudly, or fails under CI=true (test/support/kafka.ts).
    console.error(`run-tests: no shared Kafka broker: ${pre.missing.join(' and ')} missing on PATH`);
  } else {
    try {
      broker = await startBroker({ log: (m) => console.log(`run-tests: ${m}`) });
    } catch (err) {
      console.error(
        `run-tests: the shared Kafka broker did not start: ${err instanceof Error ? err.message : err}`,
      );
      process.exit(1);
    }
    env.SLUICE_TEST_KAFKA_BROKERS = broker.brokers;
  }
}

// One stop, however many callers (a signal and the runner's close both await the same one, so
// neither exits before the broker is gone and its data dir removed).
let stopping = null;
function stopBroker() {
  stopping ??= broker ? broker.stop() : Promise.resolve(); // SIGTERM, then SIGKILL after a grace period
  return stopping;
}
// On a signal: pass it to the test runner, stop the broker, then exit as signalled.
let child = null;
let signalled = 0;
for (const [signal, number] of [
  ['SIGINT', 2],
  ['SIGTERM', 15],
  ['SIGHUP', 1],
]) {
  process.once(signal, () => {
    signalled = 128 + number;
    child?.kill(signal);
    stopBroker().finally(() => process.exit(signalled));
  });
}

child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...selected], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env,
});
// The runner's summary (ℹ pass N / ℹ fail N) can be followed by a long failure list, so remember
// the last summary lines seen rather than a tail of the output.
let pending = '';
let passLine = '';
let failLine = '';
let skipLine = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const lines = (pending + chunk.toString()).split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    if (/^ℹ pass \d+/.test(line)) passLine = line;
    if (/^ℹ fail \d+/.test(line)) failLine = line;
    if (/^ℹ skipped \d+/.test(line)) skipLine = line;
  }
});
child.on('close', async (code) => {
  await stopBroker();
  if (signalled) process.exit(signalled);
  const passMatch = /ℹ pass (\d+)/.exec(passLine);
  const failMatch = /ℹ fail (\d+)/.exec(failLine);
  const passed = passMatch ? Number(passMatch[1]) : 0;
  const failed = failMatch ? Number(failMatch[1]) : 0;
  const skipMatch = /ℹ skipped (\d+)/.exec(skipLine);
  const skipped = skipMatch ? Number(skipMatch[1]) : 0;
  // Suites skipped on purpose (e.g. Kafka without java, outside CI) are not "ran nothing".
  if (code === 0 && passed === 0 && skipped === 0) {
    console.error('run-tests: the runner reported zero passing tests');
    process.exit(1);
  }
  console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
  process.exit(code ?? 1);
});
