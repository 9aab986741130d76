// Unit tests of the TopN operator without SQL: the work an epoch does (rows ranked) and the rows it
// emits, for a Top-N (bounded by the kept range, not the partition) and for an unbounded ranking
// (only the rows whose rank changes are emitted; the walk covers the touched partition only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decimal } from '../../common/decimal.ts';
import { compareByKeys, compareRows } from '../../common/top-n.ts';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import type { DataflowNode } from '../dataflow-plan.ts';
import type { ZBatch } from '../zset.ts';
import { topNWork } from './topn-far-rows.ts';
import { TopNOp } from './topn-op.ts';
import type { TopNRows } from './topn-rows.ts';

/** Draws in 0..n-1 from a seeded LCG's high bits (its low bits repeat with a short period). */
function seededDraws(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return Math.floor((state / 2147483648) * n);
  };
}

/** Rows [partition, score, id]; ranked by score descending, then id. */
function topN(to: number | null, emitRank: boolean, distinctRows = false, keyColumn?: number): TopNOp {
  const node: Extract<DataflowNode, { kind: 'topn' }> = {
    id: 1,
    kind: 'topn',
    inputs: [0],
    partitionBy: [0],
    orderBy: [
      { index: 1, desc: true, nullsFirst: true },
      { index: 2, desc: false, nullsFirst: false },
    ],
    rank: 'row_number',
    emitRank,
    from: 0,
    to,
    columns: [
      { name: 'p', type: T.int32 },
      { name: 'score', type: T.int32 },
      { name: 'id', type: T.int32 },
      ...(emitRank ? [{ name: 'rn', type: T.int64 }] : []),
    ],
    stateId: 'v/topn1',
    ...(distinctRows ? { distinctRows: true as const } : {}),
    ...(keyColumn !== undefined ? { keyColumn } : {}),
  };
  return new TopNOp(node);
}

function batch(rows: (readonly Value[])[], weight = 1): ZBatch {
  return { rows, weights: rows.map(() => weight), consolidated: true };
}

function changes(out: ZBatch): string[] {
  return out.rows.map((r, i) => `${(out.weights[i] ?? 0) > 0 ? '+' : '-'}${r.join(',')}`).sort();
}

test('a Top-10 over 10,000 rows of one partition ranks about 10 rows per change, not the partition', () => {
  const op = topN(10, false);
  // Partition 1: scores 1..10,000 (id = score); partition 2: one row.
  const rows: (readonly Value[])[] = [];
  for (let s = 1; s <= 10_000; s++) rows.push([1, s, s]);
  rows.push([2, 5, 1]);
  op.step([batch(rows)]);
  let ranked = op.rowsRanked;
  // Below the top: nothing comes out, and the partition is walked only as far as the kept range.
  assert.deepEqual(changes(op.step([batch([[1, 3, 20_001]])])), []);
  assert.ok(
    op.rowsRanked - ranked <= 10,
    `ranked ${op.rowsRanked - ranked} rows for an insert below the top`,
  );
  ranked = op.rowsRanked;
  // Deleting the top row: it leaves and the 11th comes in, in one step; two walks of ≤ 11 rows.
  assert.deepEqual(changes(op.step([batch([[1, 10_000, 10_000]], -1)])), ['+1,9990,9990', '-1,10000,10000']);
  assert.ok(op.rowsRanked - ranked <= 22, `ranked ${op.rowsRanked - ranked} rows for a delete in the top`);
  // A new best row pushes the 10th out.
  assert.deepEqual(changes(op.step([batch([[1, 50_000, 7]])])), ['+1,50000,7', '-1,9990,9990']);
});

