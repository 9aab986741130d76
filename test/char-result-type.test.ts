// COALESCE, CASE, GREATEST and LEAST whose first typed argument is char(n) are char, as PostgreSQL's
// select_common_type resolves them (each string type casts implicitly to each other, so the first
// typed one wins; CASE lists its ELSE first): a char(n) value keeps its padding beside text, a text
// value its trailing spaces, and both compare without them. NULLIF of char(n) and char(m) or a
// varchar(n) column keeps the padding (bpchareq), beside text it drops it (texteq). Such views get a
// new plan fingerprint, so state stored under the old typing is rebuilt; under random inserts and
// deletes they restore from checkpoints exactly and equal a rebuild. (Their answers against
// PostgreSQL 15: test/golden/char-result-type.slt.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../src/common/types.ts';
import { storedCheckpoint, trackedEngine, withFingerprints } from './support/aged-checkpoint.ts';
import { type Rng, deriveSeed } from './support/random-workload.ts';
import { oneTableRoundTrip, type OneTableViews } from './support/restore-equivalence.ts';

const TABLE = 'CREATE TABLE t (id integer PRIMARY KEY, c char(4), d char(2), v varchar(5), s text)';
const VIEWS = [
  `CREATE MATERIALIZED VIEW picked AS SELECT id, COALESCE(c, s) AS a, CASE WHEN id % 2 = 0 THEN s ELSE c END AS b,
     GREATEST(c, v, s) AS g, LEAST(c, d) AS l, NULLIF(c, d) AS n, NULLIF(c, s) AS m FROM t`,
  `CREATE MATERIALIZED VIEW counted AS SELECT octet_length(COALESCE(c, s)) AS o, COALESCE(c, v) = 'ab' AS e,
     length(GREATEST(c, s)) AS len, COUNT(*) AS k FROM t GROUP BY 1, 2, 3`,
];
const VIEW_NAMES = ['picked', 'counted'];
const TEXTS = ['', ' ', 'a', 'ab', 'ab ', 'ab  ', 'x', 'x ', 'b'];

function randomRow(rng: Rng, id: number): Row {
  const maybe = (max: number): string | null => {
    if (rng.chance(0.25)) return null;
    const s = rng.pick(TEXTS);
    return s.length > max ? s.slice(0, max) : s;
  };
  return { id, c: maybe(4), d: maybe(2), v: maybe(5), s: maybe(9) };
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

test('char-first COALESCE / CASE / GREATEST / NULLIF views restore from checkpoints and equal a rebuild', () => {
  let sets = 0;
  const seeds = [0, 1, 2].map((i) => deriveSeed(5757, i));
  for (const seed of seeds) sets += oneTableRoundTrip(SPEC, seed);
  assert.ok(sets > 30, `only ${sets} change sets`);
});

// The fingerprints these objects had before the change (computed on the commit before it, ea087b6).
const BEFORE = { ct: '93f1f6a363474af9', co: 'f6be49774b7069ea' };
const DDL = [
  'CREATE TABLE ct (k integer PRIMARY KEY, c char(5), s text)',
  'CREATE MATERIALIZED VIEW co AS SELECT octet_length(COALESCE(c, s)) AS o, COUNT(*) AS n FROM ct GROUP BY 1',
];

test('a view over char(n) stored under the old typing is rebuilt, then answers as PostgreSQL', () => {
  const original = trackedEngine(DDL);
  original.execute("INSERT INTO ct VALUES (1, 'ab', NULL), (2, NULL, 'ab'), (3, 'abc', 'x')");
  const { checkpoint: current, fingerprints } = storedCheckpoint(original);
  if (process.env.PRINT_FINGERPRINTS === '1') console.log(JSON.stringify(fingerprints));
  assert.equal(fingerprints.ct, BEFORE.ct);
  assert.notEqual(fingerprints.co, BEFORE.co);

  const restored = trackedEngine(DDL);
  assert.deepEqual([...restored.loadCheckpoint(withFingerprints(current, BEFORE)).rebuilt], ['co']);
  const rows = (): string[] => restored.viewSnapshot('co').rows.map((r) => JSON.stringify(Object.values(r)));
  // PostgreSQL 15: COALESCE(c, s) is bpchar, c's padding kept (octet_length 5), s's value as it is.
  assert.deepEqual(rows().sort(), ['[2,1]', '[5,2]']);
  restored.execute('DELETE FROM ct WHERE k = 3');
  assert.deepEqual(rows().sort(), ['[2,1]', '[5,1]']);
});
