// UNIQUE constraints against SQLite: random batches of deletes and inserts on a table with a
// one-column and a two-column UNIQUE constraint, over small value domains with NULLs so batches
// collide often. SQLite checks UNIQUE row by row, but in a transaction that deletes first and then
// inserts (ROLLBACK on the first violation) a conflict among inserts exists at some row exactly when
// it exists at the end, so the two must accept exactly the same batches and hold the same rows.
// UPDATE is left out: there SQLite's row-by-row check and Sluice's end-of-statement check differ.
// SLUICE_SEED=<n> replays one seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Engine, SluiceError } from '../src/index.ts';
import type { Row, Value } from '../src/common/types.ts';
import { Rng } from './support/random-workload.ts';

const DDL = 'CREATE TABLE t (a INTEGER UNIQUE, b INTEGER, c INTEGER, UNIQUE (b, c))';
const BATCHES = 150;

function canonical(rows: readonly Row[]): string[] {
  return rows.map((r) => JSON.stringify([r['a'] ?? null, r['b'] ?? null, r['c'] ?? null])).sort();
}

function run(seed: number): { accepted: number; rejected: number } {
  const rng = new Rng(seed);
  const engine = new Engine();
  engine.execute(DDL);
  const db = new Database(':memory:');
  db.exec(DDL);
  const del = db.prepare(
    'DELETE FROM t WHERE rowid = (SELECT rowid FROM t WHERE a IS ? AND b IS ? AND c IS ? LIMIT 1)',
  );
  const ins = db.prepare('INSERT INTO t (a, b, c) VALUES (?, ?, ?)');
  const value = (max: number): Value => (rng.chance(0.25) ? null : rng.int(0, max));
  let accepted = 0;
  let rejected = 0;
  for (let batch = 0; batch < BATCHES; batch++) {
    const current = engine.tableRows('t');
    const deletes: Row[] = [];
    for (const row of current) if (rng.chance(0.15)) deletes.push(row);
    const inserts: Row[] = [];
    const n = rng.int(0, 4);
    for (let i = 0; i < n; i++) {
      // Sometimes re-insert a value a delete of this batch frees.
      const freed = deletes.length > 0 && rng.chance(0.3) ? rng.pick(deletes) : null;
      inserts.push(freed !== null ? { ...freed } : { a: value(30), b: value(4), c: value(4) });
    }
    const where = `seed ${seed}, batch ${batch}: ${JSON.stringify({ deletes, inserts })}`;

    let engineOk = true;
    try {
      engine.applyChanges('t', { delete: deletes, insert: inserts });
    } catch (error) {
      assert.ok(
        error instanceof SluiceError && error.code === 'UNIQUE_VIOLATION',
        `${where}: ${String(error)}`,
      );
      engineOk = false;
    }
    let sqliteOk = true;
    db.exec('BEGIN');
    try {
      for (const r of deletes) del.run(r['a'] ?? null, r['b'] ?? null, r['c'] ?? null);
      for (const r of inserts) ins.run(r['a'] ?? null, r['b'] ?? null, r['c'] ?? null);
      db.exec('COMMIT');
    } catch (error) {
      assert.match(String(error), /UNIQUE constraint failed/, where);
      db.exec('ROLLBACK');
      sqliteOk = false;
    }
    assert.equal(engineOk, sqliteOk, `${where}: Sluice ${engineOk ? 'accepted' : 'rejected'} it`);
    if (engineOk) accepted++;
    else rejected++;
    const sqliteRows = db.prepare('SELECT a, b, c FROM t').all() as Row[];
    assert.deepEqual(canonical(engine.tableRows('t')), canonical(sqliteRows), where);
  }
  db.close();
  return { accepted, rejected };
}

test('UNIQUE: the engine accepts exactly the batches SQLite accepts, and holds the same rows', () => {
  const one = process.env['SLUICE_SEED'];
  const seeds = one !== undefined ? [Number(one)] : Array.from({ length: 20 }, (_, i) => 1000 + i);
  let accepted = 0;
  let rejected = 0;
  for (const seed of seeds) {
    const r = run(seed);
    accepted += r.accepted;
    rejected += r.rejected;
  }
  console.log(`unique-oracle: ${seeds.length} seeds, ${accepted} batches accepted, ${rejected} rejected`);
  // Both outcomes must be common, or the comparison says little.
  assert.ok(accepted > seeds.length * 20, `only ${accepted} batches accepted`);
  assert.ok(rejected > seeds.length * 20, `only ${rejected} batches rejected`);
});
