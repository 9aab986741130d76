// INTERVAL values as PostgreSQL stores them (section 8.5.1.4 of its manual): months, days and
// microseconds, three fields kept apart because a month has no fixed number of days and a day no
// fixed number of hours (DST). Equality and order compare the total with 30-day months and 24-hour
// days, so '1 month' = '30 days' and '1 day' = '24 hours' are equal (one group, one join key) while
// each prints as written. An immutable object like Decimal: a string cannot be both equal to
// another spelling and print as its own.
import { SluiceError } from '../errors.ts';
import { USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC, outOfRange } from './calendar.ts';

const INT32_MAX = 2_147_483_647;
const INT32_MIN = -2_147_483_648;

export class Interval {
  private keyText: string | undefined;
  constructor(
    readonly months: number,
    readonly days: number,
    /** Microseconds: a safe integer (|time part| up to about 285 years). */
    readonly micros: number,
  ) {}

  /** Checked construction: fields within PostgreSQL's ranges (micros within a safe integer). */
  static of(months: number, days: number, micros: number): Interval {
    const m = Math.trunc(months);
    const d = Math.trunc(days);
    const u = Math.round(micros);
    // PostgreSQL's int32 fields: -2147483648 months or days is an interval, its negation is not.
    if (m < INT32_MIN || m > INT32_MAX || d < INT32_MIN || d > INT32_MAX || !Number.isSafeInteger(u)) {
      throw outOfRange('interval');
    }
    return new Interval(m === 0 ? 0 : m, d === 0 ? 0 : d, u === 0 ? 0 : u);
  }

  /** The total PostgreSQL compares by: months as 30 days, days as 24 hours, in microseconds. */
  span(): number | bigint {
    const total = (this.months * 30 + this.days) * USECS_PER_DAY + this.micros;
    if (Number.isSafeInteger(total)) return total;
    return (BigInt(this.months) * 30n + BigInt(this.days)) * BigInt(USECS_PER_DAY) + BigInt(this.micros);
  }

  /** A Map key: equal intervals ('1 day', '24 hours') share it. */
  key(): string {
    if (this.keyText === undefined) this.keyText = `v${this.span()};`;
    return this.keyText;
  }

  neg(): Interval {
    return Interval.of(-this.months, -this.days, -this.micros);
  }

  /** PostgreSQL's output in its default IntervalStyle (postgres): `1 year 2 mons 3 days 04:05:06.5`. */
  toString(): string {
    return formatInterval(this);
  }

  /** The wire form is the text form. */
  toJSON(): string {
    return formatInterval(this);
  }

  /** Storage form: the three fields, exactly. */
  storageText(): string {
    return `${this.months},${this.days},${this.micros}`;
  }

  static fromStorage(text: string): Interval | null {
    const m = /^(-?\d+),(-?\d+),(-?\d+)$/.exec(text);
    return m === null ? null : Interval.of(Number(m[1]), Number(m[2]), Number(m[3]));
  }
}

export function compareIntervals(a: Interval, b: Interval): number {
  const x = a.span();
  const y = b.span();
  return x < y ? -1 : x > y ? 1 : 0;
}

export function addIntervals(a: Interval, b: Interval): Interval {
  return Interval.of(a.months + b.months, a.days + b.days, a.micros + b.micros);
}

export function subIntervals(a: Interval, b: Interval): Interval {
  return Interval.of(a.months - b.months, a.days - b.days, a.micros - b.micros);
}

/**
 * interval * factor as PostgreSQL's interval_mul: whole months and days are kept, their fractions
 * cascade down (a month's fraction as 30 days, a day's as 24 hours), the time part is multiplied.
 */
export function mulInterval(a: Interval, factor: number): Interval {
  if (Number.isNaN(factor)) throw outOfRange('interval');
  return scaleInterval(a, a.months * factor, a.days * factor, a.micros * factor);
}

/**
 * interval / divisor as PostgreSQL's interval_div: each field divided, not multiplied by the
 * reciprocal (`'1 month' / 3` would be 9 days 23:59:59.999999 through 1/3's rounding).
 */
