// Subscriber delivery on its own, over a fake transport: epochs at or before the cursor are skipped,
// the buffer bound turns into SLOW_CONSUMER (with the last epoch sent) and a close, never a drop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CloseCodes, Subscriber, ViewFeed, type SubscriberTransport } from '../../src/sink/subscriber.ts';
import { SubscriberBudget } from '../../src/sink/subscriber-budget.ts';
import { BudgetAccount } from '../../src/sink/budget-account.ts';

class FakeTransport implements SubscriberTransport {
  sent: string[] = [];
  queued = 0;
  queuedBytes = 0;
  closed = false;
  closeCode: number | null = null;
  private listeners: (() => void)[] = [];
  send(text: string): void {
    this.sent.push(text);
    this.queued += 1;
    this.queuedBytes += text.length;
  }
  bufferedBytes(): number {
    return this.queuedBytes;
  }
  pendingMessages(): number {
    return this.queued;
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
  flush(): void {
    this.queued = 0;
    this.queuedBytes = 0;
  }
  close(code: number): void {
    this.closed = true;
    this.closeCode = code;
    for (const l of this.listeners) l();
  }
  onClose(listener: () => void): void {
    this.listeners.push(listener);
  }
}

const limits = { maxBufferedBytes: 100, maxBufferedMessages: 3, stallTimeoutMs: 50 };

test('live delivery skips epochs at or before the cursor', () => {
  const t = new FakeTransport();
  const feed = new ViewFeed('v', 1);
  const sub = new Subscriber('v', t, limits, 5);
  feed.add(sub);
  feed.publish(4, 'e4');
  feed.publish(5, 'e5');
  feed.publish(6, 'e6');
  t.flush();
  feed.publish(7, 'e7');
  assert.deepEqual(t.sent, ['e6', 'e7']);
  assert.equal(sub.cursor, 7);
});

test('past the message bound a subscriber gets SLOW_CONSUMER with its last epoch, then a 4429 close', () => {
  const t = new FakeTransport();
  const feed = new ViewFeed('v', 1);
  const sub = new Subscriber('v', t, limits, 0);
  feed.add(sub);
  for (let e = 1; e <= 10; e++) feed.publish(e, `e${e}`);
  assert.deepEqual(t.sent.slice(0, 3), ['e1', 'e2', 'e3']);
  const error = JSON.parse(t.sent[3] ?? '{}') as { type: string; code: string; epoch: number };
  assert.equal(error.type, 'error');
  assert.equal(error.code, 'SLOW_CONSUMER');
  assert.equal(error.epoch, 3);
  assert.equal(t.sent.length, 4, 'nothing after the error');
  assert.equal(t.closeCode, CloseCodes.slowConsumer);
  assert.equal(feed.subscribers.size, 0);
});

test('past the byte bound too', () => {
  const t = new FakeTransport();
  const feed = new ViewFeed('v', 1);
  feed.add(new Subscriber('v', t, limits, 0));
  feed.publish(1, 'x'.repeat(160)); // larger than the bound, but the buffer is empty: accepted
  feed.publish(2, 'y'.repeat(60));
  assert.equal(t.sent.length, 2);
  assert.match(t.sent[1] ?? '', /SLOW_CONSUMER/);
  assert.match(t.sent[1] ?? '', /"epoch":1/);
  assert.equal(t.closeCode, 4429);
});

test('heartbeats go to idle subscribers only and carry the current epoch', () => {
  const t = new FakeTransport();
  const feed = new ViewFeed('v', 1);
  const sub = new Subscriber('v', t, limits, 2);
  feed.add(sub);
  feed.heartbeat(9, sub.lastSentAt + 10, 1000);
  assert.deepEqual(t.sent, []);
  feed.heartbeat(9, sub.lastSentAt + 1000, 1000);
  assert.deepEqual(t.sent, ['{"type":"progress","epoch":9}']);
  assert.equal(sub.cursor, 9);
  feed.publish(9, 'old');
  assert.equal(t.sent.length, 1, 'an epoch covered by progress is not sent again');
});

test('a stalled transport fails the subscriber after the stall timeout', async () => {
  const t = new FakeTransport();
  t.drained = () => new Promise(() => undefined);
  const sub = new Subscriber('v', t, limits, 0);
  t.queuedBytes = 90;
  assert.equal(await sub.paced(), false);
  assert.match(t.sent[0] ?? '', /SLOW_CONSUMER/);
  assert.equal(t.closeCode, 4429);
});

// ---- the shared memory budget ----------------------------------------------------------------

/** A transport whose writes complete only when `flush` says so (a client that reads on demand). */
class HeldTransport extends FakeTransport {
  private callbacks: (() => void)[] = [];
  override send(text: string, written?: () => void): void {
    super.send(text);
    if (written !== undefined) this.callbacks.push(written);
  }
  override flush(): void {
    super.flush();
    const callbacks = this.callbacks;
    this.callbacks = [];
    for (const c of callbacks) c();
  }
  /** Closing cuts the connection at once here: what it held is freed. */
  override close(code: number): void {
    super.close(code);
    this.flush();
  }
}

const roomy = { maxBufferedBytes: 1 << 20, maxBufferedMessages: 1000, stallTimeoutMs: 200 };

test('budget: a live epoch that does not fit closes the subscriber that fell behind the most', () => {
  const budget = new SubscriberBudget(10_000, 0);
  const feed = new ViewFeed('v', 1);
  const lagging = new HeldTransport();
  const reader = new HeldTransport();
  const behind = new Subscriber('v', lagging, roomy, 0, budget);
  const keepsUp = new Subscriber('v', reader, roomy, 0, budget);
  feed.add(behind);
  feed.add(keepsUp);
  for (let e = 1; e <= 10; e++) {
    feed.publish(e, 'x'.repeat(1500));
    reader.flush(); // the reader takes each epoch at once; the other reads nothing
    assert.ok(budget.used() <= budget.limit, `epoch ${e}: ${budget.used()} bytes accounted`);
  }
  assert.equal(lagging.closeCode, CloseCodes.slowConsumer);
  const error = JSON.parse(lagging.sent.at(-1) ?? '{}') as { code: string; epoch: number };
  assert.equal(error.code, 'SLOW_CONSUMER');
  assert.ok(error.epoch >= 1, 'the error names the last epoch it was sent');
  assert.equal(reader.closeCode, null);
  assert.equal(reader.sent.length, 10, 'the reader got every epoch');
  assert.ok(budget.peak <= budget.limit);
  assert.equal(budget.evictions, 1);
});

test('budget: with nobody behind, a live epoch that does not fit is left for the stored changelog', () => {
  const budget = new SubscriberBudget(4000, 60_000);
  const feed = new ViewFeed('v', 1);
  const behindCalls: Subscriber[] = [];
  feed.onBehind = (sub) => behindCalls.push(sub);
  const subs = [0, 1, 2].map(() => new Subscriber('v', new HeldTransport(), roomy, 0, budget));
  for (const s of subs) feed.add(s);
  feed.publish(1, 'y'.repeat(1500));
  // Two copies fit (the limit less its slack); the third waits, nobody is closed.
  assert.equal(behindCalls.length, 1);
  assert.equal(feed.subscribers.size, 2);
  assert.equal((behindCalls[0] as Subscriber).cursor, 0, 'it resumes after its last epoch');
  assert.ok(subs.every((s) => !s.closed));
  assert.ok(budget.used() <= budget.limit);
});

test('budget: paced streams wait for room in order, and a stream that never reads stalls out', async () => {
  const budget = new SubscriberBudget(4000, 60_000);
  const first = new HeldTransport();
  const second = new HeldTransport();
  const a = new Subscriber('v', first, roomy, 0, budget);
  const b = new Subscriber('v', second, roomy, 0, budget);
  assert.equal(await a.send('a'.repeat(3000)), true);
  let bSent = false;
  const pending = b.send('b'.repeat(3000)).then((ok) => (bSent = ok));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(bSent, false, 'no room until the first is written out');
  first.flush();
  await pending;
  assert.equal(bSent, true);
  assert.ok(budget.peak <= budget.limit, `peaked at ${budget.peak}`);
  // `a` now asks for more room than there is while `b` holds it and never reads: it stalls out.
  assert.equal(await a.send('c'.repeat(3000)), false);
  assert.equal(first.closeCode, CloseCodes.slowConsumer);
});

test('budget: tenants hold accounts of one budget — all of them together stay within it, each sees its own bytes', () => {
  const LIMIT = 20_000;
  const shared = new SubscriberBudget(LIMIT, 0);
  const tenants = ['acme', 'beta', 'gamma'].map((name) => {
    const account = new BudgetAccount(shared, () => 0);
    const feed = new ViewFeed(`${name}_v`, 1);
    const lagging = [0, 1, 2].map(() => new HeldTransport());
    for (const t of lagging) feed.add(new Subscriber(`${name}_v`, t, roomy, 0, account));
    return { name, account, feed, lagging };
  });
  let most = 0;
  for (let e = 1; e <= 10; e++) {
    for (const t of tenants) t.feed.publish(e, 'z'.repeat(1500));
    // Bytes held, counted: what every tenant's subscribers hold together never passes the one limit
    // (with a budget per tenant, three tenants would hold up to three times it).
    // (A message is accounted with one byte more than its text: the NDJSON newline.)
    const held = tenants.reduce((n, t) => n + t.lagging.reduce((m, x) => m + x.queuedBytes + x.queued, 0), 0);
    const accounted = tenants.reduce((n, t) => n + t.account.used(), 0);
    assert.equal(accounted, held, `epoch ${e}: the accounts count exactly the bytes held`);
    assert.ok(held <= LIMIT, `epoch ${e}: all tenants hold ${held} bytes, past the one budget of ${LIMIT}`);
    assert.ok(shared.used() <= LIMIT);
    most = Math.max(most, held);
  }
  assert.ok(most > LIMIT / 2, `the tenants filled the budget (${most} bytes at most)`);
  assert.ok(tenants.every((t) => t.account.peak > 0 && t.account.peak <= LIMIT));
  assert.ok(shared.evictions > 0, 'lagging subscribers were closed to make room');
  // A tenant's account shows its own bytes only; the limit is the server's.
  for (const t of tenants) assert.equal(t.account.limit, LIMIT);
  assert.ok(tenants.some((t) => t.account.used() < shared.used()));
});
