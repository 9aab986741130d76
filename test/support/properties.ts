// The two engine properties checked with fast-check (and replayed from test/regressions/seeds.json):
//  (a) batch-split invariance — the same sequence of changes, applied in different batchings, leaves
//      every view with the same rows;
//  (b) changelog fold — folding every ViewChangeSet a view emitted onto its snapshot at subscription
//      time reproduces its current snapshot after every epoch; an epoch emits a change set for a view
//      exactly when the view's rows changed, consolidated, and keyed views never hold two rows per key.
import assert from 'node:assert/strict';
import { Engine } from '../../src/index.ts';
import type { ViewChangeSet } from '../../src/exec/api.ts';
import type { ColumnInfo, Row } from '../../src/common/types.ts';
import type { EngineLike } from './engine-like.ts';
import { viewDdl } from './differential.ts';
import { Rng, TableModel, describeBatch, randomBatch, randomBatchSize } from './random-workload.ts';
import { randomScenario, type Scenario } from './random-views.ts';
import { canonicalRows, createTableSql, type Changes } from './sqlite-oracle.ts';

export type EngineFactory = () => EngineLike;

const realEngine: EngineFactory = () => new Engine();

function setup(scenario: Scenario, make: EngineFactory): EngineLike {
  const engine = make();
  for (const t of scenario.tables) engine.execute(createTableSql(t));
  for (const v of scenario.views) engine.execute(viewDdl(v));
  return engine;
}

interface Unit {
  readonly table: string;
  readonly keyed: boolean;
  readonly changes: Changes;
  readonly insertKeys: readonly string[];
  readonly deleteKeys: readonly string[];
}

/** A sequence of small change units, each valid after the previous ones (update = delete + insert). */
export function changeUnits(scenarioSeed: number, count: number): { scenario: Scenario; units: Unit[] } {
  const rng = new Rng(scenarioSeed);
  const scenario = randomScenario(rng, { minViews: 3, maxViews: 6 });
  const models = scenario.tables.map((t) => new TableModel(t));
  const units: Unit[] = [];
  for (let i = 0; i < count; i++) {
    const m = rng.pick(models);
    // Mostly single changes; sometimes a small block, so units also carry several rows.
    const changes = randomBatch(rng, m, rng.chance(0.8) ? 1 : rng.int(2, 6), 40);
    units.push({
      table: m.table.name,
      keyed: m.keyed,
      changes,
      insertKeys: (changes.insert ?? []).map((r) => m.key(r)),
      deleteKeys: (changes.delete ?? []).map((r) => m.key(r)),
    });
    m.apply(changes);
  }
  return { scenario, units };
}

/**
 * Groups consecutive units into batches at the requested cuts. A cut is forced where merging would
 * change the meaning (a batch applies all deletes before all inserts): a different table, a delete of
 * a row the batch already inserts, or (keyed tables) a second insert of the same key.
 */
export interface Batch {
  readonly table: string;
  readonly changes: Changes;
}

export function batchUnits(units: readonly Unit[], cutAfter: (i: number) => boolean): Batch[] {
  const out: Batch[] = [];
  let cur: { table: string; insert: Row[]; delete: Row[]; ins: Set<string> } | undefined;
  const flush = (): void => {
    if (cur === undefined) return;
    const c: { insert?: Row[]; delete?: Row[] } = {};
    if (cur.insert.length > 0) c.insert = cur.insert;
    if (cur.delete.length > 0) c.delete = cur.delete;
    out.push({ table: cur.table, changes: c });
    cur = undefined;
  };
  units.forEach((u, i) => {
    if (cur !== undefined) {
      const conflict =
        cur.table !== u.table ||
        u.deleteKeys.some((k) => cur!.ins.has(k)) ||
        (u.keyed && u.insertKeys.some((k) => cur!.ins.has(k)));
      if (conflict) flush();
    }
    cur ??= { table: u.table, insert: [], delete: [], ins: new Set() };
    cur.insert.push(...(u.changes.insert ?? []));
    cur.delete.push(...(u.changes.delete ?? []));
    for (const k of u.insertKeys) cur.ins.add(k);
    if (cutAfter(i)) flush();
  });
  flush();
  return out;
}

