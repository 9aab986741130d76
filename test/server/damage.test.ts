// Damaged data files, with real files and real server processes: a corrupted checkpoint entry makes
// the server fall back to replaying the whole journal (and say so); a corrupted journal entry or a
// garbled/truncated data file refuses the start with a message naming the damage (state is never
// served from input that cannot be read back); a full disk during a checkpoint is counted, keeps the
// previous checkpoint whole, and the next checkpoint once space is back succeeds.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { closeSync, cpSync, openSync, readFileSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Engine } from '../../src/index.ts';
import { buildApp } from '../../src/server/app.ts';
import type { Row } from '../../src/common/types.ts';
import { mulberry32 } from '../support/checkpoint-workload.ts';
import { type CrashableServer, killHard, metricValue, spawnCrashable } from '../support/crash-harness.ts';
import { canonicalRows } from '../support/sqlite-oracle.ts';
import { WsClient, removeDir, request, sqlOk, tempDir, viewRowsAtOneEpoch } from './helpers.ts';

const DDL = [
  'CREATE TABLE orders (id BIGINT NOT NULL, seller_id INTEGER NOT NULL, tag TEXT, amount INTEGER NOT NULL, PRIMARY KEY (id))',
  'CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, COUNT(*) AS n, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi, COUNT(DISTINCT tag) AS tags FROM orders GROUP BY seller_id',
  'CREATE MATERIALIZED VIEW total_hist AS SELECT FLOOR(total / 100) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 100)',
  'CREATE MATERIALIZED VIEW big AS SELECT id, amount FROM orders WHERE amount > 90',
];
const VIEWS = ['seller_totals', 'total_hist', 'big'];

/** Seeded batches: inserts, updates (a live key again) and deletes by key. */
function batches(seed: number, count: number, size: number, groups = 50): { insert: Row[]; delete: Row[] }[] {
  const rnd = mulberry32(seed);
  const live: number[] = [];
  let next = 1;
  const out: { insert: Row[]; delete: Row[] }[] = [];
  for (let b = 0; b < count; b++) {
    const insert: Row[] = [];
    const del: Row[] = [];
    const touched = new Set<number>();
    for (let i = 0; i < size; i++) {
      const r = rnd();
      if (r < 0.15 && live.length > 0) {
        const id = live.splice(Math.floor(rnd() * live.length), 1)[0] as number;
        if (touched.has(id)) continue;
        touched.add(id);
        del.push({ id });
      } else {
        const id = r < 0.3 && live.length > 0 ? (live[Math.floor(rnd() * live.length)] as number) : next++;
        if (touched.has(id)) continue;
        touched.add(id);
        if (!live.includes(id)) live.push(id);
        insert.push({
          id,
          seller_id: Math.floor(rnd() * groups),
          tag: rnd() < 0.1 ? null : `t${Math.floor(rnd() * 4)}`,
          amount: 1 + Math.floor(rnd() * 100),
        });
      }
    }
    out.push({ insert, delete: del });
  }
  return out;
}

function reference(steps: { insert: Row[]; delete: Row[] }[]): Engine {
  const engine = new Engine();
  engine.execute(DDL.join(';\n'));
  for (const s of steps) engine.applyChanges('orders', s);
  return engine;
}

async function assertViewsEqual(base: string, ref: Engine): Promise<void> {
  for (const view of VIEWS) {
    const snap = ref.viewSnapshot(view);
    const rest = await viewRowsAtOneEpoch(base, view);
    assert.equal(rest.epoch, ref.epoch, `${view} epoch`);
    assert.deepEqual(
      canonicalRows(snap.columns, rest.rows as Row[]),
      canonicalRows(snap.columns, snap.rows),
      `${view} equals the reference`,
    );
  }
}

const live: CrashableServer[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of live) await killHard(s);
  for (const d of dirs) removeDir(d);
});

async function start(dir: string, args: string[] = []): Promise<CrashableServer> {
  const outcome = await spawnCrashable(dir, { args });
  if (outcome.kind !== 'listening') throw new Error(`the server did not start:\n${outcome.output}`);
  live.push(outcome.server);
  return outcome.server;
}

