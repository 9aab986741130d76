// Views reading VALUES in FROM across a kill -9: the constant rows are emitted once, when the view is
// built, and live on only in the view's state. Reopened from a checkpoint plus the journal after it,
// or from the journal alone, the views equal what they were and go on like an engine that never
// stopped (a constant relation that came back empty, or twice, would show in every one of them).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../../src/exec/engine.ts';
import { afterCrash, sortedRows } from './helpers.ts';

const SCHEMA = `CREATE TABLE o (id integer PRIMARY KEY, st text, qty integer);
CREATE MATERIALIZED VIEW labelled AS SELECT o.id, s.label FROM o JOIN (VALUES ('n', 'new'), ('s', 'shipped'), ('s', 'sent')) AS s(code, label) ON o.st = s.code;
CREATE MATERIALIZED VIEW per_state AS SELECT s.code, COUNT(o.id) AS n, SUM(o.qty) AS qty FROM (VALUES ('n'), ('s'), ('x')) AS s(code) LEFT JOIN o ON o.st = s.code GROUP BY s.code;
CREATE MATERIALIZED VIEW constant AS SELECT COUNT(*) AS n, SUM(column1) AS total FROM (VALUES (1), (2), (2), (NULL));
CREATE MATERIALIZED VIEW codes AS SELECT st FROM o UNION SELECT column1 FROM (VALUES ('n'), ('z')) AS v`;
const VIEWS = ['labelled', 'per_state', 'constant', 'codes'];

type Batch = { insert: { id: number; st: string | null; qty: number }[]; delete: { id: number }[] };

function batches(count: number): Batch[] {
  let x = 7;
  const rnd = (n: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    return x % n;
  };
  const live: number[] = [];
  let next = 1;
  const out: Batch[] = [];
  for (let i = 0; i < count; i++) {
    const insert = [];
    for (let j = rnd(4); j >= 0; j--) {
      insert.push({ id: next, st: [null, 'n', 's', 'x', 'q'][rnd(5)]!, qty: rnd(10) });
      live.push(next++);
    }
    const del: { id: number }[] = [];
    for (let j = rnd(3); j > 0 && live.length > insert.length; j--) {
      del.push({ id: live.splice(rnd(live.length - insert.length), 1)[0]! });
    }
    out.push({ insert, delete: del });
  }
  return out;
}

const snapshot = (e: Engine): string[] =>
  VIEWS.map((v) => `${v}: ${sortedRows(e.viewSnapshot(v).rows).join(' ')}`);

for (const withCheckpoint of [true, false]) {
  test(`views over VALUES in FROM come back from ${withCheckpoint ? 'a checkpoint and the journal' : 'the journal alone'} and go on exactly`, () => {
    const all = batches(90);
    const reference = new Engine();
    reference.executeScript(SCHEMA);
    for (const b of all) reference.applyChanges('o', b);
    let before: string[] = [];
    afterCrash(
      (first) => {
        first.executeScript(SCHEMA);
        for (const b of all.slice(0, 40)) first.ingest('o', b);
        if (withCheckpoint) assert.ok(first.checkpoint() !== null, 'a checkpoint was written');
        for (const b of all.slice(40, 60)) first.ingest('o', b);
        before = snapshot(first.engine);
      },
      (again) => {
        assert.equal(
          again.recovery.checkpointEpoch !== null && again.recovery.checkpointEpoch >= 0,
          withCheckpoint,
        );
        assert.deepEqual(snapshot(again.engine), before, 'right after the restart');
        for (const b of all.slice(60)) again.ingest('o', b);
        assert.deepEqual(snapshot(again.engine), snapshot(reference), 'after the batches that followed');
      },
    );
    assert.equal(snapshot(reference)[2], 'constant: [["n",4],["total",5]]');
    assert.match(snapshot(reference)[1]!, /\["code","x"\]/, 'the left join keeps a code no order has');
  });
}
