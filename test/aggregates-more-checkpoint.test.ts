// BOOL_AND/BOOL_OR/EVERY, the variance family, STRING_AGG (also with ORDER BY), JSONB_AGG and MIN/MAX under random inserts and deletes of numeric values of
// every scale, huge bigints and floats (NaN, infinities, 1e20 beside 0.1): a view restored from a
// checkpoint continues exactly like the uninterrupted engine, and after every batch each view equals,
// digit for digit, the same view built from scratch over the current rows (retraction leaves no trace).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../src/common/types.ts';
import { type Rng, deriveSeed } from './support/random-workload.ts';
import { oneTableRoundTrip, type OneTableViews } from './support/restore-equivalence.ts';

const TABLE =
  'CREATE TABLE t (id integer PRIMARY KEY, g integer, b boolean, i bigint, n numeric, f double precision)';
const VIEWS = [
  'CREATE MATERIALIZED VIEW flags AS SELECT g, BOOL_AND(b) AS a, BOOL_OR(b) AS o, EVERY(i > 0) AS e FROM t GROUP BY g',
  'CREATE MATERIALIZED VIEW ints AS SELECT g, VAR_POP(i) AS vp, VAR_SAMP(i) AS vs, STDDEV_POP(i) AS sp, STDDEV(i) AS sd FROM t GROUP BY g',
  'CREATE MATERIALIZED VIEW nums AS SELECT g, VAR_POP(n) AS vp, VARIANCE(n) AS vs, STDDEV_POP(n) AS sp, STDDEV_SAMP(n) AS sd FROM t GROUP BY g',
  'CREATE MATERIALIZED VIEW floats AS SELECT g, VAR_POP(f) AS vp, VAR_SAMP(f) AS vs, STDDEV_POP(f) AS sp, STDDEV(f) AS sd FROM t GROUP BY g',
  "CREATE MATERIALIZED VIEW strs AS SELECT g, STRING_AGG(CAST(i AS text), ', ') AS s, STRING_AGG(DISTINCT CAST(b AS text), '|') AS d FROM t GROUP BY g",
  // ORDER BY numerics of every scale, bigints and floats (NaN, infinities) inside STRING_AGG: the
  // (value, keys) tuples go through the stored codec into each group's multiset and checkpoint.
  "CREATE MATERIALIZED VIEW ordered AS SELECT g, STRING_AGG(CAST(id AS text), ',' ORDER BY n DESC, f NULLS FIRST, id) AS by_n, STRING_AGG(CAST(n AS text), ';' ORDER BY i, f DESC, n) AS by_i FROM t GROUP BY g",
  // JSONB_AGG keeps each element's text (1.5 and 1.50 both), in one order whatever the history
  'CREATE MATERIALIZED VIEW jsons AS SELECT g, JSONB_AGG(n) AS jn, JSONB_AGG(DISTINCT b) AS jb, JSONB_AGG(f) AS jf, JSONB_AGG(i) AS ji FROM t GROUP BY g',
  // MIN/MAX and SUM(DISTINCT) among equal values of other scales (-2, -2.0; 1.5, 1.50, 1.500): the
  // value shown is one a current row holds, the smallest scale, whatever the history
  'CREATE MATERIALIZED VIEW extremes AS SELECT g, MIN(n) AS lo, MAX(n) AS hi, SUM(DISTINCT n) AS sd, COUNT(DISTINCT n) AS cd FROM t WHERE n BETWEEN -2 AND 1.5 GROUP BY g',
  'CREATE MATERIALIZED VIEW overall AS SELECT BOOL_AND(b) AS a, VAR_SAMP(n) AS vn, VAR_POP(f) AS vf, STDDEV(i) AS si FROM t',
];
const VIEW_NAMES = ['flags', 'ints', 'nums', 'floats', 'strs', 'ordered', 'jsons', 'extremes', 'overall'];

function randomRow(rng: Rng, id: number): Row {
  const maybe = <T>(v: () => T): T | null => (rng.chance(0.15) ? null : v());
  const digits = rng.chance(0.1) ? rng.int(10, 14) : rng.int(0, 6);
  // equal values of other scales (1.5, 1.50) now and then: JSONB_AGG shows each as written
  const n = rng.chance(0.15)
    ? rng.pick(['1.5', '1.50', '1.500', '-2', '-2.0'])
    : `${rng.chance(0.3) ? '-' : ''}${rng.int(0, 999)}${digits > 0 ? `.${String(rng.int(0, 10 ** digits - 1)).padStart(digits, '0')}` : ''}`;
  // Rows take the non-finite doubles as text (a JSON number cannot be one).
  const floats = [0.1, 0.25, 1e20, -3.5, 1e-300, 7, 'Infinity', 'NaN', '-Infinity', 123456.789, -0.3];
  const ints = [0n, 1n, -7n, 9223372036854775807n, -9223372036854775808n, 42n, 1000000007n];
  return {
    id,
    g: rng.int(0, 3),
    b: maybe(() => rng.chance(0.6)),
    i: maybe(() => (rng.chance(0.5) ? BigInt(rng.int(-20, 20)) : rng.pick(ints))),
    n: maybe(() => n),
    f: maybe(() => (rng.chance(0.5) ? rng.int(-50, 50) / 8 : rng.pick(floats))),
  };
}

function big(_k: string, x: unknown): unknown {
  return typeof x === 'bigint' ? `${x}n` : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x;
}

const SPEC: OneTableViews = {
  table: TABLE,
  views: VIEWS,
  viewNames: VIEW_NAMES,
  randomRow,
  encodeRow: (r) => JSON.stringify(r, big),
  encodeSets: (sets) => JSON.stringify(sets, big),
  batches: 60,
  restoreBetween: [10, 40],
  rebuildReversed: false,
};

test('BOOL_AND/OR and variance views restore from checkpoints and always equal a rebuild', () => {
  let sets = 0;
  const seeds = [0, 1, 2, 3].map((i) => deriveSeed(1414, i));
  for (const seed of seeds) sets += oneTableRoundTrip(SPEC, seed);
  assert.ok(sets > 100, `only ${sets} change sets`);
  console.log(
    `aggregates-more checkpoints: ${seeds.length} seeds, ${sets} change sets compared after restores`,
  );
});
