// The date/time operators and functions as plan functions, compiled per argument types: arithmetic
// (time_add … time_neg: which operation is fixed by the operand types the binder resolved), EXTRACT /
// date_part, date_trunc, AT TIME ZONE (PostgreSQL's timezone()), make_*, age, justify_*, to_char,
// to_timestamp. All strict: NULL in, NULL out.
import { SluiceError } from '../errors.ts';
import type { SqlType, Value } from '../types.ts';
import { Decimal } from '../decimal.ts';
import {
  Interval,
  addIntervals,
  divInterval,
  justifyDays,
  justifyHours,
  justifyInterval,
  mulInterval,
  subIntervals,
} from '../time/interval.ts';
import {
  dateDiff,
  datePlusDays,
  datePlusTime,
  dayTimeOf,
  formatInstant,
  instantAtZone,
  instantPlusInterval,
  timeDiff,
  timePlusInterval,
  timestampAtZone,
  timestampDiff,
  timestampPlusInterval,
} from '../time/datetime.ts';
import {
  extractDateTime,
  extractInterval,
  extractTime,
  extractUnit,
  truncDayTime,
  truncInterval,
  truncTimestamp,
  truncUnit,
  type TimeKind,
} from '../time/fields.ts';
import {
  USECS_PER_DAY,
  USECS_PER_SEC,
  civil,
  dayNumber,
  daysInMonth,
  formatDay,
  formatDayTime,
  outOfRange,
} from '../time/calendar.ts';
import { localToUtc, utcToLocal } from '../time/zone.ts';
import { toChar } from '../time/to-char.ts';
import { toTimestamp } from '../time/to-timestamp.ts';
import { tumbleStart } from '../time/time-window.ts';

export const TIME_FNS = [
  'time_add',
  'time_sub',
  'time_mul',
  'time_div',
  'time_neg',
  'extract',
  'date_part',
  'date_trunc',
  'timezone',
  'make_interval',
  'make_date',
  'make_time',
  'make_timestamp',
  'age',
  'justify_hours',
  'justify_days',
  'justify_interval',
  'to_char',
  'to_timestamp',
  // TUMBLE's window_start (the window table functions, src/planner/bind-window-tvf.ts): not callable
  // by name, so no user can reach it with a size it did not check.
  'tumble_start',
] as const;
export type TimeFn = (typeof TIME_FNS)[number];

export function isTimeFn(fn: string): fn is TimeFn {
  return (TIME_FNS as readonly string[]).includes(fn);
}

type RowFn = (row: readonly Value[]) => Value;

function strict(args: readonly RowFn[], f: (...values: Value[]) => Value): RowFn {
  if (args.length === 1) {
    const a = args[0] as RowFn;
    return (row) => {
      const x = a(row);
      return x === null ? null : f(x);
    };
  }
  if (args.length === 2) {
    const a = args[0] as RowFn;
    const b = args[1] as RowFn;
    return (row) => {
      const x = a(row);
      if (x === null) return null;
      const y = b(row);
      return y === null ? null : f(x, y);
    };
  }
  return (row) => {
    const values: Value[] = [];
    for (const g of args) {
      const v = g(row);
      if (v === null) return null;
      values.push(v);
    }
    return f(...values);
  };
}

const num = (v: Value): number =>
  typeof v === 'bigint' ? Number(v) : v instanceof Decimal ? v.toNumber() : (v as number);

function kindOf(t: SqlType | undefined): TimeKind {
  switch (t?.kind) {
    case 'date':
    case 'timestamp':
    case 'timestamptz':
    case 'time':
    case 'interval':
      return t.kind;
    default:
      throw new SluiceError('INTERNAL_ERROR', `no time kind for ${t?.kind ?? 'nothing'}`);
  }
}

/** A unit argument compiled once when it is a constant (checked by the binder), per row otherwise. */
function unitOf(check: (name: string, kind: TimeKind) => string, kind: TimeKind): (name: Value) => string {
  let last: string | undefined;
  let lastUnit = '';
  return (name) => {
    const s = name as string;
    if (s !== last) {
      lastUnit = check(s, kind);
      last = s;
    }
    return lastUnit;
  };
}

