// A CREATE MATERIALIZED VIEW whose journal write fails is not created, and nothing it built stays:
// the shared arrangements its joins took and, with workers, its partitions in the threads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from './engine.ts';
import type { EngineJournal, JournalBatch, SourcePositions } from './api.ts';

class FailingDdlJournal implements EngineJournal {
  failDdl = false;
  private offset = 0;
  appendTick(): void {}
  appendBatch(entry: JournalBatch): SourcePositions {
    return { [entry.table]: { offset: ++this.offset } };
  }
  appendDdl(): void {
    if (this.failDdl) throw new Error('disk full');
  }
}

const DDL = [
  'CREATE TABLE sellers (seller_id integer NOT NULL, region text, PRIMARY KEY (seller_id))',
  'CREATE TABLE orders (order_id integer NOT NULL, seller_id integer, amount integer, PRIMARY KEY (order_id))',
];
const JOIN_VIEW = (name: string): string =>
  `CREATE MATERIALIZED VIEW ${name} AS SELECT s.region, SUM(o.amount) AS total
   FROM orders o JOIN sellers s ON o.seller_id = s.seller_id GROUP BY s.region`;

for (const workers of [1, 2]) {
  test(`a view whose journal write fails leaves no shared arrangement user behind (workers ${String(workers)})`, () => {
    const engine = new Engine({ workers });
    try {
      const journal = new FailingDdlJournal();
      engine.setJournal(journal);
      engine.execute(DDL.join(';'));
      engine.applyChanges('sellers', { insert: [{ seller_id: 1, region: 'eu' }] });
      engine.applyChanges('orders', { insert: [{ order_id: 1, seller_id: 1, amount: 5 }] });
      engine.execute(JOIN_VIEW('first'));
      const users = (): number => engine.sharedArrangements().reduce((n, a) => n + a.users, 0);
      const before = users();
      assert.ok(before > 0, 'the join probes a shared arrangement');
      journal.failDdl = true;
      assert.throws(() => engine.execute(JOIN_VIEW('second')), /disk full/);
      assert.equal(users(), before, 'the failed view gave its shared arrangements back');
      assert.throws(() => engine.viewPlan('second'));
      journal.failDdl = false;
      engine.execute(JOIN_VIEW('second'));
      assert.equal(users(), 2 * before);
      engine.applyChanges('orders', { insert: [{ order_id: 2, seller_id: 1, amount: 7 }] });
      assert.deepEqual(engine.viewSnapshot('second').rows, [{ region: 'eu', total: 12 }]);
    } finally {
      engine.close();
    }
  });
}
