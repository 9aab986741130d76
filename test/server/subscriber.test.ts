// Subscriber delivery on its own, over a fake transport: epochs at or before the cursor are skipped,
// the buffer bound turns into SLOW_CONSUMER (with the last epoch sent) and a close, never a drop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CloseCodes, Subscriber, ViewFeed, type SubscriberTransport } from '../../src/sink/subscriber.ts';

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
