// char values grouped, made distinct and matched by set operations as PostgreSQL 15 does: trailing
// spaces insignificant ('ab   ', 'ab  ' and 'ab' one group), each group shown in one spelling whatever
// the order of the writes (bpchar without its trailing spaces, char(n) padded), and a set operation
// whose first branch is char typed char (bpchar beside text); COUNT(DISTINCT) and PARTITION BY too.
// Under random inserts and deletes the views equal a count written here from the rows, restore from
// checkpoints exactly and equal a rebuild; views stored under the old rules are rebuilt once (fingerprint salt), others keep
// their state; `bpchar` in a journaled CREATE TABLE still means char(1), as when it was accepted.
// (Answers against PostgreSQL 15: test/golden/char-group-set-op.slt.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, REPLAY_SQL_LIMITS } from '../src/index.ts';
import type { Row, Value } from '../src/common/types.ts';
import { storedCheckpoint, trackedEngine, withFingerprints } from './support/aged-checkpoint.ts';
import { refusal } from './support/epoch-bound.ts';
import { type Rng, Rng as Random, deriveSeed } from './support/random-workload.ts';
import { keyedBatches, oneTableRoundTrip, type OneTableViews } from './support/restore-equivalence.ts';

const TABLE = 'CREATE TABLE t (id integer PRIMARY KEY, c char(4), s text, b bpchar)';
const VIEWS = [
  'CREATE MATERIALIZED VIEW gb AS SELECT b, COUNT(*) AS n FROM t GROUP BY b',
  'CREATE MATERIALIZED VIEW db AS SELECT DISTINCT b FROM t',
  'CREATE MATERIALIZED VIEW gcs AS SELECT COALESCE(c, s) AS k, COUNT(*) AS n FROM t GROUP BY 1',
  'CREATE MATERIALIZED VIEW ucs AS SELECT c AS x FROM t UNION SELECT s FROM t',
  'CREATE MATERIALIZED VIEW ibs AS SELECT b AS x FROM t INTERSECT SELECT s FROM t',
  'CREATE MATERIALIZED VIEW ecb AS SELECT c AS x FROM t EXCEPT ALL SELECT b FROM t',
  'CREATE MATERIALIZED VIEW cdb AS SELECT COUNT(DISTINCT b) AS n, COUNT(DISTINCT COALESCE(c, s)) AS m FROM t',
  'CREATE MATERIALIZED VIEW pb AS SELECT id, COUNT(*) OVER (PARTITION BY b) AS n FROM t',
];
const VIEW_NAMES = ['gb', 'db', 'gcs', 'ucs', 'ibs', 'ecb', 'cdb', 'pb'];
const TEXTS = ['', ' ', 'a', 'a ', 'ab', 'ab ', 'ab  ', 'ab   ', 'x', 'x\t', ' x'];

function randomRow(rng: Rng, id: number): Row {
  const maybe = (max: number): string | null => {
    if (rng.chance(0.2)) return null;
    const s = TEXTS[rng.int(0, TEXTS.length - 1)] as string;
    return s.length > max ? s.slice(0, max) : s;
  };
  return { id, c: maybe(4), s: maybe(9), b: maybe(9) };
}

/** A value as bpchar compares it (trailing spaces only dropped); null stays null. */
const trim = (v: Value): string | null => (v === null ? null : (v as string).replace(/ +$/, ''));
const pad4 = (v: string | null): string | null => (v === null ? null : v.padEnd(4, ' '));

