// Mutation checks of the randomized harnesses: each wraps the real engine in a deliberately faulty
// one (a dropped row, a slightly wrong float, a lost change, a lost insert in multi-row batches) and
// asserts that the differential and property checks catch it. A harness that passes a broken engine
// proves nothing; these keep ours honest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/index.ts';
import type { ViewChangeSet, ViewSnapshot } from '../src/exec/api.ts';
import type { Row } from '../src/common/types.ts';
import type { EngineLike } from './support/engine-like.ts';
import { runDifferential } from './support/differential.ts';
import { checkBatchSplitInvariance, checkChangelogFold } from './support/properties.ts';
import { deriveSeed } from './support/random-workload.ts';

interface Faults {
  snapshot?: (view: string, s: ViewSnapshot, epoch: number) => ViewSnapshot;
  changes?: (c: ViewChangeSet) => ViewChangeSet;
  batch?: (c: { insert?: readonly Row[]; delete?: readonly Row[] }) => {
    insert?: readonly Row[];
    delete?: readonly Row[];
  };
}

function faulty(f: Faults): () => EngineLike {
  return () => {
    const e = new Engine();
    return {
      execute: (sql) => e.execute(sql),
      executeScript: (sql) => e.executeScript(sql),
      applyChanges: (t, c) => e.applyChanges(t, f.batch ? f.batch(c) : c),
      viewSnapshot: (v) => (f.snapshot ? f.snapshot(v, e.viewSnapshot(v), e.epoch) : e.viewSnapshot(v)),
      viewErrors: (v) => e.viewErrors(v),
      tableRows: (t) => e.tableRows(t),
      subscribe: (v, l) => e.subscribe(v, (c) => l(f.changes ? f.changes(c) : c)),
      get epoch() {
        return e.epoch;
      },
    };
  };
}

const SEEDS = [0, 1, 2, 3].map((i) => deriveSeed(4242, i));

function caughtByDifferential(f: Faults): number {
  let caught = 0;
  for (const seed of SEEDS) {
    try {
      runDifferential(seed, { epochs: 60, engine: faulty(f) });
    } catch (e) {
      assert.match(String(e), /replay: SLUICE_SEED=|differs|columns differ|threw/);
      caught++;
    }
  }
  return caught;
}

test('sanity: the unwrapped engine passes the same runs', () => {
  assert.equal(caughtByDifferential({}), 0);
});

test('differential catches a row missing from a snapshot', () => {
  const caught = caughtByDifferential({
    snapshot: (_v, s, epoch) => (epoch === 40 && s.rows.length > 1 ? { ...s, rows: s.rows.slice(1) } : s),
  });
  assert.equal(caught, SEEDS.length);
});

test('differential catches a float off by one part in a million', () => {
  const caught = caughtByDifferential({
    snapshot: (_v, s, epoch) => {
      if (epoch < 30) return s;
      const col = s.columns.find((c) => c.type === 'double precision' || c.type === 'numeric');
      if (col === undefined) return s;
      let done = false;
      const rows = s.rows.map((r) => {
        const v = r[col.name];
        if (done || typeof v !== 'number' || v === 0) return r;
        done = true;
        return { ...r, [col.name]: v * (1 + 1e-6) };
      });
      return { ...s, rows };
    },
  });
  assert.ok(caught >= 3, `caught in ${caught} of ${SEEDS.length} runs`);
});

test('differential catches an integer returned as a different integer type of value', () => {
  const caught = caughtByDifferential({
    snapshot: (_v, s, epoch) => {
      if (epoch < 20) return s;
      const col = s.columns.find((c) => c.type === 'bigint');
      if (col === undefined) return s;
      return {
        ...s,
        rows: s.rows.map((r, i) =>
          i === 0 && typeof r[col.name] === 'number' ? { ...r, [col.name]: (r[col.name] as number) + 1 } : r,
        ),
      };
    },
  });
  assert.equal(caught, SEEDS.length);
});

test('changelog fold catches a lost change', () => {
  let caught = 0;
  for (const seed of SEEDS) {
    try {
      checkChangelogFold(
        seed,
        30,
        faulty({ changes: (c) => (c.changes.length > 1 ? { ...c, changes: c.changes.slice(1) } : c) }),
      );
    } catch {
      caught++;
    }
  }
  assert.equal(caught, SEEDS.length);
});

test('changelog fold catches a change set for an unchanged view', () => {
  let caught = 0;
  for (const seed of SEEDS) {
    try {
      checkChangelogFold(
        seed,
        30,
        faulty({
          changes: (c) => {
            const first = c.changes[0];
            // A -U/+U pair of the same row: cancels out in the fold, but is not consolidated.
            return first === undefined
              ? c
              : { ...c, changes: [...c.changes, { op: '-U', row: first.row }, { op: '+U', row: first.row }] };
          },
        }),
      );
    } catch {
      caught++;
    }
  }
  assert.equal(caught, SEEDS.length);
});

test('batch-split invariance catches an engine that loses the last insert of multi-row batches', () => {
  let caught = 0;
  for (const seed of SEEDS) {
    try {
      checkBatchSplitInvariance(
        seed,
        60,
        [false, false, true],
        faulty({
          batch: (c) => ((c.insert?.length ?? 0) > 1 ? { ...c, insert: c.insert!.slice(0, -1) } : c),
        }),
      );
    } catch {
      caught++;
    }
  }
  assert.ok(caught >= 3, `caught in ${caught} of ${SEEDS.length} runs`);
});
