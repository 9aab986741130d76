// Sluice on the canonical pipeline, through the public Engine API. The engine module is imported
// dynamically so the db-ivm children (and the harness) run without loading it.
import type { Row } from '../src/common/types.ts';
import type { Order } from './workload.ts';
import { CANONICAL_DDL } from '../test/support/canonical-pipeline.ts';

/** The pipeline's DDL: the one the tests create. */
export const CANONICAL_SQL = CANONICAL_DDL;

export interface SluicePipeline {
  readonly entry: string;
  readonly prepare: (rows: Order[]) => unknown;
  readonly apply: (batch: unknown) => void;
  readonly histogram: () => Map<number, number>;
  readonly groups: () => number;
  /** The engine's own account of what it keeps (rows per table, estimated state bytes per view). */
  readonly describeState: () => string;
  readonly dropViews: () => void;
  readonly close: () => void;
}

function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') return Number(v);
  throw new Error(`bench: unexpected value ${String(v)} in a view row`);
}

/** `workers`: the engine's worker threads for partitioned Reduces (src/exec/workers; 1: none). */
export async function buildSluice(workers = 1): Promise<SluicePipeline> {
  const { Engine } = await import('../src/index.ts');
  const engine = new Engine({ workers });
  engine.execute(CANONICAL_SQL); // throws on error
  return {
    entry: 'applyChanges',
    prepare: (rows) => rows as unknown as Row[],
    apply: (batch) => {
      engine.applyChanges('orders', { insert: batch as Row[] });
    },
    histogram: () => {
      const h = new Map<number, number>();
      for (const r of engine.viewSnapshot('total_histogram').rows) h.set(num(r.bucket), num(r.sellers));
      return h;
    },
    groups: () => engine.viewSnapshot('seller_totals').rows.length,
    close: () => engine.close(),
    dropViews: () => {
      engine.execute('DROP MATERIALIZED VIEW total_histogram; DROP MATERIALIZED VIEW seller_totals');
    },
    describeState: () => {
      const c = engine.catalog();
      return [
        ...c.tables.map((t) => `table ${t.name}: ${t.rowCount.toLocaleString('en-US')} rows`),
        ...c.views.map(
          (v) =>
            `view ${v.name}: ${v.rowCount.toLocaleString('en-US')} rows, ~${v.stateBytes.toLocaleString('en-US')} B state`,
        ),
      ].join('; ');
    },
  };
}
