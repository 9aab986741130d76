// The workload of the EMIT ON WINDOW CLOSE twin suites (hop-panes, emit-on-window-close-views): rows
// (id, k, v, ts) of a table watermarked 3 s behind its largest time, in batches around a moving time,
// and how those suites read a view back (value texts, changes to closed windows).
import type { Engine } from '../../src/exec/engine.ts';
import { formatValue } from '../../src/common/values.ts';
import type { Rng } from './random-workload.ts';

const BASE = Date.UTC(2024, 0, 1);

/** The timestamp `sec` seconds after 2024-01-01 00:00:00, as SQL text. */
export function stamp(sec: number): string {
  return new Date(BASE + sec * 1000).toISOString().replace('T', ' ').slice(0, 19);
}

export type LateRow = { id: number; k: number; v: number; ts: string };

export interface LateBatchOptions {
  /** The chance that a present row is deleted in a batch (in 0.06 of all cases it is not re-inserted). */
  readonly changeRate: number;
  /** The v an updated row gets. */
  readonly updatedValue: (rng: Rng, old: number) => number;
}

/**
 * Batches around a moving time: inserts (some late), deletes and updates of any row present (an
 * update is a delete and an insert with a new v and time). It mirrors the table's watermark rule
 * (3 s behind the largest time; an insert older is dropped).
 */
export function* lateBatches(
  rng: Rng,
  length: number,
  options: LateBatchOptions,
): Generator<{ insert: LateRow[]; delete: LateRow[] }> {
  const rows = new Map<number, LateRow & { sec: number }>();
  let now = 0;
  let next = 1;
  let mark = -Infinity;
  for (let b = 0; b < length; b++) {
    now += rng.int(0, 3);
    const insert: LateRow[] = [];
    const del: LateRow[] = [];
    let max = -Infinity;
    const add = (id: number, k: number, v: number, sec: number): void => {
      const row = { id, k, v, ts: stamp(sec) };
      insert.push(row);
      if (sec < mark) return; // late: the table drops it
      rows.set(id, { ...row, sec });
      max = Math.max(max, sec);
    };
    for (const [id, row] of [...rows]) {
      const r = rng.next();
      if (r >= options.changeRate) continue;
      const { sec: _, ...stored } = row;
      del.push(stored);
      rows.delete(id);
      // An update: its old windows may have closed, its new ones be open (or late).
      if (r >= 0.06) add(id, row.k, options.updatedValue(rng, row.v), Math.max(0, now - rng.int(0, 10)));
    }
    for (let i = rng.int(1, 5); i > 0; i--)
      add(next++, rng.int(1, 3), rng.int(1, 9), Math.max(0, now - rng.int(0, 8)));
    if (max - 3 > mark) mark = max - 3;
    yield { insert, delete: del };
  }
}

/** A view's rows as their value texts, one line per row, sorted. */
export function exactRows(e: Engine, view: string): string[] {
  const snap = e.viewSnapshot(view);
  const names = snap.columns.map((c) => c.name);
  return snap.rows.map((r) => names.map((n) => formatValue(r[n] ?? null)).join('|')).sort();
}

/** Changes to windows the view had closed, which it ignored. */
export function ignored(e: Engine, view: string): number {
  return e
    .closingViews()
    .filter((v) => v.name === view)
    .reduce((n, v) => n + v.ignored, 0);
}
