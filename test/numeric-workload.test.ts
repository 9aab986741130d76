// Random workloads that sum and average NUMERIC(12,2) money under inserts, updates and deletes,
// checked after every batch against exact arithmetic done here with BigInt (cents); and state
// written when NUMERIC was a double (literal old-format entries) loading as exact decimals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/index.ts';
import { Decimal } from '../src/common/decimal.ts';
import { T, type Row, type Value } from '../src/common/types.ts';
import { TableStore } from '../src/exec/table-store.ts';
import { decodeBatchPayload } from '../src/storage/table-log.ts';
import { mulberry32 } from './support/checkpoint-workload.ts';

interface Entry {
  readonly g: number;
  readonly cents: bigint;
}

/** Cents as NUMERIC(12,2) text: '-12.05'. */
function money(cents: bigint): string {
  const neg = cents < 0n;
  const a = (neg ? -cents : cents).toString().padStart(3, '0');
  return `${neg ? '-' : ''}${a.slice(0, -2)}.${a.slice(-2)}`;
}

function check(e: Engine, model: Map<number, Entry>, seed: number, step: number): void {
  const groups = new Map<number, { sum: bigint; n: number }>();
  for (const x of model.values()) {
    const s = groups.get(x.g) ?? { sum: 0n, n: 0 };
    s.sum += x.cents;
    s.n += 1;
    groups.set(x.g, s);
  }
  const where = `seed ${seed}, batch ${step}`;
  const rows = e.viewSnapshot('per_group').rows;
  assert.equal(rows.length, groups.size, `groups (${where})`);
  for (const r of rows) {
    const want = groups.get(r.g as number);
    assert.ok(want !== undefined, `group ${String(r.g)} (${where})`);
    const sum = r.total as Value;
    assert.ok(sum instanceof Decimal);
    assert.equal(sum.toString(), money(want.sum), `SUM of group ${String(r.g)} (${where})`);
    assert.equal(r.n, want.n);
    // AVG = SUM / COUNT rounded half away from zero at its scale (≥ 16 significant digits):
    // |avg × n − sum| ≤ n/2 units of avg's last place, and it shows at least the cents.
    const avg = r.mean as Decimal;
    assert.ok(avg.scale >= 2, `AVG scale (${where})`);
    const err = avg.big() * BigInt(want.n) - want.sum * 10n ** BigInt(avg.scale - 2);
    assert.ok(
      2n * (err < 0n ? -err : err) <= BigInt(want.n),
      `AVG of group ${String(r.g)} = ${avg.toString()} (${where})`,
    );
  }
  const all = e.viewSnapshot('overall').rows[0] as Row;
  const total = [...model.values()].reduce((s, x) => s + x.cents, 0n);
  assert.equal(
    model.size === 0 ? all.total : String(all.total),
    model.size === 0 ? null : money(total),
    `global SUM (${where})`,
  );
}

for (const seed of [1, 2, 3]) {
  test(`random NUMERIC(12,2) inserts, updates and deletes: exact SUM/AVG after every batch (seed ${seed})`, () => {
    const rnd = mulberry32(seed);
    const e = new Engine();
    e.execute(`CREATE TABLE ledger (id INT PRIMARY KEY, g INT NOT NULL, amount NUMERIC(12,2) NOT NULL);
      CREATE MATERIALIZED VIEW per_group AS SELECT g, SUM(amount) AS total, AVG(amount) AS mean, COUNT(*) AS n FROM ledger GROUP BY g;
      CREATE MATERIALIZED VIEW overall AS SELECT SUM(amount) AS total FROM ledger`);
    const model = new Map<number, Entry>();
    let nextId = 1;
    // Up to 10^10 − 1 cents either side: sums pass 2^53 cents, so the exact path is exercised.
    const cents = (): bigint => {
      const big = rnd() < 0.2;
      const magnitude = big
        ? BigInt(Math.floor(rnd() * 1e10)) * 100n + BigInt(Math.floor(rnd() * 100))
        : BigInt(Math.floor(rnd() * 100_000));
      return rnd() < 0.3 ? -magnitude : magnitude;
    };
    for (let step = 0; step < 60; step++) {
      const insert: Row[] = [];
      const del: Row[] = [];
      const touched = new Set<number>();
      for (let k = 0; k < 1 + Math.floor(rnd() * 40); k++) {
        const ids = [...model.keys()].filter((id) => !touched.has(id));
        const r = rnd();
        if (r < 0.5 || ids.length === 0) {
          const id = nextId++;
          const x = { g: Math.floor(rnd() * 6), cents: cents() };
          model.set(id, x);
          touched.add(id);
          // half as strings with their scale, half as JSON numbers (exact below 2^53 cents/100)
          insert.push({
            id,
            g: x.g,
            amount: rnd() < 0.5 || x.cents > 2n ** 50n ? money(x.cents) : Number(money(x.cents)),
          });
        } else {
          const id = ids[Math.floor(rnd() * ids.length)] as number;
          touched.add(id);
          if (r < 0.75) {
            del.push({ id });
            model.delete(id);
          } else {
            const x = { g: Math.floor(rnd() * 6), cents: cents() };
            model.set(id, x);
            insert.push({ id, g: x.g, amount: money(x.cents) }); // an insert on the key replaces the row
          }
        }
      }
      e.applyChanges('ledger', { insert, delete: del });
      check(e, model, seed, step);
    }
  });
}

test('old state: a table checkpoint and a journal batch with numeric-as-double load as decimals of their shortest text', () => {
  const t = new TableStore({
    kind: 'table',
    name: 't',
    columns: [
      { name: 'id', type: T.int32, nullable: false },
      { name: 'v', type: { kind: 'numeric', precision: 12, scale: 2 }, nullable: true },
      { name: 'f', type: T.numeric, nullable: true },
    ],
    primaryKey: [0],
    sql: 'CREATE TABLE t (id INT PRIMARY KEY, v NUMERIC(12,2), f NUMERIC)',
  });
  // The entries a checkpoint wrote when NUMERIC was a double (rows under the key encoding).
  t.loadState([
    [1, 0.1, 0.30000000000000004],
    [2, 12.5, 3],
  ]);
  const rows = [...t.entries()].map(([row]) =>
    row.map((v) => (v instanceof Decimal ? `dec:${v.toString()}` : v)),
  );
  assert.deepEqual(rows, [
    [1, 'dec:0.10', 'dec:0.30000000000000004'],
    [2, 'dec:12.50', 'dec:3'],
  ]);
  t.trackChanges(true);
  const d = t.takeStateDelta(false);
  assert.equal(d.replaceAll, true, 'upgraded entries are rewritten whole (their key ids changed)');
  assert.equal(t.takeStateDelta(false).replaceAll, false, 'once');
  // A journal batch of that time: values as plain JSON numbers, coerced again on replay.
  const batch = decodeBatchPayload('{"k":["id","v","f"],"i":[3,0.1,2.5],"d":[]}');
  t.apply(t.prepare(batch));
  const three = t.rowWithKey([3]);
  assert.ok(three !== undefined && three !== null);
  assert.equal(String(three[1]), '0.10', 'a NUMERIC(12,2) value takes its scale');
  assert.equal(String(three[2]), '2.5');
});
