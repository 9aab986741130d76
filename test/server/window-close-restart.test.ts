// Restart of a durable runtime holding EMIT ON WINDOW CLOSE views: reopened from the checkpoint plus
// the journal after it (as if killed), the views hold the same closed windows, the same open ones
// (held rows), the same counts of changes to closed windows, and go on exactly like an engine that
// never stopped — the same windows close at the same epochs (also with an ALLOWED LATENESS, which the
// catalog's DDL keeps across the restart).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../../src/exec/engine.ts';
import { Rng } from '../support/random-workload.ts';
import { afterCrash, sortedRows } from './helpers.ts';

const SCHEMA = `CREATE TABLE t (id integer PRIMARY KEY, k integer, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '4' SECOND);
CREATE MATERIALIZED VIEW tumbling AS SELECT window_end, k, COUNT(*) AS n FROM TUMBLE(t, ts, INTERVAL '10' SECOND) GROUP BY window_end, k EMIT ON WINDOW CLOSE;
CREATE MATERIALIZED VIEW hopping AS SELECT window_start, window_end, MAX(k) AS top FROM HOP(t, ts, INTERVAL '5' SECOND, INTERVAL '15' SECOND) GROUP BY window_start, window_end EMIT ON WINDOW CLOSE;
CREATE MATERIALIZED VIEW lated AS SELECT window_end, COUNT(*) AS n, SUM(k) AS s FROM TUMBLE(t, ts, INTERVAL '10' SECOND) GROUP BY window_end EMIT ON WINDOW CLOSE ALLOWED LATENESS INTERVAL '6' SECOND`;
const VIEWS = ['tumbling', 'hopping', 'lated'];

type Row = { id: number; k: number; ts: string };

const stamp = (sec: number): string =>
  new Date(Date.UTC(2024, 0, 1) + sec * 1000).toISOString().replace('T', ' ').slice(0, 19);

/** Deterministic batches: rising times with stragglers (some late), deletes of any earlier row. */
function batches(count: number, seed: number): { insert: Row[]; delete: { id: number }[] }[] {
  const rng = new Rng(seed);
  const rnd = (n: number): number => rng.int(0, n - 1);
  const live: number[] = [];
  let next = 1;
  let now = 0;
  let mark = -Infinity;
  const out = [];
  for (let i = 0; i < count; i++) {
    now += rnd(4);
    const insert: Row[] = [];
    let max = -Infinity;
    let added = 0;
    for (let j = rnd(3); j >= 0; j--) {
      const ts = Math.max(0, now - rnd(9));
      insert.push({ id: next, k: rnd(5), ts: stamp(ts) });
      // The table's rule (table-watermark.ts): below the watermark at the batch's start is late, dropped.
      if (ts >= mark) {
        live.push(next);
        added++;
        max = Math.max(max, ts);
      }
      next++;
    }
    mark = Math.max(mark, max - 4);
    const del: { id: number }[] = [];
    // Not this batch's own rows (a batch applies its deletes first).
    for (let j = rnd(3); j > 0 && live.length > added; j--) {
      del.push({ id: live.splice(rnd(live.length - added), 1)[0]! });
    }
    out.push({ insert, delete: del });
  }
  return out;
}

test('EMIT ON WINDOW CLOSE views survive a restart and close the same windows as an uninterrupted engine', () => {
  const all = batches(150, 7);
  const reference = new Engine();
  reference.executeScript(SCHEMA);
  for (const b of all) reference.applyChanges('t', b);
  const snapshot = (e: Engine): string[] => [
    ...VIEWS.map((v) => `${v}: ${sortedRows(e.viewSnapshot(v).rows).join(' ')}`),
    JSON.stringify(e.execute('SHOW WATERMARKS')[0]?.rows),
  ];
  let checkpointEpoch = -1;
  let before: string[] = [];
  let epoch = -1;
  afterCrash(
    (first) => {
      first.executeScript(SCHEMA);
      for (const b of all.slice(0, 60)) first.ingest('t', b);
      const stats = first.checkpoint();
      assert.ok(stats !== null, 'a checkpoint was written');
      checkpointEpoch = stats.epoch;
      for (const b of all.slice(60, 100)) first.ingest('t', b);
      before = snapshot(first.engine);
      epoch = first.committedEpoch;
    },
    (again) => {
      assert.equal(again.recovery.checkpointEpoch, checkpointEpoch, 'recovered from the checkpoint');
      assert.equal(again.committedEpoch, epoch);
      assert.deepEqual(snapshot(again.engine), before, 'right after the restart');
      for (const b of all.slice(100)) again.ingest('t', b);
      assert.deepEqual(snapshot(again.engine), snapshot(reference), 'after the batches that followed');
      const counts = reference.closingViews().map((v) => v.ignored);
      assert.ok(
        counts.every((n) => n > 0),
        `changes to closed windows were counted: ${counts.join(',')}`,
      );
      assert.ok(
        VIEWS.every((v) => reference.viewSnapshot(v).rows.length > 20),
        'the views hold closed windows',
      );
    },
  );
});
