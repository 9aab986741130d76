// A view's first build over the rows already there (CREATE MATERIALIZED VIEW, a query subscription's
// view) is one step: a self-join without a key over 3,000 rows builds 9,000,000 rows in it, holding
// the loop for minutes and filling memory, and a journaled CREATE replays into the same build at
// every restart. Such a CREATE is refused with VIEW_TOO_LARGE before it is journaled and leaves
// nothing: keyless joins counted from their inputs' sizes before anything is built, every join's
// rows counted while the build runs. Replay of a journaled CREATE is never refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine, REPLAY_SQL_LIMITS } from '../src/index.ts';
import { SluiceError } from '../src/common/errors.ts';
import type { EngineJournal } from '../src/common/journal.ts';
import type { Row } from '../src/common/types.ts';
import { keylessBackfillPairs } from '../src/exec/backfill-bound.ts';
import type { ZBatch } from '../src/ivm/zset.ts';

const LIMIT = 1000;

function rowsOf(n: number, make: (i: number) => Row): Row[] {
  return Array.from({ length: n }, (_, i) => make(i));
}

function sorted(rows: readonly object[]): string[] {
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).sort();
}

function refusal(run: () => unknown): SluiceError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof SluiceError, String(error));
    return error;
  }
  assert.fail('the statement was not refused');
}

/** A journal that records the DDL it is given (and accepts everything else). */
function recordingJournal(): { journal: EngineJournal; ddl: string[] } {
  const ddl: string[] = [];
  const journal: EngineJournal = {
    appendBatch: () => ({}),
    appendDdl: (entry) => {
      ddl.push(entry.sql);
    },
    appendTick: () => undefined,
  };
  return { journal, ddl };
}

/** An engine with table `a` of `n` rows (`k` = i mod 2), bound LIMIT, journaling its DDL. */
function engineWith(n: number, options: { maxBackfillRows?: number } = {}): { e: Engine; ddl: string[] } {
  const e = new Engine({ maxBackfillRows: options.maxBackfillRows ?? LIMIT });
  e.execute('CREATE TABLE a (x BIGINT, k INTEGER, s TEXT)');
  e.applyChanges('a', { insert: rowsOf(n, (i) => ({ x: i, k: i % 2, s: `row ${i}` })) });
  const { journal, ddl } = recordingJournal();
  e.setJournal(journal);
  return { e, ddl };
}

const CROSS = 'SELECT a1.x, a2.s FROM a a1, a a2';
const KEYED = 'SELECT a1.x, a2.s FROM a a1 JOIN a a2 ON a1.k = a2.k';

function viewNames(e: Engine): string[] {
  return e.catalog().views.map((v) => v.name);
}

test('a self-join without a key past the bound is refused before it is built or journaled', () => {
  // 35 × 35 = 1,225 pairs: past the bound, 1,000 plus 3 per row the two sides read (70).
  const { e, ddl } = engineWith(35);
  const epoch = e.epoch;
  const error = refusal(() => e.execute(`CREATE MATERIALIZED VIEW big AS ${CROSS}`));
  assert.equal(error.code, 'VIEW_TOO_LARGE');
  // Counted from the inputs' sizes, not stopped while building.
  assert.match(
    error.message,
    /view "big" .* build 1225 rows in one step, more than 1210 \(1000 plus 3 per row it reads, 70 rows\)/,
  );
  assert.deepEqual(ddl, [], 'nothing journaled');
  assert.deepEqual(viewNames(e), [], 'nothing in the catalog');
  assert.equal(e.epoch, epoch);
  // A theta join is counted the same way (every pair is tested), and so is CROSS JOIN inside a script.
  assert.equal(
    refusal(() => e.execute('CREATE MATERIALIZED VIEW t AS SELECT a1.x FROM a a1 JOIN a a2 ON a1.x < a2.x'))
      .code,
    'VIEW_TOO_LARGE',
  );
  assert.equal(
    refusal(() => e.execute(`CREATE TABLE z (q INTEGER); CREATE MATERIALIZED VIEW c AS ${CROSS}`)).code,
    'VIEW_TOO_LARGE',
  );
  assert.deepEqual(ddl, ['CREATE TABLE z (q INTEGER)'], 'only the statement before it');
  assert.deepEqual(viewNames(e), []);
  // The same name is free: a narrower view over the same rows is created.
  e.execute(`CREATE MATERIALIZED VIEW big AS ${CROSS} WHERE a1.x < 10`);
  assert.deepEqual(
    sorted(e.viewSnapshot('big').rows),
    sorted(e.execute(`${CROSS} WHERE a1.x < 10`)[0]?.rows ?? []),
  );
});

test('a self-join without a key just under the bound is built, equal to the same SELECT', () => {
  // 34 × 34 = 1,156 pairs: within 1,000 plus 3 per row read (68).
  const { e, ddl } = engineWith(34);
  e.execute(`CREATE MATERIALIZED VIEW v AS ${CROSS}`);
  assert.equal(ddl.length, 1);
  assert.equal(e.viewSnapshot('v').rows.length, 1156);
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute(CROSS)[0]?.rows ?? []));
  // A filter before the join is counted after it: 100 × 100 rows, 10 × 100 pairs reach the join.
  const f = engineWith(100).e;
  f.execute('CREATE MATERIALIZED VIEW w AS SELECT a1.x, a2.s FROM a a1, a a2 WHERE a1.x < 10');
  assert.equal(f.viewSnapshot('w').rows.length, 1000);
});