/** Each view's rows as counted here from the table's rows: [value, count] sorted, as text. */
function expected(rows: readonly Row[]): Record<string, string> {
  const count = (values: readonly (string | null)[]): Map<string | null, number> => {
    const m = new Map<string | null, number>();
    for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
    return m;
  };
  const show = (m: Map<string | null, number>, withCount: boolean): string =>
    [...m]
      .map(([v, n]) => JSON.stringify(withCount ? [v, n] : [v]))
      .sort()
      .join(' ');
  const b = rows.map((r) => trim(r['b'] as Value));
  const c = rows.map((r) => trim(r['c'] as Value));
  const s = rows.map((r) => trim(r['s'] as Value));
  const sSet = new Set(s);
  const bCounts = count(b);
  const except = new Map<string | null, number>();
  for (const [v, n] of count(c)) if (n - (bCounts.get(v) ?? 0) > 0) except.set(v, n - (bCounts.get(v) ?? 0));
  const exceptRows: (string | null)[] = [];
  for (const [v, n] of except) for (let i = 0; i < n; i++) exceptRows.push(v);
  const cs = rows.map((r) => trim((r['c'] ?? r['s']) as Value));
  const nonNull = (vs: readonly (string | null)[]): number => new Set(vs.filter((v) => v !== null)).size;
  return {
    cdb: JSON.stringify([nonNull(b), nonNull(cs)]),
    pb: rows
      .map((r) => JSON.stringify([r['id'], bCounts.get(trim(r['b'] as Value))]))
      .sort()
      .join(' '),
    gb: show(bCounts, true),
    db: show(count(b), false),
    // COALESCE(c, s) is bpchar: a char(4) value and a text value, both without trailing spaces
    gcs: show(count(cs), true),
    ucs: show(count([...new Set([...c, ...s])]), false),
    ibs: show(count([...new Set(b)].filter((v) => sSet.has(v))), false),
    ecb: exceptRows
      .map((v) => JSON.stringify([v]))
      .sort()
      .join(' '),
  };
}

function actual(e: Engine): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of VIEW_NAMES) {
    out[v] = e
      .viewSnapshot(v)
      .rows.map((r) => JSON.stringify(Object.values(r)))
      .sort()
      .join(' ');
  }
  return out;
}

test('char views under random writes equal the groups counted from the rows, trailing spaces insignificant', () => {
  let compared = 0;
  for (const seed of [0, 1, 2].map((i) => deriveSeed(5858, i))) {
    const e = new Engine();
    e.execute(TABLE);
    for (const v of VIEWS) e.execute(v);
    const rng = new Random(seed);
    for (const [i, batch] of keyedBatches(rng, 30, randomRow).entries()) {
      e.applyChanges('t', batch.changes);
      assert.deepEqual(actual(e), expected(batch.rows), `seed ${seed}, batch ${i}`);
      compared++;
    }
  }
  assert.equal(compared, 90);
  // the one spelling: a char(4) group padded, a bpchar group without its trailing spaces
  const e = new Engine();
  e.execute(TABLE);
  e.execute('CREATE MATERIALIZED VIEW gc AS SELECT c, COUNT(*) AS n FROM t GROUP BY c');
  e.execute(VIEWS[0] as string);
  e.applyChanges('t', { insert: [{ id: 1, c: 'ab', b: 'ab  ' }] });
  e.applyChanges('t', { insert: [{ id: 2, c: 'ab ', b: 'ab' }] });
  assert.deepEqual(e.viewSnapshot('gc').rows, [{ c: pad4('ab'), n: 2 }]);
  assert.deepEqual(e.viewSnapshot('gb').rows, [{ b: 'ab', n: 2 }]);
});

const SPEC: OneTableViews = {
  table: TABLE,
  views: VIEWS,
  viewNames: VIEW_NAMES,
  randomRow,
  batches: 30,
  restoreBetween: [8, 22],
  rebuildReversed: true,
};

test('char group, DISTINCT and set operation views restore from checkpoints and equal a rebuild', () => {
  let sets = 0;
  for (const seed of [0, 1, 2].map((i) => deriveSeed(5859, i))) sets += oneTableRoundTrip(SPEC, seed);
  assert.ok(sets > 30, `only ${sets} change sets`);
});

