// Sources from the connector's side (the .slt files cannot feed a source): only
// `applyChanges(source, changes, { fromSource: true, positions })` writes one, with upsert semantics
// (an insert on an existing key replaces the row, deletes by key), the connector's positions become
// the epoch's and reach the journal; every other write is refused and has no effect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from './engine.ts';
import type { EngineJournal, JournalBatch, SourcePositions, ViewChangeSet } from './api.ts';
import { SluiceError } from '../common/errors.ts';
import type { ErrorCode } from '../common/errors.ts';

const DDL = [
  `CREATE SOURCE orders (order_id bigint NOT NULL, seller_id integer NOT NULL, amount integer, PRIMARY KEY (order_id))
   FROM KAFKA (brokers 'k1:9092', topic 'orders', format 'upsert')`,
  'CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id',
  "CREATE SINK totals_out FROM seller_totals INTO KAFKA (brokers 'k1:9092', topic 'totals', format 'upsert')",
];

function at(partition: number, from: number, to: number): SourcePositions {
  return { orders: { topic: 'orders', partitions: { [partition]: { from, to } } } };
}

function throwsCode(fn: () => unknown, code: ErrorCode): SluiceError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof SluiceError, `expected a SluiceError ${code}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

class RecordingJournal implements EngineJournal {
  readonly batches: JournalBatch[] = [];
  readonly ddl: string[] = [];
  appendTick(): void {}
  appendBatch(entry: JournalBatch): SourcePositions {
    this.batches.push(entry);
    return { [entry.table]: { offset: this.batches.length } };
  }
  appendDdl(entry: { epoch: number; sql: string }): void {
    this.ddl.push(entry.sql);
  }
}

test('connector batches upsert by primary key and delete by key', () => {
  const engine = new Engine();
  engine.execute(DDL.join(';'));
  const seen: ViewChangeSet[] = [];
  engine.subscribe('seller_totals', (c) => seen.push(c));

  const first = engine.applyChanges(
    'orders',
    {
      insert: [
        { order_id: 1, seller_id: 7, amount: 5 },
        { order_id: 2, seller_id: 7, amount: 10 },
        { order_id: 3, seller_id: 8, amount: 1 },
      ],
    },
    { fromSource: true, positions: at(0, 0, 2) },
  );
  assert.deepEqual(first, { accepted: 3, epoch: 1 });
  assert.deepEqual(engine.viewSnapshot('seller_totals').rows, [
    { seller_id: 7, total: 15 },
    { seller_id: 8, total: 1 },
  ]);

  // Key 1 again replaces its row; key 3 is deleted by its key alone.
  engine.applyChanges(
    'orders',
    { insert: [{ order_id: 1, seller_id: 7, amount: 50 }], delete: [{ order_id: 3 }] },
    { fromSource: true, positions: at(0, 3, 4) },
  );
  assert.deepEqual(
    engine.tableRows('orders').sort((a, b) => Number(a['order_id']) - Number(b['order_id'])),
    [
      { order_id: 1, seller_id: 7, amount: 50 },
      { order_id: 2, seller_id: 7, amount: 10 },
    ],
  );
  assert.deepEqual(engine.viewSnapshot('seller_totals').rows, [{ seller_id: 7, total: 60 }]);
  assert.equal(engine.epoch, 2);
  assert.deepEqual(engine.positions, at(0, 3, 4));
  assert.deepEqual(
    seen.map((c) => c.positions),
    [at(0, 0, 2), at(0, 3, 4)],
  );
  assert.equal(engine.catalog().sources[0]?.rowCount, 2);

  // A tombstone for a key never seen rejects the batch, unless the connector asks to drop it.
  const tombstone = { delete: [{ order_id: 99 }], insert: [{ order_id: 4, seller_id: 8, amount: 2 }] };
  throwsCode(
    () => engine.applyChanges('orders', tombstone, { fromSource: true, positions: at(0, 5, 6) }),
    'ROW_NOT_FOUND',
  );
  assert.equal(engine.epoch, 2);
  const r = engine.applyChanges('orders', tombstone, {
    fromSource: true,
    positions: at(0, 5, 6),
    ignoreMissingDeletes: true,
  });
  assert.equal(r.epoch, 3);
  assert.deepEqual(engine.viewSnapshot('seller_totals').rows, [
    { seller_id: 7, total: 60 },
    { seller_id: 8, total: 2 },
  ]);
});

test('writes that do not come from the connector are refused and change nothing', () => {
  const engine = new Engine();
  engine.execute(DDL.join(';'));
  engine.applyChanges(
    'orders',
    { insert: [{ order_id: 1, seller_id: 7, amount: 5 }] },
    { fromSource: true, positions: at(0, 0, 0) },
  );
  const journal = new RecordingJournal();
  engine.setJournal(journal);
  const before = { rows: engine.tableRows('orders'), epoch: engine.epoch, positions: engine.positions };

  const refused = throwsCode(
    () => engine.applyChanges('orders', { insert: [{ order_id: 2, seller_id: 7, amount: 1 }] }),
    'WRONG_OBJECT_KIND',
  );
  assert.equal(refused.message, '"orders" is a source; its rows come from Kafka topic "orders"');
  assert.ok(refused.hint?.includes('connector'));
  // Replay-style positions alone do not make a write a connector write.
  throwsCode(
    () => engine.applyChanges('orders', { delete: [{ order_id: 1 }] }, { positions: at(0, 1, 1) }),
    'WRONG_OBJECT_KIND',
  );
  throwsCode(() => engine.execute('INSERT INTO orders VALUES (2, 7, 1)'), 'WRONG_OBJECT_KIND');
  throwsCode(() => engine.execute('UPDATE orders SET amount = 0'), 'WRONG_OBJECT_KIND');
  throwsCode(() => engine.execute('DELETE FROM orders'), 'WRONG_OBJECT_KIND');
  throwsCode(() => engine.applyChanges('totals_out', { insert: [{}] }), 'WRONG_OBJECT_KIND');
  // A connector batch must say where it came from.
  throwsCode(
    () =>
      engine.applyChanges(
        'orders',
        { insert: [{ order_id: 2, seller_id: 7, amount: 1 }] },
        { fromSource: true },
      ),
    'INTERNAL_ERROR',
  );

  assert.deepEqual(
    { rows: engine.tableRows('orders'), epoch: engine.epoch, positions: engine.positions },
    before,
  );
  assert.deepEqual(engine.viewSnapshot('seller_totals').rows, [{ seller_id: 7, total: 5 }]);
  assert.equal(journal.batches.length, 0);

  // And a plain table is not a source.
  engine.execute('CREATE TABLE t (a integer)');
  throwsCode(
    () => engine.applyChanges('t', { insert: [{ a: 1 }] }, { fromSource: true, positions: at(0, 0, 0) }),
    'WRONG_OBJECT_KIND',
  );
});

test('the journal records source DDL and a source batch with its positions; replay reproduces it', () => {
  const journal = new RecordingJournal();
  const engine = new Engine();
  engine.setJournal(journal);
  engine.execute(DDL.join(';'));
  assert.equal(journal.ddl.length, 3);
  const positions = at(1, 40, 41);
  engine.applyChanges(
    'orders',
    {
      insert: [
        { order_id: 1, seller_id: 7, amount: 5 },
        { order_id: 2, seller_id: 8, amount: 6 },
      ],
    },
    { fromSource: true, positions },
  );
  engine.applyChanges(
    'orders',
    { insert: [{ order_id: 1, seller_id: 8, amount: 1 }] },
    { fromSource: true, positions: at(1, 42, 42) },
  );
  assert.equal(journal.batches.length, 2);
  const [b1, b2] = journal.batches as [JournalBatch, JournalBatch];
  assert.deepEqual(b1.positions, positions);
  assert.deepEqual(b1.columns, ['order_id', 'seller_id', 'amount']);
  // The replacement is resolved: the old row of key 1 is deleted, the new one inserted.
  assert.deepEqual(b2.deletes, [[1, 7, 5]]);
  assert.deepEqual(b2.inserts, [[1, 8, 1]]);
  // The epoch's positions are the connector's, not the journal's return value.
  assert.deepEqual(engine.positions, at(1, 42, 42));

  const replayed = new Engine();
  for (const sql of journal.ddl) replayed.execute(sql);
  for (const b of journal.batches) {
    const toRow = (values: readonly unknown[]): Record<string, unknown> =>
      Object.fromEntries(b.columns.map((c, i) => [c, values[i]]));
    replayed.applyChanges(
      b.table,
      { delete: b.deletes.map(toRow) as never, insert: b.inserts.map(toRow) as never },
      { fromSource: true, positions: b.positions as SourcePositions },
    );
  }
  assert.equal(replayed.epoch, engine.epoch);
  assert.deepEqual(replayed.positions, engine.positions);
  assert.deepEqual(replayed.viewSnapshot('seller_totals'), engine.viewSnapshot('seller_totals'));

  engine.execute('DROP SOURCE orders CASCADE');
  assert.equal(journal.ddl.at(-1), 'DROP SOURCE orders CASCADE');
  assert.deepEqual(engine.catalog().sinks, []);
});

test('catalog lists sources and sinks with their validated options', () => {
  const engine = new Engine();
  engine.execute(DDL.join(';'));
  const catalog = engine.catalog();
  assert.deepEqual(catalog.tables, []);
  assert.deepEqual(catalog.sources, [
    {
      name: 'orders',
      columns: [
        { name: 'order_id', type: 'bigint', nullable: false },
        { name: 'seller_id', type: 'integer', nullable: false },
        { name: 'amount', type: 'integer', nullable: true },
      ],
      primaryKey: ['order_id'],
      sql: DDL[0],
      rowCount: 0,
      stateBytes: 0,
      dependents: ['seller_totals'],
      options: {
        connector: 'kafka',
        brokers: ['k1:9092'],
        topic: 'orders',
        format: 'upsert',
        start: 'earliest',
        maxBatchRows: 10000,
        maxBatchMs: 100,
        onError: 'fail',
      },
    },
  ]);
  assert.deepEqual(catalog.sinks, [
    {
      name: 'totals_out',
      view: 'seller_totals',
      sql: DDL[2],
      options: { connector: 'kafka', brokers: ['k1:9092'], topic: 'totals', format: 'upsert' },
    },
  ]);
  const dropView = throwsCode(
    () => engine.execute('DROP MATERIALIZED VIEW seller_totals'),
    'DEPENDENT_OBJECTS',
  );
  assert.equal(dropView.detail, 'sink "totals_out" depends on "seller_totals"');
  assert.match(engine.explainView('seller_totals'), /Input table orders/);
});

test('a source checkpoints like a table; its fingerprint covers topic and format', () => {
  const engine = new Engine();
  engine.execute(DDL.join(';'));
  engine.setStateTracking(true);
  engine.applyChanges(
    'orders',
    { insert: [{ order_id: 1, seller_id: 7, amount: 5 }] },
    { fromSource: true, positions: at(0, 0, 0) },
  );
  const cp = engine.takeCheckpoint(true);
  const stored = {
    epoch: cp.epoch,
    positions: cp.positions,
    objects: new Map(
      cp.objects.map((o) => [
        o.name,
        {
          fingerprint: o.fingerprint,
          parts: new Map(o.parts.map((p) => [p.stateId, p.delta.upserts.map((u) => u[1])])),
        },
      ]),
    ),
  };
  const restored = new Engine();
  restored.execute(DDL.join(';'));
  restored.loadCheckpoint(stored);
  assert.deepEqual(restored.tableRows('orders'), engine.tableRows('orders'));
  assert.deepEqual(restored.positions, at(0, 0, 0));

  const other = new Engine();
  other.execute(DDL.join(';').replace("format 'upsert')", "format 'debezium')"));
  throwsCode(() => other.loadCheckpoint(stored), 'STATE_ERROR');
});

test('rows typed by the source (typedInserts) apply as the same rows given as objects would', () => {
  const objects = [
    { order_id: 1, seller_id: 7, amount: 5 },
    { order_id: 2, seller_id: 7, amount: 10 },
    { order_id: 1, seller_id: 8, amount: 3 },
  ];
  const plain = new Engine();
  plain.execute(DDL.join(';'));
  plain.applyChanges('orders', { insert: objects }, { fromSource: true, positions: at(0, 0, 3) });
  const typedEngine = new Engine();
  typedEngine.execute(DDL.join(';'));
  const typing = typedEngine.sourceRowTyping('orders');
  assert.ok(typing !== null);
  assert.equal(typing.eventTime, null);
  typedEngine.applyChanges(
    'orders',
    {},
    { fromSource: true, positions: at(0, 0, 3), typedInserts: objects.map((o) => typing.typed(o)) },
  );
  // The last row of a key wins, as with objects.
  assert.deepEqual(typedEngine.tableRows('orders'), plain.tableRows('orders'));
  assert.deepEqual(typedEngine.viewSnapshot('seller_totals').rows, plain.viewSnapshot('seller_totals').rows);
  // A row that does not fit is refused by the typing, as the connector's check would say.
  throwsCode(() => typing.typed({ order_id: 3, seller_id: 'x', amount: 1 }), 'INVALID_VALUE');
  // Typed rows come from a connector only, and not together with object inserts.
  const row = typing.typed({ order_id: 9, seller_id: 1, amount: 1 });
  throwsCode(() => typedEngine.applyChanges('orders', {}, { typedInserts: [row] }), 'WRONG_OBJECT_KIND');
  throwsCode(
    () =>
      typedEngine.applyChanges(
        'orders',
        { insert: objects },
        { fromSource: true, positions: at(0, 3, 4), typedInserts: [row] },
      ),
    'INTERNAL_ERROR',
  );
});
