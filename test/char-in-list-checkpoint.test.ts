// Views whose char(n) comparisons PostgreSQL types item by item (an IN list beside text columns and
// typed-text constants, char(n) beside a varchar(n) column, NULLIF) under random inserts and deletes
// with padded and NULL values: a view restored from a checkpoint continues exactly like the
// uninterrupted engine, and after every batch each view equals the same view built from scratch.
// (Their answers against PostgreSQL 15: test/golden/char-in-list.slt and char-varchar.slt.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../src/common/types.ts';
import { type Rng, deriveSeed } from './support/random-workload.ts';
import { oneTableRoundTrip, type OneTableViews } from './support/restore-equivalence.ts';

const TABLE = 'CREATE TABLE t (id integer PRIMARY KEY, c char(4), v varchar(5), s text)';
const VIEWS = [
  `CREATE MATERIALIZED VIEW listed AS SELECT id, c FROM t
     WHERE c IN ('ab '::text, 'x'::text) OR c IN (s, 'y ') OR c IN (v)`,
  `CREATE MATERIALIZED VIEW outside AS SELECT c NOT IN ('ab '::text, upper('x ')) AS o,
     c = v AS eq, NULLIF(c, v) ISNULL AS n, COUNT(*) AS k FROM t GROUP BY 1, 2, 3`,
  `CREATE MATERIALIZED VIEW paired AS SELECT l.id, r.id AS rid FROM t l JOIN t r ON l.c = r.v`,
];
const VIEW_NAMES = ['listed', 'outside', 'paired'];
const TEXTS = ['', ' ', 'ab', 'ab ', 'ab  ', 'x', 'x ', 'X', 'y', 'y  '];

function randomRow(rng: Rng, id: number): Row {
  const maybe = (): string | null => (rng.chance(0.25) ? null : rng.pick(TEXTS));
  return { id, c: maybe(), v: maybe(), s: maybe() };
}

const SPEC: OneTableViews = {
  table: TABLE,
  views: VIEWS,
  viewNames: VIEW_NAMES,
  randomRow,
  batches: 30,
  restoreBetween: [8, 22],
  rebuildReversed: true,
};

test('char(n) IN / varchar views restore from checkpoints and always equal a rebuild', () => {
  let sets = 0;
  const seeds = [0, 1, 2].map((i) => deriveSeed(5656, i));
  for (const seed of seeds) sets += oneTableRoundTrip(SPEC, seed);
  assert.ok(sets > 30, `only ${sets} change sets`);
  console.log(`char in-list checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
});
