// One tenant's account of the server's subscriber memory budget (subscriber-budget.ts): everything is
// admitted, reserved and evicted against the one shared budget — so the limit holds for all tenants
// together — while the account keeps what this tenant's subscribers hold, for its own metrics (a
// tenant sees its own bytes, never its neighbours').
import type { BudgetMember, MemoryBudget, Reservation, SubscriberBudget } from './subscriber-budget.ts';

export class BudgetAccount implements MemoryBudget {
  private live = 0;
  private closing = 0;
  /** The most this account held at once (live, closing and retained). */
  peak = 0;
  private readonly stopRetaining: () => void;

  constructor(
    readonly shared: SubscriberBudget,
    /** Bytes this tenant's open snapshots keep alive. */
    private readonly retainedBytes: () => number,
  ) {
    this.stopRetaining = shared.addRetainer(retainedBytes);
  }

  /** The shared budget's limit (the server's, for all tenants together). */
  get limit(): number {
    return this.shared.limit;
  }

  /** What this tenant's subscribers hold: queued (live and closing) and kept alive by its snapshots. */
  used(): number {
    return this.live + this.closing + this.retainedBytes();
  }

  get liveBytes(): number {
    return this.live;
  }

  get closingBytes(): number {
    return this.closing;
  }

  retained(): number {
    return this.retainedBytes();
  }

  join(member: BudgetMember): void {
    this.shared.join(member);
  }

  leave(member: BudgetMember): void {
    this.shared.leave(member);
  }

  addLive(bytes: number): void {
    this.live += bytes;
    this.notePeak();
    this.shared.addLive(bytes);
  }

  addClosing(bytes: number): void {
    this.closing += bytes;
    this.notePeak();
    this.shared.addClosing(bytes);
  }

  retire(bytes: number): void {
    this.live -= bytes;
    this.closing += bytes;
    this.shared.retire(bytes);
  }

  hasRoom(bytes: number): boolean {
    return this.shared.hasRoom(bytes);
  }

  admit(member: BudgetMember, bytes: number): 'ok' | 'evicted' | 'wait' {
    return this.shared.admit(member, bytes);
  }

  reserve(bytes: number): Reservation {
    return this.shared.reserve(bytes);
  }

  wake(): void {
    this.shared.wake();
  }

  /** The runtime closed: its snapshots no longer count. */
  close(): void {
    this.stopRetaining();
  }

  private notePeak(): void {
    const used = this.used();
    if (used > this.peak) this.peak = used;
  }
}
