// The opt-in `maxMessageBytes` subscribe parameter: one huge epoch comes in parts no larger than the
// bound ("more":true on all but the last) instead of one frame of tens of megabytes. Counted, not
// timed: frame sizes, parts, and the rows they fold to. The default stays one message per epoch.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { arrayLayout, messageParts, splitStats } from '../../src/sink/message-parts.ts';
import {
  FoldedView,
  request,
  sqlOk,
  startServer,
  WsClient,
  type Message,
  type TestServer,
} from './helpers.ts';

/** What a splitting client does: the changes of an epoch's parts, joined, and its last part's rest. */
function joined(parts: readonly string[]): Record<string, unknown> {
  const messages = parts.map((p) => JSON.parse(p) as Record<string, unknown>);
  const last = messages[messages.length - 1] as Record<string, unknown>;
  const field = last.type === 'snapshot' ? 'rows' : 'changes';
  messages.slice(0, -1).forEach((m) => assert.equal(m.more, true));
  return { ...last, [field]: messages.flatMap((m) => m[field] as unknown[]) };
}

describe('messageParts', () => {
  const awkward = ['"changes":[', '},{', '\\', '😀', 'é', ']', '{"a":[1,2]}', ''];
  const changes = Array.from({ length: 400 }, (_, i) => ({
    op: i % 3 === 0 ? '-D' : '+I',
    row: { id: i, s: `${awkward[i % awkward.length]}${'x'.repeat(i % 50)}`, o: { k: [i, null] } },
    ...(i % 7 === 0 ? { n: 2 } : {}),
  }));
  const message = {
    type: 'changes',
    epoch: 9,
    positions: { changes: [1, 2], '"changes":[': 3 },
    clock: '2026-01-01 00:00:00+00',
    changes,
    errors: [{ op: '+E', error: { code: 'X', message: 'm', row: {}, epoch: 9, count: 1 } }],
  };
  const text = JSON.stringify(message);

  test('finds the top-level array, not a look-alike in keys or strings', () => {
    const layout = arrayLayout(text, 'changes');
    assert.ok(layout !== null);
    assert.equal(layout.elements.length, changes.length);
    assert.deepEqual(JSON.parse(text.slice(layout.open - 1, layout.close + 1)), changes);
  });

  test('every part is within the bound and they join to the message; errors ride the last', () => {
    for (const bound of [4096, 5000, 20_000]) {
      const parts = messageParts(text, bound);
      assert.ok(parts.length > 1);
      for (const p of parts)
        assert.ok(Buffer.byteLength(p) + 1 <= bound, `${Buffer.byteLength(p)} > ${bound}`);
      assert.deepEqual(joined(parts), message);
      assert.ok(parts.slice(0, -1).every((p) => !p.includes('"errors"')));
    }
  });

  test('a message within the bound, and other messages, are left whole', () => {
    assert.deepEqual(messageParts(text, 10_000_000), [text]);
    const progress = '{"type":"progress","epoch":3}';
    assert.deepEqual(messageParts(progress, 10), [progress]);
  });

  test('a snapshot chunk keeps its own "more" on the last part', () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, s: 'y'.repeat(40) }));
    const chunk = JSON.stringify({ type: 'snapshot', epoch: 2, rows, more: false });
    const parts = messageParts(chunk, 4096);
    assert.ok(parts.length > 1);
    assert.deepEqual(joined(parts), { type: 'snapshot', epoch: 2, rows, more: false });
  });
});

