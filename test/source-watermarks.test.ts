// Per-partition watermarks of a Kafka source, in the engine: source epochs arrive as the connector
// hands them over (positions with each partition's offset range and largest event time), the
// logical clock is manual. The source's watermark is the least over its active partitions; a
// partition quiet for `idle_timeout` stops holding it back — a clock tick then closes EOWC windows
// with no data arriving — and holds it again (its late rows dropped) once it delivers. A checkpoint
// restore and a journal replay give the same watermarks and changes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Engine } from '../src/exec/engine.ts';
import type { ViewChangeSet } from '../src/exec/api.ts';
import { ManualClock } from '../src/exec/logical-clock.ts';
import type { Row } from '../src/common/types.ts';
import { instantMicros } from '../src/common/time/instant-micros.ts';
import { MemoryCheckpointStore } from './support/memory-checkpoint-store.ts';

const two = (n: number): string => String(n).padStart(2, '0');
const at = (s: number): string => `2024-01-01 10:${two(Math.floor(s / 60))}:${two(s % 60)}`;
const micros = (s: number): number => instantMicros(at(s));
const clockAt = (s: number): string => `${at(s)}+00`;

const DDL = [
  `CREATE SOURCE bids (id integer PRIMARY KEY, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
     FROM KAFKA (brokers '127.0.0.1:19092', topic 'bids', format 'upsert', idle_timeout '10 seconds')`,
  `CREATE MATERIALIZED VIEW per10 AS SELECT window_end, count(*) AS n
     FROM TUMBLE(bids, ts, INTERVAL '10' SECOND) GROUP BY window_end EMIT ON WINDOW CLOSE`,
];

interface Step {
  readonly clock?: number;
  /** Rows per partition: [id, second]. */
  readonly rows?: Readonly<Record<string, readonly (readonly [number, number])[]>>;
}

/** A driver keeping each partition's next offset, so batches carry positions as the connector's do. */
class Driver {
  readonly engine: Engine;
  readonly clock = new ManualClock();
  next = new Map<string, number>([
    ['0', 0],
    ['1', 0],
  ]);
  readonly changes: ViewChangeSet[] = [];

  constructor(engine?: (clock: ManualClock) => Engine) {
    this.engine = engine?.(this.clock) ?? new Engine({ clock: this.clock });
  }

  setup(): this {
    for (const sql of DDL) this.engine.execute(sql);
    this.engine.subscribe('per10', (c) => this.changes.push(c));
    return this;
  }

  step(s: Step): void {
    if (s.clock !== undefined) this.engine.execute(`SET CLOCK TO '${clockAt(s.clock)}'`);
    if (s.rows === undefined) return;
    const partitions: Record<string, { from: number; next: number; maxTime: number | null }> = {};
    const insert: Row[] = [];
    for (const [p, from] of this.next) {
      const rows = s.rows[p] ?? [];
      let max: number | null = null;
      for (const [id, sec] of rows) {
        insert.push({ id, ts: at(sec) });
        max = Math.max(max ?? -Infinity, micros(sec));
      }
      partitions[p] = { from, next: from + rows.length, maxTime: max };
      this.next.set(p, from + rows.length);
    }
    this.engine.applyChanges(
      'bids',
      { insert },
      { fromSource: true, positions: { bids: { topic: 'bids', partitions } } },
    );
  }

  watermark(): unknown[][] {
    const rows = this.engine.execute('SHOW WATERMARKS')[0]?.rows ?? [];
    return rows.map((r) => [r['name'], r['watermark'], r['late_rows']]);
  }

  view(): unknown {
    return this.engine.viewSnapshot('per10').rows;
  }
}

