// to_char(date/time value, pattern) with PostgreSQL's template patterns (its manual, table 9.26 and
// 9.27): YYYY, YY, MM, Mon, Month, DD, DDD, D, ID, Dy, Day, HH, HH12, HH24, MI, SS, MS, US, SSSS,
// AM/PM (and a.m./p.m.), Q, WW, IW, IYYY, CC, TZ/OF (the session zone, UTC), the FM prefix and
// TH suffix, "quoted text" and backslash escapes; other characters are copied. As in PostgreSQL's
// keyword table, the numeric fields may be written in lowercase too (`yyyy-mm-dd hh24:mi`: `mm` is
// the month, as `MM`); only the names (Month, Day, Mon, Dy, AM, TZ) take their case from the pattern.
import { SluiceError } from '../errors.ts';
import { MAX_PATTERN_LENGTH } from '../limits.ts';
import type { Value } from '../types.ts';
import { Interval } from './interval.ts';
import {
  USECS_PER_HOUR,
  USECS_PER_MINUTE,
  USECS_PER_SEC,
  dayNumber,
  isoDow,
  isoWeek,
  parseTimeOfDay,
} from './calendar.ts';
import type { TimeKind } from './fields.ts';

export const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;
export const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

/**
 * The lowercase spellings PostgreSQL accepts for numeric fields (formatting.c's DCH_keywords), each
 * meaning its uppercase field.
 */
const LOWER_NUMERIC = [
  'y,yyy',
  'hh24',
  'hh12',
  'yyyy',
  'iyyy',
  'ssss',
  'yyy',
  'ddd',
  'iyy',
  'hh',
  'mi',
  'ss',
  'ms',
  'us',
  'yy',
  'mm',
  'dd',
  'id',
  'iw',
  'ww',
  'cc',
  'iy',
  'y',
  'd',
  'q',
  'w',
  'i',
] as const;

/** Pattern keywords, longest first so that `HH24` wins over `HH` and `MONTH` over `MON`. */
export const KEYWORDS = [
  'Y,YYY',
  'MONTH',
  'Month',
  'month',
  'A.M.',
  'a.m.',
  'P.M.',
  'p.m.',
  'HH24',
  'HH12',
  'YYYY',
  'IYYY',
  'SSSS',
  'DAY',
  'Day',
  'day',
  'MON',
  'Mon',
  'mon',
  'YYY',
  'DDD',
  'IYY',
  'HH',
  'MI',
  'SS',
  'MS',
  'US',
  'AM',
  'am',
  'PM',
  'pm',
  'YY',
  'MM',
  'DD',
  'DY',
  'Dy',
  'dy',
  'ID',
  'IW',
  'WW',
  'CC',
  'TZ',
  'tz',
  'OF',
  'IY',
  'Y',
  'D',
  'Q',
  'W',
  'I',
  ...LOWER_NUMERIC,
]
  // Longest first across both spellings (`month` before `mm`, `dd` before `d`).
  .map((k, i) => [k, i] as const)
  .sort((a, b) => b[0].length - a[0].length || a[1] - b[1])
  .map(([k]) => k);

export type PatternPiece =
  | { readonly kind: 'field'; readonly key: string; readonly fm: boolean; readonly th: 'TH' | 'th' | '' }
  | { readonly kind: 'text'; readonly text: string };

const lowerNumeric: ReadonlySet<string> = new Set(LOWER_NUMERIC);
const compiled = new Map<string, PatternPiece[]>();
/**
 * Pattern characters the cache may hold together: a column of distinct patterns (they may come
 * from data) keeps at most this much, as each character can be a piece object of its own.
 */
const CACHE_CHARS = 64 * 1024;
let cachedChars = 0;

/**
 * A pattern as keywords and literal text (cached: patterns are nearly always constants). A pattern
 * is at most MAX_PATTERN_LENGTH characters (INVALID_VALUE beyond): compiling tries every keyword at
 * each place and the output is up to nine characters per pattern character, so one 16 Mi character
 * pattern held the event loop for tens of seconds and built a gigabyte of pieces.
 */
