// TableWatermark alone: the watermark's arithmetic, which inserts are late (updates never), the
// columnar path, and its checkpoint entry round trip.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Value } from '../common/types.ts';
import { TableWatermark } from './table-watermark.ts';

const SEC = 1_000_000;
const ts = (s: number): string => `2024-01-01 00:00:${String(s).padStart(2, '0')}`;
const base = Date.UTC(2024, 0, 1) * 1000;
// rows are [id, ts]; the key is the id
const keyOf = (row: readonly Value[]): Value => row[0] as Value;

describe('TableWatermark', () => {
  it('is the largest time so far minus the delay, never going back', () => {
    const w = new TableWatermark('t', { column: 1, delayMicros: 5 * SEC, sql: "ts - INTERVAL '5' SECOND" });
    assert.equal(w.value, null);
    w.admit(
      {
        deletes: [],
        inserts: [
          [1, ts(20)],
          [2, ts(10)],
          [3, null],
        ],
      },
      keyOf,
    );
    assert.equal(w.value, base + 15 * SEC);
    w.admit({ deletes: [], inserts: [[4, ts(18)]] }, keyOf);
    assert.equal(w.value, base + 15 * SEC);
    assert.equal(w.lateRows, 0);
  });

  it('drops inserts below the watermark at the start of the batch, not updates', () => {
    const w = new TableWatermark('t', { column: 1, delayMicros: 0, sql: 'ts' });
    w.admit({ deletes: [], inserts: [[1, ts(30)]] }, keyOf);
    const out = w.admit(
      {
        deletes: [[1, ts(30)]],
        inserts: [
          [1, ts(5)],
          [2, ts(29)],
          [3, ts(30)],
          [4, ts(40)],
          [5, null],
        ],
      },
      keyOf,
    );
    assert.deepEqual(out.inserts, [
      [1, ts(5)],
      [3, ts(30)],
      [4, ts(40)],
      [5, null],
    ]);
    assert.equal(w.lateRows, 1);
    assert.equal(w.value, base + 40 * SEC);
    // Without a key: as many inserts as the batch deletes (the first ones) are updates.
    const k = new TableWatermark('k', { column: 1, delayMicros: 0, sql: 'ts' });
    k.admit({ deletes: [], inserts: [[1, ts(30)]] }, null);
    const kept = k.admit(
      {
        deletes: [[1, ts(30)]],
        inserts: [
          [1, ts(1)],
          [2, ts(2)],
        ],
      },
      null,
    );
    assert.deepEqual(kept.inserts, [[1, ts(1)]]);
  });

  it('filters a columnar batch column by column', () => {
    const w = new TableWatermark('t', { column: 1, delayMicros: 0, sql: 'ts' });
    w.admit({ deletes: [], inserts: [[0, ts(10)]] }, null);
    const out = w.admit(
      {
        deletes: [],
        inserts: [],
        insertColumns: [
          [1, 2, 3],
          [ts(9), ts(11), ts(3)],
        ],
      },
      null,
    );
    assert.deepEqual(out.insertColumns, [[2], [ts(11)]]);
    assert.equal(w.lateRows, 2);
  });

  it('checkpoints its watermark and count, and only when they changed', () => {
    const w = new TableWatermark('t', { column: 1, delayMicros: 0, sql: 'ts' });
    w.admit({ deletes: [], inserts: [[1, ts(10)]] }, keyOf);
    w.admit({ deletes: [], inserts: [[2, ts(1)]] }, keyOf);
    const delta = w.takeStateDelta(false);
    assert.deepEqual(delta.upserts, [['watermark', { mark: base + 10 * SEC, late: 1 }]]);
    assert.deepEqual(w.takeStateDelta(false).upserts, []);
    const restored = new TableWatermark('t', { column: 1, delayMicros: 0, sql: 'ts' });
    restored.loadState(delta.upserts.map(([, v]) => v));
    assert.equal(restored.value, base + 10 * SEC);
    assert.equal(restored.lateRows, 1);
  });
});
