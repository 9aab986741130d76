// The WebSocket transport: the frames sent in one tick leave the TCP socket together (one cork and
// one uncork around them), and every message's written callback still runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WebSocket } from 'ws';
import { WsTransport } from '../../src/server/transports.ts';

function fakeSocket(log: string[]): WebSocket {
  const socket = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    on: () => socket,
    send: (text: string, cb: () => void) => {
      log.push(`send ${text}`);
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
