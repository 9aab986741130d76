// The plain-JavaScript reference for the canonical pipeline: what a developer would write by hand
// with `Map`s and row objects, no engine. It keeps what Sluice keeps for the same SQL (the orders
// as row objects by order id, each seller's total, the histogram) and maintains the histogram
// incrementally, row by row: a seller's old bucket loses one seller, its new bucket gains one.
// It is the yardstick the table calls "plain JS Map + row objects".
import type { Order } from './workload.ts';

export interface PlainMapPipeline {
  readonly entry: string;
  readonly prepare: (rows: Order[]) => Order[];
  readonly apply: (batch: unknown) => void;
  readonly histogram: () => Map<number, number>;
  readonly groups: () => number;
  readonly describeState: () => string;
  /** Drops the two derived maps, keeping the orders: what that frees is the "views'" state. */
  readonly dropViews: () => void;
}

export function buildPlainMap(): PlainMapPipeline {
  const orders = new Map<number, Order>();
  let totals = new Map<number, number>();
  let histogram = new Map<number, number>();
  const bump = (bucket: number, by: number): void => {
    const n = (histogram.get(bucket) ?? 0) + by;
    if (n === 0) histogram.delete(bucket);
    else histogram.set(bucket, n);
  };
  return {
    entry: 'plain Map',
    // Like Sluice's, the input rows are the caller's objects; the table keeps a copy of each.
    prepare: (rows) => rows,
    apply: (batch) => {
      for (const r of batch as Order[]) {
        orders.set(r.order_id, { order_id: r.order_id, seller_id: r.seller_id, amount: r.amount });
        const old = totals.get(r.seller_id);
        const total = (old ?? 0) + r.amount;
        totals.set(r.seller_id, total);
        const before = old === undefined ? null : Math.floor(old / 10);
        const after = Math.floor(total / 10);
        if (before === after) continue;
        if (before !== null) bump(before, -1);
        bump(after, 1);
      }
    },
    histogram: () => new Map(histogram),
    groups: () => totals.size,
    describeState: () =>
      `orders: ${orders.size.toLocaleString('en-US')} rows; totals: ${totals.size.toLocaleString('en-US')}; ` +
      `histogram: ${histogram.size.toLocaleString('en-US')} buckets`,
    dropViews: () => {
      totals = new Map();
      histogram = new Map();
    },
  };
}
