// Mutation checks of the join harness (support/join-workload.ts): a deliberately wrong answer must
// make each comparison fail. The oracle is given a different join than the view (INNER vs LEFT,
// LEFT vs FULL, ON k vs ON k AND j), or the engine is wrapped in a faulty one (NULL-padded rows
// dropped from snapshots, a lost insert in multi-row batches, a row that never leaves). A harness
// that passes a wrong answer proves nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/index.ts';
import type { ViewSnapshot } from '../src/exec/api.ts';
import type { Row } from '../src/common/types.ts';
import type { EngineLike } from './support/engine-like.ts';
import { deriveSeed } from './support/random-workload.ts';
import { checkJoinInvariance, checkJoinRetraction, type EngineFactory } from './support/join-invariance.ts';
import type { JoinView } from './support/join-template-parts.ts';
import { runJoinDifferential } from './support/join-workload.ts';

const base: EngineFactory = () => new Engine();

interface Faults {
  snapshot?: (view: string, s: ViewSnapshot, epoch: number) => ViewSnapshot;
  batch?: (c: { insert?: readonly Row[]; delete?: readonly Row[] }) => {
    insert?: readonly Row[];
    delete?: readonly Row[];
  };
}

function faulty(f: Faults): EngineFactory {
  return () => {
    const e: EngineLike = base();
    return {
      execute: (sql) => e.execute(sql),
      executeScript: (sql) => e.executeScript(sql),
      applyChanges: (t, c) => e.applyChanges(t, f.batch ? f.batch(c) : c),
      viewSnapshot: (v) => (f.snapshot ? f.snapshot(v, e.viewSnapshot(v), e.epoch) : e.viewSnapshot(v)),
      viewErrors: (v) => e.viewErrors(v),
      tableRows: (t) => e.tableRows(t),
      subscribe: (v, l) => e.subscribe(v, l),
      get epoch() {
        return e.epoch;
      },
    };
  };
}

const SEEDS = [0, 1, 2, 3].map((i) => deriveSeed(5151, i));

/** Runs of `templates` whose view text goes to Sluice and `wrong(sql)` to SQLite: how many fail. */
function caughtWithWrongOracle(templates: readonly string[], wrong: (v: JoinView) => string): number {
  let caught = 0;
  for (const seed of SEEDS) {
    try {
      runJoinDifferential(seed, { epochs: 40, templates, sqliteOverride: wrong });
    } catch (e) {
      assert.match(String(e), /differs from SQLite/);
      caught++;
    }
  }
  return caught;
}

test('sanity: the same runs pass with the right oracle and the unwrapped engine', () => {
  for (const seed of SEEDS) {
    runJoinDifferential(seed, { epochs: 40, templates: ['inner_one_key', 'left', 'full', 'inner_two_keys'] });
    runJoinDifferential(seed, { epochs: 40, templates: ['inner_one_key'], sqliteOverride: (v) => v.sqlite });
  }
});

test('an inner join compared with the LEFT JOIN of the same tables fails', () => {
  const n = caughtWithWrongOracle(['inner_one_key'], (v) => v.sqlite.replace(' JOIN ', ' LEFT JOIN '));
  assert.equal(n, SEEDS.length);
});

test('a LEFT JOIN compared with the inner join fails', () => {
  const n = caughtWithWrongOracle(['left'], (v) => v.sqlite.replace(' LEFT JOIN ', ' JOIN '));
  assert.equal(n, SEEDS.length);
});

test('a FULL JOIN compared with the LEFT JOIN fails', () => {
  const n = caughtWithWrongOracle(['full'], (v) => v.sqlite.replace(' FULL JOIN ', ' LEFT JOIN '));
  assert.equal(n, SEEDS.length);
});

test('a two-key join compared with the one-key join fails', () => {
  const n = caughtWithWrongOracle(['inner_two_keys'], (v) => v.sqlite.replace(/ AND \w+\.j = \w+\.j$/, ''));
  assert.equal(n, SEEDS.length);
});

test('differential catches snapshots that drop NULL-padded outer-join rows', () => {
  let caught = 0;
  for (const seed of SEEDS) {
    try {
      runJoinDifferential(seed, {
        epochs: 40,
        templates: ['left', 'full', 'right'],
        engine: faulty({
          snapshot: (_v, s) => ({
            ...s,
            // A row whose last column is NULL because it is padding (yk / yv / wCol are padding here).
            rows: s.rows.filter((r) => !s.columns.slice(-2).every((c) => r[c.name] === null)),
          }),
        }),
      });
    } catch (e) {
      assert.match(String(e), /differs from SQLite/);
      caught++;
    }
  }
  assert.equal(caught, SEEDS.length);
});

test('invariance catches an engine that loses the last insert of multi-row batches', () => {
  let caught = 0;
  for (const seed of SEEDS) {
    try {
      checkJoinInvariance(
        seed,
        60,
        faulty({
          batch: (c) => ((c.insert?.length ?? 0) > 1 ? { ...c, insert: c.insert!.slice(0, -1) } : c),
        }),
      );
    } catch (e) {
      // Either the final views differ, or a later delete of the lost row fails.
      assert.match(String(e), /invariance: view|delete row \d+: /);
      caught++;
    }
  }
  assert.equal(caught, SEEDS.length);
});

test('retraction catches a view row that never leaves', () => {
  let caught = 0;
  for (const seed of SEEDS) {
    const first = new Map<string, Row>();
    try {
      checkJoinRetraction(
        seed,
        faulty({
          snapshot: (v, s) => {
            if (s.rows[0] !== undefined && !first.has(v)) first.set(v, s.rows[0]);
            const stuck = first.get(v);
            return stuck !== undefined && !s.rows.includes(stuck) ? { ...s, rows: [...s.rows, stuck] } : s;
          },
        }),
      );
    } catch (e) {
      assert.match(String(e), /retraction: view/);
      caught++;
    }
  }
  assert.equal(caught, SEEDS.length);
});