test('an unbounded ROW_NUMBER emits only the rows whose number changes, walking only the touched partition', () => {
  const op = topN(null, true);
  const rows: (readonly Value[])[] = [];
  for (let s = 1; s <= 1_000; s++) rows.push([1, s, s], [2, s, s]);
  op.step([batch(rows)]);
  const ranked = op.rowsRanked;
  // Score 5.5 sorts between scores 6 and 5: rows 1..995 keep their numbers; 5, 4, 3, 2, 1 shift.
  const out = op.step([batch([[1, 5.5, 0]])]);
  assert.equal(out.rows.length, 1 + 2 * 5);
  assert.ok(changes(out).includes('+1,5.5,0,996'));
  assert.ok(changes(out).includes('-1,1,1,1000') && changes(out).includes('+1,1,1,1001'));
  // The cost of this first implementation: the touched partition is walked twice (before, after).
  assert.equal(op.rowsRanked - ranked, 1_000 + 1_001);
});

test('every partition boundary stays a small integer, an unbounded ranking and a Top-N alike', () => {
  // V8 keeps an object's field that ever held a double (Infinity, NaN) in a box of its own, one more
  // cold line for every change to the partition; a small integer sits in the object.
  const boundaries = (op: TopNOp): number[] =>
    [...(op as unknown as { state: TopNRows }).state.partitions.values()].map((part) => part.boundary);
  for (const op of [topN(null, true), topN(3, false)]) {
    const rows: (readonly Value[])[] = [];
    for (let s = 1; s <= 40; s++) rows.push([1, s, s], [2, s, s]);
    op.step([batch(rows)]);
    op.step([batch([[1, 5.5, 0]])]);
    op.step([batch([[2, 0.5, 0]])]);
    const seen = boundaries(op);
    assert.equal(seen.length, 2);
    for (const b of seen) assert.ok(Number.isInteger(b) && Math.abs(b) < 2 ** 30, `boundary ${b}`);
  }
});

test('duplicates of one row take consecutive ROW_NUMBERs, and one copy leaving retracts the last number', () => {
  const op = topN(3, true);
  op.step([
    batch([
      [1, 9, 1],
      [1, 8, 2],
    ]),
  ]);
  const twice: ZBatch = { rows: [[1, 9, 1]], weights: [1], consolidated: true };
  assert.deepEqual(changes(op.step([twice])), ['+1,8,2,3', '+1,9,1,2', '-1,8,2,2']);
  const once: ZBatch = { rows: [[1, 9, 1]], weights: [-1], consolidated: true };
  assert.deepEqual(changes(op.step([once])), ['+1,8,2,2', '-1,8,2,3', '-1,9,1,2']);
});

test('single-row changes (the direct path) give the same top rows as a recomputation, duplicates included', () => {
  // Seeded: 3 partitions, scores with ties, some rows inserted twice (two copies: the direct path
  // must step aside while a copy is within the top n + 1), deletes inside and outside the top.
  let seed = 42;
  const rnd = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed % n;
  };
  const op = topN(3, false);
  const live = new Map<string, { row: readonly Value[]; count: number }>();
  const shown = new Map<string, number>();
  for (let step = 0; step < 3_000; step++) {
    const existing = [...live.values()];
    const remove = existing.length > 0 && rnd(100) < 45;
    const row: readonly Value[] = remove
      ? (existing[rnd(existing.length)] as { row: readonly Value[] }).row
      : [rnd(3), rnd(20), rnd(30)];
    const key = row.join(',');
    const weight = remove ? -1 : 1;
    const at = live.get(key);
    const count = (at?.count ?? 0) + weight;
    if (count === 0) live.delete(key);
    else live.set(key, { row, count });
    const out = op.step([batch([row], weight)]);
    out.rows.forEach((r, i) => {
      const k = r.join(',');
      const n = (shown.get(k) ?? 0) + (out.weights[i] as number);
      if (n === 0) shown.delete(k);
      else shown.set(k, n);
    });
    // The top 3 copies of each partition by score descending, then id.
    const expected = new Map<string, number>();
    for (let p = 0; p < 3; p++) {
      const rows = [...live.values()]
        .filter((e) => e.row[0] === p)
        .sort(
          (a, b) =>
            (b.row[1] as number) - (a.row[1] as number) || (a.row[2] as number) - (b.row[2] as number),
        );
      let left = 3;
      for (const e of rows) {
        if (left === 0) break;
        const n = Math.min(left, e.count);
        expected.set(e.row.join(','), n);
        left -= n;
      }
    }
    assert.deepEqual(
      [...shown].sort(),
      [...expected].sort(),
      `step ${step}: ${remove ? 'delete' : 'insert'} ${key}`,
    );
  }
  assert.ok(op.singleChanges > 1_000, `only ${op.singleChanges} changes took the direct path`);
  assert.ok(op.tailChanges > 50, `only ${op.tailChanges} changes went to a partition's tail`);
  assert.ok(op.singleChanges < 3_000, 'duplicates must take the general path');
});