describe('per-partition watermarks of a source', () => {
  it('is the least over active partitions; an idle one stops holding it back after the timeout', () => {
    const d = new Driver().setup();
    d.step({ clock: 100, rows: { '0': [[1, 1]], '1': [[2, 3]] } });
    assert.deepEqual(d.watermark()[0], ['bids', '2024-01-01 09:59:59', 0], 'partition 0 (1 s) sets it');
    // Partition 0 moves on; partition 1 stays at 3 s and holds the watermark at 3 − 2 = 1 s.
    d.step({ clock: 102, rows: { '0': [[3, 25]] } });
    assert.deepEqual(d.watermark()[0], ['bids', at(1), 0]);
    assert.deepEqual(d.view(), [], 'no window closed while partition 1 holds the watermark');
    // 9 s after partition 1's last record: still active.
    d.step({ clock: 109 });
    assert.deepEqual(d.watermark()[0], ['bids', at(1), 0]);
    const epoch = d.engine.epoch;
    // 10 s: idle. SET CLOCK ticks with no data; partition 0 alone gives 25 − 2 = 23 s, closing
    // [0, 10) and [10, 20).
    d.step({ clock: 110 });
    assert.equal(d.engine.epoch, epoch + 1, 'the tick is an epoch of its own');
    assert.deepEqual(d.watermark()[0], ['bids', at(23), 0]);
    assert.deepEqual(d.view(), [{ window_end: at(10), n: 2 }]);
    assert.equal(d.changes.at(-1)?.epoch, epoch + 1);
    // Partition 1 wakes up behind the watermark: its row at 5 s is late and dropped, and it holds
    // the watermark again (no tick moves it) until it catches up.
    d.step({ clock: 111, rows: { '1': [[4, 5]] } });
    assert.deepEqual(d.watermark()[0], ['bids', at(23), 1]);
    d.step({ clock: 112, rows: { '0': [[5, 40]] } });
    assert.deepEqual(d.watermark()[0], ['bids', at(23), 1], 'partition 1 (at 5 s) holds it again');
    d.step({ clock: 113, rows: { '1': [[6, 38]] } });
    assert.deepEqual(d.watermark()[0], ['bids', at(36), 1]);
    assert.deepEqual(d.view(), [
      { window_end: at(10), n: 2 },
      { window_end: at(30), n: 1 },
    ]);
  });

  it('a partition that never delivered holds it back until its idle timeout', () => {
    const d = new Driver().setup();
    d.step({ clock: 100, rows: { '0': [[1, 30]] } });
    assert.deepEqual(d.watermark()[0], ['bids', null, 0]);
    const epoch = d.engine.epoch;
    d.step({ clock: 105 });
    assert.equal(d.engine.epoch, epoch, 'nothing is due before the timeout: no tick epoch');
    d.step({ clock: 110 });
    assert.deepEqual(d.watermark()[0], ['bids', at(28), 0]);
    assert.equal(d.engine.epoch, epoch + 1);
  });

  it('with every partition idle, the largest one sets it', () => {
    const d = new Driver().setup();
    d.step({ clock: 100, rows: { '0': [[1, 12]], '1': [[2, 30]] } });
    assert.deepEqual(d.watermark()[0], ['bids', at(10), 0]);
    d.step({ clock: 200 });
    assert.deepEqual(d.watermark()[0], ['bids', at(28), 0]);
    assert.deepEqual(d.view(), [{ window_end: at(20), n: 1 }]);
  });

  const STEPS: Step[] = [
    { clock: 100, rows: { '0': [[1, 1]], '1': [[2, 3]] } },
    {
      clock: 102,
      rows: {
        '0': [
          [3, 25],
          [7, 14],
        ],
      },
    },
    { clock: 105 },
    { clock: 110 },
    { clock: 111, rows: { '1': [[4, 5]] } },
    { clock: 112, rows: { '0': [[5, 40]] } },
    { clock: 125 },
    { clock: 126, rows: { '1': [[6, 38]], '0': [[8, 39]] } },
    { clock: 140 },
  ];

  it('a checkpoint restore continues with the same watermarks and changes', () => {
    const plain = new Driver().setup();
    for (const s of STEPS) plain.step(s);
    for (let cut = 1; cut < STEPS.length; cut++) {
      const original = new Driver().setup();
      original.engine.setStateTracking(true);
      for (const s of STEPS.slice(0, cut)) original.step(s);
      const store = new MemoryCheckpointStore();
      store.write(original.engine.takeCheckpoint(true));
      const restored = new Driver();
      for (const sql of DDL) restored.engine.execute(sql);
      assert.deepEqual(restored.engine.loadCheckpoint(store.read()).rebuilt, []);
      restored.engine.subscribe('per10', (c) => restored.changes.push(c));
      restored.changes.push(...original.changes);
      restored.clock.set(original.clock.now());
      restored.next = new Map(original.next);
      for (const s of STEPS.slice(cut)) restored.step(s);
      assert.deepEqual(restored.watermark(), plain.watermark(), `restored after step ${cut}`);
      assert.equal(
        JSON.stringify(restored.changes),
        JSON.stringify(plain.changes),
        `restored after step ${cut}`,
      );
    }
    assert.ok(plain.changes.length >= 2, JSON.stringify(plain.changes));
  });
});
