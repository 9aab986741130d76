// Views with STRING_AGG OVER (running, ROWS frames around, after and to the end of the row, a NULL
// delimiter) under random inserts, updates and deletes anywhere in a partition: a view restored from
// a checkpoint (its Window state recomputed from the arranged rows) continues exactly like the
// uninterrupted engine, and after every batch each view equals the same view built from scratch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../src/common/types.ts';
import { type Rng, deriveSeed } from './support/random-workload.ts';
import { oneTableRoundTrip, type OneTableViews } from './support/restore-equivalence.ts';

const TABLE = 'CREATE TABLE t (id integer PRIMARY KEY, g integer, ts integer, s text)';
const VIEWS = [
  `CREATE MATERIALIZED VIEW running AS SELECT id, string_agg(s, ',') OVER (PARTITION BY g ORDER BY ts) AS r,
     string_agg(s, NULL) OVER (PARTITION BY g ORDER BY ts, id ROWS UNBOUNDED PRECEDING) AS so_far FROM t`,
  `CREATE MATERIALIZED VIEW framed AS SELECT id, string_agg(s, '-') OVER (PARTITION BY g ORDER BY ts, id
     ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) AS near, string_agg(s || '.', '') OVER (PARTITION BY g
     ORDER BY ts, id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS rest FROM t`,
  `CREATE MATERIALIZED VIEW whole AS SELECT id, string_agg(s, '|') OVER (ORDER BY id) AS all_so_far FROM t`,
];
const VIEW_NAMES = ['running', 'framed', 'whole'];

function randomRow(rng: Rng, id: number): Row {
  return {
    id,
    g: rng.chance(0.1) ? null : rng.int(0, 3),
    ts: rng.int(0, 8),
    s: rng.chance(0.25) ? null : rng.pick(['a', 'bc', '', 'é', "it's", 'x,y']),
  };
}

const SPEC: OneTableViews = {
  table: TABLE,
  views: VIEWS,
  viewNames: VIEW_NAMES,
  randomRow,
  batches: 40,
  restoreBetween: [10, 30],
  rebuildReversed: true,
};

test('STRING_AGG OVER views restore from checkpoints and always equal a rebuild', () => {
  let sets = 0;
  const seeds = [0, 1, 2].map((i) => deriveSeed(6161, i));
  for (const seed of seeds) sets += oneTableRoundTrip(SPEC, seed);
  assert.ok(sets > 50, `only ${sets} change sets`);
  console.log(
    `string_agg over checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`,
  );
});
