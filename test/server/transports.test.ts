// The WebSocket transport: the frames sent in one tick leave the TCP socket together (one cork and
// one uncork around them), every message's written callback still runs, and an epoch's message is
// encoded once for all the subscribers it goes to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WebSocket } from 'ws';
import { WsTransport } from '../../src/server/transports.ts';

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
