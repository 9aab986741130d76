// The engine's epoch clock: each epoch's logical clock (µs), read from a clock source and never going
// back, frozen while a journal replays, and when a clock tick is due (a temporal bound or an idle partition).
import type { CheckpointedState } from './engine-checkpoints.ts';
import { type ClockSource, ManualClock } from './logical-clock.ts';

/** A tick's options (Engine.tick): `clock`, a journaled tick replayed; `force`, tick if the clock moved. */
export interface TickOptions {
  readonly clock?: number;
  readonly force?: boolean;
}

export class EpochClock {
  /** The latest epoch's clock as last read (µs since the Unix epoch; 0 before the first). */
  private value = 0;
  /**
   * The latest epoch read no clock (nothing in it depends on one: see `Engine.epochReadsClock`), so
   * its clock is the source's time when first asked for: a time at or after the epoch ran and
   * before the next one, as no reader can tell apart from the epoch's own. Reading the real clock
   * costs 60–90 ns, a twentieth of a one-row epoch.
   */
  private unread = false;
  /** While replaying a journal, the clock stands still between the journaled clocks. */
  frozen = false;

  constructor(
    readonly source: ClockSource,
    private readonly state: CheckpointedState,
  ) {}

  /** The logical clock of the latest epoch (µs since the Unix epoch; 0 before the first). */
  get current(): number {
    if (this.unread) {
      this.unread = false;
      if (!this.frozen) this.value = Math.max(this.value, this.source.now());
    }
    return this.value;
  }

  set current(clock: number) {
    this.unread = false;
    this.value = clock;
  }

  /** The clock for a new epoch: the source's time, never below the latest epoch's. */
  next(): number {
    const current = this.current;
    return this.frozen ? current : Math.max(current, this.source.now());
  }

  /** The latest epoch ran at `clock`: the clock moves there, never back; returns the clock. */
  advance(clock: number): number {
    const current = this.current;
    this.value = clock > current ? clock : current;
    return this.value;
  }

  /**
   * The latest epoch ran without reading the clock (nothing in it depends on one): its clock is
   * read when first asked for. Returns the clock as last read, for the views' steps (which read it
   * only in a temporal filter: an epoch with one reads the clock).
   */
  advanceUnread(): number {
    this.unread = true;
    return this.value;
  }

  /** Whether a tick now would be an epoch (the clock source has reached some temporal bound). */
  tickDue(): boolean {
    return this.nextDue() <= this.next();
  }

  /**
   * The earliest clock value at which a view's temporal filter changes, or a source's watermark
   * rises because a partition goes idle (Infinity: none).
   */
  nextDue(): number {
    let due = this.state.views.nextDue();
    for (const store of this.state.tables.values()) {
      const w = store.watermark;
      if (w !== null) due = Math.min(due, w.nextChangeAt(this.current));
    }
    return due;
  }

  /**
   * The clock of a tick epoch, or null when the tick is no epoch (see Engine.tick): `clock`, replay
   * of a journaled tick (always an epoch); `force`, an epoch whenever the clock moved.
   */
  tickClock(options: TickOptions): number | null {
    const clock = options.clock ?? this.next();
    const due =
      options.clock !== undefined ||
      (options.force === true ? clock > this.current : this.nextDue() <= clock);
    return due ? clock : null;
  }

  /**
   * Replay of a journaled SET CLOCK that made no epoch (and recovery from a checkpoint, with the
   * last clock setting before it): a manual clock moves to `clock` if it is behind; no epoch.
   */
  restoreSetting(clock: number): void {
    const source = this.source;
    if (source instanceof ManualClock && clock > source.now()) source.set(clock);
  }
}