/** The kept rows of one partition by a plain sort: row (+ rank when shown) → copies. */
function expectedKept(
  node: Extract<DataflowNode, { kind: 'topn' }>,
  rows: readonly { row: readonly Value[]; count: number }[],
  key: (row: readonly Value[]) => string,
): Map<string, number> {
  const compare = compareRows(node.orderBy);
  const peers = compareByKeys(node.orderBy);
  const sorted = rows.slice().sort((a, b) => compare(a.row, b.row));
  const to = node.to ?? Infinity;
  const out = new Map<string, number>();
  const add = (row: readonly Value[], rank: number, n: number): void => {
    const k = key(node.emitRank ? [...row, rank] : row);
    out.set(k, (out.get(k) ?? 0) + n);
  };
  let position = 0;
  let rank = 0;
  let dense = 0;
  sorted.forEach((e, i) => {
    if (i === 0 || peers((sorted[i - 1] as { row: readonly Value[] }).row, e.row) !== 0) {
      rank = position + 1;
      dense++;
    }
    for (let c = 1; c <= e.count; c++) {
      const r = node.rank === 'row_number' ? position + c : node.rank === 'rank' ? rank : dense;
      if (r > node.from && r <= to) add(e.row, r, 1);
    }
    position += e.count;
  });
  return out;
}