describe('subscribing with maxMessageBytes', () => {
  let server: TestServer;
  const ROWS = 3000;
  const BOUND = 8192;

  before(async () => {
    server = await startServer({ heartbeatMs: 100 });
    await sqlOk(
      server.base,
      'CREATE TABLE big (id BIGINT NOT NULL, label TEXT, PRIMARY KEY (id)); ' +
        'CREATE MATERIALIZED VIEW big_v AS SELECT id, label FROM big',
    );
  });
  after(async () => {
    await server.close();
  });

  /** A subscriber recording each frame's size. */
  function sizedClient(query: string): { client: WsClient; sizes: number[] } {
    const client = new WsClient(`${server.wsBase}/v1/views/big_v/subscribe?${query}`);
    const sizes: number[] = [];
    client.socket.on('message', (data: Buffer) => sizes.push(data.length));
    return { client, sizes };
  }

  test('one large epoch comes in parts within the bound; the default is one message', async () => {
    const split = sizedClient(`maxMessageBytes=${BOUND}`);
    const whole = sizedClient('');
    try {
      await split.client.waitFor((m) => m.type === 'snapshot_end');
      await whole.client.waitFor((m) => m.type === 'snapshot_end');
      const rows = Array.from({ length: ROWS }, (_, id) => ({ id, label: `row ${id} 😀` }));
      const r = await request(server.base, 'POST', '/v1/tables/big/rows?wait=true', rows);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const epoch = r.body.epoch as number;
      const last = (m: Message): boolean => m.type === 'changes' && m.epoch === epoch && m.more !== true;
      await split.client.waitFor(last);
      await whole.client.waitFor(last);
      const parts = split.client.of('changes').filter((m) => m.epoch === epoch);
      assert.ok(parts.length >= 10, `${parts.length} parts`);
      assert.ok(parts.slice(0, -1).every((m) => m.more === true));
      assert.ok(
        split.sizes.every((n) => n <= BOUND),
        `largest frame ${Math.max(...split.sizes)}`,
      );
      const wholeChanges = whole.client.of('changes').filter((m) => m.epoch === epoch);
      assert.equal(wholeChanges.length, 1);
      assert.equal(wholeChanges[0]?.more, undefined);
      assert.ok(Math.max(...whole.sizes) > 10 * BOUND);
      const folded = new FoldedView();
      for (const m of split.client.messages) folded.apply(m);
      const reference = new FoldedView();
      for (const m of whole.client.messages) reference.apply(m);
      assert.equal(folded.rows.size, ROWS);
      assert.deepEqual(folded.sorted(), reference.sorted());
      // A snapshot of the same view, split too.
      const late = sizedClient(`maxMessageBytes=${BOUND}`);
      try {
        await late.client.waitFor((m) => m.type === 'snapshot_end');
        assert.ok(late.sizes.every((n) => n <= BOUND));
        const snap = new FoldedView();
        for (const m of late.client.messages) snap.apply(m);
        assert.deepEqual(snap.sorted(), reference.sorted());
      } finally {
        late.client.close();
      }
    } finally {
      split.client.close();
      whole.client.close();
    }
  });

  test('subscribers asking the same bound share one split of an epoch', async () => {
    const clients = [1, 2, 3].map(() => sizedClient(`maxMessageBytes=${BOUND}`));
    try {
      for (const c of clients) await c.client.waitFor((m) => m.type === 'snapshot_end');
      const before = splitStats.splits;
      const rows = Array.from({ length: ROWS }, (_, i) => ({ id: ROWS + i, label: `again ${i}` }));
      const r = await request(server.base, 'POST', '/v1/tables/big/rows?wait=true', rows);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const epoch = r.body.epoch as number;
      for (const c of clients) {
        await c.client.waitFor((m) => m.type === 'changes' && m.epoch === epoch && m.more !== true);
        assert.ok(c.client.of('changes').filter((m) => m.epoch === epoch).length >= 10);
      }
      // One split for three subscribers (each of them split it before).
      assert.equal(splitStats.splits - before, 1);
    } finally {
      for (const c of clients) c.client.close();
    }
  });

  test('a bound that is not an integer of at least 4096 is refused', async () => {
    for (const bad of ['100', 'abc', '-5', '1e9', '99999999999']) {
      const r = await request(server.base, 'GET', `/v1/views/big_v/changes?maxMessageBytes=${bad}`);
      assert.equal(r.status, 400, bad);
      assert.equal(r.body.error?.code, 'INVALID_REQUEST');
    }
  });
});