function compileArith(fn: TimeFn, args: readonly RowFn[], types: readonly SqlType[]): RowFn {
  const [l, r] = [types[0]?.kind, types[1]?.kind];
  const sign: 1 | -1 = fn === 'time_sub' ? -1 : 1;
  if (fn === 'time_neg') return strict(args, (a) => (a as Interval).neg());
  if (fn === 'time_mul') {
    if (l === 'interval') return strict(args, (a, n) => mulInterval(a as Interval, num(n)));
    return strict(args, (n, a) => mulInterval(a as Interval, num(n)));
  }
  if (fn === 'time_div') return strict(args, (a, n) => divInterval(a as Interval, num(n)));
  // time_add / time_sub
  if (l === 'interval' && r === 'interval') {
    return strict(args, (a, b) =>
      sign === 1 ? addIntervals(a as Interval, b as Interval) : subIntervals(a as Interval, b as Interval),
    );
  }
  if (l === 'date' && r === 'int') return strict(args, (d, n) => datePlusDays(d as string, sign * num(n)));
  if (l === 'int' && r === 'date') return strict(args, (n, d) => datePlusDays(d as string, num(n)));
  if (l === 'date' && r === 'date') return strict(args, (a, b) => dateDiff(a as string, b as string));
  if (l === 'date' && r === 'time') return strict(args, (d, t) => datePlusTime(d as string, t as string));
  if (l === 'time' && r === 'date') return strict(args, (t, d) => datePlusTime(d as string, t as string));
  if (l === 'time' && r === 'time') return strict(args, (a, b) => timeDiff(a as string, b as string));
  if (l === 'time' && r === 'interval')
    return strict(args, (t, i) => timePlusInterval(t as string, i as Interval, sign));
  if (l === 'interval' && r === 'time')
    return strict(args, (i, t) => timePlusInterval(t as string, i as Interval, 1));
  if ((l === 'timestamp' || l === 'date') && r === 'interval')
    return strict(args, (t, i) => timestampPlusInterval(t as string, i as Interval, sign));
  if (l === 'interval' && (r === 'timestamp' || r === 'date'))
    return strict(args, (i, t) => timestampPlusInterval(t as string, i as Interval, 1));
  if (l === 'timestamptz' && r === 'interval')
    return strict(args, (t, i) => instantPlusInterval(t as string, i as Interval, sign));
  if (l === 'interval' && r === 'timestamptz')
    return strict(args, (i, t) => instantPlusInterval(t as string, i as Interval, 1));
  if ((l === 'timestamp' && r === 'timestamp') || (l === 'timestamptz' && r === 'timestamptz'))
    return strict(args, (a, b) => timestampDiff(a as string, b as string));
  throw new SluiceError('INTERNAL_ERROR', `no date/time operation ${fn}(${l}, ${r})`);
}

