// The long durability attack: a real server killed with SIGKILL hundreds of times among ingest, DDL
// and checkpoints, checked after every restart (test/support/durability-run.ts says what is checked).
//
//   node --import tsx bench/durability-attack.ts [--kills 200] [--seed n] [--journal-every 10]
//
// SLUICE_KEEP_DATA_DIR=1 keeps the run's data directory for inspection (a failure's error names it).
import { parseArgs } from 'node:util';
import { runDurabilityAttack } from '../test/support/durability-run.ts';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '200' },
    seed: { type: 'string' },
    'journal-every': { type: 'string', default: '10' },
  },
});
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
const started = Date.now();
console.log(`seed ${seed}`);
const summary = await runDurabilityAttack({
  seed,
  kills: Number(values.kills),
  journalOnlyEvery: Number(values['journal-every']),
  log: (line) => console.log(line),
});
console.log(JSON.stringify({ seed, ...summary, seconds: Math.round((Date.now() - started) / 1000) }));