test('a keyed join on a key few values repeat is stopped at the bound; under it, built', () => {
  // k in {0, 1}: 2 × 26² = 1,352 rows past 1,000 plus 3 per row read (104).
  const { e, ddl } = engineWith(52);
  const error = refusal(() => e.execute(`CREATE MATERIALIZED VIEW kj AS ${KEYED}`));
  assert.equal(error.code, 'VIEW_TOO_LARGE');
  assert.match(
    error.message,
    /view "kj" .* was stopped: its joins and STRING_AGG windows \(weighed by their texts\) built more than 1312 \(1000 plus 3 per row it reads, 104 rows\) in one step/,
  );
  assert.deepEqual(ddl, []);
  assert.deepEqual(viewNames(e), []);
  // The table's shared state is as before: a view over it that fits is built and stays right.
  e.execute(`CREATE MATERIALIZED VIEW small AS ${KEYED} WHERE a1.x < 5`);
  e.applyChanges('a', { insert: [{ x: 1000, k: 0, s: 'late' }] });
  assert.deepEqual(
    sorted(e.viewSnapshot('small').rows),
    sorted(e.execute(`${KEYED} WHERE a1.x < 5`)[0]?.rows ?? []),
  );
  // 2 × 25² = 1,250 within 1,000 plus 3 per row read (100): built, and later writes are not judged
  // by the backfill's bound.
  const under = engineWith(50).e;
  under.execute(`CREATE MATERIALIZED VIEW kj AS ${KEYED}`);
  assert.equal(under.viewSnapshot('kj').rows.length, 1250);
  under.applyChanges('a', { insert: rowsOf(10, (i) => ({ x: 100 + i, k: 0, s: 'more' })) });
  assert.deepEqual(sorted(under.viewSnapshot('kj').rows), sorted(under.execute(KEYED)[0]?.rows ?? []));
});

test('a journaled CREATE is replayed whatever the bound: it was accepted when it was written', () => {
  const { e } = engineWith(40);
  e.execute(`CREATE MATERIALIZED VIEW v AS ${CROSS}`, { limits: REPLAY_SQL_LIMITS });
  assert.equal(e.viewSnapshot('v').rows.length, 1600);
  e.execute(`CREATE MATERIALIZED VIEW kj AS ${KEYED}`, { limits: REPLAY_SQL_LIMITS });
  assert.equal(e.viewSnapshot('kj').rows.length, 800);
  // Infinity: no bound at all.
  const free = engineWith(40, { maxBackfillRows: Infinity }).e;
  free.execute(`CREATE MATERIALIZED VIEW v AS ${CROSS}`);
  assert.equal(free.viewSnapshot('v').rows.length, 1600);
});

test('a join that multiplies nothing is built however many rows it reads', () => {
  // A key into a primary key over 3,000 rows, and a one-row side crossed with them: 3,000 rows each,
  // past 1,000 but within 1,000 plus 3 per row they read.
  const { e } = engineWith(3000);
  e.execute('CREATE TABLE p (k INTEGER PRIMARY KEY, label TEXT); CREATE TABLE one (c INTEGER)');
  e.applyChanges('p', {
    insert: [
      { k: 0, label: 'even' },
      { k: 1, label: 'odd' },
    ],
  });
  e.applyChanges('one', { insert: [{ c: 7 }] });
  e.execute('CREATE MATERIALIZED VIEW fk AS SELECT a.x, p.label FROM a JOIN p ON a.k = p.k');
  e.execute('CREATE MATERIALIZED VIEW c1 AS SELECT a.x, one.c FROM a, one');
  assert.equal(e.viewSnapshot('fk').rows.length, 3000);
  assert.equal(e.viewSnapshot('c1').rows.length, 3000);
});

test('the count reads the inputs once each, never the product', () => {
  // 3,000 rows each side: 9,000,000 pairs, refused at the default bound without building any.
  const e = new Engine();
  e.execute('CREATE TABLE a (x BIGINT, k INTEGER, s TEXT)');
  e.applyChanges('a', { insert: rowsOf(3000, (i) => ({ x: i, k: i % 2, s: `row ${i}` })) });
  const error = refusal(() => e.execute(`CREATE MATERIALIZED VIEW big AS ${CROSS}`));
  assert.match(
    error.message,
    /build 9000000 rows in one step, more than 1018000 \(1000000 plus 3 per row it reads, 6000 rows\)/,
  );
  // The count alone: one contents read per relation, and a filtered side's rows read once.
  const big = engineWith(3000, { maxBackfillRows: Infinity }).e;
  big.execute('CREATE MATERIALIZED VIEW f AS SELECT a1.x, a2.s FROM a a1, a a2 WHERE a1.x < 10');
  const batch = {
    rows: big.tableRows('a').map((r) => [r.x, r.k, r.s]),
    weights: new Array<number>(3000).fill(1),
  } as unknown as ZBatch;
  let reads = 0;
  const counted = keylessBackfillPairs(big.viewPlan('f'), () => {
    reads++;
    return batch;
  });
  assert.equal(counted.pairs, 10 * 3000);
  assert.equal(counted.rowsRead, 3000, 'the filtered side read once; the other side only sized');
  assert.equal(reads, 2);
});
