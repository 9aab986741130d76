// The peer: the canonical pipeline (seller_totals → total_histogram) built as a @tanstack/db-ivm
// (differential dataflow) graph. Each batch is one sendData + graph.run(). The histogram is
// materialised by folding the output multisets; seller_totals is the first reduce's state.
//
// Variants (--dbivm-variant):
//   reduce  (default) map → reduce(sum) → map(total → [bucket, 1]) → reduce(count) → output.
//           The histogram's input value is a constant 1, so a bucket's reduce state is a single
//           [1, multiplicity] entry and COUNT(*) is just that multiplicity: O(1) per touched bucket.
//   groupby groupBy(seller_id, {total: sum}) → groupBy(bucket, {sellers: count}) → output: the
//           library's SQL-ish operators, what a TanStack DB live query compiles to. Same reductions,
//           plus per-row key serialisation, structural identities and result objects: slower.
import { D2, MultiSet, groupBy, groupByOperators, map, output, reduce } from '@tanstack/db-ivm';
import type { MultiSetArray } from '@tanstack/db-ivm';
import type { Order } from './workload.ts';

const { sum, count } = groupByOperators;

export type DbIvmVariant = 'reduce' | 'groupby';

export interface DbIvmPipeline {
  readonly prepare: (rows: Order[]) => MultiSetArray<Order>;
  readonly apply: (batch: MultiSetArray<Order>) => void;
  readonly histogram: () => Map<number, number>;
}

export function buildDbIvm(variant: DbIvmVariant): DbIvmPipeline {
  const graph = new D2();
  const input = graph.newInput<Order>();
  // bucket → sellers. Every output record is a (bucket, count) pair with multiplicity ±1 and at any
  // time one live pair per bucket, so summing count × multiplicity gives the current count.
  const hist = new Map<number, number>();
  const fold = (bucket: number, sellers: number, m: number): void => {
    const next = (hist.get(bucket) ?? 0) + sellers * m;
    if (next === 0) hist.delete(bucket);
    else hist.set(bucket, next);
  };

  if (variant === 'reduce') {
    input.pipe(
      map((o: Order): [number, number] => [o.seller_id, o.amount]),
      reduce((values: [number, number][]) => {
        let total = 0;
        let rows = 0;
        for (const [amount, m] of values) {
          total += amount * m;
          rows += m;
        }
        return rows > 0 ? [[total, 1]] : [];
      }),
      map(([, total]: [number, number]): [number, number] => [Math.floor(total / 10), 1]),
      reduce((values: [number, number][]) => {
        let sellers = 0;
        for (const [, m] of values) sellers += m;
        return sellers > 0 ? [[sellers, 1]] : [];
      }),
      output((msg: MultiSet<[number, number]>) => {
        for (const [[bucket, sellers], m] of msg.getInner()) fold(bucket, sellers, m);
      }),
    );
  } else {
    input.pipe(
      groupBy((o: Order) => ({ seller_id: o.seller_id }), { total: sum((o: Order) => o.amount) }),
      map(([, v]) => v),
      groupBy((v) => ({ bucket: Math.floor(v.total / 10) }), { sellers: count() }),
      output((msg) => {
        for (const [[, v], m] of msg.getInner()) fold(v.bucket, v.sellers, m);
      }),
    );
  }
  graph.finalize();

  return {
    // The multiset is built before timing, as Sluice's Row arrays are.
    prepare: (rows) => rows.map((r): [Order, number] => [r, 1]),
    apply: (batch) => {
      input.sendData(new MultiSet(batch));
      graph.run();
    },
    histogram: () => new Map(hist),
  };
}
