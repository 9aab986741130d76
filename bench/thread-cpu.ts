// CPU time by thread of this process (Linux /proc/self/task), for the split of a timed loop between
// the main thread and the others (worker threads, and V8's GC helpers): null where /proc is missing.
import { readdirSync, readFileSync } from 'node:fs';

/** One thread's id, command name (`node` for the main thread and worker threads) and user + system ticks. */
export interface ThreadStat {
  readonly tid: number;
  readonly name: string;
  readonly ticks: number;
}

/** The threads of process `pid` (this one by default); null where /proc is missing or it is gone. */
export function threadStats(pid: number | 'self' = 'self'): ThreadStat[] | null {
  try {
    const out: ThreadStat[] = [];
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      } catch {
        continue; // the thread ended
      }
      // Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
      const close = stat.lastIndexOf(')');
      const f = stat.slice(close + 2).split(' ');
      out.push({
        tid: Number(t),
        name: stat.slice(stat.indexOf('(') + 1, close),
        ticks: Number(f[11]) + Number(f[12]),
      });
    }
    return out;
  } catch {
    return null;
  }
}

/** Thread id → user + system CPU time in clock ticks. */
export function threadTicks(): Map<number, number> | null {
  const stats = threadStats();
  return stats === null ? null : new Map(stats.map((t) => [t.tid, t.ticks]));
}

/** CPU ms spent between two readings: on the main thread, the busiest other thread, and the rest. */
export interface CpuSplit {
  main_ms: number;
  busiest_other_ms: number;
  rest_ms: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

export function cpuSplit(
  before: Map<number, number> | null,
  after: Map<number, number> | null,
): CpuSplit | null {
  if (before === null || after === null) return null;
  const deltas: number[] = [];
  let main = 0;
  for (const [tid, ticks] of after) {
    const d = ticks - (before.get(tid) ?? 0);
    if (tid === process.pid) main = d;
    else deltas.push(d);
  }
  deltas.sort((a, b) => b - a);
  const busiest = deltas[0] ?? 0;
  const rest = deltas.slice(1).reduce((a, b) => a + b, 0);
  return { main_ms: main * TICK_MS, busiest_other_ms: busiest * TICK_MS, rest_ms: rest * TICK_MS };
}

/** The main thread's user + system CPU time in clock ticks (0 where /proc is missing). */
export function mainThreadTicks(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}
