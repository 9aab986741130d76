// Every file of a data directory, every kind of damage: after a SIGKILL under ingest, the data
// directory is copied and one file damaged — deleted, truncated, bytes changed, a page zeroed —
// and the server started on it. There are exactly two acceptable outcomes: the start is refused
// with a message that names the damage, or the server starts with exactly the acknowledged state
// (the last acknowledged epoch, every view equal to a reference engine fed the same batches).
// Starting with less, or with other state, or failing without saying why, is the third outcome
// this suite exists to rule out.
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  openSync,
  closeSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Engine } from '../../src/index.ts';
import type { Row } from '../../src/common/types.ts';
import { mulberry32 } from '../support/checkpoint-workload.ts';
import { type CrashableServer, killHard, metricValue, spawnCrashable } from '../support/crash-harness.ts';
import { canonicalRows } from '../support/sqlite-oracle.ts';
import { removeDir, request, sqlOk, tempDir, viewRowsAtOneEpoch } from './helpers.ts';

const DDL = [
  'CREATE TABLE orders (id BIGINT NOT NULL, seller_id INTEGER NOT NULL, tag TEXT, amount INTEGER NOT NULL, PRIMARY KEY (id))',
  'CREATE TABLE events (kind TEXT, v INTEGER)',
  'CREATE MATERIALIZED VIEW seller_totals AS SELECT seller_id, COUNT(*) AS n, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi, COUNT(DISTINCT tag) AS tags FROM orders GROUP BY seller_id',
  'CREATE MATERIALIZED VIEW total_hist AS SELECT FLOOR(total / 100) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 100)',
  'CREATE MATERIALIZED VIEW kinds AS SELECT kind, SUM(v) AS s, COUNT(*) AS n FROM events GROUP BY kind',
];
const VIEWS = ['seller_totals', 'total_hist', 'kinds'];
const SEED = 4242;

type Batch = { table: string; insert: Row[]; delete: Row[] };

function workload(count: number): Batch[] {
  const rnd = mulberry32(SEED);
  const live: number[] = [];
  const events: Row[] = [];
  let next = 1;
  const out: Batch[] = [];
  for (let b = 0; b < count; b++) {
    const insert: Row[] = [];
    const del: Row[] = [];
    if (b % 3 === 2) {
      for (let i = 0; i < 8; i++) {
        if (events.length > 0 && rnd() < 0.3)
          del.push(events.splice(Math.floor(rnd() * events.length), 1)[0] as Row);
        else {
          const row = { kind: `k${Math.floor(rnd() * 4)}`, v: Math.floor(rnd() * 50) };
          insert.push(row);
        }
      }
      events.push(...insert);
      out.push({ table: 'events', insert, delete: del });
      continue;
    }
    const touched = new Set<number>();
    for (let i = 0; i < 20; i++) {
      if (live.length > 0 && rnd() < 0.2) {
        const id = live.splice(Math.floor(rnd() * live.length), 1)[0] as number;
        if (touched.has(id)) continue;
        touched.add(id);
        del.push({ id });
      } else {
        const id = next++;
        touched.add(id);
        live.push(id);
        insert.push({
          id,
          seller_id: Math.floor(rnd() * 30),
          tag: rnd() < 0.1 ? null : `t${Math.floor(rnd() * 4)}`,
          amount: 1 + Math.floor(rnd() * 100),
        });
      }
    }
    out.push({ table: 'orders', insert, delete: del });
  }
  return out;
}

const live: CrashableServer[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of live) await killHard(s);
  for (const d of dirs) removeDir(d);
});

interface Pristine {
  readonly dir: string;
  readonly epoch: number;
  readonly reference: Engine;
}

/** A data directory after a SIGKILL: a checkpoint mid-way, a journal tail after it, WAL files. */
async function pristine(): Promise<Pristine> {
  const dir = tempDir('sluice-damage-matrix-');
  dirs.push(dir);
  const args = ['--checkpoint-interval-ms', '600000', '--checkpoint-epochs', '1000000'];
  const steps = workload(90);
  const reference = new Engine();
  reference.execute(DDL.join(';\n'));
  // First half, then a clean stop (its checkpoint), then the rest and a kill: the tail after the
  // checkpoint lives in the journal's write-ahead log.
  let epoch = 0;
  for (const [from, to, kill] of [
    [0, 45, false],
    [45, 90, true],
  ] as const) {
    const outcome = await spawnCrashable(dir, { args });
    assert.equal(outcome.kind, 'listening', outcome.kind === 'exited' ? outcome.output : '');
    if (outcome.kind !== 'listening') throw new Error('unreachable');
    const server = outcome.server;
    live.push(server);
    if (from === 0) await sqlOk(server.base, DDL.join(';\n'));
    for (const s of steps.slice(from, to)) {
      const r = await request(server.base, 'POST', `/v1/tables/${s.table}/rows`, {
        insert: s.insert,
        delete: s.delete,
      });
      assert.equal(r.status, 200, r.text);
      epoch = r.body.epoch as number;
      reference.applyChanges(s.table, { insert: s.insert, delete: s.delete });
    }
    if (kill) await killHard(server);
    else {
      server.child.kill('SIGTERM');
      assert.equal((await server.exited).code, 0, server.output());
    }
  }
  assert.equal(epoch, reference.epoch);
  for (const f of ['sluice.db', 'sluice.db-wal', 'checkpoint.db', 'sluice.hwm']) {
    assert.ok(existsSync(join(dir, f)) && statSync(join(dir, f)).size > 0, `${f} exists after the kill`);
  }
  return { dir, epoch, reference };
}

