// A delay written as an interval (a watermark's, a window's allowed lateness): a fixed length in µs,
// so no months (a month has no fixed length), and not negative — the one check both clauses share.
import { notSupported, SluiceError, type SourcePosition } from '../errors.ts';
import { USECS_PER_DAY } from './calendar.ts';
import type { Interval } from './interval.ts';

/** `value` in µs; NOT_SUPPORTED for months or years, INVALID_DEFINITION when negative, at `pos`. */
export function fixedDelayMicros(value: Interval, what: string, pos: SourcePosition): number {
  if (value.months !== 0) {
    throw notSupported(`${what} in months or years`, pos, 'a month has no fixed length: write days');
  }
  const micros = value.days * USECS_PER_DAY + value.micros;
  if (micros < 0) {
    throw new SluiceError('INVALID_DEFINITION', `${what} must not be negative`, { position: pos });
  }
  return micros;
}
