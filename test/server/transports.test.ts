// The WebSocket transport: the frames sent in one tick leave the TCP socket together (one cork and
// one uncork around them), every message's written callback still runs, and an epoch's message is
// encoded once for all the subscribers it goes to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WebSocket } from 'ws';
import { CLOSE_PROGRESS_WINDOW_MS, WsTransport } from '../../src/server/transports.ts';
import { utf8Bytes, utf8Length } from '../../src/sink/utf8-text.ts';

/** What a fake socket was given: the data and whether it goes out as a binary frame. */
interface Sent {
  readonly data: Buffer;
  readonly binary: boolean | undefined;
}

function fakeSocket(log: string[], sent: Sent[] = []): WebSocket {
  const socket = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    on: () => socket,
    send: (data: Buffer, options: { binary?: boolean }, cb: () => void) => {
      log.push(`send ${data.toString('utf8')}`);
      sent.push({ data, binary: options.binary });
      setImmediate(cb);
    },
  };
  return socket as unknown as WebSocket;
}

test('frames sent in one tick are written under one cork', async () => {
  const log: string[] = [];
  const raw = { cork: () => log.push('cork'), uncork: () => log.push('uncork') };
  const transport = new WsTransport(fakeSocket(log), 1000, raw);
  let written = 0;
  transport.send('a', () => written++);
  transport.send('b', () => written++);
  transport.send('c', () => written++);
  assert.deepEqual(log, ['cork', 'send a', 'send b', 'send c']);
  await new Promise((r) => process.nextTick(r));
  assert.deepEqual(log, ['cork', 'send a', 'send b', 'send c', 'uncork']);
  transport.send('d', () => written++);
  await transport.drained();
  assert.deepEqual(log.slice(5), ['cork', 'send d', 'uncork']);
  assert.equal(written, 4);
});

test('without a raw socket each frame is sent as it comes', async () => {
  const log: string[] = [];
  const transport = new WsTransport(fakeSocket(log), 1000);
  transport.send('a');
  transport.send('b');
  await transport.drained();
  assert.deepEqual(log, ['send a', 'send b']);
});

test("one epoch's message is encoded once for every subscriber and sent as text", async () => {
  const log: string[] = [];
  const sent: Sent[] = [];
  const a = new WsTransport(fakeSocket(log, sent), 1000);
  const b = new WsTransport(fakeSocket(log, sent), 1000);
  const text = `{"type":"changes","epoch":7,"changes":[${'{"op":"+I","row":{"a":"ü€😀"}},'.repeat(100)}{}]}`;
  a.send(text);
  b.send(text);
  // A small message is not cached (nor needs to be); it still arrives as its UTF-8 bytes.
  a.send('{"type":"progress","epoch":7}');
  await Promise.all([a.drained(), b.drained()]);
  assert.equal(sent.length, 3);
  assert.equal(sent[0]!.data, sent[1]!.data);
  assert.ok(sent[0]!.data.equals(Buffer.from(text, 'utf8')));
  assert.equal(sent[2]!.data.toString('utf8'), '{"type":"progress","epoch":7}');
  for (const s of sent) assert.equal(s.binary, false);
  // Past the tick the text is encoded anew (the cache never holds a message longer).
  const c = new WsTransport(fakeSocket(log, sent), 1000);
  c.send(text);
  await c.drained();
  assert.notEqual(sent[3]!.data, sent[0]!.data);
  assert.ok(sent[3]!.data.equals(sent[0]!.data));
});