// The fingerprints these objects had before the change (computed on the commit before it, 4b777a27),
// their DDL replayed from a journal.
const BEFORE = {
  ct: '93f1f6a363474af9',
  bt: '0070f81db12166cf',
  u: '4c6bf0e09eb67d03',
  g: 'c62e64119d9ff6ea',
  p: 'b1c22e7a93349e82',
  cd: 'bd3aae2d1640b35c',
  bv: '821ef7b0651f0bd0',
};
const DDL = [
  'CREATE TABLE ct (k integer PRIMARY KEY, c char(5), s text)',
  'CREATE MATERIALIZED VIEW u AS SELECT c AS x FROM ct UNION SELECT s FROM ct',
  'CREATE MATERIALIZED VIEW g AS SELECT c, COUNT(*) AS n FROM ct GROUP BY c',
  "CREATE MATERIALIZED VIEW p AS SELECT k, c FROM ct WHERE c = 'ab'",
  'CREATE MATERIALIZED VIEW cd AS SELECT COUNT(DISTINCT c) AS n FROM ct',
  'CREATE TABLE bt (k integer PRIMARY KEY, x bpchar)',
  'CREATE MATERIALIZED VIEW bv AS SELECT x, COUNT(*) AS n FROM bt GROUP BY x',
];

test('char views stored under the old rules are rebuilt; a journaled bpchar column is still char(1)', () => {
  const original = new Engine();
  original.setStateTracking(true);
  for (const sql of DDL) original.execute(sql, { limits: REPLAY_SQL_LIMITS });
  original.execute("INSERT INTO ct VALUES (1, 'ab', 'ab  '), (2, 'ab ', 'x'), (3, NULL, 'ab')");
  original.execute("INSERT INTO bt VALUES (1, 'a'), (2, 'b ')");
  const { checkpoint, fingerprints } = storedCheckpoint(original);
  if (process.env.PRINT_FINGERPRINTS === '1') console.log(JSON.stringify(fingerprints));
  // the tables, and a view that neither groups nor unites char values, keep theirs
  for (const kept of ['ct', 'bt', 'p']) assert.equal(fingerprints[kept], BEFORE[kept as keyof typeof BEFORE]);
  for (const changed of ['u', 'g', 'cd', 'bv'])
    assert.notEqual(fingerprints[changed], BEFORE[changed as keyof typeof BEFORE]);
  // replayed, bt.x is char(1) as it was: 'ab' is too long for it
  assert.equal(refusal(() => original.execute("INSERT INTO bt VALUES (3, 'ab')")).code, 'STRING_TOO_LONG');

  const restored = trackedEngine([]);
  for (const sql of DDL) restored.execute(sql, { limits: REPLAY_SQL_LIMITS });
  const loaded = restored.loadCheckpoint(withFingerprints(checkpoint, BEFORE));
  assert.deepEqual([...loaded.rebuilt].sort(), ['bv', 'cd', 'g', 'u']);
  const rows = (v: string): string[] => restored.viewSnapshot(v).rows.map((r) => JSON.stringify(r));
  // PostgreSQL 15: c UNION s is bpchar, 'ab', 'ab ' and 'ab  ' one row
  assert.deepEqual(rows('u').sort(), ['{"x":"ab"}', '{"x":"x"}', '{"x":null}']);
  assert.deepEqual(rows('g').sort(), ['{"c":"ab   ","n":2}', '{"c":null,"n":1}']);
  // PostgreSQL 15: 'ab' and 'ab ' are one char(5) value
  assert.deepEqual(rows('cd'), ['{"n":1}']);
  restored.execute('DELETE FROM ct WHERE k = 1');
  assert.deepEqual(rows('g').sort(), ['{"c":"ab   ","n":1}', '{"c":null,"n":1}']);

  // a new CREATE TABLE reads bpchar as PostgreSQL does: char without a length
  const live = new Engine();
  live.execute('CREATE TABLE bt (k integer PRIMARY KEY, x bpchar)');
  live.execute("INSERT INTO bt VALUES (1, 'ab   ')");
  const [result] = live.execute("SELECT octet_length(x) AS o, x = 'ab' AS e FROM bt");
  assert.deepEqual(result !== undefined && 'rows' in result ? result.rows : null, [{ o: 5, e: true }]);
});
