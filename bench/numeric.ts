// Exact NUMERIC on the canonical pipeline: orders → seller_totals (SUM and AVG per seller) →
// total_histogram (sellers per FLOOR(total / 10)), once with integer amounts and once with
// NUMERIC(12,2) amounts (the same values as cents and as JSON numbers with two decimals), in the
// same process, alternating, so both see the same machine load. Figures are events per CPU-second
// of the timed loop (ingest coercion included), the median of the paired rounds.
//
//   npm run bench -- --numeric [--events N] [--rounds N]
import { availableParallelism, loadavg } from 'node:os';
import type { Row } from '../src/common/types.ts';
import { generateRows } from './workload.ts';

const schema = (amount: string): string => `
CREATE TABLE orders (order_id BIGINT, seller_id INT NOT NULL, amount ${amount} NOT NULL);
CREATE MATERIALIZED VIEW seller_totals AS
  SELECT seller_id, SUM(amount) AS total, AVG(amount) AS mean FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS
  SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10);
`;

const BATCH = 10_000;

async function runOnce(kind: 'integer' | 'numeric', rows: readonly Row[]): Promise<number> {
  const { Engine } = await import('../src/index.ts');
  const engine = new Engine();
  engine.execute(schema(kind === 'integer' ? 'INT' : 'NUMERIC(12,2)'));
  const batches: Row[][] = [];
  for (let i = 0; i < rows.length; i += BATCH) batches.push(rows.slice(i, i + BATCH) as Row[]);
  const cpu0 = process.cpuUsage();
  for (const b of batches) engine.applyChanges('orders', { insert: b });
  const cpu = process.cpuUsage(cpu0);
  if (engine.viewSnapshot('seller_totals').rows.length === 0) throw new Error('bench: no groups');
  return rows.length / ((cpu.user + cpu.system) / 1e6);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

export async function runNumericBench(argv: readonly string[]): Promise<number> {
  const arg = (name: string, fallback: number): number => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const events = arg('--events', 500_000);
  const rounds = arg('--rounds', 5);
  const orders = generateRows({ dist: 'uniform', sellers: 10_000, events, seed: 42, zipfS: 1.1 });
  // Amounts in cents 1.00 … 100.99: the integer run sums the cents, the numeric one the decimals.
  const cents: Row[] = orders.map((o, i) => ({
    order_id: o.order_id,
    seller_id: o.seller_id,
    amount: o.amount * 100 + (i % 100),
  }));
  const money: Row[] = cents.map((r) => ({ ...r, amount: (r.amount as number) / 100 }));
  await runOnce('integer', cents.slice(0, 50_000)); // warm-up, both paths
  await runOnce('numeric', money.slice(0, 50_000));
  const ints: number[] = [];
  const nums: number[] = [];
  for (let r = 0; r < rounds; r++) {
    ints.push(await runOnce('integer', cents));
    nums.push(await runOnce('numeric', money));
  }
  const i = median(ints);
  const n = median(nums);
  const ratio = i / n;
  const load = loadavg()[0] as number;
  console.log(
    `integer  ${Math.round(i).toLocaleString('en-US')} ev/cpu-s\nnumeric  ${Math.round(n).toLocaleString('en-US')} ev/cpu-s\n` +
      `numeric costs ${ratio.toFixed(2)}× the integer version (target ≤ 2×); load ${load.toFixed(1)} on ${availableParallelism()} cores`,
  );
  console.log(
    `RESULT ${JSON.stringify({ bench: 'numeric', events, rounds, integer_ev_per_cpu_s: Math.round(i), numeric_ev_per_cpu_s: Math.round(n), ratio: Number(ratio.toFixed(3)), load })}`,
  );
  return ratio <= 2 ? 0 : 1;
}
