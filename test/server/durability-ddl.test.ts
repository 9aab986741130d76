// The durability attack (test/support/durability-run.ts) in a bounded form: a real server killed
// with SIGKILL a few dozen times while a seeded driver mixes ingest, DML statements and DDL (joins,
// LEFT JOIN, Top-N per group, window functions, DISTINCT, HAVING, views over views, VALUES in FROM, a
// SQL function inlined into a view, a table created and dropped with CASCADE), SQL functions created,
// replaced and dropped, INSERT … VALUES and INSERT … SELECT, writes the server must refuse
// (EPOCH_TOO_LARGE, VIEW_TOO_LARGE, RESULT_TOO_LARGE) and query subscriptions' temporary views under
// frequent checkpoints; some lives are killed while they start. After every restart the catalog and tables
// equal what was acknowledged, every view equals SQLite, resumed subscribers saw no gap or
// duplicate, and every sixth restart (and the last) a copy replayed from the journal alone gives the same state.
//
//   SLUICE_SEED=<n>              replay one run (a failure prints its seed)
//   SLUICE_DURABILITY_KILLS=<n>  kills (default 12); the long run: bench/durability-attack.ts
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDurabilityAttack } from '../support/durability-run.ts';

const SEED = process.env.SLUICE_SEED !== undefined ? Number(process.env.SLUICE_SEED) : Date.now() % 1_000_000;
const KILLS = Number(process.env.SLUICE_DURABILITY_KILLS ?? 12);
const JOURNAL_EVERY = 6;
// Past one checkpoint slice's 8,192 entries (SLICE_ENTRIES), so a full checkpoint takes two or more.
const BIG_ROWS = 9000;

test(
  `kill -9 among ingest, DDL and checkpoints keeps every acknowledged change (seed ${SEED})`,
  { timeout: 300_000 },
  async () => {
    const summary = await runDurabilityAttack({
      seed: SEED,
      kills: KILLS,
      journalOnlyEvery: JOURNAL_EVERY,
      bigRows: BIG_ROWS,
    });
    assert.ok(summary.kills >= KILLS, `${summary.kills} kills`);
    assert.ok(summary.ddlStatements > 0, 'some DDL ran');
    assert.ok(summary.journalOnlyComparisons >= 1, 'the journal alone was compared');
  },
);
