// With workers, a COUNT(*) Reduce over a view whose changes come from a partitioned Reduce steps on
// the partitions' folds of those changes (src/exec/workers/folding-reduce.ts): one row per touched
// group instead of every change. Its changelog, its rows and its row errors are the single Reduce's
// (1 worker); a fold whose key fails on a change falls back to the changes for that step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/exec/engine.ts';
import type { ViewGraph } from '../src/exec/view-graph.ts';
import type { Row } from '../src/common/types.ts';
import { mulberry32 } from './support/checkpoint-workload.ts';

const TABLE = 'CREATE TABLE orders (id INT PRIMARY KEY, seller INT NOT NULL, amount INT NOT NULL)';
const TOTALS = 'SELECT seller, SUM(amount) AS total FROM orders GROUP BY seller';
/** Folded: COUNT(*) by an expression of the partitioned view's columns. */
const HISTOGRAM =
  'SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM totals GROUP BY FLOOR(total / 10)';
/** Folded, but its key divides by zero for a total that is a multiple of 11: those steps read the changes. */
const RISKY = 'SELECT 100 / (total % 11) AS r, COUNT(*) AS n FROM totals GROUP BY 100 / (total % 11)';

interface Batch {
  readonly insert: Row[];
  readonly delete: Row[];
}

/** Seeded batches of inserts, updates and deletes over 30 sellers, amounts 1..20. */
function workload(seed: number, batches: number): Batch[] {
  const rnd = mulberry32(seed);
  const live = new Map<number, Row>();
  let nextId = 1;
  const out: Batch[] = [];
  for (let b = 0; b < batches; b++) {
    const insert: Row[] = [];
    const del: Row[] = [];
    const touched = new Set<number>();
    const size = rnd() < 0.3 ? 80 : 1 + Math.floor(rnd() * 10);
    for (let i = 0; i < size; i++) {
      const ids = [...live.keys()];
      const r = rnd();
      const id = ids.length > 0 && r < 0.35 ? (ids[Math.floor(rnd() * ids.length)] as number) : nextId++;
      if (touched.has(id)) continue;
      touched.add(id);
      if (live.has(id) && r < 0.15) {
        del.push({ id });
        live.delete(id);
        continue;
      }
      const row: Row = { id, seller: Math.floor(rnd() * 30), amount: 1 + Math.floor(rnd() * 20) };
      insert.push(row);
      live.set(id, row);
    }
    out.push({ insert, delete: del });
  }
  return out;
}

/** How many steps of `view`'s partitioned Reduce had their changes merged on the main thread. */
function mergedSteps(engine: Engine, view: string): number {
  const graph = (engine as unknown as { readonly views: ViewGraph }).views;
  return graph.get(view)?.partitionedOutput()?.mergedSteps ?? 0;
}

function foldedSteps(engine: Engine, view: string): number {
  const graph = (engine as unknown as { readonly views: ViewGraph }).views;
  return graph.get(view)?.folding.reduce((n, f) => n + f.foldedSteps, 0) ?? 0;
}

/** The changelogs of `listened` and the final rows of every view, with `workers` workers. */
function run(
  workers: number,
  views: readonly (readonly [string, string])[],
  listened: readonly string[],
  batches: readonly Batch[],
): { log: string; rows: string; folded: Map<string, number>; merged: Map<string, number> } {
  const engine = new Engine({ workers });
  try {
    engine.execute(TABLE);
    // A few rows before the views exist: the backfill reads the view's contents, not a fold.
    for (const b of batches.slice(0, 3)) engine.applyChanges('orders', b);
    for (const [name, select] of views) engine.execute(`CREATE MATERIALIZED VIEW ${name} AS ${select}`);
    const log: string[] = [];
    for (const name of listened) engine.subscribe(name, (c) => log.push(JSON.stringify(c)));
    for (const b of batches.slice(3)) engine.applyChanges('orders', b);
    const rows = views.map(([name]) => {
      // A snapshot of a view that holds row errors is refused (its message names the first).
      try {
        return JSON.stringify(
          engine
            .viewSnapshot(name)
            .rows.map((r) => JSON.stringify(r))
            .sort(),
        );
      } catch (error) {
        return String(error);
      }
    });
    const errors = views.map(([name]) => JSON.stringify(engine.viewErrors(name)));
    // The views' row counts as the catalog keeps them (a partitioned view's Output counts its rows
    // by the partitions' net weights, without merging the changes).
    const counts = engine
      .catalog()
      .views.filter((v) => views.some(([name]) => name === v.name))
      .map((v) => `${v.name} ${v.rowCount}`);
    const folded = new Map(views.map(([name]) => [name, foldedSteps(engine, name)]));
    const merged = new Map(views.map(([name]) => [name, mergedSteps(engine, name)]));
    return { log: log.join('\n'), rows: [...rows, ...errors, ...counts].join('\n'), folded, merged };
  } finally {
    engine.close();
  }
}

test('a COUNT(*) view over a partitioned view steps on the partitions’ folds, with the single Reduce’s changes', () => {
  const batches = workload(7, 60);
  const views = [
    ['totals', TOTALS],
    ['histogram', HISTOGRAM],
  ] as const;
  // Nobody listens to `totals`: its changes' columns are never needed on the main thread.
  const one = run(1, views, ['histogram'], batches);
  assert.ok(one.log.length > 1000, 'the workload changes the histogram');
  for (const workers of [2, 4]) {
    const many = run(workers, views, ['histogram'], batches);
    assert.equal(many.log, one.log, `${workers} workers: the histogram's changelog`);
    assert.equal(many.rows, one.rows, `${workers} workers: the views' rows`);
    // Every epoch after the views were built stepped the histogram on the folds.
    assert.equal(many.folded.get('histogram'), batches.length - 3, `${workers} workers: folded steps`);
    // Nothing read `totals`' changes themselves (its Output counts by net weight, the histogram
    // reads the folds): the main thread merged none of them.
    assert.equal(many.merged.get('totals'), 0, `${workers} workers: merged steps`);
  }
  assert.equal(one.folded.get('histogram'), 0, 'one worker: no partitions, no folds');
});

test('a fold whose key fails on a change falls back to the changes; row errors are the single Reduce’s', () => {
  const batches = workload(11, 60);
  const views = [
    ['totals', TOTALS],
    ['histogram', HISTOGRAM],
    ['risky', RISKY],
  ] as const;
  const listened = views.map(([name]) => name);
  const one = run(1, views, listened, batches);
  assert.match(one.log, /division by zero/i, 'the workload makes totals that are multiples of 11');
  for (const workers of [2, 4]) {
    const many = run(workers, views, listened, batches);
    assert.equal(many.log, one.log, `${workers} workers: every view's changelog`);
    assert.equal(many.rows, one.rows, `${workers} workers: the views' rows and errors`);
    const risky = many.folded.get('risky') as number;
    assert.ok(risky > 0 && risky < batches.length - 3, `${workers} workers: ${risky} of the steps folded`);
    assert.equal(many.folded.get('histogram'), batches.length - 3);
    // A subscriber reads `totals`' changes: every step's are merged (once).
    assert.equal(many.merged.get('totals'), batches.length - 3, `${workers} workers: merged steps`);
  }
});
