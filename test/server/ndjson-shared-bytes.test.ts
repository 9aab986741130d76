// The NDJSON changelog transport: an epoch's message, handed to every subscriber of the view in one
// tick, is encoded to UTF-8 once and the same bytes are queued on each response (a line built per
// subscriber was a new string and a new buffer of the message's size for each one).
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { test } from 'node:test';
import { NdjsonTransport } from '../../src/server/transports.ts';

/** A response that records what it was given; each write completes on the next turn. */
function fakeResponse(chunks: (string | Buffer)[]): ServerResponse {
  const res = {
    writableLength: 0,
    writableFinished: false,
    on: () => res,
    write: (chunk: string | Buffer, cb?: () => void) => {
      chunks.push(chunk);
      if (cb !== undefined) setImmediate(cb);
      return true;
    },
    end: () => undefined,
    destroy: () => undefined,
  };
  return res as unknown as ServerResponse;
}

const asText = (chunks: readonly (string | Buffer)[]): string =>
  chunks.map((c) => (typeof c === 'string' ? c : c.toString('utf8'))).join('');

test("one epoch's message is encoded once for all NDJSON subscribers", async () => {
  const text = `{"type":"changes","epoch":7,"changes":[${'{"op":"+I","row":{"a":"ü€😀"}},'.repeat(2000)}{}]}`;
  const subscribers = 8;
  const outputs: (string | Buffer)[][] = [];
  const transports: NdjsonTransport[] = [];
  for (let i = 0; i < subscribers; i++) {
    const chunks: (string | Buffer)[] = [];
    outputs.push(chunks);
    transports.push(new NdjsonTransport(fakeResponse(chunks), 1000));
  }
  let written = 0;
  for (const t of transports) t.send(text, () => written++);
  await Promise.all(transports.map((t) => t.drained()));
  assert.equal(written, subscribers);
  // Every subscriber's stream holds exactly the line…
  for (const chunks of outputs) assert.equal(asText(chunks), `${text}\n`);
  // …and the message's bytes are one Buffer shared by all of them: one encoding, not one each.
  const bodies = new Set(outputs.map((chunks) => chunks.find((c) => Buffer.isBuffer(c) && c.length > 1)));
  assert.equal(bodies.size, 1);
  const [body] = bodies;
  assert.ok(Buffer.isBuffer(body) && body.equals(Buffer.from(text, 'utf8')));
});

test('a small NDJSON message is written as one line', async () => {
  const chunks: (string | Buffer)[] = [];
  const transport = new NdjsonTransport(fakeResponse(chunks), 1000);
  transport.send('{"type":"progress","epoch":3}');
  await transport.drained();
  assert.deepEqual(chunks, ['{"type":"progress","epoch":3}\n']);
});
