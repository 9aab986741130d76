// The one-to-many stateless step (a FlatMap) shared by the LogicalPlan (`expand`) and the
// DataflowPlan (`flatmap`): each input row is emitted once per tuple its generator yields, with that
// tuple's values appended. A generator is plain data (printed, fingerprinted, checkpoint-neutral);
// HOP's windows are the first kind, `unnest` the second, VALUES in FROM (constant rows) the third. Every generator has a bounded fan-out
// (`maxRows`), so no row can expand without limit (unnest: an array's length, which MAX_ARRAY_LENGTH
// bounds for arrays from input; an ARRAY_AGG's is the size of its group, held in state already).
import type { SqlType, Value } from './types.ts';
import { T } from './types.ts';
import type { SqlArray } from './array/sql-array.ts';
import { MAX_ARRAY_LENGTH } from './limits.ts';
import { SluiceError } from './errors.ts';
import type { Jsonb } from './json/jsonb.ts';
import { jsonbSetTuples, type JsonbSetFunction } from './json/jsonb-sets.ts';
import { normalizeBigInt } from './values.ts';
import { instantPlusInterval, timestampPlusInterval } from './time/datetime.ts';
import type { RowFn, ScalarExpr } from './scalar-expr.ts';
import { compileScalar, printScalar } from './scalar-expr.ts';
import type { Interval } from './time/interval.ts';
import {
  addMultiple,
  alignedStart,
  epochMicrosOf,
  formatEpochMicros,
  hopWindowCount,
  intervalMicros,
} from './time/time-window.ts';

/**
 * HOP: the windows of length `size`, starting every `slide` (offset from the epoch by `offset`),
 * that hold `time`; appends window_start and window_end (timestamptz when `tz`, else timestamp).
 * A row whose time is NULL yields nothing (RisingWave filters it out under its hop window).
 */
export interface HopGenerator {
  readonly kind: 'hop';
  readonly time: ScalarExpr;
  readonly slide: Interval;
  readonly size: Interval;
  readonly offset: Interval;
  readonly tz: boolean;
}

/**
 * unnest(array) [WITH ORDINALITY]: one tuple per element (the element, and its 1-based position as
 * a bigint with ordinality); a NULL or empty array yields nothing, as PostgreSQL's.
 */
export interface UnnestGenerator {
  readonly kind: 'unnest';
  readonly array: ScalarExpr;
  readonly ordinality: boolean;
}

/**
 * `(VALUES (…), …)` in FROM: the same tuples for every input row (its input is the one empty row of
 * a FROM-less SELECT, so the relation is these rows), each expression already cast to its column's
 * type. No key: equal rows are rows alike, as any relation without one.
 */
export interface RowsGenerator {
  readonly kind: 'rows';
  readonly rows: readonly (readonly ScalarExpr[])[];
  readonly types: readonly SqlType[];
}

/**
 * generate_series(start, stop [, step]): start, start + step, … while not past stop (both ends
 * included), as PostgreSQL's; integers of one width (step 1 unless given), or timestamps and
 * timestamptz with an interval step (each value the one before plus the step, months included, as
 * PostgreSQL adds it). A NULL argument yields nothing; a zero step is an error; at most
 * MAX_SERIES_ROWS values for one row (an error past it: a row error in a view).
 */
export interface SeriesGenerator {
  readonly kind: 'series';
  readonly start: ScalarExpr;
  readonly stop: ScalarExpr;
  readonly step: ScalarExpr | null;
  readonly type: SqlType;
  readonly ordinality: boolean;
}

/**
 * jsonb_array_elements[_text], jsonb_each[_text] and jsonb_object_keys of a jsonb value
 * (json/jsonb-sets.ts): a NULL value yields nothing; a value of the wrong kind is an error; at most
 * MAX_ARRAY_LENGTH tuples for one row, as an array.
 */
export interface JsonbSetGenerator {
  readonly kind: 'jsonb';
  readonly fn: JsonbSetFunction;
  readonly value: ScalarExpr;
  readonly ordinality: boolean;
}

export type ExpandGenerator =
  HopGenerator | UnnestGenerator | RowsGenerator | SeriesGenerator | JsonbSetGenerator;

/** Most values one generate_series call may yield (an array's bound: a row holds no more). */
export const MAX_SERIES_ROWS = MAX_ARRAY_LENGTH;

