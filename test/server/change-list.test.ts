// The server's path from a view's Output to the stored changelog and the WebSocket builds no object
// per change: the Output codes its delta's rows in place (a ChangeList), and the changelog encoders
// read it by index. Counted, not timed: the row objects a change set builds when its `changes` is
// read (raw-changes.ts counts them) stay at 0 while a subscriber gets every epoch's messages, and a
// keyed view's -U/+U, a keyless view's +I/-D with its multiplicity arrive as the generic writer would
// write them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changeObjectsBuilt } from '../../src/common/raw-changes.ts';
import type { ViewChangeSet } from '../../src/exec/api.ts';
import { Engine } from '../../src/index.ts';
import {
  type Message,
  WsClient,
  removeDir,
  sqlOk,
  startServer,
  tempDir,
  type TestServer,
} from './helpers.ts';

test('the server stores and sends every change without building a change object', async () => {
  const dir = tempDir();
  let server: TestServer | null = null;
  const subs: WsClient[] = [];
  try {
    server = await startServer({ dataDir: dir });
    const s = server;
    await sqlOk(
      s.base,
      `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
       CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
       CREATE MATERIALIZED VIEW amounts AS SELECT amount FROM orders`,
    );
    const totals = new WsClient(
      s.base.replace('http', 'ws') + '/v1/views/seller_totals/subscribe?snapshot=false',
    );
    const amounts = new WsClient(s.base.replace('http', 'ws') + '/v1/views/amounts/subscribe?snapshot=false');
    subs.push(totals, amounts);
    const e0 = (await totals.waitFor((m) => m.type === 'subscribed')).epoch as number;
    await amounts.waitFor((m) => m.type === 'subscribed');
    const before = changeObjectsBuilt.count;
    await sqlOk(s.base, 'INSERT INTO orders VALUES (1, 1, 5), (2, 2, 5), (3, 1, 7)');
    // order 2 moves to seller 1: its total changes (a Reduce's adjacent -old/+new), seller 2's goes
    await sqlOk(s.base, 'UPDATE orders SET seller_id = 1, amount = 1 WHERE order_id = 2');
    await sqlOk(s.base, 'DELETE FROM orders');
    await totals.waitEpoch(e0 + 3);
    await amounts.waitEpoch(e0 + 3);
    assert.equal(changeObjectsBuilt.count - before, 0, 'no change object on the server path');
    const changes = (c: WsClient): unknown[] => c.of('changes').map((m: Message) => m['changes']);
    assert.deepEqual(changes(totals), [
      [
        { op: '+I', row: { seller_id: 1, total: 12 } },
        { op: '+I', row: { seller_id: 2, total: 5 } },
      ],
      [
        { op: '-U', row: { seller_id: 1, total: 12 } },
        { op: '+U', row: { seller_id: 1, total: 13 } },
        { op: '-D', row: { seller_id: 2, total: 5 } },
      ],
      [{ op: '-D', row: { seller_id: 1, total: 13 } }],
    ]);
    const sorted = (list: unknown[]): unknown[] =>
      list.map((l) => (l as object[]).map((c) => JSON.stringify(c)).sort());
    assert.deepEqual(sorted(changes(amounts)), [
      ['{"op":"+I","row":{"amount":5},"n":2}', '{"op":"+I","row":{"amount":7}}'],
      ['{"op":"+I","row":{"amount":1}}', '{"op":"-D","row":{"amount":5}}'],
      ['{"op":"-D","row":{"amount":1}}', '{"op":"-D","row":{"amount":5}}', '{"op":"-D","row":{"amount":7}}'],
    ]);
  } finally {
    for (const c of subs) c.close();
    await server?.close();
    removeDir(dir);
  }
});

test("a change set read after later epochs still gives its own epoch's changes", () => {
  const e = new Engine();
  e.execute(`CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
    CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
    CREATE MATERIALIZED VIEW amounts AS SELECT amount FROM orders`);
  const sets: ViewChangeSet[] = [];
  e.subscribe('seller_totals', (cs) => sets.push(cs));
  e.subscribe('amounts', (cs) => sets.push(cs));
  e.applyChanges('orders', { insert: [{ order_id: 1, seller_id: 1, amount: 5 }] });
  e.applyChanges('orders', {
    insert: [{ order_id: 2, seller_id: 1, amount: 7 }],
    delete: [{ order_id: 1, seller_id: 1, amount: 5 }],
  });
  e.applyChanges('orders', { delete: [{ order_id: 2, seller_id: 1, amount: 7 }] });
  // Read only now: each list codes its own epoch's delta, which later steps leave as it was.
  assert.deepEqual(
    sets.map((cs) => [cs.view, cs.changes]),
    [
      ['seller_totals', [{ op: '+I', row: { seller_id: 1, total: 5 } }]],
      ['amounts', [{ op: '+I', row: { amount: 5 } }]],
      [
        'seller_totals',
        [
          { op: '-U', row: { seller_id: 1, total: 5 } },
          { op: '+U', row: { seller_id: 1, total: 7 } },
        ],
      ],
      [
        'amounts',
        [
          { op: '-D', row: { amount: 5 } },
          { op: '+I', row: { amount: 7 } },
        ],
      ],
      ['seller_totals', [{ op: '-D', row: { seller_id: 1, total: 7 } }]],
      ['amounts', [{ op: '-D', row: { amount: 7 } }]],
    ],
  );
});
