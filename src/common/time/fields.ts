// EXTRACT / date_part and date_trunc (PostgreSQL's manual, sections 9.9.1 and 9.9.2). EXTRACT returns
// numeric as PostgreSQL 14+ does (seconds with 6 decimals: 40.120000); date_part is the same value as
// a double. Unit names are PostgreSQL's, with its plurals and abbreviations.
import { SluiceError } from '../errors.ts';
import { Decimal } from '../decimal.ts';
import {
  USECS_PER_DAY,
  USECS_PER_HOUR,
  USECS_PER_MINUTE,
  USECS_PER_SEC,
  civil,
  dayNumber,
  formatDayTime,
  isoDow,
  isoWeek,
  parseTimeOfDay,
  type DayTime,
} from './calendar.ts';
import { Interval } from './interval.ts';

/** The kinds of value a unit applies to (a date is read as midnight of its day, a timestamptz in UTC). */
export type TimeKind = 'date' | 'timestamp' | 'timestamptz' | 'time' | 'interval';

const UNIT_ALIASES: Record<string, string> = {
  microsecond: 'microseconds',
  microseconds: 'microseconds',
  us: 'microseconds',
  usec: 'microseconds',
  usecs: 'microseconds',
  useconds: 'microseconds',
  millisecond: 'milliseconds',
  milliseconds: 'milliseconds',
  ms: 'milliseconds',
  msec: 'milliseconds',
  msecs: 'milliseconds',
  mseconds: 'milliseconds',
  second: 'second',
  seconds: 'second',
  s: 'second',
  sec: 'second',
  secs: 'second',
  minute: 'minute',
  minutes: 'minute',
  m: 'minute',
  min: 'minute',
  mins: 'minute',
  hour: 'hour',
  hours: 'hour',
  h: 'hour',
  hr: 'hour',
  hrs: 'hour',
  day: 'day',
  days: 'day',
  d: 'day',
  week: 'week',
  weeks: 'week',
  w: 'week',
  month: 'month',
  months: 'month',
  mon: 'month',
  mons: 'month',
  quarter: 'quarter',
  qtr: 'quarter',
  year: 'year',
  years: 'year',
  y: 'year',
  yr: 'year',
  yrs: 'year',
  decade: 'decade',
  decades: 'decade',
  dec: 'decade',
  decs: 'decade',
  century: 'century',
  centuries: 'century',
  c: 'century',
  cent: 'century',
  millennium: 'millennium',
  millennia: 'millennium',
  millenniums: 'millennium',
  mil: 'millennium',
  mils: 'millennium',
  epoch: 'epoch',
  dow: 'dow',
  isodow: 'isodow',
  doy: 'doy',
  isoyear: 'isoyear',
  timezone: 'timezone',
  timezone_hour: 'timezone_hour',
  timezone_minute: 'timezone_minute',
};

const KIND_NAMES: Record<TimeKind, string> = {
  date: 'date',
  timestamp: 'timestamp without time zone',
  timestamptz: 'timestamp with time zone',
  time: 'time without time zone',
  interval: 'interval',
};

/** The unit a name stands for; INVALID_VALUE `unit "x" not recognized for type …` otherwise. */
export function normalizeUnit(name: string, kind: TimeKind): string {
  const unit = UNIT_ALIASES[name.trim().toLowerCase()];
  if (unit === undefined) {
    throw new SluiceError('INVALID_VALUE', `unit "${name}" not recognized for type ${KIND_NAMES[kind]}`);
  }
  return unit;
}

function unsupported(unit: string, kind: TimeKind): SluiceError {
  return new SluiceError('INVALID_VALUE', `unit "${unit}" not supported for type ${KIND_NAMES[kind]}`);
}

// PostgreSQL's EXTRACT fields per type (manual 9.9.1), built from the parts the types share.
const CLOCK_UNITS = ['microseconds', 'milliseconds', 'second', 'minute', 'hour'];
const CALENDAR_UNITS = ['day', 'month', 'quarter', 'week', 'dow', 'isodow', 'doy', 'year'];
const ERA_UNITS = ['decade', 'century', 'millennium'];
const DATE_UNITS = [...CALENDAR_UNITS, ...ERA_UNITS, 'isoyear', 'epoch'];

