// The randomized differential suite run through the HTTP API: seeded random tables, views and batches
// are sent over REST; after every epoch every view read over REST and every view folded from its
// WebSocket changelog equal SQLite running the same SELECT over the same rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { viewDdl } from '../support/differential.ts';
import { Rng, TableModel, describeBatch, randomBatch, randomBatchSize } from '../support/random-workload.ts';
import { randomScenario } from '../support/random-views.ts';
import { SqliteOracle, canonicalRows, createTableSql, multisetDiff } from '../support/sqlite-oracle.ts';
import type { ColumnInfo } from '../../src/common/types.ts';
import {
  FoldedView,
  WsClient,
  request,
  sqlOk,
  startServer,
  viewRowsAtOneEpoch,
  waitUntil,
} from './helpers.ts';

const SEEDS = (process.env.SLUICE_SEED ?? '7,1234,99991').split(',').map(Number);
const EPOCHS = Number(process.env.SLUICE_EPOCHS ?? 30);

/** JSON with bigints as bare integer literals, so the exact-parse path is exercised. */
function exactJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `__big__${v}` : v)).replace(
    /"__big__(-?\d+)"/g,
    '$1',
  );
}

/** Wire rows back to engine values: integer columns sent as strings (beyond 2^53) become bigints. */
function fromWire(
  columns: readonly ColumnInfo[],
  rows: readonly Record<string, unknown>[],
): Record<string, unknown>[] {
  const ints = columns
    .filter((c) => c.type === 'smallint' || c.type === 'integer' || c.type === 'bigint')
    .map((c) => c.name);
  return rows.map((row) => {
    const out = { ...row };
    for (const name of ints) if (typeof out[name] === 'string') out[name] = BigInt(out[name] as string);
    return out;
  });
}

function foldedRows(folded: FoldedView): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [key, n] of folded.rows) {
    const row = Object.fromEntries(JSON.parse(key) as [string, unknown][]);
    for (let i = 0; i < n; i++) out.push(row);
  }
  return out;
}

for (const seed of SEEDS) {
  test(
    `HTTP differential, seed ${seed}: REST reads and folded changelogs equal SQLite after every epoch`,
    { timeout: 120_000 },
    async () => {
      const rng = new Rng(seed);
      const scenario = randomScenario(rng);
      const server = await startServer({ heartbeatMs: 50 });
      const oracle = new SqliteOracle();
      const subs = new Map<string, WsClient>();
      let last = '(none)';
      const context = (epoch: number): string =>
        `seed ${seed}, epoch ${epoch}; replay: SLUICE_SEED=${seed} node --import tsx --test test/server/differential.test.ts\n` +
        `${scenario.tables.map((t) => createTableSql(t)).join(';\n')};\n${scenario.views.map((v) => viewDdl(v)).join(';\n')}\nlast ${last}`;
      try {
        for (const t of scenario.tables) {
          await sqlOk(server.base, createTableSql(t));
          oracle.createTable(t);
        }
        const columns = new Map<string, ColumnInfo[]>();
        for (const v of scenario.views) {
          await sqlOk(server.base, viewDdl(v));
          oracle.createView(v.name, v.select);
          const info = await request(server.base, 'GET', `/v1/views/${v.name}`);
          columns.set(v.name, info.body.columns as ColumnInfo[]);
          const sub = new WsClient(`${server.wsBase}/v1/views/${v.name}/subscribe`);
          subs.set(v.name, sub);
          await sub.waitFor((m) => m.type === 'snapshot_end');
        }
        const models = scenario.tables.map((t) => new TableModel(t));
        for (let e = 1; e <= EPOCHS; e++) {
          const model = rng.pick(models);
          const batch = randomBatch(rng, model, randomBatchSize(rng, 0), 200);
          last = describeBatch(model.table.name, batch);
          const r = await request(
            server.base,
            'POST',
            `/v1/tables/${model.table.name}/rows`,
            undefined,
            exactJson(batch),
          );
          assert.equal(r.status, 200, `${r.text}\n${context(e)}`);
          oracle.apply(model.table.name, batch);
          model.apply(batch);
          const epoch = r.body.epoch as number;
          for (const v of scenario.views) {
            const cols = columns.get(v.name) as ColumnInfo[];
            const expected = oracle.canonicalView(v.name, cols);
            const rest = await viewRowsAtOneEpoch(server.base, v.name);
            assert.equal(rest.epoch, epoch, context(epoch));
            const actual = canonicalRows(cols, fromWire(cols, rest.rows));
            const diff = multisetDiff(expected, actual);
            assert.deepEqual(
              diff,
              { missing: [], extra: [] },
              `REST rows of ${v.name} differ from SQLite\n${context(epoch)}`,
            );
            const sub = subs.get(v.name) as WsClient;
            const fold = (): string[] => {
              const folded = new FoldedView();
              for (const m of sub.messages) folded.apply(m);
              return canonicalRows(cols, fromWire(cols, foldedRows(folded)));
            };
            try {
              await waitUntil(
                () =>
                  multisetDiff(expected, fold()).missing.length +
                    multisetDiff(expected, fold()).extra.length ===
                  0,
                10_000,
                `the changelog of ${v.name}`,
              );
            } catch {
              assert.deepEqual(
                multisetDiff(expected, fold()),
                { missing: [], extra: [] },
                `changelog of ${v.name} differs from SQLite\n${context(epoch)}`,
              );
            }
          }
        }
        // Every stream was one message per epoch that changed the view, in order, with no duplicate.
        for (const [name, sub] of subs) {
          const epochs = sub.of('changes').map((m) => m.epoch as number);
          assert.ok(
            epochs.every((x, i) => i === 0 || x > (epochs[i - 1] as number)),
            `${name}: epochs increase`,
          );
        }
      } finally {
        for (const sub of subs.values()) sub.close();
        oracle.close();
        await server.close();
      }
    },
  );
}
