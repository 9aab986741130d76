// The pipeline the in-process checkpoint benches load (checkpoint-take.ts, checkpoint-write.ts): the
// Double 11 views over a keyed `orders` table, and orders fed in batches with serial ids.

export const PIPELINE_SQL = `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)`;

interface OrdersEngine {
  applyChanges(table: string, changes: { insert: Record<string, number>[] }): unknown;
}

/** Inserts batches of orders with the next serial ids (10,000 sellers, amounts 1..100). */
export function orderFeeder(engine: OrdersEngine): (n: number) => void {
  let nextId = 1;
  return (n) => {
    const rows: Record<string, number>[] = [];
    for (let i = 0; i < n; i++) {
      const id = nextId++;
      rows.push({ order_id: id, seller_id: (id * 7919) % 10_000, amount: 1 + (id % 100) });
    }
    engine.applyChanges('orders', { insert: rows });
  };
}