export function divInterval(a: Interval, divisor: number): Interval {
  if (divisor === 0) throw new SluiceError('DIVISION_BY_ZERO', 'division by zero');
  if (Number.isNaN(divisor)) throw outOfRange('interval');
  return scaleInterval(a, a.months / divisor, a.days / divisor, a.micros / divisor);
}

/**
 * The cascade both share, step for step as PostgreSQL 15 writes it: the month fraction in days is
 * rounded to whole microseconds of a day (TSROUND) before its fraction goes down to seconds, and
 * every rounding is rint's (halves to even), so `'1 month' / 7` is 4 days 06:51:25.6896 as there.
 */
function scaleInterval(a: Interval, monthsExact: number, daysExact: number, microsExact: number): Interval {
  if (!inInt32(monthsExact) || !inInt32(daysExact)) throw outOfRange('interval');
  const months = Math.trunc(monthsExact);
  let days = Math.trunc(daysExact);
  const monthRemainderDays = tsRound((monthsExact - months) * 30);
  let secRemainder = tsRound(
    (daysExact - days + monthRemainderDays - Math.trunc(monthRemainderDays)) * 86_400,
  );
  if (Math.abs(secRemainder) >= 86_400) {
    const whole = Math.trunc(secRemainder / 86_400);
    days += whole;
    secRemainder -= whole * 86_400;
  }
  days += Math.trunc(monthRemainderDays);
  const micros = rint(microsExact + secRemainder * USECS_PER_SEC);
  if (!Number.isFinite(micros)) throw outOfRange('interval');
  return Interval.of(months, days, micros);
}

function inInt32(x: number): boolean {
  return x >= INT32_MIN && x <= INT32_MAX; // false for NaN
}

