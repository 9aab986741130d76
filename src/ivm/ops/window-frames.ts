// The arithmetic of window functions, apart from the operator's bookkeeping (window-op.ts): an
// aggregate's state over a frame (fold, slide, finish), how far a change at a slot reaches, NTILE.
import type { Value } from '../../common/types.ts';
import { Decimal, add, div, sub } from '../../common/decimal.ts';
import {
  checkInt,
  normalizeBigInt,
  compareExact,
  compareValues,
  identicalValues,
} from '../../common/values.ts';
import type { WindowFn } from '../../common/window.ts';
import { MAX_TEXT_LENGTH } from '../../common/limits.ts';

/**
 * An aggregate's state over some rows: the non-NULL inputs counted and their sum, min, max or
 * joined text; `long`: STRING_AGG's text would pass MAX_TEXT_LENGTH (not built; `v` is null), which
 * only more rows cannot undo: the slots reading it hold a row error (window-op.ts).
 */
export interface Acc {
  readonly n: number;
  readonly v: Value;
  readonly long?: true;
}

export const EMPTY: Acc = { n: 0, v: null };

/** How far a change at a slot reaches, per function. */
export type Reach = { readonly back: number; readonly ahead: number; readonly peers: boolean };

export function isAggregate(fn: WindowFn): boolean {
  return (
    fn.fn === 'count' ||
    fn.fn === 'count_star' ||
    fn.fn === 'sum' ||
    fn.fn === 'avg' ||
    fn.fn === 'min' ||
    fn.fn === 'max' ||
    fn.fn === 'string_agg'
  );
}

/** Functions whose value is read at the peer group's last slot: RANGE frames (but FIRST_VALUE), CUME_DIST. */
export function readsGroupEnd(fn: WindowFn): boolean {
  if (fn.fn === 'cume_dist') return true;
  if (fn.frame.kind !== 'range') return false;
  return fn.fn === 'last_value' || fn.fn === 'nth_value' || isAggregate(fn);
}

/** PostgreSQL's NTILE: the first (size % buckets) buckets hold one row more than the others. */
export function ntile(j: number, size: number, buckets: number): number {
  const per = Math.floor(size / buckets);
  const extra = size % buckets;
  const big = extra * (per + 1);
  return j < big ? Math.floor(j / (per + 1)) + 1 : Math.floor((j - big) / per) + extra + 1;
}

/**
 * How far a change at a slot reaches for one function: the slots whose frame holds it. A ROWS
 * frame [j + start, j + end] holds slot p for j in [p - end, p - start]; RANGE frames reach to the
 * partition's end (or only the peers, LAST_VALUE); NTILE, PERCENT_RANK and CUME_DIST read the
 * partition's size, which an insert or delete changes: they reach the whole partition.
 */
export function reachOf(fn: WindowFn): Reach {
  const to = Infinity;
  switch (fn.fn) {
    case 'row_number':
    case 'rank':
    case 'dense_rank':
      return { back: 0, ahead: to, peers: false };
    case 'ntile':
    case 'percent_rank':
    case 'cume_dist':
      return { back: to, ahead: to, peers: false };
    case 'lag':
      return { back: 0, ahead: fn.offset, peers: false };
    case 'lead':
      return { back: fn.offset, ahead: 0, peers: false };
    default:
      break;
  }
  if (fn.frame.kind === 'range') {
    // FIRST_VALUE reads the partition's first slot (a change there reaches all: `edgeOf`).
    if (fn.fn === 'first_value') return { back: 0, ahead: 0, peers: false };
    if (fn.fn === 'last_value') return { back: 0, ahead: 0, peers: true };
    return { back: 0, ahead: to, peers: true };
  }
  if (edgeOf(fn) !== null) return { back: 0, ahead: 0, peers: false };
  const { start, end } = fn.frame;
  return { back: end === null ? to : end, ahead: start === null ? to : -start, peers: false };
}

/**
 * A FIRST_VALUE whose frames all start at the partition's first slot, or a LAST_VALUE whose frames
 * all end at its last: the value is that slot's, so only a change of it reaches (every slot).
 */
