// A subquery over a GROUP BY (`k IN (SELECT k FROM s GROUP BY k)`, its NOT IN and EXISTS forms): a
// row into a group that exists changes the group's row (a retraction and an insertion of the same
// key) but not which keys the subquery holds, so it flips no outer row. The epoch's count took the
// retraction as a key that may lose its last match and counted every outer row under it, refusing
// the write with EPOCH_TOO_LARGE ("... counted, 0 flipped"). A write that does flip many outer
// rows — a new group, or the last row of a group deleted — is still refused before anything changes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';

import { refusal, rowsOf, sorted } from './support/epoch-bound.ts';

const LIMIT = 100;
/** Outer rows: 150 of k = 0, 3 of k = 1 (x unique). */
const OUTER = 153;

const VIEWS: Record<string, string> = {
  notin: 'SELECT * FROM big WHERE k NOT IN (SELECT k FROM s GROUP BY k)',
  inv: 'SELECT * FROM big WHERE k IN (SELECT k FROM s GROUP BY k)',
  exists:
    'SELECT * FROM big WHERE EXISTS (SELECT 1 FROM (SELECT k, count(*) AS n FROM s GROUP BY k) g WHERE g.k = big.k)',
};

/** big: 150 outer rows under k = 0, 3 under k = 1; s: `groups` rows of k = 0, one of k = 1. */
function engine(views: readonly string[], groups: number): Engine {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE big (k BIGINT, x BIGINT); CREATE TABLE s (k BIGINT, y BIGINT)');
  for (const name of views) e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${VIEWS[name] as string}`);
  // s first: its rows flip no outer row yet, and big's rows pass the semi-join one by one.
  e.applyChanges('s', { insert: [...rowsOf(groups, (i) => ({ k: 0, y: i })), { k: 1, y: 0 }] });
  e.applyChanges('big', { insert: rowsOf(OUTER, (i) => ({ k: i < 150 ? 0 : 1, x: i })) });
  return e;
}

function stateOf(e: Engine, views: readonly string[]): string {
  return JSON.stringify({
    epoch: e.epoch,
    s: sorted(e.tableRows('s')),
    views: views.map((v) => sorted(e.viewSnapshot(v).rows)),
  });
}

function assertMatchesSelect(e: Engine, views: readonly string[]): void {
  for (const name of views) {
    const select = VIEWS[name] as string;
    assert.deepEqual(sorted(e.viewSnapshot(name).rows), sorted(e.execute(select)[0]?.rows ?? []), name);
  }
}

for (const name of Object.keys(VIEWS)) {
  test(`${name}: a group that loses its every row and gains another flips nothing and is accepted`, () => {
    const views = [name];
    // Group 0 holds one row: the write deletes it and inserts another of key 0 (the group stays,
    // its key too). Counted as a group that may go, its 150 outer rows refused it.
    const e = engine(views, 1);
    e.applyChanges('s', { delete: [{ k: 0, y: 0 }], insert: [{ k: 0, y: 5 }] });
    e.applyChanges('s', {
      delete: [
        { k: 0, y: 5 },
        { k: 1, y: 0 },
      ],
      insert: [
        { k: 0, y: 6 },
        { k: 0, y: 7 },
      ],
    });
    assertMatchesSelect(e, views);
    // The last row of group 0 deleted with only a row of another key inserted: refused.
    assert.equal(
      refusal(() =>
        e.applyChanges('s', {
          delete: [
            { k: 0, y: 6 },
            { k: 0, y: 7 },
          ],
          insert: [{ k: 1, y: 1 }],
        }),
      ).code,
      'EPOCH_TOO_LARGE',
    );
  });

  test(`${name}: rows into a group that exists flip nothing and are accepted`, () => {
    const views = [name];
    const e = engine(views, 1);
    // Group 0 exists: a second row and two more of it (its key stays), with a new key of no outer row.
    e.applyChanges('s', { insert: [{ k: 0, y: 1 }] });
    e.execute('INSERT INTO s VALUES (0, 2), (0, 3), (7, 0)');
    assertMatchesSelect(e, views);
    assert.equal(e.viewSnapshot(name).rows.length, name === 'notin' ? 0 : OUTER);
  });

  test(`${name}: a write that flips the 150 outer rows of key 0 is refused, nothing changed`, () => {
    const views = [name];
    // A new group of key 0.
    const e = engine(views, 0);
    const before = stateOf(e, views);
    const error = refusal(() =>
      e.applyChanges('s', {
        insert: [
          { k: 0, y: 1 },
          { k: 0, y: 2 },
        ],
      }),
    );
    assert.equal(error.code, 'EPOCH_TOO_LARGE');
    assert.match(error.message, /150 rows in one epoch, more than 100/);
    assert.equal(stateOf(e, views), before);
    // The last row of group 0 deleted, even with a row into group 1 in the same write.
    const held = engine(views, 1);
    const heldBefore = stateOf(held, views);
    const deleted = refusal(() => held.execute('DELETE FROM s WHERE k = 0 OR (k = 1 AND y = 5)'));
    assert.equal(deleted.code, 'EPOCH_TOO_LARGE');
    const mixed = refusal(() =>
      held.applyChanges('s', { delete: [{ k: 0, y: 0 }], insert: [{ k: 1, y: 1 }] }),
    );
    assert.equal(mixed.code, 'EPOCH_TOO_LARGE');
    assert.equal(stateOf(held, views), heldBefore);
    assertMatchesSelect(held, views);
  });
}

test('behind a HAVING on an aggregate, a row into a group that exists may take it out: refused', () => {
  const e = new Engine({ maxEpochJoinRows: LIMIT });
  e.execute('CREATE TABLE big (k BIGINT, x BIGINT); CREATE TABLE s (k BIGINT, y BIGINT)');
  const select = 'SELECT * FROM big WHERE k IN (SELECT k FROM s GROUP BY k HAVING count(*) < 2)';
  e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
  e.applyChanges('s', { insert: [{ k: 0, y: 0 }] });
  e.applyChanges('big', { insert: rowsOf(OUTER, (i) => ({ k: i < 150 ? 0 : 1, x: i })) });
  assert.equal(e.viewSnapshot('v').rows.length, 150);
  const before = stateOf(e, ['v']);
  const error = refusal(() => e.applyChanges('s', { insert: [{ k: 0, y: 1 }] }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  assert.equal(stateOf(e, ['v']), before);
  // A row into a group with no outer row is accepted.
  e.applyChanges('s', { insert: [{ k: 7, y: 0 }] });
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute(select)[0]?.rows ?? []));
});
