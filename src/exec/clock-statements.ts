// SET CLOCK and SHOW CLOCK: the logical clock as SQL. SET CLOCK moves a manual clock (a server
// started with `--clock manual`, tests, back-fills) and ticks; the real clock cannot be set.
import { SluiceError, notSupported } from '../common/errors.ts';
import type { Pos } from '../parser/ast.ts';
import { parseTimestamptz } from '../common/time/datetime.ts';
import { formatMicros, instantMicros } from '../common/time/instant-micros.ts';
import type { StatementResult } from './api.ts';
import { ManualClock, type ClockSource } from './logical-clock.ts';

/** The µs of SET CLOCK's value, checked: a timestamptz at or after `current` (the latest epoch's). */
export function clockValue(
  source: ClockSource,
  value: string,
  valuePos: Pos,
  pos: Pos,
  current: number,
): number {
  if (!(source instanceof ManualClock)) {
    throw notSupported(
      'SET CLOCK on the real clock',
      pos,
      'start the server with --clock manual to set the logical clock (tests, back-filling history)',
    );
  }
  const text = parseTimestamptz(value);
  if (text === null) {
    throw new SluiceError(
      'INVALID_VALUE',
      `invalid input syntax for type timestamp with time zone: "${value}"`,
      {
        position: valuePos,
      },
    );
  }
  const micros = instantMicros(text);
  const floor = Math.max(current, source.now());
  if (micros < floor) {
    throw new SluiceError(
      'INVALID_VALUE',
      `the clock cannot go back from ${formatMicros(floor)} to ${formatMicros(micros)}`,
      {
        position: valuePos,
        hint: 'the logical clock only moves forward; set a time at or after the current one',
      },
    );
  }
  return micros;
}

/** SHOW CLOCK: the latest epoch's clock, where the time comes from, and the source's time now. */
export function showClock(source: ClockSource, clock: number): StatementResult {
  return {
    statement: 'SHOW CLOCK',
    columns: [
      { name: 'clock', type: 'timestamp with time zone', nullable: false },
      { name: 'mode', type: 'text', nullable: false },
      { name: 'source', type: 'timestamp with time zone', nullable: false },
    ],
    rows: [
      {
        clock: formatMicros(clock),
        mode: source instanceof ManualClock ? 'manual' : 'real',
        source: formatMicros(source.now()),
      },
    ],
  };
}
