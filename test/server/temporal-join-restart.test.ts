// Restart of a durable runtime whose views hold temporal joins (`FOR SYSTEM_TIME AS OF PROCTIME()`):
// their output depends on when each left row arrived relative to the right side's changes, so only
// the journal's epochs in order, or a checkpoint of the join's state, can give it back. Reopened
// from the checkpoint plus the journal after it (every replayed epoch checked against the stored
// changelog), and from the whole journal alone, the views are what they were, and later batches
// change them exactly as in an engine that never stopped.
import assert from 'node:assert/strict';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../src/exec/engine.ts';
import type { Row } from '../../src/common/types.ts';
import { openRuntime, removeDir, sortedRows, tempDir } from './helpers.ts';

const AS_OF = 'FOR SYSTEM_TIME AS OF PROCTIME()';
const SCHEMA = `CREATE TABLE bid (id integer PRIMARY KEY, auction integer NOT NULL, price integer NOT NULL);
CREATE TABLE clicks (auction integer NOT NULL, n integer NOT NULL);
CREATE TABLE side (key integer PRIMARY KEY, value text);
CREATE MATERIALIZED VIEW q13 AS SELECT B.id, B.price, S.value FROM bid B JOIN side ${AS_OF} S ON mod(B.auction, 5) = S.key;
CREATE MATERIALIZED VIEW q13_left AS SELECT B.id, S.value FROM bid B LEFT JOIN side ${AS_OF} AS S ON B.auction = S.key;
CREATE MATERIALIZED VIEW clicked AS SELECT c.auction, c.n, S.value FROM clicks c JOIN side ${AS_OF} S ON c.auction = S.key`;
const VIEWS = ['q13', 'q13_left', 'clicked'];

interface Batch {
  readonly table: string;
  readonly insert: Row[];
  readonly delete: Row[];
}

/** Deterministic batches on all three tables: the side input changes value often, bids come and go. */
function batches(count: number, seed: number): Batch[] {
  let x = seed;
  const rnd = (n: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    return x % n;
  };
  const bids: { id: number; auction: number; price: number }[] = [];
  const clicks: { auction: number; n: number }[] = [];
  const side = new Map<number, string>();
  let next = 1;
  const out: Batch[] = [];
  for (let i = 0; i < count; i++) {
    const which = rnd(3);
    if (which === 0) {
      const key = rnd(6);
      const old = side.get(key);
      const value = `v${i}`;
      const del = old === undefined ? [] : [{ key }];
      if (rnd(4) === 0 && old !== undefined) {
        side.delete(key);
        out.push({ table: 'side', insert: [], delete: del });
      } else {
        side.set(key, value);
        out.push({ table: 'side', insert: [{ key, value }], delete: del });
      }
    } else if (which === 1) {
      const insert = [{ id: next++, auction: rnd(8), price: rnd(100) }];
      const del = bids.length > 3 && rnd(2) === 0 ? bids.splice(rnd(bids.length), 1) : [];
      bids.push(...insert);
      out.push({ table: 'bid', insert, delete: del.map((b) => ({ id: b.id })) });
    } else {
      // Keyless: copies of one row, retracted oldest first.
      const insert = [{ auction: rnd(6), n: rnd(2) }];
      const del = clicks.length > 3 && rnd(2) === 0 ? clicks.splice(rnd(clicks.length), 1) : [];
      clicks.push(...insert);
      out.push({ table: 'clicks', insert, delete: del });
    }
  }
  return out;
}

const snapshot = (e: Engine): string[] =>
  VIEWS.map((v) => `${v}: ${sortedRows(e.viewSnapshot(v).rows).join(' ')}`);

for (const from of ['the checkpoint and the journal after it', 'the whole journal'] as const) {
  test(`temporal join views restart from ${from} and go on like an uninterrupted engine`, () => {
    const dir = tempDir();
    const crashed = tempDir();
    const all = batches(150, 7);
    const reference = new Engine();
    reference.executeScript(SCHEMA);
    for (const b of all) reference.applyChanges(b.table, { insert: b.insert, delete: b.delete });
    try {
      const first = openRuntime(dir);
      first.executeScript(SCHEMA);
      for (const b of all.slice(0, 60)) first.ingest(b.table, { insert: b.insert, delete: b.delete });
      const stats = first.checkpoint();
      assert.ok(stats !== null, 'a checkpoint was written');
      for (const b of all.slice(60, 100)) first.ingest(b.table, { insert: b.insert, delete: b.delete });
      const before = snapshot(first.engine);
      const epoch = first.committedEpoch;
      // As if killed now: the files as they are, without the checkpoint a clean close writes.
      first.flush();
      cpSync(dir, crashed, { recursive: true });
      first.close();
      if (from === 'the whole journal') rmSync(join(crashed, 'checkpoint.db'), { force: true });

      const again = openRuntime(crashed);
      try {
        if (from === 'the whole journal') assert.equal(again.recovery.checkpointEpoch, null);
        else {
          assert.equal(again.recovery.checkpointEpoch, stats.epoch, 'recovered from the checkpoint');
          assert.equal(again.recovery.fallbackReason, null);
          assert.deepEqual(again.recovery.rebuiltViews, []);
        }
        assert.equal(again.committedEpoch, epoch);
        assert.deepEqual(snapshot(again.engine), before, 'right after the restart');
        for (const b of all.slice(100)) again.ingest(b.table, { insert: b.insert, delete: b.delete });
        assert.deepEqual(snapshot(again.engine), snapshot(reference), 'after the batches that followed');
        assert.ok(
          snapshot(reference).every((line) => line.length > 40),
          'the views hold rows',
        );
      } finally {
        again.close();
      }
    } finally {
      removeDir(dir);
      removeDir(crashed);
    }
  });
}