async function stop(server: CrashableServer): Promise<void> {
  server.child.kill('SIGTERM');
  const exit = await server.exited;
  assert.equal(exit.code, 0, server.output());
}

/** A data directory holding the DDL and `steps`, stopped cleanly (so it holds a checkpoint). */
async function prepared(steps: { insert: Row[]; delete: Row[] }[], args: string[] = []): Promise<string> {
  const dir = tempDir('sluice-damage-');
  dirs.push(dir);
  const server = await start(dir, args);
  await sqlOk(server.base, DDL.join(';\n'));
  for (const s of steps) {
    const r = await request(server.base, 'POST', '/v1/tables/orders/rows', s);
    assert.equal(r.status, 200, r.text);
  }
  await stop(server);
  return dir;
}

function withDb<T>(dir: string, call: (db: Database.Database) => T, file = 'sluice.db'): T {
  const db = new Database(join(dir, file));
  try {
    return call(db);
  } finally {
    db.close();
  }
}

test('a corrupted checkpoint entry: the server logs the fallback and replays the whole journal', async () => {
  const steps = batches(11, 40, 20);
  const dir = await prepared(steps);
  const entries = withDb(
    dir,
    (db) => (db.prepare('SELECT COUNT(*) AS n FROM journal').get() as { n: number }).n,
  );
  const checkpoints = withDb(
    dir,
    (db) => {
      const row = db
        .prepare('SELECT state_id, entry_key FROM checkpoint_state ORDER BY state_id, entry_key LIMIT 1')
        .get() as {
        state_id: string;
        entry_key: string;
      };
      assert.ok(row !== undefined, 'the clean stop wrote a checkpoint');
      const changed = db
        .prepare("UPDATE checkpoint_state SET value = value || ' ' WHERE state_id = ? AND entry_key = ?")
        .run(row.state_id, row.entry_key).changes;
      assert.equal(changed, 1);
      return (db.prepare('SELECT COUNT(*) AS n FROM checkpoint_meta').get() as { n: number }).n;
    },
    'checkpoint.db',
  );
  assert.equal(checkpoints, 1);
  assert.equal(entries, DDL.length + steps.length);
  const server = await start(dir);
  assert.match(server.output(), /the checkpoint is damaged; recovering from the whole journal instead/);
  const metrics = await request(server.base, 'GET', '/metrics');
  assert.equal(metricValue(metrics.text, 'sluice_recovery_replayed_entries'), entries, 'the whole journal');
  await assertViewsEqual(server.base, reference(steps));
  // It keeps working, and its next clean stop writes a good checkpoint again.
  const more = batches(12, 5, 10);
  for (const s of more)
    assert.equal((await request(server.base, 'POST', '/v1/tables/orders/rows', s)).status, 200);
  await stop(server);
  const again = await start(dir);
  assert.doesNotMatch(again.output(), /damaged/);
  const m2 = await request(again.base, 'GET', '/metrics');
  assert.equal(metricValue(m2.text, 'sluice_recovery_replayed_entries'), 0);
  await stop(again);
});

test('a corrupted journal entry: the start is refused, naming the journal offset', async () => {
  const steps = batches(21, 20, 10);
  // No checkpoints: recovery reads every entry.
  const dir = await prepared(steps, ['--checkpoint-interval-ms', '0']);
  const offset = withDb(dir, (db) => {
    const row = db
      .prepare(
        "SELECT log_offset, payload FROM journal WHERE kind = 'batch' ORDER BY log_offset LIMIT 1 OFFSET 7",
      )
      .get() as { log_offset: number; payload: string };
    const payload = row.payload.replace(/\d/, (d) => String((Number(d) + 1) % 10));
    assert.notEqual(payload, row.payload);
    db.prepare('UPDATE journal SET payload = ? WHERE log_offset = ?').run(payload, row.log_offset);
    return row.log_offset;
  });
  const outcome = await spawnCrashable(dir, { args: ['--checkpoint-interval-ms', '0'] });
  assert.equal(outcome.kind, 'exited', 'the server must not serve');
  if (outcome.kind !== 'exited') return;
  assert.notEqual(outcome.code, 0);
  assert.match(outcome.output, new RegExp(`journal entry at offset ${offset} is damaged`));
  // With checkpoints on, the same damage before the checkpoint would be skipped; after it, refused
  // too: damage the last entry (always in the replayed tail of a kill) and start with defaults.
});