test('random batches of every Top-N form equal a plain sort, across checkpoints and restarts', () => {
  const keyOf = (row: readonly Value[]): string =>
    row
      .map((v) =>
        typeof v === 'object' && v !== null ? `o${v.toString()}` : Object.is(v, -0) ? '-0' : String(v),
      )
      .join('|');
  const pools: readonly (readonly Value[])[] = [
    [null, 1, 2, 2, 3, 5, 8, -0, 0, NaN],
    [null, '', 'a', 'ab', 'abc', 'abd', 'b', 'abc\u0000'],
    [null, new Decimal(15, 1), new Decimal(150, 2), new Decimal(2, 0), new Decimal(-1n, 20)],
  ];
  const forms: Partial<Extract<DataflowNode, { kind: 'topn' }>>[] = [
    { rank: 'row_number', emitRank: false, from: 0, to: 3 },
    { rank: 'row_number', emitRank: false, from: 2, to: 5 },
    { rank: 'row_number', emitRank: true, from: 0, to: null },
    { rank: 'rank', emitRank: true, from: 0, to: 3 },
    { rank: 'dense_rank', emitRank: false, from: 1, to: 3 },
  ];
  let checked = 0;
  let tail = 0;
  let restarts = 0;
  let forced = 0;
  forms.forEach((form, f) => {
    pools.forEach((pool, p) => {
      const node: Extract<DataflowNode, { kind: 'topn' }> = {
        id: 1,
        kind: 'topn',
        inputs: [0],
        partitionBy: [0],
        orderBy: [
          { index: 1, desc: (f + p) % 2 === 0, nullsFirst: p !== 1 },
          { index: 2, desc: false, nullsFirst: false },
        ],
        rank: 'row_number',
        emitRank: false,
        from: 0,
        to: null,
        columns: [],
        stateId: 'v/topn1',
        ...form,
      };
      const rnd = seededDraws(1 + f * 100 + p);
      const ids = f === 0 ? 60 : 4;
      let op = new TopNOp(node);
      op.trackChanges(true);
      const store = new Map<string, unknown>();
      const checkpoint = (): void => {
        const delta = op.takeStateDelta(false);
        if (delta.replaceAll) store.clear();
        for (const id of delta.deletes) store.delete(id);
        for (const [id, value] of delta.upserts) store.set(id, value);
      };
      const live = new Map<string, { row: readonly Value[]; count: number }>();
      const shown = new Map<string, number>();
      for (let step = 0; step < 160; step++) {
        // A consolidated batch: 1 to 40 changes over 3 partitions, never below zero copies.
        const changes = new Map<string, { row: readonly Value[]; w: number }>();
        const size = rnd(4) === 0 ? 20 + rnd(21) : 1 + rnd(3);
        // The direct path's form gets distinct rows (long partitions, a tail); the others copies too.
        for (let c = 0; c < size; c++) {
          const existing = [...live.values()];
          const pick = existing.length > 0 && rnd(100) < 45 ? existing[rnd(existing.length)] : undefined;
          const row =
            pick !== undefined ? [...pick.row] : [rnd(3), pool[rnd(pool.length)] as Value, rnd(ids)];
          const k = keyOf(row);
          const w = pick !== undefined ? -1 : rnd(8) === 0 && f !== 0 ? 2 : 1;
          const pending = changes.get(k)?.w ?? 0;
          if ((live.get(k)?.count ?? 0) + pending + w < 0) continue;
          if (pending + w === 0) changes.delete(k);
          else changes.set(k, { row, w: pending + w });
        }
        for (const [k, { row, w }] of changes) {
          const count = (live.get(k)?.count ?? 0) + w;
          if (count === 0) live.delete(k);
          else live.set(k, { row: live.get(k)?.row ?? row, count });
        }
        const list = [...changes.values()];
        const tailBefore = op.tailChanges;
        const out = op.step([
          { rows: list.map((e) => e.row), weights: list.map((e) => e.w), consolidated: true },
        ]);
        tail += op.tailChanges - tailBefore;
        // Consolidated: each output row once, no zero weight (netted when a partition changed twice).
        assert.ok(out.consolidated && out.weights.every((w) => w !== 0), `zero weight at step ${step}`);
        assert.equal(new Set(out.rows.map(keyOf)).size, out.rows.length, `a row twice at step ${step}`);
        out.rows.forEach((r, i) => {
          const k = keyOf(r);
          const n = (shown.get(k) ?? 0) + (out.weights[i] as number);
          if (n === 0) shown.delete(k);
          else shown.set(k, n);
        });
        const expected = new Map<string, number>();
        for (let part = 0; part < 3; part++)
          for (const [k, n] of expectedKept(
            node,
            [...live.values()].filter((e) => e.row[0] === part),
            keyOf,
          ))
            expected.set(k, n);
        assert.deepEqual([...shown].sort(), [...expected].sort(), `form ${f} pool ${p} step ${step}`);
        checked++;
        if (step % 10 === 9) checkpoint();
        if (step % 40 === 39) {
          // Restart from the store (full delta now and then), and go on with the restored operator.
          if (step % 80 === 79) {
            const full = op.takeStateDelta(true);
            store.clear();
            for (const [id, value] of full.upserts) store.set(id, value);
            forced++;
          }
          op = new TopNOp(node);
          op.loadState(store.values());
          op.trackChanges(true);
          restarts++;
        }
      }
    });
  });
  assert.ok(checked === 5 * 3 * 160 && restarts > 50 && forced > 20, `${checked} ${restarts} ${forced}`);
  assert.ok(tail > 100, `only ${tail} changes went to a partition's tail`);
});

test('deleting the top row again and again brings in each successor from the unordered tail', () => {
  const op = topN(3, false);
  // 100 rows inserted one at a time in a scrambled order: past the first 8, they go to the tail.
  for (let i = 0; i < 100; i++) op.step([batch([[1, (i * 37) % 100, i]])]);
  assert.ok(op.tailChanges > 50, `only ${op.tailChanges} rows went to the tail`);
  const live = new Set<number>();
  for (let s = 0; s < 100; s++) live.add(s);
  for (let k = 0; k < 96; k++) {
    const best = Math.max(...live);
    live.delete(best);
    const successor = [...live].sort((a, b) => b - a)[2] as number;
    const idOf = (score: number): number => {
      for (let i = 0; i < 100; i++) if ((i * 37) % 100 === score) return i;
      return -1;
    };
    assert.deepEqual(
      changes(op.step([batch([[1, best, idOf(best)]], -1)])),
      [`+1,${successor},${idOf(successor)}`, `-1,${best},${idOf(best)}`],
      `delete ${k}`,
    );
  }
});

