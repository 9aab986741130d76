// A running STRING_AGG re-emits texts as long as its partition: one row at the head of a partition
// of 400 texts of 50 characters re-emits 801 rows holding ≈ 8 M characters, counted by rows alone as
// 800. A STRING_AGG window's emitted rows (the re-emitted held rows and the write's own) weigh
// 1 + ⌈C / 64⌉ rows each, C the characters its partition holds and the write brings, in a write's
// epoch bound (EPOCH_TOO_LARGE, nothing changed: view, table, journal) and in a view's first build
// (VIEW_TOO_LARGE, nothing created). The counts are read here from the refusals' messages: work,
// not time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import type { EngineJournal, JournalBatch } from '../src/common/journal.ts';
import type { Row } from '../src/common/types.ts';
import type { TableChanges } from '../src/exec/api.ts';
import type { PreparedBatch } from '../src/exec/table-store.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';

import { drawFrom, refusal, rowsOf, sorted } from './support/epoch-bound.ts';

const LIMIT = 20_000;
const RUNNING = "SELECT g, t, string_agg(s, ',') OVER (PARTITION BY g ORDER BY t) AS run FROM a";

/** A journal keeping the epochs of its batches and the DDL it was given. */
class Journal implements EngineJournal {
  readonly batches: number[] = [];
  readonly ddl: string[] = [];
  appendBatch(entry: JournalBatch): Record<string, never> {
    this.batches.push(entry.epoch);
    return {};
  }
  appendDdl(entry: { readonly sql: string }): void {
    this.ddl.push(entry.sql);
  }
  appendTick(): void {}
}

/** `n` rows of partition `g`, t from `from` on, each text 50 characters. */
function texts(g: number, n: number, from = 0): Row[] {
  return rowsOf(n, (i) => ({ g, t: from + i, s: `${g}:${from + i}:`.padEnd(50, 'x') }));
}

function engine(options: { maxEpochJoinRows?: number; maxBackfillRows?: number } = {}): {
  e: Engine;
  journal: Journal;
} {
  const e = new Engine({ maxEpochJoinRows: LIMIT, ...options });
  e.execute('CREATE TABLE a (g BIGINT, t BIGINT, s TEXT)');
  const journal = new Journal();
  e.setJournal(journal);
  return { e, journal };
}

/** Partition 0 of 400 texts, partition 1 of 100, loaded in writes of 50 at their ends. */
function loaded(e: Engine): void {
  for (let at = 0; at < 400; at += 50) e.applyChanges('a', { insert: texts(0, 50, at) });
  for (let at = 0; at < 100; at += 50) e.applyChanges('a', { insert: texts(1, 50, at) });
}

function stateOf(e: Engine, journal: Journal): string {
  return JSON.stringify({
    epoch: e.epoch,
    journal: journal.batches,
    a: sorted(e.tableRows('a')),
    v: sorted(e.viewSnapshot('v').rows),
  });
}

function assertMatchesSelect(e: Engine): void {
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute(RUNNING)[0]?.rows ?? []));
}

/** The rows a refused write's message says its views would build. */
function builtOf(message: string): number {
  const m = /build (\d+) rows in one epoch/.exec(message);
  assert.ok(m !== null, message);
  return Number(m[1]);
}

