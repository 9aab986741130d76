// PostgreSQL's type checks added after a release accepted a statement (a computed text constant no
// longer adapts to the type beside it; COLLATE on a type without a collation) must not make its
// journal unreplayable: a data directory an older server accepted has to start. A journaled
// statement (replayed under REPLAY_SQL_LIMITS) binds as it was accepted, with the plan, the
// fingerprint (so its checkpointed state loads) and the values of that release; a new statement
// of the same text is refused. So does a window frame offset PostgreSQL finds out of range.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine, REPLAY_SQL_LIMITS } from '../src/index.ts';
import { storedCheckpoint, trackedEngine } from './support/aged-checkpoint.ts';
import { refusal } from './support/epoch-bound.ts';
import { BINDING_RULES } from '../src/planner/journaled-binding.ts';

const VIEWS = [
  "CREATE MATERIALIZED VIEW v AS SELECT k, i FROM t WHERE i = '1'::text",
  `CREATE MATERIALIZED VIEW w AS SELECT k, i COLLATE "C" AS i2, upper('7') + i AS u FROM t`,
];
// The fingerprints these objects had on 5d242fc, the release before the checks, which accepted them.
const BEFORE = { t: 'e8ba1e3d695cb8cb', v: '96437c5f161f860a', w: '0c2701c487661ca0' };

test('a journaled statement binds as it was accepted; the same text now is refused', () => {
  const live = new Engine();
  live.execute('CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)');
  for (const sql of VIEWS) assert.equal(refusal(() => live.execute(sql)).code, 'TYPE_MISMATCH');

  const replayed = trackedEngine(['CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)']);
  for (const sql of VIEWS) replayed.execute(sql, { limits: REPLAY_SQL_LIMITS });
  assert.deepEqual(storedCheckpoint(replayed).fingerprints, BEFORE);
  replayed.applyChanges('t', {
    insert: [
      { k: 1, i: 1 },
      { k: 2, i: 2 },
    ],
  });
  assert.deepEqual(replayed.viewSnapshot('v').rows, [{ k: 1, i: 1 }]);
  const w = replayed
    .viewSnapshot('w')
    .rows.map((r) => JSON.stringify(r))
    .sort();
  assert.deepEqual(w, ['{"k":1,"i2":1,"u":8}', '{"k":2,"i2":2,"u":9}']);
  // After the replay the stricter rules are back: a new statement is refused.
  assert.equal(
    refusal(() => replayed.execute("CREATE MATERIALIZED VIEW v2 AS SELECT k FROM t WHERE i = '1'::text"))
      .code,
    'TYPE_MISMATCH',
  );
});

// `ORDER BY i COLLATE "C"` naming a select item of a type without a collation was accepted before
// PostgreSQL's check reached it; its fingerprint on ea087b6, the release before, which accepted it.
const TOP = 'CREATE MATERIALIZED VIEW top AS SELECT k, i FROM t ORDER BY i COLLATE "C" LIMIT 2';
const TOP_BEFORE = '4fa6982600387150';

test('a journaled ORDER BY <integer item> COLLATE binds as it was accepted; new, it is refused', () => {
  const live = new Engine();
  live.execute('CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)');
  const refused = refusal(() => live.execute(TOP));
  assert.equal(refused.code, 'TYPE_MISMATCH');
  assert.match(refused.message, /collations are not supported by type integer/);

  const replayed = trackedEngine(['CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)']);
  replayed.execute(TOP, { limits: REPLAY_SQL_LIMITS });
  if (process.env.PRINT_FINGERPRINTS === '1')
    console.log(JSON.stringify(storedCheckpoint(replayed).fingerprints));
  assert.equal(storedCheckpoint(replayed).fingerprints.top, TOP_BEFORE);
  replayed.applyChanges('t', { insert: [3, 1, 2].map((i) => ({ k: i * 10, i })) });
  assert.deepEqual(
    replayed
      .viewSnapshot('top')
      .rows.map((r) => r.i)
      .sort(),
    [1, 2],
  );
});

