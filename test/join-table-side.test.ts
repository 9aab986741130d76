// A join side that is a keyed table joined on exactly its primary key reads the table's own rows
// (src/ivm/join-table-side.ts) instead of arranging them again: the join holds none of them, the
// plan says so, and every view stays what a one-off SELECT of its query gives — also where the
// table's rows are updated and deleted in the epoch that changes the other side too (a self-join,
// or the table joined with a query over itself), and across a checkpoint round trip.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';
import { Rng } from './support/random-workload.ts';

const DDL = `
  CREATE TABLE auctions (id BIGINT PRIMARY KEY, seller INTEGER NOT NULL, category TEXT NOT NULL, parent BIGINT);
  CREATE TABLE bids (id BIGINT PRIMARY KEY, auction BIGINT NOT NULL, amount INTEGER NOT NULL);
`;

const VIEWS: Record<string, string> = {
  agg: 'SELECT a.category, SUM(b.amount) AS total, COUNT(*) AS n FROM bids b JOIN auctions a ON b.auction = a.id GROUP BY a.category',
  joined:
    'SELECT b.id AS bid, a.id AS auction, a.category, b.amount FROM bids b JOIN auctions a ON b.auction = a.id',
  left_from_table:
    'SELECT a.id, a.category, b.id AS bid FROM auctions a LEFT JOIN bids b ON b.auction = a.id',
  right_of_bids: 'SELECT b.id AS bid, a.category FROM bids b LEFT JOIN auctions a ON b.auction = a.id',
  full_join: 'SELECT b.id AS bid, a.id AS auction FROM bids b FULL JOIN auctions a ON b.auction = a.id',
  residual:
    'SELECT b.id AS bid, a.category FROM bids b JOIN auctions a ON b.auction = a.id AND b.amount > a.seller',
  self_parent:
    'SELECT c.id, p.category AS parent_category FROM auctions c JOIN auctions p ON c.parent = p.id',
  self_same: 'SELECT x.id, x.seller, y.category FROM auctions x JOIN auctions y ON x.id = y.id',
  with_itself:
    'SELECT s.seller, a.category FROM (SELECT seller, MAX(id) AS top FROM auctions GROUP BY seller) s JOIN auctions a ON s.top = a.id',
};

function sorted(rows: readonly object[]): string[] {
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).sort();
}

function make(): Engine {
  const e = new Engine();
  e.execute(DDL);
  for (const [name, sql] of Object.entries(VIEWS)) e.execute(`CREATE MATERIALIZED VIEW ${name} AS ${sql}`);
  return e;
}

function assertExact(e: Engine, where: string): void {
  for (const [name, sql] of Object.entries(VIEWS)) {
    const expected = sorted(e.execute(sql)[0]?.rows ?? []);
    assert.deepEqual(sorted(e.viewSnapshot(name).rows), expected, `${where}: view ${name}`);
  }
}

