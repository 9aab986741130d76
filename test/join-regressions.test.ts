// Regression tests for engine bugs the join suites found (they failed against main until fixed).
//
// Bug 1 — a FULL JOIN's derived unique key is not unique when both inputs' key columns can be NULL
// (an input view grouped by a nullable column, or a SELECT DISTINCT over one). The key of
// `p FULL JOIN q` is derived as (p's key, q's key); p's NULL group padded on the right and q's NULL
// group padded on the left both have the key (NULL, NULL). The batch that makes the second such row
// throws INTERNAL_ERROR "view arrangement n<N>: two rows for one key" — after the table already took
// the batch (epoch advanced, table changed), so the view stays wrong from then on; creating the
// same view over such data fails with the same INTERNAL_ERROR. Fixed on main by f840452 (FULL JOIN keeps
// both keys as its key only when padding cannot give two rows an all-NULL key).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, SluiceError } from '../src/index.ts';
import { deriveSeed } from './support/random-workload.ts';
import { runJoinDifferential } from './support/join-workload.ts';

function rowsOf(e: Engine, view: string): string[] {
  return e
    .viewSnapshot(view)
    .rows.map((r) => JSON.stringify(r))
    .sort();
}

for (const kind of ['GROUP BY', 'DISTINCT'] as const) {
  test(`bug 1: FULL JOIN of two ${kind} views with a NULL key on both sides`, () => {
    const e = new Engine();
    e.execute('CREATE TABLE a (k integer)');
    e.execute('CREATE TABLE b (k integer)');
    if (kind === 'GROUP BY') {
      e.execute('CREATE MATERIALIZED VIEW p AS SELECT k, COUNT(*) AS n FROM a GROUP BY k');
      e.execute('CREATE MATERIALIZED VIEW q AS SELECT k, COUNT(*) AS n FROM b GROUP BY k');
    } else {
      e.execute('CREATE MATERIALIZED VIEW p AS SELECT DISTINCT k FROM a');
      e.execute('CREATE MATERIALIZED VIEW q AS SELECT DISTINCT k FROM b');
    }
    e.execute('CREATE MATERIALIZED VIEW f AS SELECT p.k AS pk, q.k AS qk FROM p FULL JOIN q ON p.k = q.k');
    e.applyChanges('a', { insert: [{ k: null }] });
    let error: unknown;
    try {
      e.applyChanges('b', { insert: [{ k: null }] });
    } catch (err) {
      error = err;
    }
    // Whatever happens, a failed batch must not be half applied.
    if (error !== undefined) {
      assert.equal(e.epoch, 1, `the failed batch advanced the epoch (${String(error)})`);
      assert.deepEqual(e.tableRows('b'), [], 'the failed batch changed the table');
    }
    assert.equal(
      error,
      undefined,
      `the batch failed: ${error instanceof SluiceError ? error.code : ''} ${String(error)}`,
    );
    // NULL never matches NULL: each side's NULL row is padded on its own.
    assert.deepEqual(rowsOf(e, 'f'), ['{"pk":null,"qk":null}', '{"pk":null,"qk":null}']);
    // The same view created over this data (backfill).
    e.execute('CREATE MATERIALIZED VIEW g AS SELECT p.k AS pk, q.k AS qk FROM p FULL JOIN q ON p.k = q.k');
    assert.deepEqual(rowsOf(e, 'g'), ['{"pk":null,"qk":null}', '{"pk":null,"qk":null}']);
  });
}

test('bug 1, randomized: the join_of_views template with FULL JOIN against SQLite', () => {
  for (const i of [0, 1, 2]) {
    runJoinDifferential(deriveSeed(99, i), { epochs: 60, templates: ['join_of_views_full'] });
  }
});
