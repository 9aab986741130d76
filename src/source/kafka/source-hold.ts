// Holding a Kafka source's batch back: for the tenant's ingest rates (a wait of at most about a
// second) or while the tenant's state is at its state quota (asked again every
// STATE_QUOTA_POLL_MS until it is below). A held batch is kept whole — nothing dropped, the
// position unchanged — and the source reads nothing more until it is delivered: the records wait in
// Kafka (backpressure), never skipped.
import type { ConnectorLogger } from './kafka-client.ts';
import type { SourcePacer } from './kafka-source-types.ts';

/** How often a batch held at the tenant's state quota asks again whether the state fell below it. */
export const STATE_QUOTA_POLL_MS = 250;

export class SourceHold {
  private held: { readonly promise: Promise<void>; readonly resolve: () => void } | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Times a batch waited for the tenant's ingest rate. */
  rateWaits = 0;
  /** The batch is held because the tenant's state is at or above its quota (until it falls below). */
  pausedAtStateQuota = false;
  /** Times reading paused so (each pause once, however long). */
  stateQuotaPauses = 0;

  constructor(
    private readonly logger: ConnectorLogger,
    private readonly where: { readonly source: string; readonly topic: string },
  ) {}

  /** What reading waits on while a batch is held; null: nothing held. */
  get waiting(): Promise<void> | null {
    return this.held?.promise ?? null;
  }

  /**
   * Whether a batch of `rows` rows and `bytes` bytes must wait; if so it is held and `again` is called
   * after the wait. The state quota first: a batch is not taken from the rate buckets while it waits.
   */
  mustWait(pacer: SourcePacer, rows: number, bytes: number, again: () => void): boolean {
    if (pacer.stateFull()) {
      if (!this.pausedAtStateQuota) {
        this.stateQuotaPauses += 1;
        this.logger.warn(this.where, "Kafka source paused: its tenant's state is at its state quota");
      }
      this.pausedAtStateQuota = true;
      this.hold(STATE_QUOTA_POLL_MS, again);
      return true;
    }
    if (this.pausedAtStateQuota) {
      this.pausedAtStateQuota = false;
      this.logger.info(this.where, "Kafka source resumed: its tenant's state is below its state quota");
    }
    const wait = pacer.wait(rows, bytes);
    if (wait <= 0) return false;
    this.rateWaits += 1;
    this.hold(wait, again);
    return true;
  }

  /** Reading goes on (a held batch was delivered, or this reading attempt ended). */
  release(): void {
    const held = this.held;
    this.held = null;
    held?.resolve();
  }

  /** Stops asking again (the source stops, or this reading attempt ended) and lets reading go on. */
  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.release();
  }

  private hold(ms: number, again: () => void): void {
    if (this.held === null) {
      let resolve: () => void = () => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      this.held = { promise, resolve };
    }
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      again();
    }, ms);
  }
}
