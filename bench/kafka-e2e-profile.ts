// kafka-e2e.ts's CPU profile summary: the server's profile cut to the catch-up window, by function and area.
import { readFileSync } from 'node:fs';
import { round2 } from './kafka-e2e-args.ts';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  file: string;
  window: 'catch-up' | 'whole process';
  sampled_ms: number;
  /** Samples in the window; `sample_pct` is a row's share of them (see `summariseProfile`). */
  samples: number;
  top: { fn: string; self_ms: number; pct: number; sample_pct: number }[];
  categories: { category: string; self_ms: number; pct: number; sample_pct: number }[];
}

export function category(fn: string, url: string): string {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'V8/native (program)';
  if (url.includes('node_modules/kafkajs/')) return 'kafkajs (fetch, decode, protocol)';
  if (url.includes('/src/storage/checkpoint-store')) return 'checkpoint writes (state → SQLite)';
  if (url.includes('/src/storage/table-log')) return 'journal (source batches → SQLite)';
  if (url.includes('/src/storage/changelog')) return 'changelog (encode + store)';
  if (url.includes('node_modules/better-sqlite3/') || url.includes('/src/server/store'))
    return 'SQLite (better-sqlite3 JS, store)';
  // The files that moved out of src/source and src/ivm keep their categories, so results stay
  // comparable with the earlier ones in bench/README.md.
  if (url.includes('/src/source/') || /\/src\/(common\/json-codec|storage\/)/.test(url))
    return 'source: Kafka runner, decoder, JSON';
  if (
    url.includes('/src/exec/') ||
    url.includes('/src/ivm/') ||
    url.includes('/src/planner/') ||
    /\/src\/common\/(values|cast|scalar-expr)\./.test(url)
  )
    return 'engine (apply, validate, views)';
  if (url.includes('/src/server/')) return 'server (runtime, journal, changelog, ws)';
  if (url.includes('node_modules/')) return `other deps (${/node_modules\/([^/]+)/.exec(url)?.[1] ?? '?'})`;
  if (url.startsWith('node:')) return 'node core';
  if (url === '') return `builtins (${fn || 'anonymous'})`;
  return 'other';
}

export function summariseProfile(file: string, window: [bigint, bigint] | null, top: number): ProfileSummary {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  // V8 profile timestamps are CLOCK_MONOTONIC µs, like process.hrtime: cut to the catch-up window.
  const from = window === null ? -Infinity : Number(window[0] / 1000n);
  const to = window === null ? Infinity : Number(window[1] / 1000n);
  const self = new Map<number, number>();
  const hits = new Map<number, number>();
  let t = prof.startTime;
  let inWindow = 0;
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    if (t < from || t > to) continue;
    inWindow++;
    const id = samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + Math.max(0, deltas[i + 1] ?? deltas[i] ?? 0));
    hits.set(id, (hits.get(id) ?? 0) + 1);
  }
  if (window !== null && inWindow < samples.length * 0.05) return summariseProfile(file, null, top);
  // Self time is the gap after each sample: on a loaded machine a gap also holds the time the thread
  // was off the CPU, which lands on whatever ran last before it (long synchronous loops more often),
  // so beside it each row's share of the samples, which follows the thread's CPU time more closely.
  const byFn = new Map<string, number>();
  const byCat = new Map<string, number>();
  const hitsByFn = new Map<string, number>();
  const hitsByCat = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const n = byId.get(id) as ProfileNode;
    const url = n.callFrame.url.replace(/^file:\/\//, '');
    const short = url.includes('/node_modules/')
      ? url.replace(/^.*?\/node_modules\//, '')
      : url.replace(/^.*\/(src|bench)\//, '$1/');
    const name = `${n.callFrame.functionName || '(anonymous)'} ${short}`.trim();
    byFn.set(name, (byFn.get(name) ?? 0) + us);
    const cat = category(n.callFrame.functionName, url);
    byCat.set(cat, (byCat.get(cat) ?? 0) + us);
    const h = hits.get(id) ?? 0;
    hitsByFn.set(name, (hitsByFn.get(name) ?? 0) + h);
    hitsByCat.set(cat, (hitsByCat.get(cat) ?? 0) + h);
    total += us;
  }
  const rows = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return {
    file,
    window: window === null ? 'whole process' : 'catch-up',
    sampled_ms: Math.round(total / 1000),
    samples: inWindow,
    top: rows(byFn)
      .slice(0, top)
      .map(([fn, us]) => ({
        fn,
        self_ms: Math.round(us / 1000),
        pct: round2((us / total) * 100),
        sample_pct: round2(((hitsByFn.get(fn) ?? 0) / inWindow) * 100),
      })),
    categories: rows(byCat).map(([c, us]) => ({
      category: c,
      self_ms: Math.round(us / 1000),
      pct: round2((us / total) * 100),
      sample_pct: round2(((hitsByCat.get(c) ?? 0) / inWindow) * 100),
    })),
  };
}