test("a long message's UTF-8 length is measured once per tick, however many times it is asked", async () => {
  // The first subscriber of an epoch asks three times (the budget's admit, its write, the
  // transport's meter) before the WebSocket encodes the bytes; each measure read all of the text.
  const text = `{"type":"changes","epoch":8,"changes":[${'{"op":"-U","row":{"a":"ü€😀"}},'.repeat(100)}{}]}`;
  const expected = Buffer.from(text, 'utf8').length;
  const measure = Buffer.byteLength;
  let measured = 0;
  Buffer.byteLength = ((...args: Parameters<typeof Buffer.byteLength>) => {
    measured++;
    return measure(...args);
  }) as typeof Buffer.byteLength;
  try {
    await new Promise((r) => process.nextTick(r)); // a tick of its own: nothing cached from before
    assert.deepEqual([utf8Length(text), utf8Length(text), utf8Length(text)], [expected, expected, expected]);
    assert.equal(measured, 1);
    assert.equal(utf8Bytes(text).length, expected);
    assert.equal(utf8Length(text), expected);
    assert.equal(measured, 1);
    // A short text is measured each time (nothing kept for it); another long text anew.
    assert.equal(utf8Length('{"type":"progress"}'), 19);
    const other = text.replace('"epoch":8', '"epoch":9');
    assert.equal(utf8Length(other), expected);
    assert.equal(measured, 3);
    // Past the tick nothing is remembered.
    await new Promise((r) => process.nextTick(r));
    assert.equal(utf8Length(other), expected);
    assert.equal(measured, 4);
  } finally {
    Buffer.byteLength = measure;
  }
});

test("a measured text's bytes are its UTF-8 bytes, ASCII or not (lone surrogates included)", async () => {
  const ascii = `{"type":"changes","epoch":10,"changes":[${'{"op":"+I","row":{"a":"x\\u0001 ~"}},'.repeat(60)}{}]}`;
  const others = [
    `${ascii}é`,
    `${ascii}😀`,
    `${ascii}\ud800`,
    `\udc00${ascii}`,
    `${ascii}\u0080`,
    `${ascii}\u007f`,
  ];
  for (const text of [ascii, ...others]) {
    await new Promise((r) => process.nextTick(r));
    assert.equal(utf8Length(text), Buffer.byteLength(text, 'utf8'));
    assert.ok(utf8Bytes(text).equals(Buffer.from(text, 'utf8')), JSON.stringify(text.slice(-3)));
  }
});

/** A socket whose unsent bytes the test sets, recording when it is closed and cut off. */
function closingSocket(): { socket: WebSocket; state: { bufferedAmount: number; terminated: number } } {
  const state = { bufferedAmount: 0, terminated: 0 };
  const socket = {
    OPEN: 1,
    readyState: 1,
    get bufferedAmount() {
      return state.bufferedAmount;
    },
    on: () => socket,
    close: () => undefined,
    terminate: () => {
      state.terminated += 1;
    },
  };
  return { socket: socket as unknown as WebSocket, state };
}

test('a closed stream whose peer still reads is kept; one that reads nothing is cut off after the progress window', async () => {
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  // Reading: the unsent bytes fall between every check, then all is taken.
  const reading = closingSocket();
  reading.state.bufferedAmount = 1_000_000;
  const kept = new WsTransport(reading.socket, 1000);
  kept.close(4429, 'SLOW_CONSUMER', 40);
  for (let i = 0; i < 5; i++) {
    await sleep(20);
    reading.state.bufferedAmount -= 100_000;
  }
  assert.equal(reading.state.terminated, 0, 'not cut off while the peer reads');
  assert.ok(kept.closeExtensions >= 1);
  reading.state.bufferedAmount = 0;
  await waitFor(() => reading.state.terminated === 1);
  // Stalled: nothing moves, so it is cut off once nothing moved for the progress window.
  const stalled = closingSocket();
  stalled.state.bufferedAmount = 1_000_000;
  const cut = new WsTransport(stalled.socket, 1000);
  const closedAt = Date.now();
  cut.close(4429, 'SLOW_CONSUMER', 40);
  await waitFor(() => stalled.state.terminated === 1);
  assert.ok(Date.now() - closedAt >= CLOSE_PROGRESS_WINDOW_MS - 5, 'cut off after the progress window');
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
