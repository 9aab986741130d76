// A kill -9 in the middle of a journal retention slice (crash point `during-journal-trim`: batches
// deleted, the slice's transaction not committed): the next start finds the journal as before the
// slice, recovers the same views, and retention goes on from there; a later restart after the
// truncation (from its checkpoint) gives the same views again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Engine } from '../../src/index.ts';
import type { Row } from '../../src/common/types.ts';
import { killHard, metricValue, spawnCrashable, type CrashableServer } from '../support/crash-harness.ts';
import { canonicalRows } from '../support/sqlite-oracle.ts';
import { removeDir, request, sqlOk, tempDir, viewRowsAtOneEpoch } from './helpers.ts';

const DDL = [
  'CREATE TABLE orders (id BIGINT PRIMARY KEY, seller INTEGER NOT NULL, amount INTEGER NOT NULL)',
  'CREATE MATERIALIZED VIEW totals AS SELECT seller, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY seller',
];
const ARGS = ['--journal-retention-seconds', '1', '--checkpoint-interval-ms', '100'];

function batch(i: number): Row[] {
  return [0, 1, 2].map((k) => ({ id: i * 3 + k, seller: (i + k) % 5, amount: (i * 7 + k) % 50 }));
}

async function start(dir: string, env: Record<string, string> = {}, args = ARGS): Promise<CrashableServer> {
  const outcome = await spawnCrashable(dir, { args, env });
  assert.equal(outcome.kind, 'listening', outcome.kind === 'exited' ? outcome.output : '');
  return (outcome as { server: CrashableServer }).server;
}

async function assertTotals(base: string, reference: Engine): Promise<void> {
  const snap = reference.viewSnapshot('totals');
  const rest = await viewRowsAtOneEpoch(base, 'totals');
  assert.equal(rest.epoch, reference.epoch);
  assert.deepEqual(canonicalRows(snap.columns, rest.rows as Row[]), canonicalRows(snap.columns, snap.rows));
}

function journal(dir: string): { batches: number; ddl: number; through: string | null } {
  const db = new Database(join(dir, 'sluice.db'), { readonly: true });
  try {
    const row = db
      .prepare(
        "SELECT SUM(kind = 'ddl') AS ddl, SUM(kind = 'batch' AND target IS NOT NULL) AS batches FROM journal",
      )
      .get() as { ddl: number; batches: number };
    const meta = db.prepare("SELECT value FROM meta WHERE key = 'journal_truncated_through'").get() as
      { value: string } | undefined;
    return { ...row, through: meta?.value ?? null };
  } finally {
    db.close();
  }
}

test('a kill -9 inside a journal retention slice loses nothing; the slice is done again after the restart', async () => {
  const dir = tempDir();
  const reference = new Engine();
  reference.execute(DDL.join(';\n'));
  let server: CrashableServer | undefined;
  const BATCHES = 40;
  try {
    // Written with a long retention, stopped gracefully (a checkpoint covering every batch).
    server = await start(dir, {}, ['--journal-retention-seconds', '3600']);
    await sqlOk(server.base, DDL.join(';\n'));
    for (let i = 0; i < BATCHES; i++) {
      const r = await request(server.base, 'POST', '/v1/tables/orders/rows', batch(i));
      assert.equal(r.status, 200, r.text);
      reference.applyChanges('orders', { insert: batch(i) });
    }
    server.child.kill('SIGTERM');
    await server.exited;
    await new Promise((r) => setTimeout(r, 1100));

    // With a one-second retention every batch is due at the first prune, and the first slice dies
    // before its COMMIT (no write runs meanwhile: what the journal holds after is unambiguous).
    const crashed = await spawnCrashable(dir, {
      args: ARGS,
      env: { SLUICE_CRASH_POINT: 'during-journal-trim' },
    });
    const exit =
      crashed.kind === 'exited'
        ? crashed
        : await Promise.race([
            crashed.server.exited,
            new Promise<null>((r) => setTimeout(() => r(null), 30_000).unref()),
          ]);
    const output = crashed.kind === 'exited' ? crashed.output : crashed.server.output();
    assert.ok(exit !== null && exit.signal === 'SIGKILL', `killed at the crash point:\n${output}`);
    assert.match(output, /crash point "during-journal-trim" reached/);
    const afterCrash = journal(dir);
    assert.equal(afterCrash.batches, BATCHES, 'the slice was rolled back whole');
    assert.equal(afterCrash.through, null);

    server = await start(dir);
    await assertTotals(server.base, reference);
    // Retention runs again (every prune tick) and now commits.
    const deadline = Date.now() + 30_000;
    const deleted = async (): Promise<number> =>
      metricValue(
        (await request(server?.base ?? '', 'GET', '/metrics')).text,
        'sluice_journal_batches_deleted_total',
      ) ?? 0;
    while ((await deleted()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await killHard(server);
    const trimmed = journal(dir);
    assert.ok(trimmed.through !== null, 'retention deleted batches after the restart');
    assert.ok(trimmed.batches < BATCHES, `${trimmed.batches} batches left`);
    assert.equal(trimmed.ddl, 2, 'DDL kept');

    // A restart after the truncation (killed again: from the checkpoint and the tail).
    server = await start(dir);
    await assertTotals(server.base, reference);
  } finally {
    await killHard(server);
    removeDir(dir);
  }
});