// Two different explicit collations in one expression were accepted before PostgreSQL's check
// reached them; the fingerprint on ea087b6, the release before, which accepted the view.
const MIX = 'CREATE MATERIALIZED VIEW mix AS SELECT k, s COLLATE "C" = s COLLATE "POSIX" AS e FROM t';

test('a journaled collation mismatch binds as it was accepted; new, it is refused', () => {
  const live = new Engine();
  live.execute('CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)');
  assert.match(refusal(() => live.execute(MIX)).message, /collation mismatch between explicit collations/);

  const replayed = trackedEngine(['CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)']);
  replayed.execute(MIX, { limits: REPLAY_SQL_LIMITS });
  assert.equal(storedCheckpoint(replayed).fingerprints.mix, '5a559c5e031c3931');
  replayed.applyChanges('t', { insert: [{ k: 1, i: 1, s: 'a' }] });
  assert.deepEqual(replayed.viewSnapshot('mix').rows, [{ k: 1, e: true }]);
});

// A frame offset PostgreSQL types as integer and finds out of range (`2147483647 + 1`) was
// computed in unbounded integers by ea087b6, which accepted the view; fingerprint from that release.
test('a journaled frame offset that overflows integer binds as it was accepted', () => {
  const view =
    'CREATE MATERIALIZED VIEW f AS SELECT k, sum(i) OVER (ORDER BY k ROWS BETWEEN 2147483647 + 1 PRECEDING AND CURRENT ROW) AS s FROM t';
  const live = new Engine();
  live.execute('CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)');
  const refused = refusal(() => live.execute(view));
  assert.deepEqual([refused.code, refused.message], ['NUMERIC_OVERFLOW', 'integer out of range']);

  const replayed = trackedEngine(['CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)']);
  replayed.execute(view, { limits: REPLAY_SQL_LIMITS });
  assert.deepEqual(storedCheckpoint(replayed).fingerprints, { t: BEFORE.t, f: '8c321d2ffc42cce8' });
  replayed.applyChanges('t', {
    insert: [
      { k: 1, i: 1 },
      { k: 2, i: 2 },
    ],
  });
  assert.deepEqual(replayed.viewSnapshot('f').rows, [
    { k: 1, s: 1 },
    { k: 2, s: 3 },
  ]);
  assert.equal(refusal(() => replayed.execute(view.replace(' f ', ' f2 '))).code, 'NUMERIC_OVERFLOW');
});

// ea087b6 folded `'abc' LIKE 'ab\'` to false (it read the lone escape as a backslash) and accepted
// the view; PostgreSQL's error is now raised folding it. Journaled, the view still binds (the data
// directory starts), the LIKE left to each row, whose error it now is, under a new fingerprint (its
// state is rebuilt: like-escape-end-fingerprint.test.ts).
test('a journaled constant LIKE that now fails folding binds, failing on each row', () => {
  const view = "CREATE MATERIALIZED VIEW l AS SELECT k, 'abc' LIKE 'ab\\' AS m FROM t";
  const live = new Engine();
  live.execute('CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)');
  const refused = refusal(() => live.execute(view));
  assert.deepEqual(
    [refused.code, refused.message],
    ['INVALID_VALUE', 'LIKE pattern must not end with escape character'],
  );

  const replayed = trackedEngine(['CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)']);
  replayed.execute(view, { limits: REPLAY_SQL_LIMITS });
  assert.notEqual(storedCheckpoint(replayed).fingerprints['l'], '0fad99a074029d48'); // ea087b6's
  replayed.applyChanges('t', { insert: [{ k: 1, i: 1 }] });
  assert.deepEqual(
    replayed.viewErrors('l').map((e) => [e.code, e.message, e.row['k']]),
    [['INVALID_VALUE', 'LIKE pattern must not end with escape character', 1]],
  );
  replayed.applyChanges('t', { delete: [{ k: 1, i: 1 }] });
  assert.deepEqual(replayed.viewErrors('l'), []);
  assert.equal(refusal(() => replayed.execute(view.replace(' l ', ' l2 '))).code, 'INVALID_VALUE');
});

