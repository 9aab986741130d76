// IANA time zones through Intl (the tz database Node ships): the UTC offset of a zone at an instant,
// and a zone's wall-clock time ↔ UTC with PostgreSQL's rule for DST transitions (its manual,
// appendix B.2): a local time that does not exist or exists twice is read as standard time — the
// offset in force before a spring-forward gap, the one after a fall-back overlap.
import { SluiceError } from '../errors.ts';
import { USECS_PER_DAY, type DayTime } from './calendar.ts';

const MS_PER_DAY = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat | null>();
const MAX_CACHED_ZONES = 512;

function unknownZone(zone: string): SluiceError {
  return new SluiceError('INVALID_VALUE', `time zone "${zone}" not recognized`, {
    hint: "name an IANA time zone such as 'Europe/Berlin' or 'UTC'",
  });
}

function formatter(zone: string): Intl.DateTimeFormat | null {
  const known = formatters.get(zone);
  if (known !== undefined) return known;
  let made: Intl.DateTimeFormat | null;
  // Numeric offsets are refused: PostgreSQL reads '+02' as POSIX (two hours *west*), a trap.
  if (/^(utc|gmt|z|etc\/utc|etc\/gmt|zulu|universal)$/i.test(zone)) made = null;
  else if (zone === '' || /^[+\-\d]/.test(zone)) throw unknownZone(zone);
  else {
    try {
      made = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw unknownZone(zone);
    }
  }
  if (formatters.size >= MAX_CACHED_ZONES) formatters.clear();
  formatters.set(zone, made);
  return made;
}

/** Checks a zone name (INVALID_VALUE when Intl does not know it). */
export function checkZone(zone: string): void {
  formatter(zone);
}

const BUCKET_MS = 15 * 60_000;
const MAX_CACHED_OFFSETS = 65_536;
const offsets = new Map<string, number>();

/**
 * The zone's UTC offset in milliseconds at the instant `utcMs`. Intl is slow (microseconds a call),
 * so offsets are cached per 15-minute bucket of UTC time, and only for a bucket whose start and end
 * have the same offset: no zone changes its offset twice within 15 minutes, so the whole bucket has
 * it. A bucket holding a transition is computed exactly each time.
 */
export function offsetMs(zone: string, utcMs: number): number {
  if (formatter(zone) === null) return 0;
  const bucket = Math.floor(utcMs / BUCKET_MS);
  const key = `${bucket}|${zone}`;
  const known = offsets.get(key);
  if (known !== undefined) return known;
  const start = intlOffsetMs(zone, bucket * BUCKET_MS);
  const end = intlOffsetMs(zone, (bucket + 1) * BUCKET_MS - 1000);
  if (start !== end) return intlOffsetMs(zone, utcMs);
  if (offsets.size >= MAX_CACHED_OFFSETS) offsets.clear();
  offsets.set(key, start);
  return start;
}

/** The offset as Intl computes it (to the second: Intl's formatted parts have no milliseconds). */
export function intlOffsetMs(zone: string, utcMs: number): number {
  const f = formatter(zone);
  if (f === null) return 0;
  let y = 0;
  let mo = 0;
  let d = 0;
  let h = 0;
  let mi = 0;
  let s = 0;
  for (const p of f.formatToParts(new Date(utcMs))) {
    switch (p.type) {
      case 'year':
        y = Number(p.value);
        break;
      case 'month':
        mo = Number(p.value);
        break;
      case 'day':
        d = Number(p.value);
        break;
      case 'hour':
        h = Number(p.value);
        break;
      case 'minute':
        mi = Number(p.value);
        break;
      case 'second':
        s = Number(p.value);
        break;
      default:
        break;
    }
  }
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  const wall = date.getTime();
  return wall - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

function toMs(dt: DayTime): number {
  return dt.day * MS_PER_DAY + Math.floor(dt.micros / 1000);
}

function shift(dt: DayTime, ms: number): DayTime {
  let micros = dt.micros + ms * 1000;
  let day = dt.day;
  const carry = Math.floor(micros / USECS_PER_DAY);
  day += carry;
  micros -= carry * USECS_PER_DAY;
  return { day, micros };
}

/** The wall-clock time in `zone` of the UTC instant `utc`. */
export function utcToLocal(zone: string, utc: DayTime): DayTime {
  return shift(utc, offsetMs(zone, toMs(utc)));
}

/** The UTC instant of the wall-clock time `local` in `zone` (standard time at DST transitions). */
export function localToUtc(zone: string, local: DayTime): DayTime {
  if (formatter(zone) === null) return local;
  const asUtc = toMs(local);
  const before = offsetMs(zone, asUtc - MS_PER_DAY);
  const after = offsetMs(zone, asUtc + MS_PER_DAY);
  if (before === after) {
    // No transition within a day either side, unless one sits exactly around it: check it holds.
    const off = offsetMs(zone, asUtc - before);
    return shift(local, -(off === before ? before : off));
  }
  const validBefore = offsetMs(zone, asUtc - before) === before;
  const validAfter = offsetMs(zone, asUtc - after) === after;
  if (validBefore && validAfter) return shift(local, -after); // overlap: the later (standard) offset
  if (validBefore) return shift(local, -before);
  if (validAfter) return shift(local, -after);
  return shift(local, -before); // gap: the offset before the jump (standard time)
}
