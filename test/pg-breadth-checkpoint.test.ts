// Views using stop 55's PostgreSQL forms (ISNULL/NOTNULL, LIKE … ESCAPE, COLLATE "C", OVERLAY,
// quote_ident / %I, (a, b) IS [NOT] NULL, a constant window frame offset) under random inserts and
// deletes over NULL-heavy rows: a view restored from a checkpoint continues exactly like the
// uninterrupted engine (their plan JSON round-trips), and after every batch each view equals the same
// view built from scratch over the current rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../src/common/types.ts';
import { type Rng, deriveSeed } from './support/random-workload.ts';
import { oneTableRoundTrip, type OneTableViews } from './support/restore-equivalence.ts';

const TABLE = 'CREATE TABLE t (id integer PRIMARY KEY, a integer, b integer, s text)';
const VIEWS = [
  `CREATE MATERIALIZED VIEW tests AS SELECT id, a ISNULL AS a_null, b NOTNULL AS b_set,
     (a, b) IS NULL AS none, (a, b) IS NOT NULL AS full_row, s LIKE 'x!%%' ESCAPE '!' AS pct,
     s ILIKE '#_%' ESCAPE '#' AS under FROM t WHERE s COLLATE "C" >= '' OR s ISNULL`,
  `CREATE MATERIALIZED VIEW texts AS SELECT id, overlay(s PLACING 'Z' FROM 2) AS o,
     quote_ident(s) AS q, format('%I.%s', s, a) AS f FROM t WHERE s NOTNULL`,
  `CREATE MATERIALIZED VIEW counts AS SELECT (a, b) IS NULL AS none, s LIKE '%!_%' ESCAPE '!' AS u,
     COUNT(*) AS c FROM t GROUP BY 1, 2`,
  `CREATE MATERIALIZED VIEW framed AS SELECT id, SUM(a) OVER (ORDER BY id ROWS BETWEEN 1 + 1 PRECEDING
     AND 3 % 2 FOLLOWING) AS near FROM t`,
];
const VIEW_NAMES = ['tests', 'texts', 'counts', 'framed'];

function randomRow(rng: Rng, id: number): Row {
  const maybe = <T>(v: () => T): T | null => (rng.chance(0.35) ? null : v());
  return {
    id,
    a: maybe(() => rng.int(-2, 3)),
    b: maybe(() => rng.int(0, 2)),
    s: maybe(() => rng.pick(['x%', 'x%y', '_a', 'A_', 'select', 'Foo', 'a"b', '', 'é', 'x!%'])),
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

test('views of the PostgreSQL forms restore from checkpoints and always equal a rebuild', () => {
  let sets = 0;
  const seeds = [0, 1, 2].map((i) => deriveSeed(5555, i));
  for (const seed of seeds) sets += oneTableRoundTrip(SPEC, seed);
  assert.ok(sets > 50, `only ${sets} change sets`);
  console.log(`pg forms checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`);
});
