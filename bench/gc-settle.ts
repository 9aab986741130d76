// The benches' collection before a timed phase, and the wait for the collector's threads after it.
// A forced full collection returns before its pages are swept: V8 sweeps them on helper threads,
// whose CPU time `process.cpuUsage()` counts. After the bench's workload and reference tables are
// dropped, that sweep took 45–54 ms of CPU on an idle process (load 8) — more than the auctions phase's
// own work at batch 100 (≈ 20–40 ms), which then read at about half its rate. Waiting for the helper
// threads to go quiet before the clock starts keeps the collection the bench forces out of every
// implementation's phase alike; the phase's own garbage is still collected inside it. The join bench
// (join-child.ts) and the canonical pipeline (canonical.ts) both wait.

/** A 20 ms interval with less than this much process CPU is taken as the collector being done. */
const QUIET_CPU_US = 1_000;
const POLL_MS = 20;
/** Never waits longer than this (a loaded machine may keep the helper threads off a core). */
const MAX_WAIT_MS = 2_000;

export interface SettleReport {
  /** Process CPU spent while waiting (the helper threads' sweep), in ms. */
  readonly cpuMs: number;
  readonly waitedMs: number;
}

/** Collects, then waits until an interval passes with (almost) no CPU used by the process. */
export async function collectAndSettle(gc: () => void): Promise<SettleReport> {
  gc();
  const start = process.cpuUsage();
  const t0 = Date.now();
  for (;;) {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const used = process.cpuUsage(before);
    if (used.user + used.system < QUIET_CPU_US || Date.now() - t0 >= MAX_WAIT_MS) break;
  }
  const spent = process.cpuUsage(start);
  return { cpuMs: (spent.user + spent.system) / 1000, waitedMs: Date.now() - t0 };
}
