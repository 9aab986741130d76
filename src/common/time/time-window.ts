// The window assignment of the window table functions TUMBLE and HOP: windows of a fixed size (no
// months: a month has no fixed length) aligned to 1970-01-01 00:00:00 plus an offset, as RisingWave
// and Flink align them. A timestamptz is aligned on its UTC instant, a date at its midnight.
// Exact over the whole timestamp range: microseconds as doubles where they are safe integers (about
// 285 years either side of 1970), as bigints beyond.
import { SluiceError } from '../errors.ts';
import { USECS_PER_DAY, formatDayTime } from './calendar.ts';
import { dayTimeOf } from './datetime.ts';
import type { Interval } from './interval.ts';

/** Microseconds since the epoch, a safe-integer double or else a bigint. */
type Micros = number | bigint;

const DAY_BIG = BigInt(USECS_PER_DAY);

/** The microseconds of an interval without months (the binder refuses months before this). */
export function intervalMicros(iv: Interval): Micros {
  if (iv.months !== 0) {
    throw new SluiceError('INTERNAL_ERROR', 'a window interval with months reached the window arithmetic');
  }
  const total = iv.days * USECS_PER_DAY + iv.micros;
  return Number.isSafeInteger(total) ? total : BigInt(iv.days) * DAY_BIG + BigInt(iv.micros);
}

/** A stored date / timestamp / timestamptz text as microseconds since 1970-01-01 00:00:00 (UTC). */
export function epochMicrosOf(value: string): Micros {
  const dt = dayTimeOf(value);
  const total = dt.day * USECS_PER_DAY + dt.micros;
  return Number.isSafeInteger(total) ? total : BigInt(dt.day) * DAY_BIG + BigInt(dt.micros);
}

/** Microseconds since the epoch back as stored text: a timestamp, or with `tz` a timestamptz. */
export function formatEpochMicros(t: Micros, tz: boolean): string {
  let day: number;
  let micros: number;
  if (typeof t === 'number') {
    day = Math.floor(t / USECS_PER_DAY);
    micros = t - day * USECS_PER_DAY;
  } else {
    let d = t / DAY_BIG;
    if (d * DAY_BIG > t) d -= 1n; // bigint division truncates toward zero: floor it
    day = Number(d);
    micros = Number(t - d * DAY_BIG);
  }
  const text = formatDayTime(day, micros);
  return tz ? `${text}+00` : text;
}

/**
 * The start of the window of length `size` (> 0) holding `t`, windows starting at `offset` plus
 * whole multiples of `size`: the greatest such start ≤ t (floor division, also before 1970).
 */
export function alignedStart(t: Micros, size: Micros, offset: Micros): Micros {
  if (typeof t === 'number' && typeof size === 'number' && typeof offset === 'number') {
    const shifted = t - offset;
    if (Number.isSafeInteger(shifted)) {
      const r = shifted % size;
      return t - (r < 0 ? r + size : r);
    }
  }
  const tb = BigInt(t);
  const sb = BigInt(size);
  const r = (tb - BigInt(offset)) % sb;
  return narrow(tb - (r < 0n ? r + sb : r));
}

/** a + k·b, exact. */
export function addMultiple(a: Micros, k: number, b: Micros): Micros {
  if (typeof a === 'number' && typeof b === 'number') {
    const x = a + k * b;
    if (Number.isSafeInteger(x) && Number.isSafeInteger(k * b)) return x;
  }
  return narrow(BigInt(a) + BigInt(k) * BigInt(b));
}

function narrow(x: bigint): Micros {
  const n = Number(x);
  return Number.isSafeInteger(n) ? n : x;
}

/** The number of windows a row falls in for HOP: size / slide when it divides exactly, else null. */
export function hopWindowCount(slide: Interval, size: Interval): number | null {
  const s = BigInt(intervalMicros(slide));
  const z = BigInt(intervalMicros(size));
  if (s <= 0n || z % s !== 0n) return null;
  const n = z / s;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** TUMBLE's window_start of a stored date/timestamp/timestamptz `value` (a date gives a timestamp). */
export function tumbleStart(value: string, size: Interval, offset: Interval, tz: boolean): string {
  const start = alignedStart(epochMicrosOf(value), intervalMicros(size), intervalMicros(offset));
  return formatEpochMicros(start, tz);
}