// A SELECT's cast to bpchar was refused while a journaled `bpchar` meant char(1) (CREATE TABLE), so
// a journaled view casting to it was accepted since then: it replays as bpchar, as it was created,
// with the same fingerprint and values (not a char(1) that would cut 'ab ' to 'a').
test('a journaled SELECT cast to bpchar binds as bpchar, as it was accepted', () => {
  const table = 'CREATE TABLE t (k integer PRIMARY KEY, i integer, s text)';
  const views = [
    'CREATE MATERIALIZED VIEW b AS SELECT k, s::bpchar AS x, CAST(s AS bpchar) AS y FROM t',
    "CREATE MATERIALIZED VIEW ba AS SELECT k, ARRAY[s]::bpchar[] AS x FROM t WHERE s::bpchar = 'ab'",
  ];
  const rows = { insert: [{ k: 1, s: 'ab ' }] };
  const live = trackedEngine([table]);
  const replayed = trackedEngine([table]);
  for (const sql of views) {
    live.execute(sql);
    replayed.execute(sql, { limits: REPLAY_SQL_LIMITS });
  }
  assert.deepEqual(storedCheckpoint(replayed).fingerprints, storedCheckpoint(live).fingerprints);
  for (const e of [live, replayed]) {
    e.applyChanges('t', rows);
    assert.deepEqual(e.viewSnapshot('b').rows, [{ k: 1, x: 'ab ', y: 'ab ' }]);
    const ba = e.viewSnapshot('ba');
    assert.deepEqual(
      ba.rows.map((r) => [r['k'], (r['x'] as { readonly items: unknown }).items]),
      [[1, ['ab ']]],
    );
    assert.equal(ba.columns[1]?.type, 'bpchar[]');
    assert.deepEqual(
      e.viewSnapshot('b').columns.map((c) => c.type),
      ['integer', 'bpchar', 'bpchar'],
    );
  }
  // CREATE TABLE's bpchar journaled still means char(1), as when it was accepted.
  const old = new Engine();
  old.execute('CREATE TABLE c (k integer PRIMARY KEY, b bpchar)', { limits: REPLAY_SQL_LIMITS });
  assert.equal(refusal(() => old.applyChanges('c', { insert: [{ k: 1, b: 'ab' }] })).code, 'INVALID_VALUE');
});

test('varchar(n) beside varchar(m): journaled under rules 1 it stays text, new it is varchar of the longer', () => {
  const table = 'CREATE TABLE t (k integer PRIMARY KEY, a varchar(6), b varchar(8), c char(3))';
  // PostgreSQL compares COALESCE(a, b) (varchar) with char as bpchar: 'x  ' equals 'x'.
  const view = 'CREATE MATERIALIZED VIEW m AS SELECT k, COALESCE(a, b) AS x FROM t WHERE COALESCE(a, b) = c';
  const rows = { insert: [{ k: 1, a: 'x  ', c: 'x' }] };
  const live = trackedEngine([table]);
  live.execute(view);
  const rules1 = trackedEngine([table]);
  rules1.execute(view, { limits: REPLAY_SQL_LIMITS, rules: 1 });
  const unstamped = trackedEngine([table]);
  unstamped.execute(view, { limits: REPLAY_SQL_LIMITS });
  const now = trackedEngine([table]);
  now.execute(view, { limits: REPLAY_SQL_LIMITS, rules: BINDING_RULES });
  for (const e of [live, rules1, unstamped, now]) e.applyChanges('t', rows);
  for (const e of [live, now]) {
    assert.deepEqual(e.viewSnapshot('m').rows, [{ k: 1, x: 'x  ' }]);
    assert.equal(e.viewSnapshot('m').columns[1]?.type, 'character varying(8)');
  }
  for (const e of [rules1, unstamped]) {
    assert.deepEqual(e.viewSnapshot('m').rows, []);
    assert.equal(e.viewSnapshot('m').columns[1]?.type, 'text');
  }
  // The older binding is another plan: its stored state is not taken for the new one's.
  const fingerprint = (e: Engine): string | undefined => storedCheckpoint(e).fingerprints['m'];
  assert.equal(fingerprint(rules1), fingerprint(unstamped));
  assert.equal(fingerprint(now), fingerprint(live));
  assert.notEqual(fingerprint(live), fingerprint(rules1));
});