test('a corrupted journal entry in the tail after a checkpoint: the start is refused', async () => {
  const steps = batches(22, 12, 10);
  // A clean stop writes the checkpoint at epoch 10; no other is due before the kill.
  const dir = await prepared(steps.slice(0, 10));
  const server = await start(dir, ['--checkpoint-interval-ms', '600000', '--checkpoint-epochs', '1000000']);
  for (const s of steps.slice(10)) {
    assert.equal((await request(server.base, 'POST', '/v1/tables/orders/rows', s)).status, 200);
  }
  // A kill leaves the entries after the last checkpoint to replay.
  await killHard(server);
  const ckpt = withDb(
    dir,
    (db) => db.prepare('SELECT journal_offset FROM checkpoint_meta').get() as { journal_offset: number },
    'checkpoint.db',
  );
  const offset = withDb(dir, (db) => {
    const row = db.prepare('SELECT MAX(log_offset) AS o FROM journal').get() as { o: number };
    assert.ok(row.o > ckpt.journal_offset, 'entries after the checkpoint');
    db.prepare("UPDATE journal SET payload = payload || ' ' WHERE log_offset = ?").run(row.o);
    return row.o;
  });
  const outcome = await spawnCrashable(dir);
  assert.equal(outcome.kind, 'exited', 'the server must not serve');
  if (outcome.kind !== 'exited') return;
  assert.notEqual(outcome.code, 0);
  assert.match(outcome.output, new RegExp(`journal entry at offset ${offset} is damaged`));
});

test('a garbled or truncated data file: the start is refused with a clear message', async () => {
  const steps = batches(31, 60, 50);
  const dir = await prepared(steps);
  const file = join(dir, 'sluice.db');
  const clean = readFileSync(file);
  const pageSize = withDb(dir, (db) => db.pragma('page_size', { simple: true }) as number);
  const pages = Math.floor(clean.length / pageSize);
  assert.ok(pages >= 20, `a data file of ${pages} pages`);
  // Garbage over a few whole pages in the middle.
  const rnd = mulberry32(31);
  const fd = openSync(file, 'r+');
  try {
    for (let p = Math.floor(pages * 0.4); p < Math.floor(pages * 0.4) + 3; p++) {
      const junk = Buffer.alloc(pageSize);
      for (let i = 0; i < pageSize; i++) junk[i] = Math.floor(rnd() * 256);
      writeSync(fd, junk, 0, pageSize, p * pageSize);
    }
  } finally {
    closeSync(fd);
  }
  let outcome = await spawnCrashable(dir);
  assert.equal(outcome.kind, 'exited', 'the server must not serve a garbled file');
  if (outcome.kind !== 'exited') return;
  assert.notEqual(outcome.code, 0);
  assert.match(outcome.output, /sluice: cannot start: (data file ".*" is damaged|cannot open data file)/);
  assert.doesNotMatch(outcome.output, /listening on/);

  // Truncated to half its pages.
  const fd2 = openSync(file, 'r+');
  writeSync(fd2, clean, 0, clean.length, 0);
  closeSync(fd2);
  truncateSync(file, Math.floor(pages / 2) * pageSize);
  assert.ok(statSync(file).size < clean.length);
  outcome = await spawnCrashable(dir);
  assert.equal(outcome.kind, 'exited', 'the server must not serve a truncated file');
  if (outcome.kind !== 'exited') return;
  assert.notEqual(outcome.code, 0);
  assert.match(outcome.output, /sluice: cannot start: (data file ".*" is damaged|cannot open data file)/);
});

