// PartitionWatermarks alone: the least over active partitions, idleness, a partition that never
// delivered, and nextChangeAt against its definition (the first deadline whose value rises above
// the current watermark) over random partition states.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PartitionWatermarks, partitionSteps, type PartitionStep } from './partition-watermarks.ts';

const step = (active: boolean, maxTime: number | null): PartitionStep => ({ active, maxTime });

describe('PartitionWatermarks', () => {
  it('is the least over active partitions, the largest when all are idle', () => {
    const w = new PartitionWatermarks(2, 10);
    w.observe(
      new Map([
        ['0', step(true, 30)],
        ['1', step(true, 12)],
        ['2', step(false, null)],
      ]),
      100,
    );
    assert.equal(w.value(100), null, 'partition 2 has delivered nothing: it holds the watermark');
    assert.equal(w.value(110), 28, 'at its deadline all are idle: the largest');
    w.observe(new Map([['0', step(true, 40)]]), 105);
    assert.equal(w.value(110), 38, 'partitions 1 and 2 idle at 110, partition 0 active until 115');
    assert.equal(w.value(115), 38);
    w.observe(new Map([['1', step(true, 20)]]), 116);
    assert.equal(w.value(116), 18, 'partition 1 active again holds it at 20 − 2');
  });

  it('reads partition steps from positions, and nothing from positions without event times', () => {
    assert.equal(partitionSteps({ topic: 't', partitions: { '0': { from: 1, next: 2 } } }), null);
    assert.equal(partitionSteps({ orders: { offset: 3 } }), null);
    assert.equal(partitionSteps(null), null);
    assert.deepEqual(
      [
        ...(partitionSteps({
          topic: 't',
          partitions: { '0': { from: 1, next: 2, maxTime: 7 }, '1': { from: 4, next: 4, maxTime: null } },
        }) ?? []),
      ],
      [
        ['0', step(true, 7)],
        ['1', step(false, null)],
      ],
    );
  });

  it('nextChangeAt is the first deadline at which the watermark rises', () => {
    let seed = 12345;
    // xorshift32: exact in 32-bit integers.
    const rnd = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    let checked = 0;
    for (let round = 0; round < 2000; round++) {
      const idle = 1 + rnd(20);
      const w = new PartitionWatermarks(rnd(3), idle);
      const partitions = 1 + rnd(6);
      let clock = 0;
      for (let k = 0; k < 1 + rnd(5); k++) {
        clock += rnd(idle + 1);
        const steps = new Map<string, PartitionStep>();
        for (let p = 0; p < partitions; p++)
          if (rnd(3) > 0) steps.set(String(p), step(rnd(4) > 0, rnd(8) === 0 ? null : rnd(100)));
        w.observe(steps, clock);
      }
      // As the engine calls it: the watermark already raised to the partitions' value at `clock`
      // (by startEpoch), or above it.
      const now = w.value(clock);
      const current = now === null || rnd(2) === 0 ? now : now + rnd(30);
      const got = w.nextChangeAt(current, clock);
      // The definition: every clock value after `clock` up to the last deadline, in order.
      let want = Infinity;
      for (let t = clock + 1; t <= clock + 200; t++) {
        const v = w.value(t);
        if (v !== null && (current === null || v > current)) {
          want = t;
          break;
        }
      }
      // Between deadlines the value does not change: the first t found is a deadline.
      assert.equal(
        got,
        want,
        `round ${round}: ${JSON.stringify({ parts: w.entries(), idle, clock, current })}`,
      );
      if (want !== Infinity) checked++;
    }
    assert.ok(checked > 300, `${checked} rounds with a change to find`);
  });
});