type Damage = 'missing' | 'truncated' | 'bytes' | 'zeroed page' | 'emptied';

function damage(path: string, kind: Damage, rnd: () => number): void {
  const size = statSync(path).size;
  switch (kind) {
    case 'missing':
      rmSync(path);
      return;
    case 'emptied':
      truncateSync(path, 0);
      return;
    case 'truncated':
      truncateSync(path, Math.floor(size / 2));
      return;
    case 'bytes': {
      const fd = openSync(path, 'r+');
      try {
        const bytes = readFileSync(path);
        // 24 changed bytes in the file's second half, where its newest content is.
        for (let i = 0; i < 24; i++) {
          const at = Math.floor(size / 2 + rnd() * (size / 2));
          writeSync(fd, Buffer.from([(bytes[at] ?? 0) ^ (1 + Math.floor(rnd() * 255))]), 0, 1, at);
        }
      } finally {
        closeSync(fd);
      }
      return;
    }
    case 'zeroed page': {
      const page = 4096;
      const pages = Math.max(1, Math.floor(size / page));
      const at = Math.min(size - 1, Math.floor(pages / 2 + rnd() * (pages / 2)) * page);
      const fd = openSync(path, 'r+');
      try {
        writeSync(fd, Buffer.alloc(Math.min(page, size - at)), 0, Math.min(page, size - at), at);
      } finally {
        closeSync(fd);
      }
      return;
    }
  }
}

const CASES: [string, Damage[]][] = [
  ['sluice.db', ['missing', 'truncated', 'bytes', 'zeroed page']],
  ['sluice.db-wal', ['missing', 'truncated', 'bytes', 'zeroed page']],
  ['checkpoint.db', ['missing', 'truncated', 'bytes', 'zeroed page', 'emptied']],
  ['sluice.hwm', ['missing', 'bytes', 'emptied']],
];

const CLEAR_REFUSAL =
  /cannot start: .*(is damaged|is missing|acknowledged writes are missing|cannot open data file)/;

test('each file, each damage: refused with a clear error, or started with exactly the acknowledged state', async () => {
  const base = await pristine();
  const rnd = mulberry32(SEED + 1);
  const outcomes: string[] = [];
  for (const [file, kinds] of CASES) {
    for (const kind of kinds) {
      const label = `${file} ${kind}`;
      const dir = tempDir('sluice-damaged-');
      dirs.push(dir);
      cpSync(base.dir, dir, { recursive: true });
      damage(join(dir, file), kind, rnd);
      const outcome = await spawnCrashable(dir);
      if (outcome.kind === 'exited') {
        assert.notEqual(outcome.code, 0, `${label}: a refused start exits non-zero`);
        assert.match(outcome.output, CLEAR_REFUSAL, `${label}: the refusal names the damage`);
        outcomes.push(`${label}: refused — ${/cannot start: (.*)/.exec(outcome.output)?.[1] ?? ''}`);
        continue;
      }
      const server = outcome.server;
      live.push(server);
      try {
        for (const view of VIEWS) {
          const rest = await viewRowsAtOneEpoch(server.base, view);
          assert.equal(rest.epoch, base.epoch, `${label}: started at the acknowledged epoch`);
          const snap = base.reference.viewSnapshot(view);
          assert.deepEqual(
            canonicalRows(snap.columns, rest.rows as Row[]),
            canonicalRows(snap.columns, snap.rows),
            `${label}: ${view} equals the reference`,
          );
        }
        const metrics = await request(server.base, 'GET', '/metrics');
        const replayed = metricValue(metrics.text, 'sluice_recovery_replayed_entries');
        outcomes.push(`${label}: started with the acknowledged state (replayed ${replayed} entries)`);
      } finally {
        await killHard(server);
      }
    }
  }
  console.log(outcomes.map((o) => `  ${o}`).join('\n'));
  // The journal's own losses must be refused, never served as a shorter history.
  for (const kind of ['missing', 'truncated'] as const) {
    assert.ok(
      outcomes.some((o) => o.startsWith(`sluice.db-wal ${kind}: refused`)),
      `losing the write-ahead log (${kind}) is refused`,
    );
  }
});