test('disk full during a checkpoint: counted, the previous checkpoint stays, the next one succeeds', async (t) => {
  const dir = tempDir('sluice-damage-');
  dirs.push(dir);
  const options = { dataDir: dir, checkpoint: { intervalMs: 3_600_000, epochs: 1_000_000 } };
  let app = await buildApp(options);
  try {
    let runtime = app.sluice;
    runtime.executeScript(DDL.join(';\n'));
    // Many groups, so an incremental checkpoint after touching most of them needs many pages.
    const steps = batches(41, 30, 400, 5000);
    for (const s of steps.slice(0, 10)) runtime.ingest('orders', s);
    const first = runtime.checkpoint();
    assert.ok(first !== null, 'the first checkpoint');
    for (const s of steps.slice(10, 29)) runtime.ingest('orders', s);
    // Checkpoints have a file of their own: fill that one.
    const db = runtime.checkpointFile.db;
    const pageCount = db.pragma('page_count', { simple: true }) as number;
    // Room for a small batch, not for a checkpoint of thousands of changed groups.
    db.pragma(`max_page_count = ${pageCount + 4}`);
    assert.equal(runtime.checkpoint(), null, 'the checkpoint fails');
    let status = runtime.checkpointStatus();
    assert.equal(status.failures, 1);
    assert.equal(status.epoch, first.epoch, 'the previous checkpoint is still the one in effect');
    assert.match(status.lastError ?? '', /.+/);
    assert.deepEqual(
      runtime.checkpoints.read()?.checkpoint.epoch,
      first.epoch,
      'the stored checkpoint is whole and is the previous one',
    );
    // Ingest of a small batch still fits (or, if it does not, it fails clearly and nothing is lost).
    let ingestFailed: unknown = null;
    try {
      runtime.ingest('orders', { insert: [{ id: 9_000_001, seller_id: 1, tag: 'x', amount: 3 }] });
    } catch (error) {
      ingestFailed = error;
    }
    const applied = [...steps.slice(0, 29)];
    if (ingestFailed === null)
      applied.push({ insert: [{ id: 9_000_001, seller_id: 1, tag: 'x', amount: 3 }], delete: [] });
    else {
      assert.equal((ingestFailed as { code?: string }).code, 'STATE_ERROR', String(ingestFailed));
      assert.equal(runtime.ready, false, 'a failed store reports not ready');
    }
    // Space back.
    db.pragma(`max_page_count = ${2 ** 30}`);
    if (ingestFailed === null) {
      const stats = runtime.checkpoint();
      assert.ok(stats !== null, 'the next checkpoint succeeds once there is space');
      assert.equal(stats.full, true, 'after a failure the next checkpoint is full');
      status = runtime.checkpointStatus();
      assert.equal(status.epoch, runtime.committedEpoch);
      assert.equal(status.failures, 1);
      runtime.ingest('orders', steps[29] as { insert: Row[]; delete: Row[] });
      applied.push(steps[29] as { insert: Row[]; delete: Row[] });
    }
    t.diagnostic(`ingest under the page limit: ${ingestFailed === null ? 'accepted' : String(ingestFailed)}`);
    await app.close();
    // Restart: exact state (from the checkpoint plus the tail, or the journal).
    app = await buildApp(options);
    runtime = app.sluice;
    const ref = reference(applied);
    assert.equal(runtime.committedEpoch, ref.epoch);
    for (const view of VIEWS) {
      const snap = ref.viewSnapshot(view);
      assert.deepEqual(
        canonicalRows(snap.columns, runtime.engine.viewSnapshot(view).rows),
        canonicalRows(snap.columns, snap.rows),
        `${view} after the restart`,
      );
    }
    if (ingestFailed === null)
      assert.equal(runtime.recovery.replayedEntries, 0, 'the clean close checkpointed');
  } finally {
    await app.close();
  }
});