/** Most tuples one input row may yield (HOP: size / slide), so an input row's output is bounded. */
export const MAX_EXPAND_ROWS = 1000;

/** The most tuples `g` yields for one row. */
export function expandMaxRows(g: ExpandGenerator): number {
  if (g.kind === 'unnest') return MAX_ARRAY_LENGTH;
  if (g.kind === 'series') return MAX_SERIES_ROWS;
  if (g.kind === 'jsonb') return MAX_ARRAY_LENGTH;
  if (g.kind === 'rows') return g.rows.length;
  return hopWindowCount(g.slide, g.size) ?? 0;
}

/** The expressions `g` reads of its input row. */
export function expandReads(g: ExpandGenerator): ScalarExpr[] {
  if (g.kind === 'hop') return [g.time];
  if (g.kind === 'unnest') return [g.array];
  if (g.kind === 'series') return [g.start, g.stop, ...(g.step !== null ? [g.step] : [])];
  if (g.kind === 'jsonb') return [g.value];
  return g.rows.flat();
}

/** The types of the columns `g` appends. */
export function expandTypes(g: ExpandGenerator): SqlType[] {
  if (g.kind === 'unnest') {
    const element = g.array.type.kind === 'array' ? g.array.type.element : T.unknown;
    return g.ordinality ? [element, T.int64] : [element];
  }
  if (g.kind === 'rows') return [...g.types];
  if (g.kind === 'series') return g.ordinality ? [g.type, T.int64] : [g.type];
  if (g.kind === 'jsonb') {
    const each = g.fn === 'jsonb_each' || g.fn === 'jsonb_each_text';
    const value = g.fn === 'jsonb_each' || g.fn === 'jsonb_array_elements' ? T.jsonb : T.text;
    const types = each ? [T.text, value] : [value];
    return g.ordinality ? [...types, T.int64] : types;
  }
  const t: SqlType = g.tz ? { kind: 'timestamptz' } : { kind: 'timestamp' };
  return [t, t];
}

/**
 * The appended columns that, with the input row's key, identify an output row (HOP: window_start,
 * the first appended column; unnest WITH ORDINALITY: the ordinal): offsets among the appended
 * columns, or null when none does (unnest's equal elements are rows alike).
 */
export function expandKeyColumns(g: ExpandGenerator): number[] | null {
  if (g.kind === 'unnest') return g.ordinality ? [1] : null;
  if (g.kind === 'rows') return null;
  // An object's keys are distinct; an array's elements need not be (their ordinal is).
  if (g.kind === 'jsonb') {
    if (g.ordinality) return [expandTypes(g).length - 1];
    return g.fn === 'jsonb_array_elements' || g.fn === 'jsonb_array_elements_text' ? null : [0];
  }
  // A series' values are distinct (and so its ordinals); HOP's window_start.
  return [0];
}

export function printExpand(g: ExpandGenerator): string {
  if (g.kind === 'unnest') return `unnest(${printScalar(g.array)})${g.ordinality ? ' with ordinality' : ''}`;
  if (g.kind === 'jsonb') return `${g.fn}(${printScalar(g.value)})${g.ordinality ? ' with ordinality' : ''}`;
  if (g.kind === 'series') {
    const args = [g.start, g.stop, ...(g.step !== null ? [g.step] : [])].map(printScalar).join(', ');
    return `generate_series(${args})${g.ordinality ? ' with ordinality' : ''}`;
  }
  if (g.kind === 'rows')
    return `values ${g.rows.map((r) => `(${r.map(printScalar).join(', ')})`).join(', ')}`;
  return (
    `hop(${printScalar(g.time)}, slide interval '${g.slide.toString()}', size interval '${g.size.toString()}', ` +
    `offset interval '${g.offset.toString()}')`
  );
}

/** A row → the tuples to append, one output row each (an empty array: no output row). */
export type ExpandFn = (row: readonly Value[]) => Value[][];