test('a join on a keyed table’s primary key reads the table’s rows: planned so, nothing arranged', () => {
  const e = make();
  assert.match(e.explainView('agg'), /right input reads the table's own rows by primary key auctions\(0\)/);
  assert.match(e.explainView('left_from_table'), /left input reads the table's own rows/);
  assert.match(e.explainView('self_parent'), /right input reads the table's own rows/);
  // An outer join with a residual counts matches per arranged row: arranged as before.
  e.execute(
    'CREATE MATERIALIZED VIEW outer_residual AS SELECT b.id, a.category FROM bids b LEFT JOIN auctions a ON b.auction = a.id AND b.amount > a.seller',
  );
  assert.doesNotMatch(e.explainView('outer_residual'), /table's own rows/);
  e.applyChanges('auctions', {
    insert: Array.from({ length: 500 }, (_, i) => ({
      id: i,
      seller: i % 7,
      category: `c${i % 5}`,
      parent: null,
    })),
  });
  e.applyChanges('bids', { insert: [{ id: 1, auction: 3, amount: 10 }] });
  // The auctions by id are arranged only as the other side of the self-join on id (the bids and
  // the auctions by parent are shared too), and the join's state is the one bid, not the 500 auctions.
  assert.deepEqual(
    e
      .sharedArrangements()
      .map((a) => a.name)
      .sort(),
    ['auctions(0)', 'auctions(3)', 'bids(1)'],
  );
  const join = e.viewNodeStats('joined').find((n) => n.kind === 'join');
  const arranged = e.viewNodeStats('outer_residual').find((n) => n.kind === 'join');
  assert.ok(join !== undefined && arranged !== undefined);
  assert.ok(
    join.stateBytes * 20 < arranged.stateBytes,
    `the join holds only its bid (${join.stateBytes} B) where arranging the auctions holds them (${arranged.stateBytes} B)`,
  );
  assertExact(e, 'after the first bid');
});

test('updates and deletes of the table in the epoch that changes the other side stay exact', () => {
  const rng = new Rng(20261205);
  const e = make();
  let nextBid = 0;
  const live = new Set<number>();
  const liveBids = new Set<number>();
  for (let epoch = 0; epoch < 80; epoch++) {
    if (rng.int(0, 2) === 0) {
      const inserts: Record<string, number | string | null>[] = [];
      const deletes: Record<string, number>[] = [];
      const touched = new Set<number>();
      for (let i = rng.int(1, 12); i > 0; i--) {
        const id = rng.int(0, 40);
        if (touched.has(id)) continue;
        touched.add(id);
        if (live.has(id) && rng.int(0, 2) === 0) {
          deletes.push({ id });
          live.delete(id);
        } else {
          // A new row, or an update of a live one (a delete and an insert under its key).
          if (live.has(id)) deletes.push({ id });
          inserts.push({
            id,
            seller: rng.int(0, 6),
            category: `c${rng.int(0, 4)}`,
            parent: rng.int(0, 3) === 0 ? null : rng.int(0, 40),
          });
          live.add(id);
        }
      }
      e.applyChanges('auctions', { insert: inserts, delete: deletes });
    } else {
      const inserts = Array.from({ length: rng.int(1, 8) }, () => ({
        id: nextBid++,
        auction: rng.int(0, 45),
        amount: rng.int(0, 9),
      }));
      const gone = nextBid > 10 ? rng.int(0, nextBid - 9) : -1;
      const deletes = liveBids.delete(gone) ? [{ id: gone }] : [];
      for (const b of inserts) liveBids.add(b.id);
      e.applyChanges('bids', { insert: inserts, delete: deletes });
    }
    assertExact(e, `epoch ${epoch}`);
  }
});

test('restored from a checkpoint, the views read the restored table and go on exactly', () => {
  const e = make();
  e.setStateTracking(true);
  e.applyChanges('auctions', {
    insert: Array.from({ length: 50 }, (_, i) => ({
      id: i,
      seller: i % 3,
      category: `c${i % 4}`,
      parent: i - 1,
    })),
  });
  e.applyChanges('bids', {
    insert: Array.from({ length: 120 }, (_, i) => ({ id: i, auction: (i * 7) % 60, amount: i % 10 })),
  });
  const checkpoint = e.takeCheckpoint(true);
  for (const view of Object.keys(VIEWS)) {
    const parts = checkpoint.objects.find((o) => o.name === view)?.parts ?? [];
    const stored = parts.filter((p) => p.stateId.includes('/join')).flatMap((p) => p.delta.upserts);
    const read = /(left|right) input reads the table's own rows/.exec(e.explainView(view))?.[1];
    const prefix = read === 'left' ? 'L' : read === 'right' ? 'R' : null;
    assert.ok(
      stored.every(([, v]) => (v as { a?: string }).a !== prefix),
      `view ${view} stores no row of the side it reads from the table`,
    );
  }
  const store = new MemoryCheckpointStore();
  store.write(checkpoint);
  const restored = make();
  const { rebuilt } = restored.loadCheckpoint(store.read());
  assert.deepEqual(rebuilt, []);
  for (const x of [e, restored]) {
    x.applyChanges('auctions', {
      insert: [
        { id: 7, seller: 2, category: 'moved', parent: 3 },
        { id: 99, seller: 1, category: 'new', parent: 7 },
      ],
      delete: [{ id: 7 }, { id: 8 }],
    });
    x.applyChanges('bids', { insert: [{ id: 500, auction: 99, amount: 4 }], delete: [{ id: 1 }] });
  }
  for (const view of Object.keys(VIEWS))
    assert.deepEqual(sorted(restored.viewSnapshot(view).rows), sorted(e.viewSnapshot(view).rows), view);
  assertExact(restored, 'restored');
});

test('the kept columns follow the table through put-back rows, in-place slots and compactions', () => {
  const e = make();
  const auction = (id: number, category: string): Record<string, number | string | null> => ({
    id,
    seller: id % 5,
    category,
    parent: null,
  });
  e.applyChanges('auctions', { insert: Array.from({ length: 10000 }, (_, i) => auction(i, `c${i % 3}`)) });
  e.applyChanges('bids', {
    insert: Array.from({ length: 300 }, (_, i) => ({ id: i, auction: i * 33, amount: i % 10 })),
  });
  assertExact(e, 'loaded');
  // A row deleted and inserted again unchanged (the change leaves the pair out; the table moves it
  // to a new slot), and one changed, in one batch.
  e.applyChanges('auctions', {
    insert: [auction(33, 'c0'), auction(66, 'moved')],
    delete: [{ id: 33 }, { id: 66 }],
  });
  e.applyChanges('bids', {
    insert: [
      { id: 1000, auction: 33, amount: 1 },
      { id: 1001, auction: 66, amount: 2 },
    ],
  });
  assertExact(e, 'after a put-back');
  // Most rows deleted: the table squeezes its empty slots out, renumbering the rest.
  e.applyChanges('auctions', { delete: Array.from({ length: 9000 }, (_, i) => ({ id: i + 1000 })) });
  e.applyChanges('bids', {
    insert: [
      { id: 2000, auction: 99, amount: 3 },
      { id: 2001, auction: 9999, amount: 4 },
    ],
  });
  assertExact(e, 'after a compaction');
  e.applyChanges('auctions', { insert: [auction(10001, 'late')] });
  e.applyChanges('bids', { insert: [{ id: 2002, auction: 10001, amount: 5 }] });
  assertExact(e, 'after a compaction and an insert');
});