test('a Top-3 losing its top row again and again scans its tail once per five rows brought in', () => {
  const op = topN(3, false, true);
  // 400 rows one at a time in a scrambled order: the first 8 sorted, the rest in the unordered tail.
  const rows: (readonly Value[])[] = [];
  for (let i = 0; i < 400; i++) rows.push([1, (i * 37) % 400, i]);
  for (const row of rows) op.step([batch([row])]);
  const byScore = rows.slice().sort((a, b) => (b[1] as number) - (a[1] as number));
  const visited = topNWork.visited;
  for (let k = 0; k < 100; k++) {
    const out = changes(op.step([batch([byScore[k] as readonly Value[]], -1)]));
    const next = byScore[k + 3] as readonly Value[];
    assert.deepEqual(
      out,
      [`+${next.join(',')}`, `-${(byScore[k] as readonly Value[]).join(',')}`],
      `delete ${k}`,
    );
  }
  // Each refill takes the five rows that make the sorted part 8 again in one scan of the tail
  // (about 300-400 images), so a delete visits about a fifth of the tail: one scan per row refilled
  // would be the whole tail per delete.
  const perDelete = (topNWork.visited - visited) / 100;
  assert.ok(perDelete < 120, `${perDelete} rows visited per delete of the top row`);
});

test('over a keyed input, a row past the top goes to the tail unsearched, with the same results', () => {
  const keyed = topN(3, false, true);
  const plain = topN(3, false);
  // 200 distinct rows one at a time in a scrambled order, then every third deleted again.
  const rows: (readonly Value[])[] = [];
  for (let i = 0; i < 200; i++) rows.push([1, (i * 73) % 200, i]);
  const emitted = (op: TopNOp): string[] => [
    ...rows.flatMap((r) => changes(op.step([batch([r])]))),
    ...rows.filter((_, i) => i % 3 === 0).flatMap((r) => changes(op.step([batch([r], -1)]))),
  ];
  assert.deepEqual(emitted(keyed), emitted(plain));
  assert.ok(keyed.tailChanges > 100, `only ${keyed.tailChanges} changes went to the tail`);
  // Only the deletes from the tail search it; without the key every insert there does too.
  assert.ok(keyed.tailSearches < 67, `${keyed.tailSearches} tail searches`);
  assert.ok(plain.tailSearches > keyed.tailSearches + 100, `${plain.tailSearches} tail searches`);
});

test('over a keyed input, tail appends taken before the rest of an epoch give the same changes', () => {
  // Seeded batches of 30 changes over 4 partitions: inserts of new ids (scores with ties and NULLs,
  // so images tie and NULL's image is infinite), deletes of live rows, several to one partition in
  // an epoch, so an epoch's leading tail appends are followed by inserts into the top and deletes.
  const rnd = seededDraws(7);
  const keyed = topN(3, false, true);
  const plain = topN(3, false);
  const live: (readonly Value[])[] = [];
  let id = 0;
  let emitted = 0;
  for (let epoch = 0; epoch < 400; epoch++) {
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    const gone = new Set<number>();
    for (let c = 0; c < 30; c++) {
      const at = rnd(live.length + 1);
      if (live.length > 40 && rnd(100) < 35 && !gone.has(at) && at < live.length) {
        gone.add(at);
        rows.push(live[at] as readonly Value[]);
        weights.push(-1);
      } else {
        // A quarter of the scores rise with the epoch (into the top), the rest stay low (the tail).
        const score = rnd(1000) === 0 ? null : rnd(4) === 0 ? 100 + epoch + rnd(5) : rnd(60);
        const row = [rnd(4), score, id++];
        rows.push(row);
        weights.push(1);
      }
    }
    for (let c = 0; c < rows.length; c++)
      if ((weights[c] as number) > 0) live.push(rows[c] as readonly Value[]);
    for (const at of [...gone].sort((a, b) => b - a)) live.splice(at, 1);
    const input: ZBatch = { rows, weights, consolidated: true };
    const got = changes(keyed.step([input]));
    assert.deepEqual(got, changes(plain.step([input])), `epoch ${epoch}`);
    emitted += got.length;
  }
  assert.equal(keyed.rowsHeld, live.length);
  assert.ok(emitted > 500, `only ${emitted} changes emitted`);
  // Most inserts land in a long partition's tail: taken by the short loop, none by the plain one.
  assert.ok(keyed.tailAppendsAhead > 1_000, `${keyed.tailAppendsAhead} tail appends taken first`);
  assert.equal(plain.tailAppendsAhead, 0);
});

