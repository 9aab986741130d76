// One memory budget for every changelog subscriber: the bytes queued in their transports (WebSocket
// and socket write buffers, NDJSON response buffers) — also those of subscribers being closed, until
// their sockets let go — plus what open snapshots keep alive. Nothing is queued past it: streams
// that can wait (snapshot chunks, the stored backlog) reserve room and wait for it, and a live epoch
// that does not fit is taken later from the stored changelog. Room is made by closing, with
// SLOW_CONSUMER, the subscriber that holds the most among those that have fallen behind (their queue
// has not emptied for `lagMs`): a slow client costs itself its stream, never others their memory.
// The server holds one budget for all its tenants; each tenant's runtime sees it through an account
// of its own (budget-account.ts), so N tenants cannot hold N budgets.

/** A subscriber as the budget sees it. */
export interface BudgetMember {
  /** Bytes it has queued that are not written yet. */
  heldBytes(): number;
  /** Since when (ms, Date.now) its queue has not been empty; 0 when it is empty. */
  busySince(): number;
  /** Closes it as a slow consumer (an `error` message, then a 4429 close). */
  evict(): void;
}

/** What a subscriber uses of a budget: the server's budget itself, or a tenant's account of it. */
export interface MemoryBudget {
  join(member: BudgetMember): void;
  leave(member: BudgetMember): void;
  addLive(bytes: number): void;
  addClosing(bytes: number): void;
  retire(bytes: number): void;
  hasRoom(bytes: number): boolean;
  admit(member: BudgetMember, bytes: number): 'ok' | 'evicted' | 'wait';
  reserve(bytes: number): Reservation;
  wake(): void;
}

export interface Reservation {
  readonly bytes: number;
  readonly ready: Promise<void>;
  release(): void;
  take(): void;
}

interface Waiter {
  readonly bytes: number;
  readonly resolve: () => void;
  granted: boolean;
}

export class SubscriberBudget implements MemoryBudget {
  /** Bytes queued by live subscribers. */
  private live = 0;
  /** Bytes still queued by subscribers being closed; freed once their sockets finish or are cut. */
  private closing = 0;
  /** Room granted to waiting streams that have not written yet. */
  private reserved = 0;
  private readonly members = new Set<BudgetMember>();
  private waiters: Waiter[] = [];
  private waking = false;
  /** What keeps snapshots alive: one reader per runtime sharing the budget (addRetainer). */
  private readonly retainers = new Set<() => number>();
  /** The most `used()` ever was (metrics, tests). */
  peak = 0;
  /** Subscribers closed to make room. */
  evictions = 0;

  /** Room kept for `error` messages of subscribers being closed (about 300 bytes each). */
  private readonly slack: number;

  constructor(
    readonly limit: number,
    /** A member whose queue has not emptied for this long has fallen behind. */
    readonly lagMs = 5000,
  ) {
    this.slack = Math.min(limit / 16, 1024 * 1024);
  }

  /** Counts the bytes `read` says open snapshots keep alive; the returned function stops it. */
  addRetainer(read: () => number): () => void {
    this.retainers.add(read);
    return () => this.retainers.delete(read);
  }

  /** Bytes open snapshots keep alive, of every runtime sharing the budget. */
  retained(): number {
    let bytes = 0;
    for (const read of this.retainers) bytes += read();
    return bytes;
  }

  /** Everything accounted: live and closing queues, granted reservations, snapshot retention. */
  used(): number {
    return this.live + this.closing + this.reserved + this.retained();
  }

  get liveBytes(): number {
    return this.live;
  }

  get closingBytes(): number {
    return this.closing;
  }

  join(member: BudgetMember): void {
    this.members.add(member);
  }

  leave(member: BudgetMember): void {
    this.members.delete(member);
  }

  /** A live subscriber queued (`bytes` > 0) or wrote out (< 0) bytes. */
  addLive(bytes: number): void {
    this.live += bytes;
    if (bytes > 0) this.notePeak();
    else this.wake();
  }

