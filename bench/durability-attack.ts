// The long durability attack: a real server killed with SIGKILL hundreds of times among ingest, DDL
// and checkpoints, checked after every restart (test/support/durability-run.ts says what is checked).
//
//   node --import tsx bench/durability-attack.ts [--kills 200] [--seed n] [--journal-every 10]
//     [--journal-retention-seconds 1] [--durable-interval-ms 0] [--power-loss] [--power-loss-every 2]
//
// --journal-retention-seconds n: the server deletes journal batches a durable checkpoint covers once
// n seconds old (0, the default here, keeps the whole journal); --durable-interval-ms: how often the
// checkpoint writer thread makes a durable point (the test-only SLUICE_DURABLE_CHECKPOINT_INTERVAL_MS;
// the server's default is 10 minutes); --power-loss: builds bench/fsync-shadow.c with `cc`, preloads
// it, and every --power-loss-every kills starts a copy whose checkpoint.db is as of its last fsync.
// SLUICE_KEEP_DATA_DIR=1 keeps the run's data directory for inspection (a failure's error names it).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runDurabilityAttack } from '../test/support/durability-run.ts';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '200' },
    seed: { type: 'string' },
    'journal-every': { type: 'string', default: '10' },
    'journal-retention-seconds': { type: 'string', default: '0' },
    'durable-interval-ms': { type: 'string' },
    'power-loss': { type: 'boolean', default: false },
    'power-loss-every': { type: 'string', default: '2' },
  },
});

/** Builds the fsync shadow into a temporary directory; its path. */
function buildFsyncShadow(): string {
  const source = join(dirname(fileURLToPath(import.meta.url)), 'fsync-shadow.c');
  const out = join(mkdtempSync(join(tmpdir(), 'fsync-shadow-')), 'fsync-shadow.so');
  execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', out, source, '-ldl']);
  return out;
}

const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
const started = Date.now();
console.log(`seed ${seed}`);
const summary = await runDurabilityAttack({
  seed,
  kills: Number(values.kills),
  journalOnlyEvery: Number(values['journal-every']),
  journalRetentionSeconds: Number(values['journal-retention-seconds']),
  ...(values['durable-interval-ms'] !== undefined
    ? { durableIntervalMs: Number(values['durable-interval-ms']) }
    : {}),
  ...(values['power-loss']
    ? { fsyncShadow: buildFsyncShadow(), powerLossEvery: Number(values['power-loss-every']) }
    : {}),
  log: (line) => console.log(line),
});
console.log(JSON.stringify({ seed, ...summary, seconds: Math.round((Date.now() - started) / 1000) }));
