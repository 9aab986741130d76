// A date/time value as one number, microseconds since 1970-01-01 00:00 UTC: the logical clock's unit
// (each epoch's clock, temporal filters' bounds). Exact within ±2^53 µs (years 1685–2255 and beyond
// the 4-digit range the text forms hold), so comparisons and sums on it are integer arithmetic.
import { USECS_PER_DAY, formatDayTime } from './calendar.ts';
import { dayTimeOf } from './datetime.ts';
import { formatInstant } from './datetime.ts';

/** A stored date, timestamp or timestamptz (the UTC instant; the session zone is UTC) in µs. */
export function instantMicros(v: string): number {
  const dt = dayTimeOf(v.endsWith('+00') ? v.slice(0, -3) : v);
  return dt.day * USECS_PER_DAY + dt.micros;
}

/** The stored timestamptz of µs since the Unix epoch. */
export function formatMicros(micros: number): string {
  const day = Math.floor(micros / USECS_PER_DAY);
  return formatInstant({ day, micros: micros - day * USECS_PER_DAY });
}

/** The stored timestamp (without zone) of µs since the Unix epoch. */
export function formatMicrosLocal(micros: number): string {
  const day = Math.floor(micros / USECS_PER_DAY);
  return formatDayTime(day, micros - day * USECS_PER_DAY);
}