test('one row at the head of a 400-text partition is refused, of a 100-text partition accepted', () => {
  const { e, journal } = engine();
  e.execute(`CREATE MATERIALIZED VIEW v AS ${RUNNING}`);
  loaded(e);
  const before = stateOf(e, journal);
  const error = refusal(() => e.applyChanges('a', { insert: texts(0, 1, -1) }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  // 400 held rows retracted and put back, and the new one: 801 rows, each of at most 401 × 51
  // characters (the texts and a delimiter each): 1 + 320 rows.
  assert.equal(builtOf(error.message), 801 * (1 + Math.ceil((401 * 51) / 64)));
  // Its head row's deletion: counted as the insertion was (the held slots from the row on, itself
  // among them, and the row; its characters both held and brought: a bound, not the exact count).
  const deleted = refusal(() => e.applyChanges('a', { delete: texts(0, 1) }));
  assert.equal(builtOf(deleted.message), 801 * (1 + Math.ceil((401 * 51) / 64)));
  assert.equal(stateOf(e, journal), before);
  // 201 rows of at most 101 × 51 characters: 201 × 82 = 16,482 rows, within 20,000.
  e.applyChanges('a', { insert: texts(1, 1, -1) });
  e.applyChanges('a', { delete: texts(1, 1, 50) });
  assertMatchesSelect(e);
  assert.equal(journal.batches.length, 12);
});

test('a bulk insert into one partition is weighed by the texts it brings, its own rows counted', () => {
  const { e, journal } = engine();
  e.execute(`CREATE MATERIALIZED VIEW v AS ${RUNNING}`);
  // 200 new rows at a new partition: no held row is touched, but they emit 200 texts of up to
  // 200 × 51 characters (≈ 1 M characters): 200 × 161 rows.
  const error = refusal(() => e.applyChanges('a', { insert: texts(5, 200) }));
  assert.equal(error.code, 'EPOCH_TOO_LARGE');
  assert.equal(builtOf(error.message), 200 * (1 + Math.ceil((200 * 51) / 64)));
  assert.deepEqual(journal.batches, []);
  assert.deepEqual(e.tableRows('a'), []);
  // Half of it fits (100 × 81 rows); so does the other half at its end, one row each way.
  e.applyChanges('a', { insert: texts(5, 100) });
  e.applyChanges('a', { insert: texts(5, 100, 100) });
  assertMatchesSelect(e);
});

test('a window without STRING_AGG, and a STRING_AGG over NULLs, count one row per row emitted', () => {
  const views = [
    'SELECT g, t, row_number() OVER (PARTITION BY g ORDER BY t) AS run FROM a',
    "SELECT g, t, string_agg(NULL::text, ',') OVER (PARTITION BY g ORDER BY t) AS run FROM a",
  ];
  // 800 held rows re-emitted by row_number; 801 by the STRING_AGG of NULLs (its held rows and the
  // new one), each weighing one row: accepted with a bound of 1,601 rows, refused with one less.
  for (const bound of [1600, 1601]) {
    const { e } = engine({ maxEpochJoinRows: bound });
    views.forEach((sql, i) => e.execute(`CREATE MATERIALIZED VIEW v${i} AS ${sql}`));
    loaded(e);
    if (bound === 1601) e.applyChanges('a', { insert: texts(0, 1, -1) });
    else assert.equal(builtOf(refusal(() => e.applyChanges('a', { insert: texts(0, 1, -1) })).message), 1601);
  }
});

test('CREATE over a 400-text partition is refused with nothing created; over 100 texts it builds', () => {
  const { e, journal } = engine({ maxBackfillRows: LIMIT });
  loaded(e);
  const error = refusal(() => e.execute(`CREATE MATERIALIZED VIEW v AS ${RUNNING}`));
  assert.equal(error.code, 'VIEW_TOO_LARGE');
  assert.match(error.message, /STRING_AGG windows \(weighed by their texts\) built more than 21500/);
  assert.deepEqual(journal.ddl, []);
  assert.equal(refusal(() => e.viewSnapshot('v')).code, 'UNKNOWN_VIEW');
  // Partition 1 alone: 100 rows of at most 100 × 51 characters, 8,100 rows.
  e.execute(`CREATE MATERIALIZED VIEW v AS ${RUNNING.replace('FROM a', 'FROM a WHERE g = 1')}`);
  assert.equal(journal.ddl.length, 1);
});

test('restored from a checkpoint, the partition characters are recomputed: the head row is refused', () => {
  const from = engine().e;
  from.setStateTracking(true);
  from.execute(`CREATE MATERIALIZED VIEW v AS ${RUNNING}`);
  loaded(from);
  const store = new MemoryCheckpointStore();
  store.write(from.takeCheckpoint());
  const { e, journal } = engine();
  e.setStateTracking(true);
  e.execute(`CREATE MATERIALIZED VIEW v AS ${RUNNING}`);
  assert.deepEqual(e.loadCheckpoint(store.read()).rebuilt, []);
  const before = stateOf(e, journal);
  const error = refusal(() => e.applyChanges('a', { insert: texts(0, 1, -1) }));
  assert.equal(builtOf(error.message), 801 * (1 + Math.ceil((401 * 51) / 64)));
  assert.equal(stateOf(e, journal), before);
  e.applyChanges('a', { insert: texts(1, 1, -1) });
  assertMatchesSelect(e);
});

/** What the test reads of the engine's inside: a table's prepared batch and the write's full count. */
interface Inside {
  readonly state: {
    readonly tables: { get(name: string): { prepare(changes: TableChanges): PreparedBatch } | undefined };
  };
  readonly views: { joinRowsBuilt(table: string, written: PreparedBatch): { readonly rows: number } };
}

/** What the rows that differ between two snapshots weigh (each 1 + ⌈its texts' characters / 64⌉). */
function weightChanged(before: readonly Row[], after: readonly Row[]): number {
  const counts = new Map<string, { row: Row; n: number }>();
  const tally = (rows: readonly Row[], sign: number): void => {
    for (const row of rows) {
      const key = JSON.stringify(row);
      const at = counts.get(key) ?? { row, n: 0 };
      at.n += sign;
      counts.set(key, at);
    }
  };
  tally(before, 1);
  tally(after, -1);
  let weight = 0;
  for (const { row, n } of counts.values()) {
    let chars = 0;
    for (const v of Object.values(row)) if (typeof v === 'string') chars += v.length;
    weight += Math.abs(n) * (1 + Math.ceil(chars / 64));
  }
  return weight;
}

for (const frame of ['', ' ROWS 3 PRECEDING', ' ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING']) {
  test(`the weighed count is at least what the view's rows change by${frame}`, () => {
    const draw = drawFrom(6100 + frame.length);
    const select = `SELECT g, t, string_agg(s, '--') OVER (PARTITION BY g ORDER BY t${frame}) AS run FROM a`;
    const { e } = engine({ maxEpochJoinRows: 1e12 });
    e.execute(`CREATE MATERIALIZED VIEW v AS ${select}`);
    const inside = e as unknown as Inside;
    const held: Row[] = [];
    let next = 0;
    for (let step = 0; step < 60; step++) {
      const inserts: Row[] = [];
      const deletes: Row[] = [];
      for (let j = 1 + draw(draw(4) === 0 ? 30 : 4); j > 0; j--) {
        const row = held[draw(Math.max(held.length, 1))];
        if (draw(3) === 0 && row !== undefined && !deletes.includes(row)) deletes.push(row);
        else {
          const s = draw(6) === 0 ? null : 'y'.repeat(draw(200));
          inserts.push({ g: draw(3), t: draw(50) - (next++ % 7), s });
        }
      }
      const changes: TableChanges = { insert: inserts, delete: deletes.map((r) => ({ ...r })) };
      const prepared = inside.state.tables.get('a')?.prepare(changes);
      assert.ok(prepared !== undefined);
      const counted = inside.views.joinRowsBuilt('a', prepared).rows;
      const before = e.viewSnapshot('v').rows;
      e.applyChanges('a', changes);
      const changed = weightChanged(before, e.viewSnapshot('v').rows);
      assert.ok(counted >= changed, `step ${step}: counted ${counted}, the view changed by ${changed}`);
      for (const row of deletes) held.splice(held.indexOf(row), 1);
      held.push(...inserts);
    }
    assertMatchesSelectOf(e, select);
  });
}

function assertMatchesSelectOf(e: Engine, select: string): void {
  assert.deepEqual(sorted(e.viewSnapshot('v').rows), sorted(e.execute(select)[0]?.rows ?? []));
}

test('an ad-hoc SELECT weighs its STRING_AGG rows against its budget: RESULT_TOO_LARGE past it', () => {
  const { e } = engine();
  // One partition of 1,200 texts: 1,200 × (1 + ⌈1,200 × 51 / 64⌉) = 1,149,600 rows, past the
  // SELECT's 1,000,000 (SELECT_JOIN_ROWS); 1,000 of them weigh 798,000.
  e.applyChanges('a', { insert: texts(0, 1200) });
  const error = refusal(() => e.execute(RUNNING));
  assert.equal(error.code, 'RESULT_TOO_LARGE');
  assert.match(error.message, /STRING_AGG windows of this query produce more than 1000000 rows/);
  assert.equal((e.execute(`${RUNNING} WHERE t < 1000`)[0]?.rows ?? []).length, 1000);
});
