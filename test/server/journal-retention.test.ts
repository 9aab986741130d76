// Journal retention: table batches the durable checkpoint covers are deleted once older than the
// retention, in bounded slices; DDL, ticks, the journal's last entry and everything after the
// checkpoint stay. A restart after a truncation recovers from the checkpoint exactly as before; one
// whose checkpoint cannot be used refuses to start instead of replaying a shorter history.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { SluiceRuntime } from '../../src/server/runtime.ts';
import type { CheckpointPolicy, RuntimeOptions } from '../../src/server/runtime/types.ts';
import { SluiceError } from '../../src/common/errors.ts';
import { inTempRuntime, openRuntime, removeDir, sortedRows, tempDir } from './helpers.ts';

const policy: CheckpointPolicy = { intervalMs: 1e9, epochs: 1e9 };
const HOUR = 3_600_000;
const SLICE = 16;
const options = (): Partial<RuntimeOptions> => ({
  checkpoint: policy,
  journalRetention: { ms: HOUR, sliceRows: SLICE },
});

function open(dir: string, overrides: Partial<RuntimeOptions> = {}): SluiceRuntime {
  return openRuntime(dir, { ...options(), ...overrides });
}

/** Journal rows by kind: DDL, table batches, ticks/clock settings (no table); the last offset. */
function journalKinds(rt: SluiceRuntime): { ddl: number; batches: number; clocks: number; max: number } {
  return rt.store.db
    .prepare(
      "SELECT SUM(kind = 'ddl') AS ddl, SUM(kind = 'batch' AND target IS NOT NULL) AS batches, SUM(kind = 'batch' AND target IS NULL) AS clocks, MAX(log_offset) AS max FROM journal",
    )
    .get() as { ddl: number; batches: number; clocks: number; max: number };
}

/** Views' rows and each view's whole stored changelog: what a restart must reproduce. */
function contents(rt: SluiceRuntime): Record<string, unknown> {
  const out: Record<string, unknown> = { epoch: rt.engine.epoch };
  for (const view of ['totals', 'big']) {
    out[view] = sortedRows(rt.engine.viewSnapshot(view).rows);
    out[`${view}.log`] = rt.changelog
      .read(view, -1, Number.MAX_SAFE_INTEGER, 1e6)
      .map((c) => [c.epoch, c.message]);
  }
  return out;
}

/** A table, two views, `batches` one-row batches, with a DDL statement in the middle. */
function fill(rt: SluiceRuntime, batches: number, from = 0): void {
  if (from === 0) {
    rt.executeScript(`CREATE TABLE orders (id BIGINT PRIMARY KEY, seller INTEGER NOT NULL, amount INTEGER NOT NULL);
CREATE MATERIALIZED VIEW totals AS SELECT seller, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY seller`);
  }
  for (let i = from; i < from + batches; i++) {
    if (i === from + Math.floor(batches / 2) && from === 0)
      rt.execute('CREATE MATERIALIZED VIEW big AS SELECT id, amount FROM orders WHERE amount > 40');
    // Updates and deletes too: a later batch changes rows an earlier (deleted) one wrote.
    const row = (id: number) => ({ id, seller: id % 7, amount: (id * 13 + i) % 97 });
    if (i % 5 === 4) rt.ingest('orders', { delete: [{ id: i - 3 }] });
    else if (i % 7 === 6) rt.ingest('orders', { insert: [row(i), row(i - 1)] });
    else rt.ingest('orders', { insert: [row(i)] });
  }
}

/** Runs slices until none is due, returning each slice's deleted count. */
function trimAll(rt: SluiceRuntime, now: number): number[] {
  const counts: number[] = [];
  for (;;) {
    const slice = rt.trimJournalSlice(now);
    assert.ok(slice !== null, 'a slice may run');
    counts.push(slice.deleted);
    if (!slice.more) return counts;
  }
}