const EXTRACT_UNITS: Record<TimeKind, ReadonlySet<string>> = {
  date: new Set(DATE_UNITS),
  timestamp: new Set([...CLOCK_UNITS, ...DATE_UNITS]),
  timestamptz: new Set([...CLOCK_UNITS, ...DATE_UNITS, 'timezone', 'timezone_hour', 'timezone_minute']),
  time: new Set([...CLOCK_UNITS, 'epoch']),
  interval: new Set([...CLOCK_UNITS, 'day', 'month', 'quarter', 'year', ...ERA_UNITS, 'epoch']),
};

/** Checks a unit for EXTRACT on a kind, returning its normal name. */
export function extractUnit(name: string, kind: TimeKind): string {
  const unit = normalizeUnit(name, kind);
  // named as written, as PostgreSQL does (`unit "ms" not supported for type date`)
  if (!EXTRACT_UNITS[kind].has(unit)) throw unsupported(name.trim().toLowerCase(), kind);
  return unit;
}

function dec(unscaled: number | bigint, scale: number): Decimal {
  return new Decimal(unscaled, scale);
}

function dayTime(v: string): DayTime {
  if (v.length === 10) return { day: dayNumber(+v.slice(0, 4), +v.slice(5, 7), +v.slice(8, 10)), micros: 0 };
  const end = v.endsWith('+00') ? v.length - 3 : v.length;
  return {
    day: dayNumber(+v.slice(0, 4), +v.slice(5, 7), +v.slice(8, 10)),
    micros: parseTimeOfDay(v.slice(11, end)),
  };
}

function clockField(unit: string, micros: number): Decimal | null {
  switch (unit) {
    case 'microseconds':
      return dec(micros % USECS_PER_MINUTE, 0);
    case 'milliseconds':
      return dec(micros % USECS_PER_MINUTE, 3);
    case 'second':
      return dec(micros % USECS_PER_MINUTE, 6);
    case 'minute':
      return dec(Math.trunc((micros % USECS_PER_HOUR) / USECS_PER_MINUTE), 0);
    case 'hour':
      return dec(Math.trunc(micros / USECS_PER_HOUR), 0);
    default:
      return null;
  }
}

/** EXTRACT(unit FROM v) for a stored date, timestamp or timestamptz (unit already checked). */
export function extractDateTime(unit: string, v: string, kind: TimeKind): Decimal {
  const dt = dayTime(v);
  const clock = clockField(unit, dt.micros);
  if (clock !== null) return clock;
  const [y, m, d] = civil(dt.day);
  switch (unit) {
    case 'day':
      return dec(d, 0);
    case 'month':
      return dec(m, 0);
    case 'quarter':
      return dec(Math.floor((m - 1) / 3) + 1, 0);
    case 'week':
      return dec(isoWeek(dt.day)[1], 0);
    case 'isoyear':
      return dec(isoWeek(dt.day)[0], 0);
    case 'dow':
      return dec(isoDow(dt.day) % 7, 0);
    case 'isodow':
      return dec(isoDow(dt.day), 0);
    case 'doy':
      return dec(dt.day - dayNumber(y, 1, 1) + 1, 0);
    case 'year':
      return dec(y, 0);
    case 'decade':
      return dec(Math.floor(y / 10), 0);
    case 'century':
      return dec(Math.floor((y + 99) / 100), 0);
    case 'millennium':
      return dec(Math.floor((y + 999) / 1000), 0);
    case 'epoch':
      if (kind === 'date') return dec(dt.day * 86_400, 0);
      return dec(BigInt(dt.day) * BigInt(USECS_PER_DAY) + BigInt(dt.micros), 6);
    case 'timezone':
    case 'timezone_hour':
    case 'timezone_minute':
      return dec(0, 0); // the session time zone is UTC
    default:
      throw unsupported(unit, kind);
  }
}

export function extractTime(unit: string, v: string): Decimal {
  const micros = parseTimeOfDay(v);
  if (unit === 'epoch') return dec(micros, 6);
  return clockField(unit, micros) ?? dec(0, 0);
}