export function compilePattern(pattern: string): PatternPiece[] {
  const known = compiled.get(pattern);
  if (known !== undefined) return known;
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new SluiceError('INVALID_VALUE', 'formatting pattern too long', {
      detail: `a to_char or to_timestamp pattern may have at most ${MAX_PATTERN_LENGTH} characters, this one has ${pattern.length}`,
    });
  }
  const out: PatternPiece[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    if (c === '"') {
      let j = i + 1;
      let text = '';
      while (j < pattern.length && pattern[j] !== '"') {
        if (pattern[j] === '\\' && j + 1 < pattern.length) j++;
        text += pattern[j];
        j++;
      }
      out.push({ kind: 'text', text });
      i = j + 1;
      continue;
    }
    if (c === '\\' && i + 1 < pattern.length) {
      out.push({ kind: 'text', text: pattern[i + 1] as string });
      i += 2;
      continue;
    }
    let fm = false;
    let at = i;
    if (pattern.startsWith('FM', at) || pattern.startsWith('fm', at)) {
      fm = true;
      at += 2;
    }
    const key = KEYWORDS.find((k) => pattern.startsWith(k, at));
    if (key === undefined) {
      out.push({ kind: 'text', text: fm ? pattern.slice(i, at) : c });
      i = fm ? at : i + 1;
      continue;
    }
    at += key.length;
    let th: 'TH' | 'th' | '' = '';
    if (pattern.startsWith('TH', at) || pattern.startsWith('th', at)) {
      th = pattern.slice(at, at + 2) as 'TH' | 'th';
      at += 2;
    }
    out.push({ kind: 'field', key: lowerNumeric.has(key) ? key.toUpperCase() : key, fm, th });
    i = at;
  }
  if (compiled.size >= 1000 || cachedChars + pattern.length > CACHE_CHARS) {
    compiled.clear();
    cachedChars = 0;
  }
  compiled.set(pattern, out);
  cachedChars += pattern.length;
  return out;
}

function ordinal(n: number, upper: boolean): string {
  const mod100 = Math.abs(n) % 100;
  const mod10 = Math.abs(n) % 10;
  const s =
    mod100 >= 11 && mod100 <= 13 ? 'th' : mod10 === 1 ? 'st' : mod10 === 2 ? 'nd' : mod10 === 3 ? 'rd' : 'th';
  return upper ? s.toUpperCase() : s;
}

interface Parts {
  year: number;
  month: number;
  day: number;
  /** Day number (days since 1970-01-01), NaN for a time or an interval. */
  dayNo: number;
  micros: number;
  interval: boolean;
}

function partsOf(v: Value, kind: TimeKind): Parts {
  if (kind === 'interval') {
    const iv = v as Interval;
    return {
      year: Math.trunc(iv.months / 12),
      month: iv.months % 12,
      day: iv.days,
      dayNo: NaN,
      micros: iv.micros,
      interval: true,
    };
  }
  const s = v as string;
  if (kind === 'time')
    return { year: 0, month: 0, day: 0, dayNo: NaN, micros: parseTimeOfDay(s), interval: false };
  const y = Number(s.slice(0, 4));
  const m = Number(s.slice(5, 7));
  const d = Number(s.slice(8, 10));
  const end = s.endsWith('+00') ? s.length - 3 : s.length;
  const micros = s.length > 10 ? parseTimeOfDay(s.slice(11, end)) : 0;
  return { year: y, month: m, day: d, dayNo: dayNumber(y, m, d), micros, interval: false };
}

/**
 * C's `%0*d`, as PostgreSQL writes each field: zeros fill `width` characters including the minus
 * sign (`-1` in two is `-1`, in three `-01`); FM gives no width. Its callers pass one more for a
 * negative field where PostgreSQL does (HH, MI, SS, MM, the years), not for DD, DDD, WW.
 */