/** C's rint in the default rounding mode: to the nearest integer, halves to even. */
function rint(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** PostgreSQL's TSROUND: to six decimal places, halves to even. */
function tsRound(x: number): number {
  return rint(x * 1e6) / 1e6;
}

/** justify_hours: whole days out of the time part, signs made to agree. */
export function justifyHours(a: Interval): Interval {
  let days = a.days + Math.trunc(a.micros / USECS_PER_DAY);
  let micros = a.micros % USECS_PER_DAY;
  if (days > 0 && micros < 0) {
    micros += USECS_PER_DAY;
    days--;
  } else if (days < 0 && micros > 0) {
    micros -= USECS_PER_DAY;
    days++;
  }
  return Interval.of(a.months, days, micros);
}

/** justify_days: whole 30-day months out of the days, signs made to agree. */
export function justifyDays(a: Interval): Interval {
  let months = a.months + Math.trunc(a.days / 30);
  let days = a.days % 30;
  if (months > 0 && days < 0) {
    days += 30;
    months--;
  } else if (months < 0 && days > 0) {
    days -= 30;
    months++;
  }
  return Interval.of(months, days, a.micros);
}

/** justify_interval: both, with the signs of all fields made to agree. */
export function justifyInterval(a: Interval): Interval {
  let months = a.months;
  let days = a.days + Math.trunc(a.micros / USECS_PER_DAY);
  let micros = a.micros % USECS_PER_DAY;
  months += Math.trunc(days / 30);
  days %= 30;
  if (months > 0 && (days < 0 || (days === 0 && micros < 0))) {
    days += 30;
    months--;
  } else if (months < 0 && (days > 0 || (days === 0 && micros > 0))) {
    days -= 30;
    months++;
  }
  if (days > 0 && micros < 0) {
    micros += USECS_PER_DAY;
    days--;
  } else if (days < 0 && micros > 0) {
    micros -= USECS_PER_DAY;
    days++;
  }
  return Interval.of(months, days, micros);
}

// ---- text output -----------------------------------------------------------------------------

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** PostgreSQL's EncodeInterval for IntervalStyle postgres. */
export function formatInterval(a: Interval): string {
  const parts: string[] = [];
  let isBefore = false;
  let isZero = true;
  const add = (value: number, unit: string): void => {
    if (value === 0) return;
    parts.push(`${isBefore && value > 0 ? '+' : ''}${value} ${unit}${value !== 1 ? 's' : ''}`);
    isBefore = value < 0;
    isZero = false;
  };
  const years = Math.trunc(a.months / 12);
  add(years, 'year');
  add(a.months - years * 12, 'mon');
  add(a.days, 'day');
  const t = a.micros;
  if (isZero || t !== 0) {
    const abs = Math.abs(t);
    const h = Math.floor(abs / USECS_PER_HOUR);
    const m = Math.floor((abs % USECS_PER_HOUR) / USECS_PER_MINUTE);
    const s = Math.floor((abs % USECS_PER_MINUTE) / USECS_PER_SEC);
    const f = abs % USECS_PER_SEC;
    const frac = f === 0 ? '' : `.${String(f).padStart(6, '0').replace(/0+$/, '')}`;
    const sign = t < 0 ? '-' : isBefore ? '+' : '';
    parts.push(`${sign}${pad2(h)}:${pad2(m)}:${pad2(s)}${frac}`);
  }
  return parts.join(' ');
}

// ---- text input ------------------------------------------------------------------------------

/** A unit word → [months, days, microseconds] per one of it. */
const UNITS: Record<string, readonly [number, number, number]> = {};
function unit(names: readonly string[], value: readonly [number, number, number]): void {
  for (const n of names) UNITS[n] = value;
}
unit(['microsecond', 'microseconds', 'us', 'usec', 'usecs', 'useconds'], [0, 0, 1]);
unit(['millisecond', 'milliseconds', 'ms', 'msec', 'msecs', 'mseconds'], [0, 0, 1000]);
unit(['second', 'seconds', 's', 'sec', 'secs'], [0, 0, USECS_PER_SEC]);
unit(['minute', 'minutes', 'm', 'min', 'mins'], [0, 0, USECS_PER_MINUTE]);
unit(['hour', 'hours', 'h', 'hr', 'hrs'], [0, 0, USECS_PER_HOUR]);
unit(['day', 'days', 'd'], [0, 1, 0]);
unit(['week', 'weeks', 'w'], [0, 7, 0]);
unit(['month', 'months', 'mon', 'mons'], [1, 0, 0]);
unit(['year', 'years', 'y', 'yr', 'yrs'], [12, 0, 0]);
unit(['decade', 'decades', 'dec', 'decs'], [120, 0, 0]);
unit(['century', 'centuries', 'c', 'cent'], [1200, 0, 0]);
unit(['millennium', 'millennia', 'mil', 'mils', 'millenniums'], [12000, 0, 0]);

/** Accumulates fields with PostgreSQL's cascade of fractions (months → 30 days → 24 hours). */
class Fields {
  months = 0;
  days = 0;
  micros = 0;
  add(amount: number, per: readonly [number, number, number]): void {
    if (per[0] !== 0) {
      const m = amount * per[0];
      const whole = Math.trunc(m);
      this.months += whole;
      const d = (m - whole) * 30;
      const wholeDays = Math.trunc(d);
      this.days += wholeDays;
      this.micros += Math.round((d - wholeDays) * USECS_PER_DAY);
    } else if (per[1] !== 0) {
      const d = amount * per[1];
      const whole = Math.trunc(d);
      this.days += whole;
      this.micros += Math.round((d - whole) * USECS_PER_DAY);
    } else this.micros += Math.round(amount * per[2]);
  }
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;
const CLOCK = /^([+-]?)(\d+):(\d{1,2})(?::(\d{1,2}(?:\.\d*)?))?$/;
const YEAR_MONTH = /^([+-]?)(\d+)-(\d+)$/;

/** `[+-]H:MM[:SS[.f]]` as signed microseconds, or null. */
function clock(token: string): number | null {
  const m = CLOCK.exec(token);
  if (m === null) return null;
  const minutes = Number(m[3]);
  const seconds = m[4] === undefined ? 0 : Number(m[4]);
  if (minutes > 59 || seconds >= 60) return null;
  const total =
    Number(m[2]) * USECS_PER_HOUR + minutes * USECS_PER_MINUTE + Math.round(seconds * USECS_PER_SEC);
  return m[1] === '-' ? -total : total;
}

/** ISO 8601 `P…` (format with designators, section 8.5.1.4): null when not of that form. */
function parseIso(text: string): Fields | null {
  const m =
    /^P(?:([-+]?[\d.]+)Y)?(?:([-+]?[\d.]+)M)?(?:([-+]?[\d.]+)W)?(?:([-+]?[\d.]+)D)?(?:T(?:([-+]?[\d.]+)H)?(?:([-+]?[\d.]+)M)?(?:([-+]?[\d.]+)S)?)?$/i.exec(
      text,
    );
  if (m === null || text.length <= 1 || /T$/i.test(text)) return null;
  const f = new Fields();
  const per = [UNITS.year, UNITS.month, UNITS.week, UNITS.day, UNITS.hour, UNITS.minute, UNITS.second];
  for (let i = 0; i < 7; i++) {
    const v = m[i + 1];
    if (v === undefined) continue;
    if (!NUMBER.test(v)) return null;
    f.add(Number(v), per[i] as readonly [number, number, number]);
  }
  return f;
}

/**
 * An interval from PostgreSQL's input forms (section 8.5.1.4): `1 day 2 hours`, `@ 1 day ago`,
 * `1-2` (years-months), `10:00:00`, `1 day 02:00:00`, `P1DT2H`, and a bare number (seconds, or the
 * `unit` of a qualifier such as INTERVAL '10' SECOND). Null when the text is none of them.
 */
export function parseInterval(input: string, qualifier?: string): Interval | null {
  const text = input.trim().toLowerCase();
  if (text === '') return null;
  let fields: Fields | null;
  if (text.startsWith('p')) fields = parseIso(text.toUpperCase());
  else fields = parseWords(text, qualifier);
  if (fields === null) return null;
  try {
    const value = Interval.of(fields.months, fields.days, fields.micros);
    return qualifier === undefined ? value : truncateToQualifier(value, qualifier);
  } catch {
    return null;
  }
}

function parseWords(text: string, qualifier: string | undefined): Fields | null {
  const tokens = text
    .replace(/^@\s*/, '')
    .split(/\s+/)
    .flatMap((t) => {
      // `1day`, `2hours`: a number glued to its unit
      const glued = /^([+-]?(?:\d+\.?\d*|\.\d+))([a-z]+)$/.exec(t);
      return glued === null ? [t] : [glued[1] as string, glued[2] as string];
    });
  const f = new Fields();
  let ago = false;
  let sawAny = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (t === 'ago' && i === tokens.length - 1 && sawAny) {
      ago = true;
      continue;
    }
    if (NUMBER.test(t)) {
      const next = tokens[i + 1];
      const per = next === undefined ? undefined : UNITS[next];
      if (per !== undefined) {
        f.add(Number(t), per);
        i++;
      } else if (next === undefined) {
        // A bare number: seconds, or the qualifier's unit.
        const q = qualifier === undefined ? UNITS.second : UNITS[qualifier];
        if (q === undefined) return null;
        f.add(Number(t), q);
      } else return null;
      sawAny = true;
      continue;
    }
    const ym = YEAR_MONTH.exec(t);
    if (ym !== null) {
      const months = Number(ym[2]) * 12 + Number(ym[3]);
      if (Number(ym[3]) > 11) return null;
      f.months += ym[1] === '-' ? -months : months;
      sawAny = true;
      continue;
    }
    const c = clock(t);
    if (c !== null) {
      f.micros += c;
      sawAny = true;
      continue;
    }
    return null;
  }
  if (!sawAny) return null;
  if (ago) {
    f.months = -f.months;
    f.days = -f.days;
    f.micros = -f.micros;
  }
  return f;
}

/** INTERVAL '…' YEAR / MONTH / DAY / HOUR / MINUTE: the fields below the unit are dropped. */
function truncateToQualifier(v: Interval, qualifier: string): Interval {
  switch (qualifier) {
    case 'year':
      return Interval.of(Math.trunc(v.months / 12) * 12, 0, 0);
    case 'month':
      return Interval.of(v.months, 0, 0);
    case 'day':
      return Interval.of(v.months, v.days, 0);
    case 'hour':
      return Interval.of(v.months, v.days, v.micros - (v.micros % USECS_PER_HOUR));
    case 'minute':
      return Interval.of(v.months, v.days, v.micros - (v.micros % USECS_PER_MINUTE));
    default:
      return v;
  }
}