export function extractInterval(unit: string, iv: Interval): Decimal {
  const years = Math.trunc(iv.months / 12);
  const t = iv.micros;
  switch (unit) {
    case 'microseconds':
      return dec(t % USECS_PER_MINUTE, 0);
    case 'milliseconds':
      return dec(t % USECS_PER_MINUTE, 3);
    case 'second':
      return dec(t % USECS_PER_MINUTE, 6);
    case 'minute':
      return dec(Math.trunc((t % USECS_PER_HOUR) / USECS_PER_MINUTE), 0);
    case 'hour':
      return dec(Math.trunc(t / USECS_PER_HOUR), 0);
    case 'day':
      return dec(iv.days, 0);
    case 'month':
      return dec(iv.months % 12, 0);
    case 'quarter':
      return dec(Math.trunc((iv.months % 12) / 3) + 1, 0);
    case 'year':
      return dec(years, 0);
    case 'decade':
      return dec(Math.trunc(years / 10), 0);
    case 'century':
      return dec(Math.trunc(years / 100), 0);
    case 'millennium':
      return dec(Math.trunc(years / 1000), 0);
    case 'epoch': {
      // A year is 365.25 days, a month 30 (PostgreSQL's interval_part): in microseconds.
      const yearMicros = BigInt(years) * 31_557_600_000_000n;
      const rest =
        BigInt(iv.months % 12) * 30n * BigInt(USECS_PER_DAY) + BigInt(iv.days) * BigInt(USECS_PER_DAY);
      return dec(yearMicros + rest + BigInt(t), 6);
    }
    default:
      throw unsupported(unit, 'interval');
  }
}

const TRUNC_UNITS = new Set([
  'microseconds',
  'milliseconds',
  'second',
  'minute',
  'hour',
  'day',
  'week',
  'month',
  'quarter',
  'year',
  'decade',
  'century',
  'millennium',
]);

export function truncUnit(name: string, kind: TimeKind): string {
  const unit = normalizeUnit(name, kind);
  if (!TRUNC_UNITS.has(unit) || (kind === 'interval' && unit === 'week')) throw unsupported(unit, kind);
  return unit;
}

/** date_trunc(unit, day/time): the start of the unit the moment falls in. */
export function truncDayTime(unit: string, dt: DayTime): DayTime {
  const t = dt.micros;
  switch (unit) {
    case 'microseconds':
      return dt;
    case 'milliseconds':
      return { day: dt.day, micros: t - (t % 1000) };
    case 'second':
      return { day: dt.day, micros: t - (t % USECS_PER_SEC) };
    case 'minute':
      return { day: dt.day, micros: t - (t % USECS_PER_MINUTE) };
    case 'hour':
      return { day: dt.day, micros: t - (t % USECS_PER_HOUR) };
    case 'day':
      return { day: dt.day, micros: 0 };
    case 'week':
      return { day: dt.day - isoDow(dt.day) + 1, micros: 0 };
    default: {
      const [y, m] = civil(dt.day);
      const first = (year: number, month = 1): DayTime => ({ day: dayNumber(year, month, 1), micros: 0 });
      switch (unit) {
        case 'month':
          return first(y, m);
        case 'quarter':
          return first(y, Math.floor((m - 1) / 3) * 3 + 1);
        case 'year':
          return first(y);
        case 'decade':
          return first(Math.floor(y / 10) * 10);
        case 'century':
          return first(Math.floor((y - 1) / 100) * 100 + 1);
        default:
          return first(Math.floor((y - 1) / 1000) * 1000 + 1);
      }
    }
  }
}

export function truncTimestamp(unit: string, v: string): string {
  const r = truncDayTime(unit, dayTime(v));
  return formatDayTime(r.day, r.micros);
}

export function truncInterval(unit: string, iv: Interval): Interval {
  const t = iv.micros;
  switch (unit) {
    case 'microseconds':
      return iv;
    case 'milliseconds':
      return Interval.of(iv.months, iv.days, t - (t % 1000));
    case 'second':
      return Interval.of(iv.months, iv.days, t - (t % USECS_PER_SEC));
    case 'minute':
      return Interval.of(iv.months, iv.days, t - (t % USECS_PER_MINUTE));
    case 'hour':
      return Interval.of(iv.months, iv.days, t - (t % USECS_PER_HOUR));
    case 'day':
      return Interval.of(iv.months, iv.days, 0);
    case 'month':
      return Interval.of(iv.months, 0, 0);
    case 'quarter':
      return Interval.of(iv.months - (iv.months % 3), 0, 0);
    case 'year':
      return Interval.of(iv.months - (iv.months % 12), 0, 0);
    case 'decade':
      return Interval.of(iv.months - (iv.months % 120), 0, 0);
    case 'century':
      return Interval.of(iv.months - (iv.months % 1200), 0, 0);
    default:
      return Interval.of(iv.months - (iv.months % 12000), 0, 0);
  }
}
