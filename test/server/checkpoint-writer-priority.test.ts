// The checkpoint writer thread runs below the server's thread (Linux): its nice value, read from
// /proc for every thread of this process, is WRITER_THREAD_NICE_STEPS above the main thread's, and
// the main thread's is unchanged. Without it the two were equal, and on a two-core machine the
// writer's long steps took the event loop off its core (bench/README.md, server-e2e.ts).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { WRITER_THREAD_NICE_STEPS } from '../../src/server/runtime/checkpoint-protocol.ts';
import type { CheckpointPolicy } from '../../src/server/runtime/types.ts';
import { openRuntime, removeDir, tempDir } from './helpers.ts';
import { ORDERS_SCHEMA, loadOrders } from './checkpoint-orders.ts';

const POLICY: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9, sliceMs: 0 };

/** Nice value by thread id, from /proc/self/task/<tid>/stat (field 19, after the command's ")"). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      nices.set(Number(tid), Number(fields[16]));
    } catch {
      // the thread ended while listed
    }
  }
  return nices;
}

test(
  'the checkpoint writer thread runs WRITER_THREAD_NICE_STEPS below the main thread',
  { skip: !existsSync('/proc/thread-self') },
  async () => {
    const dir = tempDir();
    try {
      const before = threadNices();
      const mainNice = before.get(process.pid);
      assert.ok(mainNice !== undefined);
      const rt = openRuntime(dir, { checkpoint: POLICY });
      try {
        rt.executeScript(ORDERS_SCHEMA);
        loadOrders(rt, 0, 2_000);
        const stats = await rt.checkpointInSlices();
        assert.ok(stats !== null && stats.full, 'a full checkpoint, written by the thread');
        const after = threadNices();
        const lowered = [...after].filter(([tid, nice]) => !before.has(tid) && nice > mainNice);
        assert.equal(
          lowered.length,
          1,
          `one new thread runs below the main thread: ${JSON.stringify([...after])}`,
        );
        assert.equal(lowered[0]?.[1], Math.min(19, mainNice + WRITER_THREAD_NICE_STEPS));
        assert.equal(after.get(process.pid), mainNice, "the main thread's priority is unchanged");
      } finally {
        rt.close();
      }
    } finally {
      removeDir(dir);
    }
  },
);
