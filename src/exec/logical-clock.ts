// Where the engine reads the time for each epoch's logical clock (µs since the Unix epoch, the
// timestamptz of NOW() in a view): the real clock, or a manual one that tests and back-fills set.
// The engine never lets an epoch's clock go below the one before (src/exec/engine-clock.ts).
import { SluiceError } from '../common/errors.ts';
import { formatMicros } from '../common/time/instant-micros.ts';

export interface ClockSource {
  /** The current time in µs. */
  now(): number;
}

/** The machine's clock (millisecond resolution). */
export const REAL_CLOCK: ClockSource = { now: () => Date.now() * 1000 };

/** A clock that stands still until set; it moves forward only. */
export class ManualClock implements ClockSource {
  constructor(private value = 0) {}

  now(): number {
    return this.value;
  }

  /** Moves the clock to `micros`; going back is an error (epochs' clocks never decrease). */
  set(micros: number): void {
    if (!Number.isSafeInteger(micros)) {
      throw new SluiceError('INVALID_REQUEST', 'the clock must be set to a time in whole microseconds');
    }
    if (micros < this.value) {
      throw new SluiceError(
        'INVALID_REQUEST',
        `the clock cannot go back from ${formatMicros(this.value)} to ${formatMicros(micros)}`,
        { hint: 'the logical clock only moves forward; set a time at or after the current one' },
      );
    }
    this.value = micros;
  }
}
