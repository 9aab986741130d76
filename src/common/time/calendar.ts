// The proleptic Gregorian calendar on plain numbers: a date is a day number (days since 1970-01-01),
// a time of day is microseconds since midnight. DATE / TIMESTAMP / TIMESTAMPTZ / TIME values are
// text (see ../types.ts); arithmetic converts them to these numbers and back, exactly.
import { SluiceError } from '../errors.ts';

export const USECS_PER_SEC = 1_000_000;
export const USECS_PER_MINUTE = 60_000_000;
export const USECS_PER_HOUR = 3_600_000_000;
export const USECS_PER_DAY = 86_400_000_000;

/** Day numbers of 0001-01-01 and 9999-12-31: the range the 4-digit text forms can hold. */
export const MIN_DAY = -719_162;
export const MAX_DAY = 2_932_896;

export function isLeapYear(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : (MONTH_DAYS[m - 1] as number);
}

/** Whether year, month and day name a date of the calendar. */
export function validDate(y: number, m: number, d: number): boolean {
  return m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

/** The fields of a date-time text: its date, its time of day (0 when absent), its fraction's digits. */
export interface DateTimeFields {
  readonly y: number;
  readonly mo: number;
  readonly d: number;
  readonly h: number;
  readonly mi: number;
  readonly s: number;
  readonly frac: string;
}

/**
 * Microseconds of a fraction of a second's digits (those after the point), as PostgreSQL reads
 * them: `rint(strtod(".digits") * 1e6)`, a double rounded to the nearest, ties to even. Up to six
 * digits that is the digits themselves; past six the fraction is rounded, not cut, and may come to
 * a whole second (1,000,000), which the caller carries.
 */
export function fractionMicros(digits: string): number {
  if (digits.length <= 6) return digits === '' ? 0 : Number(digits.padEnd(6, '0'));
  const x = Number(`0.${digits}`) * USECS_PER_SEC;
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * The fields of a date-time pattern's match — groups 1–7: year, month, day, then the optional hour,
 * minute, second and fraction digits — or null when one is out of range (the timestamp and
 * timestamptz inputs share it).
 */
export function dateTimeFields(m: RegExpExecArray): DateTimeFields | null {
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const h = m[4] === undefined ? 0 : Number(m[4]);
  const mi = m[5] === undefined ? 0 : Number(m[5]);
  const s = m[6] === undefined ? 0 : Number(m[6]);
  if (!validDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return null;
  return { y, mo, d, h, mi, s, frac: m[7] ?? '' };
}

/** Day number of a civil date (Howard Hinnant's days_from_civil). */
export function dayNumber(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The civil date of a day number, as [year, month, day]. */
export function civil(day: number): [number, number, number] {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [m <= 2 ? era * 400 + yoe + 1 : era * 400 + yoe, m, d];
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export function outOfRange(what: 'date' | 'timestamp' | 'interval' | 'time'): SluiceError {
  return new SluiceError('NUMERIC_OVERFLOW', `${what} out of range`);
}

/** 'YYYY-MM-DD' of a day number (NUMERIC_OVERFLOW beyond years 1–9999). */
export function formatDay(day: number): string {
  if (day < MIN_DAY || day > MAX_DAY) throw outOfRange('date');
  const [y, m, d] = civil(day);
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
}

/** Day number of a 'YYYY-MM-DD…' text (the stored form: always zero-padded). */
export function parseDay(text: string): number {
  return dayNumber(Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10)));
}

/** 'HH:MM:SS[.ffffff]' of microseconds since midnight (fraction without trailing zeros). */
export function formatTimeOfDay(micros: number): string {
  const h = Math.floor(micros / USECS_PER_HOUR);
  const mi = Math.floor((micros % USECS_PER_HOUR) / USECS_PER_MINUTE);
  const s = Math.floor((micros % USECS_PER_MINUTE) / USECS_PER_SEC);
  const f = micros % USECS_PER_SEC;
  const frac = f === 0 ? '' : `.${pad(f, 6).replace(/0+$/, '')}`;
  return `${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac}`;
}

/** Microseconds since midnight of 'HH:MM:SS[.f]' (the stored form). */
export function parseTimeOfDay(text: string): number {
  const h = Number(text.slice(0, 2));
  const mi = Number(text.slice(3, 5));
  const s = Number(text.slice(6, 8));
  const frac = text.length > 9 ? Number(text.slice(9).padEnd(6, '0')) : 0;
  return h * USECS_PER_HOUR + mi * USECS_PER_MINUTE + s * USECS_PER_SEC + frac;
}

/** A timestamp as a day number and microseconds into that day (0 ≤ micros < one day). */
export interface DayTime {
  readonly day: number;
  readonly micros: number;
}

/** Splits a stored 'YYYY-MM-DD HH:MM:SS[.f][+00]' text (a timestamptz's offset is always +00). */
export function parseDayTime(text: string): DayTime {
  const end = text.endsWith('+00') ? text.length - 3 : text.length;
  return { day: parseDay(text), micros: parseTimeOfDay(text.slice(11, end)) };
}

/** 'YYYY-MM-DD HH:MM:SS[.f]', normalising micros beyond one day into the day number. */
export function formatDayTime(day: number, micros: number): string {
  const carry = Math.floor(micros / USECS_PER_DAY);
  const d = day + carry;
  if (d < MIN_DAY || d > MAX_DAY) throw outOfRange('timestamp');
  return `${formatDay(d)} ${formatTimeOfDay(micros - carry * USECS_PER_DAY)}`;
}

/** Microseconds since 1970-01-01 00:00 as a double: exact for |years from 1970| < 285. */
export function epochMicros(dt: DayTime): number {
  return dt.day * USECS_PER_DAY + dt.micros;
}

/** Adds months to a civil date, clamping the day to the new month's end (PostgreSQL's rule). */
export function addMonths(day: number, months: number): number {
  if (months === 0) return day;
  const [y, m, d] = civil(day);
  const total = y * 12 + (m - 1) + months;
  const ny = Math.floor(total / 12);
  const nm = total - ny * 12 + 1;
  if (ny < 1 || ny > 9999) throw outOfRange('timestamp');
  return dayNumber(ny, nm, Math.min(d, daysInMonth(ny, nm)));
}

/** ISO day of week, Monday 1 … Sunday 7. */
export function isoDow(day: number): number {
  return ((((day + 3) % 7) + 7) % 7) + 1; // 1970-01-01 was a Thursday
}

/** ISO 8601 week-numbering year and week of a day. */
export function isoWeek(day: number): [number, number] {
  const thursday = day - isoDow(day) + 4;
  const [y] = civil(thursday);
  const week = Math.floor((thursday - dayNumber(y, 1, 1)) / 7) + 1;
  return [y, week];
}