  /** The same for a subscriber being closed. */
  addClosing(bytes: number): void {
    this.closing += bytes;
    if (bytes > 0) this.notePeak();
    else this.wake();
  }

  /** A subscriber is being closed: its queued bytes are freed once its socket ends. */
  retire(bytes: number): void {
    this.live -= bytes;
    this.closing += bytes;
  }

  /**
   * Whether `bytes` more fit (a message always fits an otherwise empty budget). Messages are
   * admitted against the limit less a slack, which the few bytes nobody may refuse — the `error`
   * message of a subscriber being closed — come out of, so the account never passes the limit.
   */
  hasRoom(bytes: number): boolean {
    return this.used() + bytes <= this.limit - this.slack || this.live + this.closing + this.reserved === 0;
  }

  /**
   * A live epoch's message of `bytes` for `member`: 'ok' when it fits (room made first if need be),
   * 'evicted' when `member` itself was closed to make room, 'wait' when it does not fit yet (the
   * member takes the epoch from the stored changelog once it does).
   */
  admit(member: BudgetMember, bytes: number): 'ok' | 'evicted' | 'wait' {
    if (this.hasRoom(bytes)) return 'ok';
    const evicted = this.makeRoom(bytes);
    if (evicted.includes(member)) return 'evicted';
    return this.hasRoom(bytes) ? 'ok' : 'wait';
  }

  /**
   * Waits until `bytes` fit, then holds them for the caller (first come, first served). `release`
   * gives them back when the caller gives up; `take` when it is about to queue its message (whose
   * bytes it then adds as live, so they are never counted twice).
   */
  reserve(bytes: number): Reservation {
    let resolve: () => void = () => undefined;
    const ready = new Promise<void>((r) => (resolve = r));
    const waiter: Waiter = { bytes, resolve, granted: false };
    const drop = (): boolean => {
      if (waiter.granted) {
        waiter.granted = false;
        this.reserved -= bytes;
        return true;
      }
      this.waiters = this.waiters.filter((w) => w !== waiter);
      return false;
    };
    this.waiters.push(waiter);
    this.wake();
    return {
      bytes,
      ready,
      release: () => {
        if (drop()) this.wake();
      },
      take: () => void drop(),
    };
  }

  /** Grants what now fits, making room for the first waiter if members have fallen behind. */
  wake(): void {
    if (this.waking) return;
    this.waking = true;
    try {
      while (this.waiters.length > 0) {
        const head = this.waiters[0] as Waiter;
        if (!this.hasRoom(head.bytes)) {
          this.makeRoom(head.bytes);
          if (!this.hasRoom(head.bytes)) return;
        }
        this.waiters.shift();
        head.granted = true;
        this.reserved += head.bytes;
        this.notePeak();
        head.resolve();
      }
    } finally {
      this.waking = false;
    }
  }

  /**
   * Closes members that have fallen behind, the one holding the most first, until what live members
   * hold leaves room for `bytes` and an eighth of the budget more (so that room is not made again at
   * once for the next message); what closing ones hold is waited out: they are already going.
   */
  private makeRoom(bytes: number): BudgetMember[] {
    const evicted: BudgetMember[] = [];
    const now = Date.now();
    const want = bytes + this.limit / 8;
    while (this.used() - this.closing + want > this.limit - this.slack) {
      let victim: BudgetMember | null = null;
      let most = 0;
      for (const m of this.members) {
        const since = m.busySince();
        if (since === 0 || now - since < this.lagMs) continue;
        const held = m.heldBytes();
        if (held > most) {
          most = held;
          victim = m;
        }
      }
      if (victim === null) break;
      this.evictions += 1;
      this.members.delete(victim);
      evicted.push(victim);
      victim.evict();
    }
    return evicted;
  }

  private notePeak(): void {
    const used = this.used();
    if (used > this.peak) this.peak = used;
  }
}
