// Text input of TIMESTAMPTZ and TIME values, and the arithmetic of the date/time types (PostgreSQL's
// operators, section 9.9 of its manual). Stored forms: date 'YYYY-MM-DD', timestamp
// 'YYYY-MM-DD HH:MM:SS[.f]', timestamptz the UTC instant as 'YYYY-MM-DD HH:MM:SS[.f]+00' (the
// session time zone is UTC, so this is also PostgreSQL's output), time 'HH:MM:SS[.f]'. Each text
// form orders as its values do.
import {
  USECS_PER_DAY,
  USECS_PER_HOUR,
  USECS_PER_MINUTE,
  USECS_PER_SEC,
  addMonths,
  dateTimeFields,
  fractionMicros,
  dayNumber,
  formatDay,
  formatDayTime,
  formatTimeOfDay,
  outOfRange,
  parseDay,
  parseDayTime,
  parseTimeOfDay,
  type DayTime,
} from './calendar.ts';
import { Interval, justifyHours } from './interval.ts';
import { localToUtc, utcToLocal } from './zone.ts';

const TZ_TEXT =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(?:(Z|UTC|GMT)|([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?|\s([A-Za-z][A-Za-z0-9_/+-]*))?$/i;

/** A stored timestamptz of a UTC day and time. */
export function formatInstant(dt: DayTime): string {
  return `${formatDayTime(dt.day, dt.micros)}+00`;
}

/**
 * A timestamptz from text: a date, an optional time, an optional zone (Z, ±HH[:MM[:SS]] — ISO
 * 8601's sign, east positive — or an IANA name); without a zone the session's (UTC). Null if invalid.
 */
export function parseTimestamptz(text: string): string | null {
  const m = TZ_TEXT.exec(text.trim());
  const f = m === null ? null : dateTimeFields(m);
  if (m === null || f === null) return null;
  // normalise: a fraction rounded up to a whole second may carry into the next day.
  const local: DayTime = normalise(
    dayNumber(f.y, f.mo, f.d),
    f.h * USECS_PER_HOUR + f.mi * USECS_PER_MINUTE + f.s * USECS_PER_SEC + fractionMicros(f.frac),
  );
  let utc: DayTime = local;
  if (m[9] !== undefined) {
    const offset =
      (Number(m[10]) * 3600 + Number(m[11] ?? 0) * 60 + Number(m[12] ?? 0)) *
      USECS_PER_SEC *
      (m[9] === '-' ? -1 : 1);
    if (Math.abs(offset) > 15 * USECS_PER_HOUR + 59 * USECS_PER_MINUTE) return null;
    utc = normalise(local.day, local.micros - offset);
  } else if (m[13] !== undefined) {
    try {
      utc = localToUtc(m[13], local);
    } catch {
      return null;
    }
  }
  try {
    // The input as it came when it is canonical already: a table keeps one flat string a row, not
    // the concatenation tree the formatter builds (see parseTimestamp).
    const canonical = formatInstant(utc);
    return canonical === text ? text : canonical;
  } catch {
    return null;
  }
}

const TIME_TEXT = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?$/;

/** A time of day from 'HH:MM[:SS[.f]]' (24:00:00 allowed, as PostgreSQL does), or null. */
export function parseTime(text: string): string | null {
  const t = text.trim();
  const m = TIME_TEXT.exec(t.length > 10 && /^\d{4}-/.test(t) ? t.slice(11).replace(/[Z+-].*$/, '') : t);
  if (m === null) return null;
  const h = Number(m[1]);
  const mi = Number(m[2]);
  const s = m[3] === undefined ? 0 : Number(m[3]);
  const frac = fractionMicros(m[4] ?? '');
  const micros = h * USECS_PER_HOUR + mi * USECS_PER_MINUTE + s * USECS_PER_SEC + frac;
  if (mi > 59 || s > 59 || micros > USECS_PER_DAY) return null;
  return formatTimeOfDay(micros);
}

function normalise(day: number, micros: number): DayTime {
  const carry = Math.floor(micros / USECS_PER_DAY);
  return { day: day + carry, micros: micros - carry * USECS_PER_DAY };
}

/** A timestamp's day and time from its stored text; a date is midnight of its day. */
export function dayTimeOf(v: string): DayTime {
  return v.length === 10 ? { day: parseDay(v), micros: 0 } : parseDayTime(v);
}

/** timestamp + interval (PostgreSQL's timestamp_pl_interval): months, then days, then time. */
export function addInterval(dt: DayTime, iv: Interval): DayTime {
  const day = addMonths(dt.day, iv.months) + iv.days;
  return normalise(day, dt.micros + iv.micros);
}

export function timestampPlusInterval(ts: string, iv: Interval, sign: 1 | -1): string {
  const r = addInterval(dayTimeOf(ts), sign === 1 ? iv : iv.neg());
  return formatDayTime(r.day, r.micros);
}

/**
 * timestamptz + interval: months and days move the wall clock in the session time zone (UTC), so
 * this is the timestamp arithmetic on the UTC time.
 */
export function instantPlusInterval(ts: string, iv: Interval, sign: 1 | -1): string {
  const r = addInterval(parseDayTime(ts), sign === 1 ? iv : iv.neg());
  return formatInstant(r);
}

/** timestamp - timestamp: the difference as days and time (justify_hours, as PostgreSQL). */
export function timestampDiff(a: string, b: string): Interval {
  const x = dayTimeOf(a);
  const y = dayTimeOf(b);
  return justifyHours(Interval.of(0, x.day - y.day, x.micros - y.micros));
}

export function dateDiff(a: string, b: string): number {
  return parseDay(a) - parseDay(b);
}

export function datePlusDays(d: string, days: number): string {
  return formatDay(parseDay(d) + days);
}

/** time ± interval wraps around midnight (only the interval's time part counts). */
export function timePlusInterval(t: string, iv: Interval, sign: 1 | -1): string {
  const micros = parseTimeOfDay(t) + sign * (iv.micros % USECS_PER_DAY);
  return formatTimeOfDay(((micros % USECS_PER_DAY) + USECS_PER_DAY) % USECS_PER_DAY);
}

export function timeDiff(a: string, b: string): Interval {
  return Interval.of(0, 0, parseTimeOfDay(a) - parseTimeOfDay(b));
}

/** date + time → timestamp. */
export function datePlusTime(d: string, t: string): string {
  const micros = parseTimeOfDay(t);
  return formatDayTime(parseDay(d), micros);
}

/** timestamp AT TIME ZONE zone: the wall time in `zone` read as an instant (timestamptz). */
export function timestampAtZone(ts: string, zone: string): string {
  return formatInstant(localToUtc(zone, dayTimeOf(ts)));
}

/** timestamptz AT TIME ZONE zone: the instant's wall time in `zone` (timestamp). */
export function instantAtZone(ts: string, zone: string): string {
  const local = utcToLocal(zone, parseDayTime(ts));
  return formatDayTime(local.day, local.micros);
}

/** The session time zone: UTC, fixed (views must not depend on a session setting). */
export const SESSION_TIME_ZONE = 'UTC';

/** timestamp → timestamptz in the session zone. */
export function timestampToInstant(ts: string): string {
  return ts.length === 10 ? `${ts} 00:00:00+00` : `${ts}+00`;
}

/** timestamptz → timestamp in the session zone. */
export function instantToTimestamp(ts: string): string {
  return ts.slice(0, -3);
}

export { outOfRange };