export function edgeOf(fn: WindowFn): 'first' | 'last' | null {
  if (fn.fn === 'first_value') {
    if (fn.frame.kind === 'range') return 'first';
    if (fn.frame.start === null && (fn.frame.end === null || fn.frame.end >= 0)) return 'first';
  }
  if (fn.fn === 'last_value' && fn.frame.kind === 'rows') {
    if (fn.frame.end === null && (fn.frame.start === null || fn.frame.start <= 0)) return 'last';
  }
  return null;
}

/** An exact sum or count: integers, numerics of scale 0 (no float, no fraction); else false. */
export function exact(fn: WindowFn, x: Value): boolean {
  if (x === null || typeof x === 'bigint') return true;
  if (x instanceof Decimal) return x.scale === 0;
  return typeof x === 'number' && fn.type.kind !== 'float' && Number.isInteger(x);
}

/**
 * A frame's aggregate moved by one slot: `x` added (when it enters) and `y` taken out (when it
 * leaves), when subtracting is exact (counts, integer sums, numeric sums of scale 0); else null,
 * and the frame is folded (a difference of float sums is not their sum, nor of numerics its scale).
 */
export function slide(
  fn: WindowFn,
  acc: Acc,
  enters: boolean,
  x: Value,
  leaves: boolean,
  y: Value,
): Acc | null {
  if (fn.fn === 'count_star' || fn.fn === 'count') {
    const counts = (v: Value): number => (fn.fn === 'count_star' || v !== null ? 1 : 0);
    return { n: acc.n + (enters ? counts(x) : 0) - (leaves ? counts(y) : 0), v: null };
  }
  if (fn.fn !== 'sum' && fn.fn !== 'avg') return null;
  if (!exact(fn, acc.v) || (enters && !exact(fn, x)) || (leaves && !exact(fn, y))) return null;
  let next = acc;
  if (enters) next = fold(fn, next, x);
  if (leaves && y !== null) {
    const n = next.n - 1;
    if (n === 0) return EMPTY;
    const s = next.v;
    if (s instanceof Decimal)
      next = { n, v: sub(s, y instanceof Decimal ? y : Decimal.fromInt(y as number | bigint)) };
    else if (typeof s === 'number' && typeof y === 'number' && Number.isSafeInteger(s - y))
      next = { n, v: s - y };
    else next = { n, v: normalizeBigInt(BigInt(s as number | bigint) - BigInt(y as number | bigint)) };
  }
  return next;
}

/**
 * The MIN or MAX of a sliding frame: slot indexes whose values are still candidates, in order, their
 * values monotonic (each slot enters and leaves once). NULLs never enter.
 */
export class SlidingExtreme {
  private readonly queue: number[] = [];
  private head = 0;
  private next: number;

  constructor(
    private readonly kind: 'min' | 'max',
    from: number,
    private readonly slots: readonly { readonly row: readonly Value[] }[],
    private readonly arg: number,
  ) {
    this.next = from;
  }

  /** The extreme of slots start..end (called with both never decreasing; empty: NULL). */
  at(end: number, start: number): Value {
    for (; this.next <= end; this.next++) {
      const x = (this.slots[this.next] as { readonly row: readonly Value[] }).row[this.arg] as Value;
      if (x === null) continue;
      while (this.queue.length > this.head) {
        const last = (
          this.slots[this.queue[this.queue.length - 1] as number] as { readonly row: readonly Value[] }
        ).row[this.arg] as Value;
        if (extremeOrder(this.kind, last, x) < 0) break;
        this.queue.pop();
      }
      this.queue.push(this.next);
    }
    while (this.queue.length > this.head && (this.queue[this.head] as number) < start) this.head++;
    const best = this.queue[this.head];
    return best === undefined
      ? null
      : ((this.slots[best] as { readonly row: readonly Value[] }).row[this.arg] as Value);
  }
}

/**
 * MIN's or MAX's order of preference, the winner first: by value, and among equal values of other
 * texts the first in compareExact's order (1.5 before 1.50), as the MIN/MAX aggregates show.
 */