test('epochs of the same size reuse the grouping scratch: one allocation, and each epoch groups only its own changes', () => {
  const keyed = topN(3, false, true);
  const plain = topN(3, false);
  let id = 0;
  for (let epoch = 0; epoch < 50; epoch++) {
    // 200 inserts over 20 partitions, then (from the second epoch) the previous epoch's first 100
    // deleted: a stale link or partition of an earlier epoch would misgroup them.
    const inserts: (readonly Value[])[] = [];
    for (let i = 0; i < 200; i++) inserts.push([i % 20, (id * 7919) % 1000, ++id]);
    const outs = [keyed, plain].map((op) => changes(op.step([batch(inserts)])));
    assert.deepEqual(outs[0], outs[1]);
    const deletes = inserts.slice(0, 100);
    const after = [keyed, plain].map((op) => changes(op.step([batch(deletes, -1)])));
    assert.deepEqual(after[0], after[1]);
  }
  assert.equal(keyed.scratchAllocations, 1);
  assert.equal(plain.scratchAllocations, 1);
  assert.equal(keyed.rowsHeld, 50 * 100);
});

test('over a keyed input with its key column, a tail delete takes its row where it was appended', () => {
  // Seeded epochs over 3 partitions: inserts of new ids, deletes of live rows, and updates (an id
  // deleted and inserted again in one epoch with another score, in either order), so a key is noted
  // again while its old note stands, and rows move in the tail (swaps, refills) under their notes.
  const rnd = seededDraws(11);
  const noted = topN(3, false, true, 2);
  const keyed = topN(3, false, true);
  const live = new Map<number, readonly Value[]>();
  let id = 0;
  for (let epoch = 0; epoch < 300; epoch++) {
    const rows: (readonly Value[])[] = [];
    const weights: number[] = [];
    const used = new Set<number>();
    for (let c = 0; c < 20; c++) {
      const ids = [...live.keys()];
      const pick = ids[rnd(ids.length)];
      const score = rnd(500) === 0 ? null : rnd(epoch < 20 ? 1000 : 300);
      if (pick === undefined || used.has(pick) || live.size < 60 || rnd(3) !== 0) {
        const row = [rnd(3), score, id];
        live.set(id++, row);
        rows.push(row);
        weights.push(1);
        continue;
      }
      used.add(pick);
      const old = live.get(pick) as readonly Value[];
      const update = rnd(2) === 0;
      const next = [old[0] as number, score, pick];
      const change: [readonly Value[], number][] = [[old, -1]];
      if (update) change[rnd(2) === 0 ? 'push' : 'unshift']([next, 1]);
      for (const [row, w] of change) {
        rows.push(row);
        weights.push(w);
      }
      if (update) live.set(pick, next);
      else live.delete(pick);
    }
    const input: ZBatch = { rows, weights, consolidated: true };
    assert.deepEqual(changes(noted.step([input])), changes(keyed.step([input])), `epoch ${epoch}`);
  }
  assert.equal(noted.rowsHeld, live.size);
  // Without the key column every tail delete scans; with it, one found where it was appended does not.
  assert.equal(noted.tailHits + noted.tailSearches, keyed.tailSearches);
  assert.ok(
    noted.tailHits > 400,
    `${noted.tailHits} of ${keyed.tailSearches} tail deletes found where appended`,
  );
  assert.equal(keyed.tailHits, 0);
});