function finalState(
  scenario: Scenario,
  batches: readonly Batch[],
  make: EngineFactory,
): Map<string, string[]> {
  const engine = setup(scenario, make);
  for (const b of batches) engine.applyChanges(b.table, b.changes);
  assert.equal(engine.epoch, batches.length, 'one epoch per batch');
  const out = new Map<string, string[]>();
  for (const v of scenario.views) {
    const snap = engine.viewSnapshot(v.name);
    out.set(v.name, canonicalRows(snap.columns, snap.rows));
  }
  return out;
}

/** Property (a): final view contents do not depend on how the change sequence is batched. */
export function checkBatchSplitInvariance(
  scenarioSeed: number,
  unitCount: number,
  cuts: readonly boolean[],
  make: EngineFactory = realEngine,
): void {
  const { scenario, units } = changeUnits(scenarioSeed, unitCount);
  const singles = batchUnits(units, () => true);
  const chosen = batchUnits(units, (i) => cuts[i % Math.max(1, cuts.length)] ?? false);
  const largest = batchUnits(units, () => false);
  const a = finalState(scenario, singles, make);
  const b = finalState(scenario, chosen, make);
  const c = finalState(scenario, largest, make);
  for (const v of scenario.views) {
    const where = `view ${v.name} (${v.select}); scenario seed ${scenarioSeed}`;
    assert.deepEqual(
      b.get(v.name),
      a.get(v.name),
      `${where}: ${chosen.length} batches vs ${singles.length} single-change batches`,
    );
    assert.deepEqual(
      c.get(v.name),
      a.get(v.name),
      `${where}: ${largest.length} batches vs ${singles.length} single-change batches`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------

/**
 * Exact row text (no tolerance: the change log and the snapshot come from the same engine); -0 as 0,
 * as SQL compares them. With `signedZero`, -0 stays apart from 0: a view whose only row of a DISTINCT
 * group changes from -0 to 0 (`ROUND(-0.025)`, then `ROUND(0.1)`) rightly removes the one and adds the
 * other in one change set, the value its remaining rows hold.
 */
export function exactRow(columns: readonly ColumnInfo[], row: Row, signedZero = false): string {
  return JSON.stringify(
    columns.map((c) => {
      const v = row[c.name];
      if (typeof v === 'bigint') return `${v}n`;
      if (typeof v === 'number' && Object.is(v, -0)) return signedZero ? '-0' : 0;
      return v === undefined ? '<missing>' : v;
    }),
  );
}

function addTo(m: Map<string, number>, k: string, n: number): void {
  const next = (m.get(k) ?? 0) + n;
  if (next === 0) m.delete(k);
  else m.set(k, next);
}

function multiset(columns: readonly ColumnInfo[], rows: readonly Row[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of rows) addTo(m, exactRow(columns, r), 1);
  return m;
}

function sameMultiset(a: Map<string, number>, b: Map<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, n] of a) if (b.get(k) !== n) return false;
  return true;
}

function showMultiset(m: Map<string, number>, limit = 12): string {
  const xs = [...m].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).slice(0, limit);
  return (
    xs.map(([k, n]) => `    ${k}${n !== 1 ? ` x${n}` : ''}`).join('\n') +
    (m.size > limit ? `\n    ... (${m.size} rows)` : '')
  );
}