test('journal loss is refused: an entry without a checksum, a deleted tail, a gap in the offsets', async () => {
  const steps = batches(41, 20, 10);
  const base = await prepared(steps, ['--checkpoint-interval-ms', '0']);
  const copy = (): string => {
    const dir = tempDir('sluice-damage-');
    dirs.push(dir);
    cpSync(base, dir, { recursive: true });
    return dir;
  };
  const refused = async (dir: string, pattern: RegExp): Promise<void> => {
    const outcome = await spawnCrashable(dir, { args: ['--checkpoint-interval-ms', '0'] });
    assert.equal(outcome.kind, 'exited', 'the server must not serve');
    if (outcome.kind !== 'exited') return;
    assert.notEqual(outcome.code, 0);
    assert.match(outcome.output, pattern);
  };
  const last = withDb(
    base,
    (db) => (db.prepare('SELECT MAX(log_offset) AS o FROM journal').get() as { o: number }).o,
  );

  const noChecksum = copy();
  withDb(noChecksum, (db) =>
    db.prepare('UPDATE journal SET checksum = NULL WHERE log_offset = ?').run(last - 4),
  );
  await refused(noChecksum, new RegExp(`journal entry at offset ${last - 4} is damaged`));

  // Gone without a trace in the file itself: only the high-water mark knows they were committed.
  const tail = copy();
  withDb(tail, (db) => db.prepare('DELETE FROM journal WHERE log_offset > ?').run(last - 3));
  await refused(
    tail,
    new RegExp(`journal ends at offset ${last - 3}, but the high-water mark records offset ${last}`),
  );

  const gap = copy();
  withDb(gap, (db) => db.prepare('DELETE FROM journal WHERE log_offset = ?').run(last - 6));
  await refused(gap, new RegExp(`journal entry at offset ${last - 6} is missing`));
});

test('a damaged changelog never reaches a resumed subscriber: changed, unchecked or missing entries', async () => {
  const steps = batches(51, 20, 10);
  const base = await prepared(steps);
  const epochs = withDb(base, (db) =>
    (
      db.prepare("SELECT epoch FROM changelog WHERE view = 'seller_totals' ORDER BY epoch").all() as {
        epoch: number;
      }[]
    ).map((r) => r.epoch),
  );
  assert.ok(epochs.length >= 10);
  const target = epochs[5] as number;
  const cases: [string, (db: Database.Database) => void, RegExp][] = [
    [
      'a changed value',
      (db) =>
        db
          .prepare(
            "UPDATE changelog SET message = replace(message, '1', '2') WHERE view = 'seller_totals' AND epoch = ?",
          )
          .run(target),
      new RegExp(`changelog entry of view "seller_totals" at epoch ${target} is damaged`),
    ],
    [
      'no checksum',
      (db) =>
        db
          .prepare("UPDATE changelog SET checksum = NULL WHERE view = 'seller_totals' AND epoch = ?")
          .run(target),
      new RegExp(`changelog entry of view "seller_totals" at epoch ${target} is damaged`),
    ],
    [
      'a missing entry',
      (db) => db.prepare("DELETE FROM changelog WHERE view = 'seller_totals' AND epoch = ?").run(target),
      new RegExp(`the entry of epoch ${target} is missing`),
    ],
  ];
  for (const [label, spoil, pattern] of cases) {
    const dir = tempDir('sluice-damage-');
    dirs.push(dir);
    cpSync(base, dir, { recursive: true });
    withDb(dir, spoil);
    const server = await start(dir);
    // The state is whole (it comes from the checkpoint and the journal); only the changelog is bad.
    await assertViewsEqual(server.base, reference(steps));
    const ws = new WsClient(`${server.wsBase}/v1/views/seller_totals/subscribe?resumeFrom=${epochs[0]}`);
    await ws.open();
    const error = await ws.waitFor((m) => m.type === 'error', 10_000, `${label}: an error`);
    assert.equal(error.code, 'STATE_ERROR', label);
    assert.match(String(error.message), pattern, label);
    assert.equal(await ws.waitClosed(), 4500, `${label}: closed as an internal error`);
    const delivered = ws.of('changes').map((m) => m.epoch as number);
    assert.ok(
      delivered.every((e) => e < target),
      `${label}: nothing at or after the damaged entry was delivered (${delivered.join(',')})`,
    );
    ws.close();
    await stop(server);
  }
});
