// Durability across kill -9: a server child process is killed with SIGKILL while ingest requests are
// in flight; after a restart on the same data directory every acknowledged row is applied to every
// view, unacknowledged batches are all-or-nothing, epochs continue, the catalog is intact, and a
// subscriber resuming from its last epoch gets a gap-free, duplicate-free changelog.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ChildServer,
  FoldedView,
  type Message,
  WsClient,
  removeDir,
  request,
  sortedRows,
  spawnServer,
  sqlOk,
  tempDir,
  waitUntil,
} from './helpers.ts';

const DOUBLE_11 = `CREATE TABLE orders (order_id BIGINT NOT NULL, seller_id INTEGER NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (order_id));
CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)`;

interface Batch {
  readonly ids: number[];
  acked: boolean;
  epoch?: number;
}

test(
  'kill -9 mid-ingest: acknowledged writes survive, resume is gap-free across the restart',
  { timeout: 120_000 },
  async () => {
    const dir = tempDir();
    const clients: WsClient[] = [];
    let server: ChildServer | undefined;
    try {
      server = await spawnServer(dir);
      await sqlOk(server.base, DOUBLE_11);
      const hist = new WsClient(`${server.wsBase}/v1/views/total_histogram/subscribe`);
      clients.push(hist);
      await hist.waitFor((m) => m.type === 'snapshot_end');

      // Two concurrent writers, sequential each; the kill lands while requests are in flight.
      const batches: Batch[] = [];
      let nextId = 1;
      let stop = false;
      const base = server.base;
      const writer = async (w: number): Promise<void> => {
        for (let i = 0; i < 2000 && !stop; i++) {
          const ids = Array.from({ length: 20 }, () => nextId++);
          const batch: Batch = { ids, acked: false };
          batches.push(batch);
          const rows = ids.map((id) => ({
            order_id: id,
            seller_id: (id * 7 + w) % 50,
            amount: 1 + (id % 37),
          }));
          try {
            const r = await request(base, 'POST', '/v1/tables/orders/rows', rows);
            if (r.status !== 200) throw new Error(`ingest failed: ${r.text}`);
            batch.acked = true;
            batch.epoch = r.body.epoch as number;
          } catch (error) {
            if (stop) return; // the server died under this request: not acknowledged
            throw error;
          }
        }
      };
      const writers = [writer(0), writer(1)];
      await waitUntil(() => batches.filter((b) => b.acked).length >= 60, 60_000, '60 acknowledged batches');
      server.child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await server.exited;
      await hist.waitClosed();
      const acked = batches.filter((b) => b.acked);
      const lastAckedEpoch = Math.max(...acked.map((b) => b.epoch ?? 0));

      // The subscriber's position: the last epoch it fully received.
      const seen = hist.messages.filter(
        (m) => m.type === 'changes' || m.type === 'progress' || m.type === 'snapshot_end',
      );
      const lastSeen = Math.max(...seen.map((m) => m.epoch as number));
      const snapshotEpoch = hist.of('subscribed')[0]?.epoch as number;

      server = await spawnServer(dir);
      // Every acknowledged row is there; every batch is all-or-nothing.
      const present = new Set<number>();
      const sel = await sqlOk(server.base, 'SELECT order_id FROM orders');
      for (const row of (sel.body.results as { rows: { order_id: number }[] }[])[0]?.rows ?? [])
        present.add(row.order_id);
      for (const b of batches) {
        const n = b.ids.filter((id) => present.has(id)).length;
        if (b.acked) assert.equal(n, b.ids.length, `acknowledged batch at epoch ${b.epoch} is complete`);
        else assert.ok(n === 0 || n === b.ids.length, 'an unacknowledged batch is all or nothing');
      }
      const ready = await request(server.base, 'GET', '/readyz');
      assert.ok((ready.body.epoch as number) >= lastAckedEpoch, 'epochs never go back');
      assert.ok(lastSeen <= (ready.body.epoch as number));
      const views = await request(server.base, 'GET', '/v1/views');
      assert.deepEqual(
        (views.body.views as { name: string }[]).map((v) => v.name),
        ['seller_totals', 'total_histogram'],
      );

      // Resume from the last epoch seen before the kill, keep ingesting, and fold everything.
      const resumed = new WsClient(
        `${server.wsBase}/v1/views/total_histogram/subscribe?resumeFrom=${lastSeen}`,
      );
      clients.push(resumed);
      await resumed.waitFor((m) => m.type === 'subscribed');
      let finalEpoch = 0;
      for (let i = 0; i < 10; i++) {
        const rows = Array.from({ length: 20 }, () => {
          const id = nextId++;
          return { order_id: id, seller_id: id % 50, amount: 3 };
        });
        const r = await request(server.base, 'POST', '/v1/tables/orders/rows', rows);
        assert.equal(r.status, 200);
        finalEpoch = r.body.epoch as number;
      }
      assert.ok(finalEpoch > (ready.body.epoch as number), 'epochs continue after the restart');
      await resumed.waitEpoch(finalEpoch);
      const before = hist.messages.filter((m) => m.type !== 'changes' || (m.epoch as number) <= lastSeen);
      const afterChanges = resumed.of('changes');
      const epochs = afterChanges.map((m) => m.epoch as number);
      assert.ok(
        epochs.every((e, i) => e > lastSeen && (i === 0 || e > (epochs[i - 1] as number))),
        'no duplicate, in order',
      );
      const folded = new FoldedView();
      for (const m of [...before, ...afterChanges]) folded.apply(m as Message);
      const rest = await request(server.base, 'GET', '/v1/views/total_histogram/rows');
      assert.equal(rest.body.epoch, finalEpoch);
      assert.deepEqual(
        folded.sorted(),
        sortedRows(rest.body.rows as Record<string, unknown>[]),
        'no gap: the folded changelog equals the view',
      );

      // Replay reproduces the changelog exactly: resuming from the snapshot epoch gives the same
      // messages the first subscriber received live before the kill.
      const again = new WsClient(
        `${server.wsBase}/v1/views/total_histogram/subscribe?resumeFrom=${snapshotEpoch}`,
      );
      clients.push(again);
      await again.waitEpoch(finalEpoch);
      const live = hist.of('changes').filter((m) => (m.epoch as number) <= lastSeen);
      const stored = again.of('changes').filter((m) => (m.epoch as number) <= lastSeen);
      assert.deepEqual(stored, live);

      // Graceful stop: SIGTERM closes subscribers with an error first, then exits 0.
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
      await resumed.waitClosed();
      assert.equal(resumed.of('error').at(-1)?.code, 'UNAVAILABLE');
      server = undefined;
    } finally {
      for (const c of clients) c.close();
      if (server !== undefined) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
      removeDir(dir);
    }
  },
);