test('only table batches at or below the checkpoint and past retention are deleted, a slice at a time; DDL stays', () => {
  const dir = tempDir();
  try {
    const rt = open(dir);
    let before: Record<string, unknown>;
    try {
      fill(rt, 100);
      // Before any checkpoint nothing may go, however old.
      assert.equal(rt.trimJournalSlice(Date.now() + 10 * HOUR), null);
      rt.checkpoint();
      const covered = rt.checkpointStatus().journalOffset as number;
      fill(rt, 20, 100); // after the checkpoint: never deleted
      const full = journalKinds(rt);
      // Within retention: nothing is deleted.
      assert.deepEqual(trimAll(rt, Date.now()), [0]);
      assert.deepEqual(journalKinds(rt), full);
      const counts = trimAll(rt, Date.now() + 2 * HOUR);
      // Every slice is bounded; together they deleted the covered table batches and nothing else.
      assert.ok(
        counts.every((n) => n <= SLICE),
        `slices ${counts.join(',')}`,
      );
      const after = journalKinds(rt);
      const coveredBatches = (
        rt.store.db
          .prepare(
            "SELECT COUNT(*) AS n FROM journal WHERE kind = 'batch' AND target IS NOT NULL AND log_offset <= ?",
          )
          .get(covered) as { n: number }
      ).n;
      assert.equal(coveredBatches, 0, 'no covered batch is left');
      assert.equal(after.batches, 20, 'the 20 batches after the checkpoint stay');
      assert.equal(
        counts.reduce((a, b) => a + b, 0),
        full.batches - 20,
      );
      assert.ok(counts.length >= Math.ceil((full.batches - 20) / SLICE));
      assert.equal(after.ddl, full.ddl, 'every DDL entry stays');
      assert.equal(after.max, full.max, 'the last offset is unchanged');
      assert.equal(rt.journalRetention.truncatedThrough, covered);
      // The journal continues at the next offset.
      fill(rt, 3, 120);
      assert.equal(journalKinds(rt).max, full.max + 3);
      before = contents(rt);
    } finally {
      rt.close();
    }
    // A restart (from the shutdown checkpoint, the tail after it replayed) gives the same views
    // and the same changelogs.
    const again = open(dir);
    try {
      assert.deepEqual(contents(again), before);
      assert.notEqual(again.recovery.checkpointEpoch, null);
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('a restart from a checkpoint whose tail comes after a truncation replays the tail and checks it', () => {
  const dir = tempDir();
  const crashed = tempDir();
  try {
    const rt = open(dir);
    let before: Record<string, unknown>;
    try {
      fill(rt, 60);
      rt.checkpoint();
      trimAll(rt, Date.now() + 2 * HOUR);
      assert.ok(rt.journalRetention.truncatedThrough > 0);
      fill(rt, 30, 60);
      rt.flush();
      before = contents(rt);
      // The directory as a kill -9 leaves it: no shutdown checkpoint, the tail to replay.
      cpSync(dir, crashed, { recursive: true });
    } finally {
      rt.close();
    }
    const again = open(crashed);
    try {
      assert.deepEqual(contents(again), before);
      assert.ok(again.recovery.replayedEntries >= 30, `replayed ${again.recovery.replayedEntries}`);
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
    removeDir(crashed);
  }
});

test('a checkpoint that cannot be used after a truncation refuses the start, naming what was lost', () => {
  const dir = tempDir();
  try {
    const rt = open(dir);
    try {
      fill(rt, 40);
      rt.checkpoint();
      trimAll(rt, Date.now() + 2 * HOUR);
    } finally {
      rt.close();
    }
    // A damaged checkpoint file: set aside at open, and before the truncation a full replay.
    writeFileSync(
      join(dir, 'checkpoint.db'),
      'not a database, but long enough to be read as one'.repeat(200),
    );
    assert.throws(
      () => open(dir).close(),
      (error: unknown) =>
        error instanceof SluiceError &&
        error.code === 'STATE_ERROR' &&
        /journal retention deleted the table batches up to offset \d+/.test(error.message) &&
        /restore the data directory from a backup, or start with a fresh data directory/.test(
          error.hint ?? '',
        ),
    );
    // Nothing was replayed into the journal meanwhile: the refusal repeats.
    assert.throws(() => open(dir).close(), /journal retention deleted/);
    // Started without checkpoints, the same.
    assert.throws(
      () => open(dir, { checkpoint: null }).close(),
      (error: unknown) => error instanceof SluiceError && /checkpoints are off/.test(error.detail ?? ''),
    );
  } finally {
    removeDir(dir);
  }
});

test('a checkpoint that disagrees with the journal after a truncation refuses the start; without truncation it falls back', () => {
  for (const truncate of [false, true]) {
    const dir = tempDir();
    try {
      const rt = open(dir);
      try {
        fill(rt, 40);
        rt.checkpoint();
        if (truncate) trimAll(rt, Date.now() + 2 * HOUR);
      } finally {
        rt.close();
      }
      // A changelog entry after the checkpoint the journal does not give: the checkpoint path fails.
      const db = new Database(join(dir, 'sluice.db'));
      db.prepare('INSERT INTO changelog (view, epoch, at, message) VALUES (?, ?, ?, ?)').run(
        'totals',
        1e6,
        0,
        '[]',
      );
      db.close();
      if (truncate) {
        assert.throws(
          () => open(dir).close(),
          /recovery from the checkpoint failed: .*journal retention deleted|journal retention deleted/s,
        );
      } else {
        const again = open(dir);
        try {
          assert.equal(again.recovery.checkpointEpoch, null, 'whole journal replayed');
        } finally {
          again.close();
        }
      }
    } finally {
      removeDir(dir);
    }
  }
});

test('journal retention 0 (ms: null) keeps everything', () => {
  const dir = tempDir();
  try {
    const rt = open(dir, { journalRetention: { ms: null, sliceRows: SLICE } });
    try {
      fill(rt, 30);
      rt.checkpoint();
      const full = journalKinds(rt);
      assert.equal(rt.trimJournalSlice(Date.now() + 1000 * HOUR), null);
      assert.deepEqual(journalKinds(rt), full);
    } finally {
      rt.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('a slice also stops at its payload bytes (at least one batch a slice)', () => {
  return inTempRuntime(open, async (rt) => {
    fill(rt, 12);
    rt.checkpoint();
    const covered = rt.checkpointStatus().journalOffset as number;
    const later = Date.now() + 2 * HOUR;
    const counts: number[] = [];
    for (let more = true; more;) {
      rt.store.begin();
      const slice = rt.journalRetention.deleteSlice(covered, later, 1000, 1);
      rt.store.commit();
      counts.push(slice.deleted);
      more = slice.more;
    }
    // One batch a slice, then a last slice that finds none.
    assert.ok(
      counts.slice(0, -1).every((n) => n === 1),
      counts.join(','),
    );
    assert.equal(journalKinds(rt).batches, 1, 'only the journal’s last entry is left');
  });
});

test('only the batches older than the retention go: the newer ones the checkpoint covers stay', () => {
  return inTempRuntime(open, async (rt) => {
    fill(rt, 50);
    rt.checkpoint();
    const covered = rt.checkpointStatus().journalOffset as number;
    const old = Math.floor(covered / 2);
    // Entries up to `old` journaled two hours ago (`at` is outside the entry's checksum).
    rt.store.db.prepare('UPDATE journal SET at = at - ? WHERE log_offset <= ?').run(2 * HOUR, old);
    const count = (sql: string, ...params: number[]): number =>
      (rt.store.db.prepare(sql).get(...params) as { n: number }).n;
    const batchesUpTo = (offset: number): number =>
      count(
        "SELECT COUNT(*) AS n FROM journal WHERE kind = 'batch' AND target IS NOT NULL AND log_offset <= ?",
        offset,
      );
    const oldBatches = batchesUpTo(old);
    const coveredBatches = batchesUpTo(covered);
    const deleted = trimAll(rt, Date.now()).reduce((a, b) => a + b, 0);
    assert.equal(deleted, oldBatches);
    assert.equal(batchesUpTo(old), 0);
    assert.equal(batchesUpTo(covered), coveredBatches - oldBatches, 'the newer covered batches stay');
    assert.ok(rt.journalRetention.truncatedThrough <= old);
  });
});

test('a checkpoint older than the deleted prefix (an older checkpoint.db) refuses the start', () => {
  const dir = tempDir();
  const saved = tempDir();
  try {
    let rt = open(dir);
    fill(rt, 20);
    rt.close(); // a checkpoint at shutdown
    cpSync(join(dir, 'checkpoint.db'), join(saved, 'checkpoint.db'));
    rt = open(dir);
    try {
      fill(rt, 20, 20);
      rt.checkpoint();
      trimAll(rt, Date.now() + 2 * HOUR);
    } finally {
      rt.close();
    }
    rmSync(join(dir, 'checkpoint.db-wal'), { force: true });
    cpSync(join(saved, 'checkpoint.db'), join(dir, 'checkpoint.db'));
    assert.throws(
      () => open(dir).close(),
      (error: unknown) => error instanceof SluiceError && /older copy/.test(error.detail ?? ''),
    );
  } finally {
    removeDir(dir);
    removeDir(saved);
  }
});
