// kafka-e2e.ts's paired A/B: this checkout's server and another checkout's catch up alternately on the
// same topic, each checked; no latency phases.
import { readFileSync } from 'node:fs';
import { fmt, type Expected, type Flags } from './kafka-e2e-args.ts';
import { catchUp, ownRoot, startServer, verify, type CatchUp, type Server } from './kafka-e2e-server.ts';
import { stopServer } from './server-child.ts';

/** One catch-up with what it ran with and its check. */
export type CatchUpRun = CatchUp & { max_batch_ms: number | null; verified: string; tree: string | null };

export interface AbSetup {
  f: Flags;
  /** The other checkout's root (`--ab`). */
  other: string;
  brokers: string;
  exp: Expected;
  ends: ReadonlyMap<number, number>;
  /** Where the first (this tree's) server writes its CPU profile, if profiled. */
  profileDir: string | null;
  /** The servers running now, for the caller to stop on a failure. */
  servers: Server[];
}

/** `--ab-rounds` pairs, A first in each; `onFirst` is given the first catch-up (the profiled one). */
export async function abRounds(a: AbSetup, onFirst: (c: CatchUp) => void): Promise<CatchUpRun[]> {
  const runs: CatchUpRun[] = [];
  const abRuns = Array.from({ length: a.f.abRounds }, () => [ownRoot, a.other]).flat();
  for (const [i, root] of abRuns.entries()) {
    const own = i % 2 === 0;
    const tree = own
      ? `A (this tree${a.f.aNodeFlags.length > 0 ? ` ${a.f.aNodeFlags.join(' ')}` : ''})`
      : `B (${root})`;
    const s = await startServer(i === 0 ? a.profileDir : null, root, own ? a.f.aNodeFlags : []);
    a.servers.push(s);
    const abMs = a.f.abMaxBatchMs[own ? 0 : 1];
    const abRows = a.f.abMaxBatchRows[own ? 0 : 1];
    const c = await catchUp(
      s,
      a.brokers,
      abRows === null ? a.f : { ...a.f, maxBatchRows: abRows },
      abMs,
      a.ends,
    );
    const verified = await verify(s, a.exp);
    runs.push({ ...c, max_batch_ms: abMs, verified, tree });
    console.error(
      `sluice ${tree}: ${fmt(c.events_per_s)} events/s (steady ${fmt(c.steady_events_per_s)}), ` +
        `${c.seconds} s, ${c.server_cpu_s} server CPU-s, ${fmt(c.events_per_server_cpu_s)} ev/CPU-s${abMs === null ? '' : ` (max_batch_ms ${abMs})`}${abRows === null ? '' : ` (max_batch_rows ${abRows})`}; ${verified}; ` +
        `window ${Number(c.window_ns[0]) / 1e6}–${Number(c.window_ns[1]) / 1e6} ms, pid ${s.child.pid}; ` +
        `loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`,
    );
    await stopServer(s);
    a.servers.pop();
    if (i === 0) onFirst(c);
  }
  return runs;
}