export function compileTimeFunction(fn: TimeFn, args: readonly RowFn[], types: readonly SqlType[]): RowFn {
  switch (fn) {
    case 'time_add':
    case 'time_sub':
    case 'time_mul':
    case 'time_div':
    case 'time_neg':
      return compileArith(fn, args, types);
    case 'extract':
    case 'date_part': {
      const kind = kindOf(types[1]);
      const unit = unitOf(extractUnit, kind);
      const asDouble = fn === 'date_part';
      const f =
        kind === 'interval'
          ? (u: Value, v: Value) => extractInterval(unit(u), v as Interval)
          : kind === 'time'
            ? (u: Value, v: Value) => extractTime(unit(u), v as string)
            : (u: Value, v: Value) => extractDateTime(unit(u), v as string, kind);
      return strict(args, asDouble ? (u, v) => f(u, v).toNumber() : f);
    }
    case 'date_trunc': {
      const kind = kindOf(types[1]);
      const unit = unitOf(truncUnit, kind);
      if (kind === 'interval') return strict(args, (u, v) => truncInterval(unit(u), v as Interval));
      if (kind === 'timestamptz') {
        if (args.length === 3) {
          // In a zone: truncate the wall time there, then back to an instant (standard time at DST).
          return strict(args, (u, v, z) => {
            const local = utcToLocal(z as string, dayTimeOf(v as string));
            return formatInstant(localToUtc(z as string, truncDayTime(unit(u), local)));
          });
        }
        return strict(args, (u, v) => `${truncTimestamp(unit(u), v as string)}+00`);
      }
      return strict(args, (u, v) => truncTimestamp(unit(u), v as string));
    }
    case 'timezone': {
      if (types[1]?.kind === 'timestamptz')
        return strict(args, (z, v) => instantAtZone(v as string, z as string));
      return strict(args, (z, v) => timestampAtZone(v as string, z as string));
    }
    case 'make_interval':
      return strict(args, (years, months, weeks, days, hours, mins, secs) =>
        Interval.of(
          num(years) * 12 + num(months),
          num(weeks) * 7 + num(days),
          num(hours) * 3_600_000_000 + num(mins) * 60_000_000 + Math.round(num(secs) * USECS_PER_SEC),
        ),
      );
    case 'make_date':
      return strict(args, (y, m, d) => makeDay(num(y), num(m), num(d)));
    case 'make_time':
      return strict(args, (h, mi, s) => formatDayTime(0, clockMicros(num(h), num(mi), num(s))).slice(11));
    case 'make_timestamp':
      return strict(args, (y, m, d, h, mi, s) =>
        formatDayTime(
          dayNumber(...checkedDate(num(y), num(m), num(d))),
          clockMicros(num(h), num(mi), num(s)),
        ),
      );
    case 'age':
      if (args.length === 1) throw new SluiceError('INTERNAL_ERROR', 'age(x) is bound to age(now, x)');
      return strict(args, (a, b) => age(a as string, b as string));
    case 'justify_hours':
      return strict(args, (a) => justifyHours(a as Interval));
    case 'justify_days':
      return strict(args, (a) => justifyDays(a as Interval));
    case 'justify_interval':
      return strict(args, (a) => justifyInterval(a as Interval));
    case 'to_char': {
      const kind = kindOf(types[0]);
      return strict(args, (v, p) => toChar(v, kind, p as string));
    }
    case 'to_timestamp':
      if (args.length === 1) return strict(args, (x) => epochToInstant(num(x)));
      return strict(args, (s, p) => toTimestamp(s as string, p as string));
    case 'tumble_start': {
      const tz = types[0]?.kind === 'timestamptz';
      return strict(args, (v, size, offset) =>
        tumbleStart(v as string, size as Interval, offset as Interval, tz),
      );
    }
  }
}

function checkedDate(y: number, m: number, d: number): [number, number, number] {
  if (!Number.isInteger(y) || y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) {
    throw new SluiceError('NUMERIC_OVERFLOW', `date field value out of range: ${y}-${pad(m)}-${pad(d)}`);
  }
  return [y, m, d];
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function makeDay(y: number, m: number, d: number): string {
  return formatDay(dayNumber(...checkedDate(y, m, d)));
}

function clockMicros(h: number, mi: number, s: number): number {
  if (h < 0 || h > 24 || mi < 0 || mi > 59 || s < 0 || s > 60 || (h === 24 && (mi > 0 || s > 0))) {
    throw new SluiceError('NUMERIC_OVERFLOW', `time field value out of range: ${h}:${pad(mi)}:${pad(s)}`);
  }
  return h * 3_600_000_000 + mi * 60_000_000 + Math.round(s * USECS_PER_SEC);
}

/** to_timestamp(seconds since the epoch) → timestamptz (±Infinity refused: no infinite values here). */
function epochToInstant(seconds: number): string {
  if (!Number.isFinite(seconds)) throw outOfRange('timestamp');
  const micros = Math.round(seconds * USECS_PER_SEC);
  const day = Math.floor(micros / USECS_PER_DAY);
  return formatInstant({ day, micros: micros - day * USECS_PER_DAY });
}

/**
 * age(a, b): the difference in years, months and days, from the fields (PostgreSQL's
 * timestamp_age), so age('2001-04-10', '1957-06-13') is 43 years 9 mons 27 days.
 */
function age(a: string, b: string): Interval {
  const x = dayTimeOf(a);
  const y = dayTimeOf(b);
  const swap = x.day < y.day || (x.day === y.day && x.micros < y.micros);
  const [hi, lo] = swap ? [y, x] : [x, y];
  const [y1, m1, d1] = civil(hi.day);
  const [y2, m2, d2] = civil(lo.day);
  let micros = hi.micros - lo.micros;
  let days = d1 - d2;
  let months = m1 - m2;
  let years = y1 - y2;
  if (micros < 0) {
    micros += USECS_PER_DAY;
    days--;
  }
  if (days < 0) {
    // Borrow the days of the earlier date's month (as PostgreSQL's timestamp_age does).
    days += daysInMonth(y2, m2);
    months--;
  }
  if (months < 0) {
    months += 12;
    years--;
  }
  const r = Interval.of(years * 12 + months, days, micros);
  return swap ? r.neg() : r;
}
