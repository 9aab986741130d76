// Interleaved A/B of a keyed base table's write paths alone (no view over it): this tree's Engine and
// another checkout's in one process, fed the same batches alternately (which side goes first
// alternates too), CPU time summed per side and phase, like canonical-ab.ts. The phases are the
// table's part of the Top-N and join benchmarks: inserts of new serial ids, deletes naming only the
// key (random ids), and mixed batches of updates (an insert of a stored key replaces its row) and
// key-only deletes on distinct random keys.
//   node --import tsx bench/table-ab.ts --base ../sluice-base [--rows 1000000] [--batch 1000]
//        [--changes 100000] [--rounds 3] [--mine DIR]
// Both engines share one heap, so a GC may be charged to either side: read several rounds. Under
// `node --expose-gc` a full collection runs before each phase (not timed): without it the marking
// of two million-row tables the insert phase began fell on the delete phase, on either side, and an
// A/A of the delete phase read 0.34–1.25 (median 0.69) over 12 rounds at load 10.
// Pairing (bench/ab-checkouts.ts): the process runs again under --no-concurrent-recompilation (with
// background compiles an A/A drifted 0.96–1.05 from one process to the next); `--swap` loads this
// tree's engine first and `--mine DIR` replaces it. Read a figure over several processes, half with
// `--swap`, against an A/A of a second copy of the tree (the same path twice shares one module).
import { loadavg } from 'node:os';
import { sfc32 } from './workload.ts';
import { flag, loadPair } from './ab-checkouts.ts';

interface Side {
  applyChanges(table: string, changes: { insert?: unknown[]; delete?: unknown[] }): unknown;
  execute(sql: string): unknown;
}
type EngineClass = new () => Side;
type Batch = { insert?: unknown[]; delete?: unknown[] };

const baseDir = flag('base', '');
if (baseDir === '') throw new Error('table-ab: --base <checkout> is required');
const rows = Number(flag('rows', '1000000'));
const batch = Number(flag('batch', '1000'));
const changes = Number(flag('changes', '100000'));
const rounds = Number(flag('rounds', '3'));

const { Base, Mine } = await loadPair<EngineClass>('table-ab');

const TABLE =
  'CREATE TABLE bid (id integer PRIMARY KEY, auction integer NOT NULL, bidder integer NOT NULL, amount integer NOT NULL)';

/** The three phases' batches, regenerated per round (fresh objects, as a request's JSON would be). */
function phases(): { name: string; batches: Batch[] }[] {
  const rnd = sfc32(4242);
  const int = (n: number): number => Math.floor(rnd() * n);
  const bid = (id: number): unknown => ({
    id,
    auction: 1 + int(10_000),
    bidder: int(50_000),
    amount: 1 + int(1e6),
  });
  const inserts: Batch[] = [];
  for (let i = 0; i < rows; i += batch) {
    const b: unknown[] = [];
    for (let id = i + 1; id <= Math.min(rows, i + batch); id++) b.push(bid(id));
    inserts.push({ insert: b });
  }
  // Distinct random ids (a partial Fisher–Yates): the first `changes` are deleted, the next `changes`
  // are updated (80%) or deleted (20%) in mixed batches.
  const ids = new Int32Array(rows);
  for (let i = 0; i < rows; i++) ids[i] = i + 1;
  for (let i = 0; i < Math.min(rows, 2 * changes); i++) {
    const j = i + int(rows - i);
    const t = ids[i] as number;
    ids[i] = ids[j] as number;
    ids[j] = t;
  }
  const deletes: Batch[] = [];
  for (let i = 0; i < changes; i += batch) {
    const b: unknown[] = [];
    for (let k = i; k < Math.min(changes, i + batch); k++) b.push({ id: ids[k] });
    deletes.push({ delete: b });
  }
  const mixed: Batch[] = [];
  for (let i = changes; i < 2 * changes; i += batch) {
    const ins: unknown[] = [];
    const del: unknown[] = [];
    for (let k = i; k < Math.min(2 * changes, i + batch); k++) {
      if (rnd() < 0.8) ins.push(bid(ids[k] as number));
      else del.push({ id: ids[k] });
    }
    mixed.push({ insert: ins, delete: del });
  }
  return [
    { name: 'insert', batches: inserts },
    { name: 'delete', batches: deletes },
    { name: 'mixed', batches: mixed },
  ];
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const timed = (e: Side, b: Batch): number => {
  const t = cpu();
  e.applyChanges('bid', b);
  return cpu() - t;
};

console.log(`table-ab: ${rows} rows, batch ${batch}, ${changes} changes a phase, base ${baseDir}`);
for (let r = 1; r <= rounds; r++) {
  const base = new Base();
  const mine = new Mine();
  base.execute(TABLE);
  mine.execute(TABLE);
  for (const phase of phases()) {
    (globalThis as { gc?: () => void }).gc?.();
    let tb = 0;
    let tm = 0;
    let events = 0;
    phase.batches.forEach((b, i) => {
      events += (b.insert?.length ?? 0) + (b.delete?.length ?? 0);
      if ((i + r) % 2 === 0) {
        tb += timed(base, b);
        tm += timed(mine, b);
      } else {
        tm += timed(mine, b);
        tb += timed(base, b);
      }
    });
    const rate = (us: number): number => Math.round(events / (us / 1e6));
    console.log(
      JSON.stringify({
        bench: 'table-ab',
        phase: phase.name,
        round: r,
        base_events_per_cpu_s: rate(tb),
        events_per_cpu_s: rate(tm),
        ratio: Number((tb / tm).toFixed(3)),
        loadavg: loadavg()[0],
      }),
    );
  }
}
