// Restart of a durable runtime whose views hold set operations (their row → left/right count state),
// a WITH query read twice and derived tables: reopened on the same data directory, the views are
// restored from the checkpoint plus the journal after it, equal to what they were, and later
// batches change them exactly as in an engine that never stopped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../../src/exec/engine.ts';
import { afterCrash, sortedRows } from './helpers.ts';

const SCHEMA = `CREATE TABLE l (id integer PRIMARY KEY, k integer, tag text);
CREATE TABLE r (id integer PRIMARY KEY, k integer, tag text);
CREATE MATERIALIZED VIEW both_sides AS SELECT k, tag FROM l INTERSECT ALL SELECT k, tag FROM r;
CREATE MATERIALIZED VIEW left_only AS SELECT k FROM l EXCEPT SELECT k FROM r;
CREATE MATERIALIZED VIEW everything AS SELECT k, tag FROM l UNION ALL SELECT k, tag FROM r UNION SELECT k, 'r' FROM r;
CREATE MATERIALIZED VIEW pairs AS WITH per AS (SELECT k, COUNT(*) AS n FROM (SELECT k FROM l UNION ALL SELECT k FROM r) u GROUP BY k) SELECT a.k, a.n, b.n AS next_n FROM per a LEFT JOIN per b ON b.k = a.k + 1`;
const VIEWS = ['both_sides', 'left_only', 'everything', 'pairs'];

type Row = { id: number; k: number | null; tag: string };

/** Deterministic batches: inserts of new ids and deletes of earlier ones, on both tables. */
function batches(count: number, seed: number): { table: string; insert: Row[]; delete: { id: number }[] }[] {
  let x = seed;
  const rnd = (n: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    return x % n;
  };
  const live: Record<string, number[]> = { l: [], r: [] };
  let next = 1;
  const out = [];
  for (let i = 0; i < count; i++) {
    const table = rnd(2) === 0 ? 'l' : 'r';
    const insert: Row[] = [];
    for (let j = rnd(4); j >= 0; j--) {
      const id = next++;
      // k 4 only in l, so left_only holds rows (with k in 0..4 on both sides, r soon covers every k).
      insert.push({ id, k: rnd(7) === 0 ? null : rnd(table === 'l' ? 5 : 4), tag: ['a', 'b', 'r'][rnd(3)]! });
      live[table]!.push(id);
    }
    const del: { id: number }[] = [];
    const ids = live[table]!;
    for (let j = rnd(3); j > 0 && ids.length > insert.length; j--) {
      del.push({ id: ids.splice(rnd(ids.length - insert.length), 1)[0]! });
    }
    out.push({ table, insert, delete: del });
  }
  return out;
}

test('set operation, WITH and derived table views survive a restart and go on like an uninterrupted engine', () => {
  const all = batches(120, 11);
  const reference = new Engine();
  reference.executeScript(SCHEMA);
  for (const b of all) reference.applyChanges(b.table, { insert: b.insert, delete: b.delete });
  const snapshot = (e: Engine): string[] =>
    VIEWS.map((v) => `${v}: ${sortedRows(e.viewSnapshot(v).rows).join(' ')}`);
  let checkpointEpoch = -1;
  let before: string[] = [];
  let epoch = -1;
  afterCrash(
    (first) => {
      first.executeScript(SCHEMA);
      for (const b of all.slice(0, 50)) first.ingest(b.table, { insert: b.insert, delete: b.delete });
      const stats = first.checkpoint();
      assert.ok(stats !== null, 'a checkpoint was written');
      checkpointEpoch = stats.epoch;
      for (const b of all.slice(50, 80)) first.ingest(b.table, { insert: b.insert, delete: b.delete });
      before = snapshot(first.engine);
      epoch = first.committedEpoch;
    },
    (again) => {
      assert.equal(again.recovery.checkpointEpoch, checkpointEpoch, 'recovered from the checkpoint');
      assert.equal(again.committedEpoch, epoch);
      assert.deepEqual(snapshot(again.engine), before, 'right after the restart');
      for (const b of all.slice(80)) again.ingest(b.table, { insert: b.insert, delete: b.delete });
      assert.deepEqual(snapshot(again.engine), snapshot(reference), 'after the batches that followed');
      const empty = VIEWS.filter((v) => reference.viewSnapshot(v).rows.length === 0);
      assert.deepEqual(empty, [], 'every view holds rows');
    },
  );
});