function num(n: number, width: number, fm: boolean): string {
  const digits = String(Math.abs(n));
  if (n >= 0) return fm ? digits : digits.padStart(width, '0'); // -0 (YY of year -100) is 0
  return `-${fm ? digits : digits.padStart(width - 1, '0')}`;
}

/** The width of a field PostgreSQL writes one character wider when it is negative. */
function signed(width: number, of: number): number {
  return of >= 0 ? width : width + 1;
}

function invalidForInterval(): SluiceError {
  return new SluiceError('INVALID_VALUE', 'invalid format specification for an interval value', {
    hint: 'Intervals are not tied to specific calendar dates.',
  });
}

function name(full: string, key: string, fm: boolean, width: number): string {
  const text =
    key === key.toUpperCase()
      ? full.toUpperCase()
      : key[0] === key[0]?.toLowerCase()
        ? full.toLowerCase()
        : full;
  return fm ? text : text.padEnd(width, ' ');
}

/** to_char(value, pattern): the value's fields written as the pattern says. */
export function toChar(v: Value, kind: TimeKind, pattern: string): string {
  const p = partsOf(v, kind);
  // PostgreSQL's interval2itm: each field truncated toward zero, so every field of a negative
  // interval's time is negative (-01:02:03 is hour -1, minute -2, second -3).
  const t = p.micros;
  const hour = Math.trunc(t / USECS_PER_HOUR);
  const minute = Math.trunc((t % USECS_PER_HOUR) / USECS_PER_MINUTE);
  const second = Math.trunc((t % USECS_PER_MINUTE) / USECS_PER_SEC);
  const frac = t % USECS_PER_SEC;
  // An interval's day of the year: its months as 30 days plus its days (PostgreSQL's tm_yday).
  const intervalYearDay = p.interval ? (p.year * 12 + p.month) * 30 + p.day : 0;
  const calendarOnly = (): void => {
    if (p.interval) throw invalidForInterval();
  };
  const needDay = (key: string): number => {
    if (p.interval) throw invalidForInterval();
    if (Number.isNaN(p.dayNo)) {
      throw new SluiceError('INVALID_VALUE', `"${key}" is not supported for type time`);
    }
    return p.dayNo;
  };
  let out = '';
  for (const piece of compilePattern(pattern)) {
    if (piece.kind === 'text') {
      out += piece.text;
      continue;
    }
    const { key, fm } = piece;
    let value: number | null = null;
    let text = '';
    switch (key) {
      case 'HH':
      case 'HH12': {
        // A 12-hour clock even for an interval: hour 0 and hour -24 are 12, -25 is -01.
        const h12 = hour % 12 === 0 ? 12 : hour % 12;
        value = h12;
        text = num(h12, signed(2, hour), fm);
        break;
      }
      case 'HH24':
        value = hour;
        text = num(hour, signed(2, hour), fm);
        break;
      case 'MI':
        value = minute;
        text = num(minute, signed(2, minute), fm);
        break;
      case 'SS':
        value = second;
        text = num(second, signed(2, second), fm);
        break;
      case 'MS': // fixed widths: FM does not shorten MS or US
        value = Math.trunc(frac / 1000);
        text = num(value, 3, false);
        break;
      case 'US':
        value = frac;
        text = num(frac, 6, false);
        break;
      case 'SSSS': // not reduced to one day: an interval of -25 hours is -90000
        value = hour * 3600 + minute * 60 + second;
        text = String(value);
        break;
      case 'AM':
      case 'PM':
        text = hour % 24 < 12 ? 'AM' : 'PM';
        break;
      case 'am':
      case 'pm':
        text = hour % 24 < 12 ? 'am' : 'pm';
        break;
      case 'A.M.':
      case 'P.M.':
        text = hour % 24 < 12 ? 'A.M.' : 'P.M.';
        break;
      case 'a.m.':
      case 'p.m.':
        text = hour % 24 < 12 ? 'a.m.' : 'p.m.';
        break;
      case 'Y,YYY': {
        const thousands = Math.trunc(p.year / 1000);
        value = p.year; // TH reads the last digits, the year's
        text = `${thousands},${num(p.year - thousands * 1000, 3, false)}`;
        break;
      }
      case 'YYYY':
        value = p.year;
        text = num(p.year, signed(4, p.year), fm);
        break;
      case 'YYY':
        value = p.year % 1000;
        text = num(value, signed(3, p.year), fm);
        break;
      case 'YY':
        value = p.year % 100;
        text = num(value, signed(2, p.year), fm);
        break;
      case 'Y':
        value = p.year % 10;
        text = String(value);
        break;
      case 'IYYY':
      case 'IYY':
      case 'IY':
      case 'I': {
        const iy = isoWeek(needDay(key))[0];
        const width = key.length;
        value = width === 4 ? iy : iy % 10 ** width;
        text = num(value, width, fm);
        break;
      }
      case 'MM':
        value = p.month;
        text = num(p.month, signed(2, p.month), fm);
        break;
      case 'MONTH':
      case 'Month':
      case 'month':
        calendarOnly();
        text = name(MONTHS[p.month - 1] ?? '', key, fm, 9);
        break;
      case 'MON':
      case 'Mon':
      case 'mon':
        calendarOnly();
        text = name((MONTHS[p.month - 1] ?? '').slice(0, 3), key, true, 3);
        break;
      case 'DD':
        value = p.day;
        text = num(p.day, 2, fm);
        break;
      case 'DDD': {
        if (p.interval) {
          value = intervalYearDay;
          text = num(value, 3, fm);
          break;
        }
        const day = needDay(key);
        value = day - dayNumber(p.year, 1, 1) + 1;
        text = num(value, 3, fm);
        break;
      }
      case 'D':
        value = (isoDow(needDay(key)) % 7) + 1;
        text = String(value);
        break;
      case 'ID':
        value = isoDow(needDay(key));
        text = String(value);
        break;
      case 'DAY':
      case 'Day':
      case 'day':
        text = name(DAYS[isoDow(needDay(key)) % 7] ?? '', key, fm, 9);
        break;
      case 'DY':
      case 'Dy':
      case 'dy':
        text = name((DAYS[isoDow(needDay(key)) % 7] ?? '').slice(0, 3), key, true, 3);
        break;
      case 'W':
        value = Math.trunc((p.day - 1) / 7) + 1;
        text = String(value);
        break;
      case 'WW': {
        if (p.interval) {
          value = Math.trunc((intervalYearDay - 1) / 7) + 1;
          text = num(value, 2, fm);
          break;
        }
        const doy = needDay(key) - dayNumber(p.year, 1, 1);
        value = Math.floor(doy / 7) + 1;
        text = num(value, 2, fm);
        break;
      }
      case 'IW':
        value = isoWeek(needDay(key))[1];
        text = num(value, 2, fm);
        break;
      case 'Q':
        if (p.month === 0) break; // an interval of whole years has no quarter
        value = Math.trunc((p.month - 1) / 3) + 1;
        text = String(value);
        break;
      case 'CC':
        value = p.interval ? Math.trunc(p.year / 100) : Math.floor((p.year + 99) / 100);
        text = value >= -99 && value <= 99 ? num(value, signed(2, value), fm) : String(value);
        break;
      case 'TZ':
        calendarOnly();
        text = kind === 'timestamptz' ? 'UTC' : '';
        break;
      case 'tz':
        calendarOnly();
        text = kind === 'timestamptz' ? 'utc' : '';
        break;
      case 'OF':
        calendarOnly();
        // The session's offset (UTC) for a timestamp without zone too, as PostgreSQL writes it.
        text = kind === 'time' ? '' : fm ? '+0' : '+00';
        break;
      default:
        text = key;
    }
    if (piece.th !== '' && value !== null) text += ordinal(value, piece.th === 'TH');
    out += text;
  }
  return out;
}