export function extremeOrder(kind: 'min' | 'max', a: Value, b: Value): number {
  if (kind === 'min') return compareExact(a, b);
  const c = compareValues(b, a);
  return c !== 0 ? c : compareExact(a, b);
}

/** Adds one input to an aggregate's state (NULL inputs count only for COUNT(*)). */
export function fold(fn: WindowFn, acc: Acc, x: Value): Acc {
  if (fn.fn === 'count_star') return { n: acc.n + 1, v: null };
  if (x === null) return acc;
  switch (fn.fn) {
    case 'count':
      return { n: acc.n + 1, v: null };
    case 'min':
    case 'max':
      return { n: acc.n + 1, v: acc.v === null || extremeOrder(fn.fn, x, acc.v) < 0 ? x : acc.v };
    case 'string_agg':
      return join(fn, acc, x as string, false);
    default:
      return { n: acc.n + 1, v: acc.v === null ? start(fn, x) : plus(fn, acc.v, x) };
  }
}

/**
 * STRING_AGG's state with `x` joined after the rows folded (`before`: ahead of them, folding a
 * suffix backward), refused past MAX_TEXT_LENGTH (as GROUP BY's STRING_AGG is) before it is built:
 * V8 joins two strings in O(1) by reference, so a running frame's texts share their characters.
 */
function join(fn: WindowFn, acc: Acc, x: string, before: boolean): Acc {
  if (acc.long === true) return { n: acc.n + 1, v: null, long: true };
  if (acc.v === null) return x.length > MAX_TEXT_LENGTH ? { n: 1, v: null, long: true } : { n: 1, v: x };
  const s = acc.v as string;
  const d = fn.delimiter ?? '';
  if (s.length + d.length + x.length > MAX_TEXT_LENGTH) return { n: acc.n + 1, v: null, long: true };
  return { n: acc.n + 1, v: before ? x + d + s : s + d + x };
}

/** Adds one input to an aggregate's state ahead of the rows folded (a suffix folded backward). */
export function foldBefore(fn: WindowFn, acc: Acc, x: Value): Acc {
  return fn.fn === 'string_agg' && x !== null ? join(fn, acc, x as string, true) : fold(fn, acc, x);
}

/** The sum's first value in the result's arithmetic: numeric sums as Decimals. */
export function start(fn: WindowFn, x: Value): Value {
  if (fn.type.kind === 'numeric') return x instanceof Decimal ? x : Decimal.fromInt(x as number | bigint);
  if (fn.fn === 'avg' && fn.type.kind === 'float') return Number(x);
  return x;
}

export function plus(fn: WindowFn, s: Value, x: Value): Value {
  if (s instanceof Decimal) return add(s, x instanceof Decimal ? x : Decimal.fromInt(x as number | bigint));
  if (fn.type.kind === 'float') return (s as number) + Number(x);
  // Integer sums (bigint results): exact.
  if (typeof s === 'number' && typeof x === 'number') {
    const r = s + x;
    if (Number.isSafeInteger(r)) return r;
  }
  return checkInt(BigInt(s as number | bigint) + BigInt(x as number | bigint), 64);
}

export function finish(fn: WindowFn, acc: Acc): Value {
  switch (fn.fn) {
    case 'count':
    case 'count_star':
      return acc.n;
    case 'avg':
      if (acc.n === 0) return null;
      // PostgreSQL's numeric avg: sum / count with select_div_scale.
      if (acc.v instanceof Decimal) return div(acc.v, Decimal.fromInt(acc.n));
      return (acc.v as number) / acc.n;
    default:
      return acc.n === 0 ? null : acc.v;
  }
}

/** Equal as a Z-set sees them: printing alike (a window value from 1.50 to 1.5 is a change). */
export function sameValues(a: readonly Value[], b: readonly Value[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Value;
    const y = b[i] as Value;
    if (x === y) continue;
    if (x === null || y === null || !identicalValues(x, y)) return false;
  }
  return true;
}
