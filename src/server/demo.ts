// The "Double 11" demo from MISSION.md: an orders table, per-seller totals and a histogram of sellers
// by total, fed with generated orders (and a few refunds) at a steady rate through the same durable
// ingest path as POST /v1/tables/orders/rows.
import type { Row } from '../common/types.ts';
import type { SluiceRuntime } from './runtime.ts';
import type { RuntimeLogger } from './runtime/types.ts';

import { DEMO_SQL } from '../console/shared/demo-sql.ts';

export { DEMO_SQL };

export interface DemoOptions {
  /** Orders per second (default 50). */
  readonly rate: number;
  /** Batches per second the rate is split into (default 10). */
  readonly ticksPerSecond?: number;
  readonly sellers?: number;
  readonly logger: RuntimeLogger;
}

/** Creates the demo objects (if missing) and starts feeding orders; returns a stop function. */
export function startDemo(runtime: SluiceRuntime, options: DemoOptions): () => void {
  runtime.execute(DEMO_SQL);
  const ticks = Math.max(1, options.ticksPerSecond ?? 10);
  const sellers = Math.max(1, options.sellers ?? 200);
  const perTick = Math.max(1, Math.round(options.rate / ticks));
  // Order ids: milliseconds since 2020 × 1000 + a counter, unique across restarts of the demo.
  let next = (Date.now() - Date.UTC(2020, 0, 1)) * 1000;
  const recent: Row[] = [];
  let seed = 42;
  const random = (): number => {
    // xorshift32: deterministic and cheap; the demo does not need crypto randomness
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x1_0000_0000;
  };
  const timer = setInterval(
    () => {
      if (!runtime.ready) return;
      const insert: Row[] = [];
      for (let i = 0; i < perTick; i++) {
        const row = {
          order_id: next++,
          seller_id: 1 + Math.floor(random() * sellers),
          amount: 1 + Math.floor(random() * 60),
        };
        insert.push(row);
        recent.push(row);
      }
      // About 5% of orders are refunded a little later: their contribution is retracted.
      const refunds: Row[] = [];
      while (recent.length > 200) {
        const row = recent.shift() as Row;
        if (random() < 0.05) refunds.push({ order_id: row.order_id ?? null });
      }
      try {
        runtime.ingest('orders', { insert, ...(refunds.length > 0 ? { delete: refunds } : {}) });
      } catch (error) {
        options.logger.warn({ err: error }, 'demo batch rejected');
      }
    },
    Math.round(1000 / ticks),
  );
  timer.unref();
  options.logger.info(
    { rate: perTick * ticks, sellers },
    'demo: feeding orders into "orders"; watch total_histogram',
  );
  return () => clearInterval(timer);
}