export function compileExpand(g: ExpandGenerator): ExpandFn {
  if (g.kind === 'unnest') {
    const array = compileScalar(g.array);
    const ordinality = g.ordinality;
    return (row) => {
      const a = array(row) as SqlArray | null;
      if (a === null) return [];
      return a.items.map((x, i) => (ordinality ? [x, i + 1] : [x]));
    };
  }
  if (g.kind === 'series') return compileSeries(g);
  if (g.kind === 'jsonb') {
    const value = compileScalar(g.value);
    const { fn, ordinality } = g;
    return (row) => {
      const j = value(row) as Jsonb | null;
      if (j === null) return [];
      const tuples = jsonbSetTuples(fn, j);
      if (tuples.length > MAX_ARRAY_LENGTH) {
        throw new SluiceError(
          'ARRAY_TOO_LARGE',
          `${fn} would yield more than ${MAX_ARRAY_LENGTH} rows for one row`,
        );
      }
      if (ordinality) tuples.forEach((t, i) => t.push(i + 1));
      return tuples;
    };
  }
  if (g.kind === 'rows') {
    // A constant is taken as it is (compiling a function for each of thousands of literals cost
    // most of a long list's time); other expressions run per input row (the one empty row, once
    // per backfill), so a row error surfaces as any projection's does.
    const rows = g.rows.map((r) =>
      r.map((e): RowFn | Value => (e.kind === 'const' ? e.value : compileScalar(e))),
    );
    return (row) => rows.map((r) => r.map((x) => (typeof x === 'function' ? (x as RowFn)(row) : x)));
  }
  const time: RowFn = compileScalar(g.time);
  const slide = intervalMicros(g.slide);
  const size = intervalMicros(g.size);
  const offset = intervalMicros(g.offset);
  const count = expandMaxRows(g);
  const tz = g.tz;
  return (row) => {
    const v = time(row);
    if (v === null) return [];
    // The last window holding t starts at its slide-aligned floor; the earlier ones a slide apart.
    const last = alignedStart(epochMicrosOf(v as string), slide, offset);
    const out: Value[][] = [];
    for (let i = count - 1; i >= 0; i--) {
      const start = addMultiple(last, -i, slide);
      const end = addMultiple(start, 1, size);
      out.push([formatEpochMicros(start, tz), formatEpochMicros(end, tz)]);
    }
    return out;
  };
}

function compileSeries(g: SeriesGenerator): ExpandFn {
  const start = compileScalar(g.start);
  const stop = compileScalar(g.stop);
  const step = g.step !== null ? compileScalar(g.step) : null;
  const ordinality = g.ordinality;
  const tuples = (values: readonly Value[]): Value[][] =>
    values.map((v, i) => (ordinality ? [v, i + 1] : [v]));
  if (g.type.kind === 'int') {
    const bits = g.type.bits;
    return (row) => {
      const a = start(row);
      const b = stop(row);
      const s = step !== null ? step(row) : 1;
      if (a === null || b === null || s === null) return [];
      const first = BigInt(a as number | bigint);
      const last = BigInt(b as number | bigint);
      const by = BigInt(s as number | bigint);
      if (by === 0n) throw zeroStep();
      const count = (last - first) / by + 1n;
      if (count <= 0n) return [];
      if (count > BigInt(MAX_SERIES_ROWS)) throw tooManyValues();
      const out: Value[] = [];
      for (let i = 0n, v = first; i < count; i++, v += by)
        out.push(bits === 64 ? normalizeBigInt(v) : Number(v));
      return tuples(out);
    };
  }
  const tz = g.type.kind === 'timestamptz';
  return (row) => {
    const a = start(row);
    const b = stop(row);
    const s = step?.(row) ?? null;
    if (a === null || b === null || s === null) return [];
    const by = s as Interval;
    const sign = Math.sign(intervalSign(by));
    if (sign === 0) throw zeroStep();
    const end = epochMicrosOf(b as string);
    const out: Value[] = [];
    for (let v = a as string; ; v = tz ? instantPlusInterval(v, by, 1) : timestampPlusInterval(v, by, 1)) {
      const at = epochMicrosOf(v);
      if (sign > 0 ? at > end : at < end) break;
      if (out.length === MAX_SERIES_ROWS) throw tooManyValues();
      out.push(v);
    }
    return tuples(out);
  };
}

/** An interval's direction, as PostgreSQL compares it with zero (a month as 30 days). */
function intervalSign(iv: Interval): number {
  return (iv.months * 30 + iv.days) * 86_400_000_000 + iv.micros;
}

function zeroStep(): SluiceError {
  return new SluiceError('INVALID_VALUE', 'step size cannot equal zero');
}

function tooManyValues(): SluiceError {
  return new SluiceError(
    'ARRAY_TOO_LARGE',
    `generate_series would yield more than ${MAX_SERIES_ROWS} values for one row`,
    { hint: 'a shorter range or a larger step' },
  );
}
