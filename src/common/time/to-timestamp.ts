// to_timestamp(text, pattern): reads a timestamp with to_char's template patterns (PostgreSQL's manual,
// section 9.8): numeric fields take their digits (a field followed by a non-digit pattern character
// takes fewer), month and day names match without regard to case, other pattern characters skip
// one input character, and spaces skip spaces. The result is a timestamptz in the session zone (UTC).
import { SluiceError } from '../errors.ts';
import { USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC, dayNumber, daysInMonth } from './calendar.ts';
import { formatInstant } from './datetime.ts';
import { DAYS, MONTHS, compilePattern } from './to-char.ts';

function bad(message: string): SluiceError {
  return new SluiceError('INVALID_VALUE', message);
}

const WIDTH: Record<string, number> = {
  YYYY: 4,
  YYY: 3,
  YY: 2,
  Y: 1,
  MM: 2,
  DD: 2,
  DDD: 3,
  HH: 2,
  HH12: 2,
  HH24: 2,
  MI: 2,
  SS: 2,
  MS: 3,
  US: 6,
  SSSS: 5,
  D: 1,
  ID: 1,
};

export function toTimestamp(input: string, pattern: string): string {
  let year = 1;
  let month = 1;
  let day = 1;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let micros = 0;
  let pm: boolean | null = null;
  let twelve = false;
  let i = 0;
  const skipSpaces = (): void => {
    while (input[i] === ' ') i++;
  };
  const pieces = compilePattern(pattern);
  for (const piece of pieces) {
    if (piece.kind === 'text') {
      for (const c of piece.text) {
        if (c === ' ') skipSpaces();
        else if (i < input.length) i++;
      }
      continue;
    }
    const key = piece.key;
    const width = WIDTH[key];
    if (width !== undefined) {
      skipSpaces();
      const start = i;
      if (input[i] === '-' && key.startsWith('Y')) i++;
      while (i < input.length && i - start < width && /\d/.test(input[i] as string)) i++;
      // YYYY takes more digits when they follow (years beyond 9999 are refused below)
      if (key === 'YYYY') while (i < input.length && /\d/.test(input[i] as string)) i++;
      const text = input.slice(start, i);
      if (!/^-?\d+$/.test(text)) {
        throw bad(`invalid value "${input.slice(start, start + width) || ''}" for "${key}"`);
      }
      const n = Number(text);
      switch (key) {
        case 'YYYY':
          year = n;
          break;
        case 'YYY':
        case 'YY':
        case 'Y':
          // PostgreSQL: a two-digit year is the one nearest 2020 (70 and above are 19xx)
          year =
            key === 'YY'
              ? n < 70
                ? 2000 + n
                : 1900 + n
              : key === 'YYY'
                ? n < 100
                  ? 2000 + n
                  : 1000 + n
                : 2000 + n;
          break;
        case 'MM':
          month = n;
          break;
        case 'DD':
          day = n;
          break;
        case 'HH':
        case 'HH12':
          hour = n;
          twelve = true;
          break;
        case 'HH24':
          hour = n;
          break;
        case 'MI':
          minute = n;
          break;
        case 'SS':
          second = n;
          break;
        case 'MS':
          micros += Number(text.padEnd(3, '0')) * 1000;
          break;
        case 'US':
          micros += Number(text.padEnd(6, '0'));
          break;
        case 'SSSS':
          hour = Math.floor(n / 3600);
          minute = Math.floor((n % 3600) / 60);
          second = n % 60;
          break;
        default:
          break; // D, ID, DDD: read and not used (the date comes from the other fields)
      }
      continue;
    }
    const upper = key.toUpperCase();
    if (upper === 'AM' || upper === 'PM' || upper === 'A.M.' || upper === 'P.M.') {
      skipSpaces();
      const word = input.slice(i, i + key.length).toUpperCase();
      if (word === 'AM' || word === 'A.M.') pm = false;
      else if (word === 'PM' || word === 'P.M.') pm = true;
      else throw bad(`invalid value "${input.slice(i, i + key.length)}" for "${key}"`);
      i += key.length;
      continue;
    }
    const names =
      upper === 'MONTH'
        ? MONTHS
        : upper === 'MON'
          ? MONTHS.map((m) => m.slice(0, 3))
          : upper === 'DAY'
            ? DAYS
            : upper === 'DY'
              ? DAYS.map((d) => d.slice(0, 3))
              : null;
    if (names !== null) {
      skipSpaces();
      const rest = input.slice(i).toLowerCase();
      const k = names.findIndex((n) => rest.startsWith(n.toLowerCase()));
      if (k < 0) throw bad(`invalid value "${input.slice(i, i + 9).trim()}" for "${key}"`);
      i += (names[k] as string).length;
      if (upper === 'MONTH' || upper === 'MON') month = k + 1;
      continue;
    }
    throw new SluiceError('NOT_SUPPORTED', `to_timestamp pattern "${key}" is not supported`);
  }
  if (twelve) {
    if (hour < 1 || hour > 12) throw bad(`hour "${hour}" is invalid for the 12-hour clock`);
    if (pm === true && hour < 12) hour += 12;
    if (pm === false && hour === 12) hour = 0;
  } else if (pm === true && hour < 12) hour += 12;
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw new SluiceError('NUMERIC_OVERFLOW', `date/time field value out of range: "${input}"`);
  }
  if (hour > 24 || minute > 59 || second > 60) {
    throw new SluiceError('NUMERIC_OVERFLOW', `date/time field value out of range: "${input}"`);
  }
  const total = hour * USECS_PER_HOUR + minute * USECS_PER_MINUTE + second * USECS_PER_SEC + micros;
  const d = dayNumber(year, month, day);
  const carry = Math.floor(total / 86_400_000_000);
  return formatInstant({ day: d + carry, micros: total - carry * 86_400_000_000 });
}