/** Property (b), over a workload of `epochs` random batches. Returns the number of change sets folded. */
export function checkChangelogFold(
  scenarioSeed: number,
  epochs: number,
  make: EngineFactory = realEngine,
): number {
  const rng = new Rng(scenarioSeed);
  const scenario = randomScenario(rng, { minViews: 3, maxViews: 7 });
  const engine = make();
  for (const t of scenario.tables) engine.execute(createTableSql(t));
  const models = scenario.tables.map((t) => new TableModel(t));
  interface Watch {
    readonly name: string;
    readonly columns: readonly ColumnInfo[];
    readonly key: readonly string[] | null;
    readonly folded: Map<string, number>;
    readonly received: ViewChangeSet[];
    last: Map<string, number>;
  }
  const watches: Watch[] = [];
  let folded = 0;
  let lastBatch = '(none)';
  const ctx = (view: string): string =>
    `view ${view}, epoch ${engine.epoch}, scenario seed ${scenarioSeed}\n` +
    scenario.views.map((v) => `  ${viewDdl(v)};`).join('\n') +
    `\nlast ${lastBatch}`;
  const watch = (name: string): void => {
    const snap = engine.viewSnapshot(name);
    const w: Watch = {
      name,
      columns: snap.columns,
      key: snap.key,
      folded: multiset(snap.columns, snap.rows),
      received: [],
      last: multiset(snap.columns, snap.rows),
    };
    engine.subscribe(name, (cs) => w.received.push(cs));
    watches.push(w);
  };
  const half = Math.ceil(scenario.views.length / 2);
  scenario.views.forEach((v, i) => {
    if (i < half) {
      engine.execute(viewDdl(v));
      watch(v.name);
    }
  });
  for (let e = 1; e <= epochs; e++) {
    const m = rng.pick(models);
    const batch = randomBatch(rng, m, randomBatchSize(rng, 0), 120);
    lastBatch = describeBatch(m.table.name, batch);
    engine.applyChanges(m.table.name, batch);
    m.apply(batch);
    if (e === Math.floor(epochs / 3)) {
      // The rest of the views are created over existing data and watched from then on.
      scenario.views.slice(half).forEach((v) => {
        engine.execute(viewDdl(v));
        watch(v.name);
      });
    }
    for (const w of watches) {
      const snap = engine.viewSnapshot(w.name);
      const now = multiset(w.columns, snap.rows);
      const sets = w.received.splice(0);
      const changed = !sameMultiset(now, w.last);
      const c = ctx(w.name);
      assert.ok(sets.length <= 1, `more than one change set in one epoch\n${c}`);
      assert.equal(
        sets.length,
        changed ? 1 : 0,
        `${changed ? 'no change set for a changed view' : 'a change set for an unchanged view'}\n${c}`,
      );
      for (const cs of sets) {
        assert.equal(cs.view, w.name, c);
        assert.equal(cs.epoch, engine.epoch, `change set epoch\n${c}`);
        assert.ok(cs.changes.length > 0, `empty change set\n${c}`);
        const plus = new Map<string, number>();
        const minus = new Map<string, number>();
        // Consolidation is by the exact row, -0 apart from 0.
        const added = new Set<string>();
        const removed = new Set<string>();
        let minusU = 0;
        let plusU = 0;
        for (const ch of cs.changes) {
          const n = ch.n ?? 1;
          assert.ok(Number.isInteger(n) && n >= 1, `bad multiplicity ${String(ch.n)}\n${c}`);
          if (ch.n !== undefined) assert.equal(w.key, null, `n on a keyed view\n${c}`);
          const k = exactRow(w.columns, ch.row);
          const signed = exactRow(w.columns, ch.row, true);
          if (ch.op === '+I' || ch.op === '+U') {
            addTo(plus, k, n);
            added.add(signed);
          } else {
            addTo(minus, k, n);
            removed.add(signed);
          }
          if (ch.op === '-U') minusU++;
          if (ch.op === '+U') plusU++;
        }
        assert.equal(minusU, plusU, `-U and +U must pair up\n${c}`);
        for (const k of added)
          assert.ok(!removed.has(k), `not consolidated: ${k} both added and removed\n${c}`);
        for (const [k, n] of minus) {
          const have = w.folded.get(k) ?? 0;
          assert.ok(have >= n, `change set removes ${n} x ${k} but the fold holds ${have}\n${c}`);
          addTo(w.folded, k, -n);
        }
        for (const [k, n] of plus) addTo(w.folded, k, n);
        folded++;
      }
      assert.ok(
        sameMultiset(w.folded, now),
        `fold of the change log differs from the snapshot\n  fold:\n${showMultiset(w.folded)}\n  snapshot:\n${showMultiset(now)}\n${c}`,
      );
      if (w.key !== null) {
        const keys = new Set(snap.rows.map((r) => JSON.stringify(w.key!.map((k) => String(r[k])))));
        assert.equal(keys.size, snap.rows.length, `keyed view holds two rows with one key\n${c}`);
      }
      w.last = now;
    }
  }
  return folded;
}
