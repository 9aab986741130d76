// The SQLite checkpoint store on its own: a real engine's incremental checkpoints round-trip through
// it (across a reopen of the data file) into an engine whose views and later changelogs equal the
// uninterrupted run's; values are stored exactly; damage is detected instead of loaded; a full disk
// fails the checkpoint cleanly and leaves the previous one readable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SluiceError } from '../../src/common/errors.ts';
import { Engine } from '../../src/exec/engine.ts';
import type { Row } from '../../src/common/types.ts';
import { CheckpointStore } from '../../src/storage/checkpoint-store.ts';
import { decodeStored as decodeValue, encodeStored as encodeValue } from '../../src/common/json-codec.ts';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';
import { removeDir, tempDir } from './helpers.ts';
import type { Step } from '../support/checkpoint-workload.ts';
import {
  DDL,
  apply,
  big,
  freshEngine,
  mulberry32,
  record,
  snapshotAll,
  tableState,
  workload,
} from '../support/checkpoint-workload.ts';

/** Restores a fresh engine (DDL replay + checkpoint) from the store. */
function restore(cps: CheckpointStore): { engine: Engine; journalOffset: number } {
  const stored = cps.read();
  assert.ok(stored !== null, 'a checkpoint is stored');
  const engine = freshEngine();
  const { rebuilt } = engine.loadCheckpoint(stored.checkpoint);
  assert.deepEqual(rebuilt, []);
  return { engine, journalOffset: stored.journalOffset };
}

function isStateError(pattern: RegExp): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof SluiceError, `expected a SluiceError, got ${String(e)}`);
    assert.equal(e.code, 'STATE_ERROR');
    assert.match(e.message, pattern);
    return true;
  };
}

let viewErrorsRestored = 0;

for (const seed of [1, 2, 3, 4, 5]) {
  test(`a real engine round-trips through the SQLite checkpoint store across a reopen (seed ${seed})`, () => {
    const dir = tempDir('sluice-ckpt-');
    try {
      const steps = workload(seed, 160);
      const original = freshEngine();
      let sqlite = new SqliteStore({ dataDir: dir });
      let cps = new CheckpointStore(sqlite.db);
      assert.equal(cps.read(), null);
      const rnd = mulberry32(seed * 7919);
      const restoreAt = 40 + Math.floor(rnd() * 70);
      let writes = 0;
      for (let i = 0; i < restoreAt; i++) {
        apply(original, steps[i] as Step);
        if (rnd() < 0.25) {
          const stats = cps.checkpoint(original, i + 1);
          assert.equal(stats.full, writes === 0, 'only the first checkpoint is full');
          writes++;
        }
      }
      cps.checkpoint(original, restoreAt);
      sqlite.close();

      // "Restart": reopen the file, restore from the checkpoint.
      sqlite = new SqliteStore({ dataDir: dir });
      cps = new CheckpointStore(sqlite.db);
      const verified = cps.verify();
      assert.ok(verified !== null);
      assert.equal(verified.epoch, original.epoch);
      assert.equal(verified.journalOffset, restoreAt);
      const { engine: restored, journalOffset } = restore(cps);
      assert.equal(journalOffset, restoreAt);
      assert.equal(restored.epoch, original.epoch);
      assert.deepEqual(restored.positions, original.positions);
      assert.equal(snapshotAll(restored), snapshotAll(original), `seed ${seed}: views right after restore`);
      assert.equal(tableState(restored), tableState(original), `seed ${seed}: tables right after restore`);
      viewErrorsRestored += restored.viewErrors('ratios').length;

      // Both keep going; the restored engine keeps checkpointing incrementally into the same file.
      const a = record(original);
      const b = record(restored);
      for (let i = restoreAt; i < steps.length; i++) {
        apply(original, steps[i] as Step);
        apply(restored, steps[i] as Step);
        if (rnd() < 0.2) assert.equal(cps.checkpoint(restored, i + 1).full, false);
      }
      assert.equal(JSON.stringify(b, big), JSON.stringify(a, big), `seed ${seed}: changelogs after restore`);
      assert.equal(snapshotAll(restored), snapshotAll(original));

      // A second generation restored from checkpoints written by the restored engine.
      cps.checkpoint(restored, steps.length);
      const { engine: third } = restore(cps);
      assert.equal(snapshotAll(third), snapshotAll(original), `seed ${seed}: second-generation restore`);
      assert.equal(tableState(third), tableState(original));
      sqlite.close();
    } finally {
      removeDir(dir);
    }
  });
}

test('the round trips restored views holding row errors', () => {
  assert.ok(viewErrorsRestored > 0, 'some restore point had a row error in "ratios"');
});

test('incremental checkpoints write only what changed', () => {
  const sqlite = new SqliteStore({ dataDir: null });
  const cps = new CheckpointStore(sqlite.db);
  const engine = new Engine();
  engine.setStateTracking(true);
  engine.execute(
    'CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, x INT NOT NULL); CREATE MATERIALIZED VIEW s AS SELECT g, SUM(x) AS total FROM t GROUP BY g',
  );
  const rows: Row[] = [];
  for (let i = 0; i < 2000; i++) rows.push({ id: i, g: i % 500, x: i });
  engine.applyChanges('t', { insert: rows, delete: [] });
  const first = cps.checkpoint(engine, 1);
  assert.equal(first.full, true);
  assert.ok(first.upserts >= 2500, `full checkpoint wrote ${first.upserts}`);
  engine.applyChanges('t', { insert: [{ id: 3, g: 3, x: 1000 }], delete: [] });
  engine.applyChanges('t', { insert: [], delete: [{ id: 7 }] });
  const second = cps.checkpoint(engine, 3);
  assert.equal(second.full, false);
  // t: 1 upsert + 1 delete; s: 2 groups; plus the views' small replace-all parts (errors).
  assert.ok(second.upserts <= 6, `incremental checkpoint wrote ${second.upserts} entries`);
  assert.equal(second.deletes, 1);
  assert.equal(second.seq, 2);
  // The full one wrote base blocks only; this one a row per changed key (the delete a tombstone).
  assert.equal(first.overrideRows, 0);
  assert.ok(first.entries < first.upserts / 10, `${first.entries} rows for ${first.upserts} entries`);
  assert.equal(second.overrideRows, 4, 'id 3, a tombstone for id 7, two groups of s');
  assert.equal(cps.verify()?.entries, first.entries + 4);
  const restored = new Engine();
  restored.execute(
    'CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, x INT NOT NULL); CREATE MATERIALIZED VIEW s AS SELECT g, SUM(x) AS total FROM t GROUP BY g',
  );
  restored.loadCheckpoint((cps.read() ?? assert.fail('stored')).checkpoint);
  assert.equal(snapshotAll(restored), snapshotAll(engine));
  sqlite.close();
});

test('state of dropped objects is pruned, and a redefined view is rebuilt rather than restored', () => {
  const sqlite = new SqliteStore({ dataDir: null });
  const cps = new CheckpointStore(sqlite.db);
  const engine = freshEngine();
  for (const s of workload(11, 40)) apply(engine, s);
  cps.checkpoint(engine, 40);
  const count = (prefix: string): number =>
    (
      sqlite.db
        .prepare("SELECT COUNT(*) AS n FROM checkpoint_state WHERE state_id LIKE ? || '/%'")
        .get(prefix) as { n: number }
    ).n;
  assert.ok(count('total_histogram') > 0);
  engine.execute('DROP MATERIALIZED VIEW total_histogram');
  cps.checkpoint(engine, 41);
  assert.equal(count('total_histogram'), 0, 'state of the dropped view is gone');
  // Redefine it differently: the stored fingerprint no longer matches, the view is rebuilt.
  engine.execute(
    'CREATE MATERIALIZED VIEW total_histogram AS SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10)',
  );
  const stored = cps.read() ?? assert.fail('stored');
  const restored = new Engine();
  restored.execute([...DDL.filter((d) => !d.includes('total_histogram')), DDL[4] as string].join(';'));
  assert.deepEqual(restored.loadCheckpoint(stored.checkpoint).rebuilt, ['total_histogram']);
  assert.equal(snapshotAll(restored), snapshotAll(engine));
  sqlite.close();
});

test('values are stored exactly: bigints, -0, non-finite floats, $-keys', () => {
  const values: unknown[] = [
    9007199254740993n,
    -(1n << 63n),
    [1, -0, 0, NaN, Infinity, -Infinity, 1.5e300, 'x'],
    { $i: '12', $f: 'NaN', $$x: 1, plain: { $i: 3n } },
    { k: [null, true, 'a"$i"b'], c: 2, a: [{ n: 1, s: 12345678901234567890n }] },
    null,
    'text with "$i" inside',
  ];
  for (const v of values) {
    const back = decodeValue(encodeValue(v));
    assert.equal(JSON.stringify(back, big), JSON.stringify(v, big));
    assert.deepEqual(back, v);
  }
  assert.ok(Object.is((decodeValue(encodeValue([-0])) as number[])[0], -0));
});

test('damage is detected: a tampered value, a truncated value, a lost row, an added row, a tampered header', () => {
  const damages: { name: string; sql: string; pattern: RegExp }[] = [
    {
      name: 'tampered value',
      sql: "UPDATE checkpoint_state SET value = replace(value, '1', '2') WHERE ord = (SELECT MIN(ord) FROM checkpoint_state WHERE value LIKE '%1%')",
      pattern: /corrupted/,
    },
    {
      name: 'truncated value',
      sql: 'UPDATE checkpoint_state SET value = substr(value, 1, length(value) - 2) WHERE ord = (SELECT MAX(ord) FROM checkpoint_state)',
      pattern: /corrupted/,
    },
    {
      name: 'lost row',
      sql: 'DELETE FROM checkpoint_state WHERE ord = (SELECT MIN(ord) + 3 FROM checkpoint_state)',
      pattern: /holds \d+ state entries, its header records/,
    },
    {
      name: 'lost state id',
      sql: "DELETE FROM checkpoint_state WHERE state_id = (SELECT state_id FROM checkpoint_state WHERE state_id LIKE 'seller_totals/%' LIMIT 1)",
      pattern: /holds \d+ state entries, its header records/,
    },
    {
      name: 'row altered with a matching entry hash',
      sql: "UPDATE checkpoint_state SET entry_key = entry_key || 'x' WHERE ord = (SELECT MIN(ord) FROM checkpoint_state)",
      pattern: /corrupted/,
    },
    {
      name: 'insertion order altered',
      sql: 'UPDATE checkpoint_state SET ord = ord + 1000000 WHERE ord = (SELECT MAX(ord) FROM checkpoint_state)',
      pattern: /corrupted/,
    },
    {
      name: 'header epoch changed',
      sql: 'UPDATE checkpoint_meta SET epoch = epoch - 1',
      pattern: /header row whose checksum does not match/,
    },
    {
      name: 'header journal offset changed',
      sql: 'UPDATE checkpoint_meta SET journal_offset = 0',
      pattern: /header row whose checksum does not match/,
    },
    {
      name: 'header lost',
      sql: 'DELETE FROM checkpoint_meta',
      pattern: /no header row/,
    },
  ];
  for (const d of damages) {
    const sqlite = new SqliteStore({ dataDir: null });
    const cps = new CheckpointStore(sqlite.db);
    const engine = freshEngine();
    const steps = workload(21, 60);
    for (const s of steps.slice(0, 30)) apply(engine, s);
    cps.checkpoint(engine, 30);
    for (const s of steps.slice(30)) apply(engine, s);
    cps.checkpoint(engine, 60);
    assert.ok(cps.read() !== null);
    const changed = sqlite.db.prepare(d.sql).run().changes;
    assert.ok(changed > 0, `${d.name}: the damage applied`);
    assert.throws(() => cps.read(), isStateError(/stored checkpoint is damaged/), d.name);
    assert.throws(() => cps.read(), isStateError(d.pattern), d.name);
    assert.throws(() => cps.verify(), isStateError(d.pattern), d.name);
    // An incremental write onto a damaged header is refused as well.
    if (d.name.startsWith('header') && d.name !== 'header lost')
      assert.throws(() => cps.checkpoint(engine, 61), isStateError(/damaged/), d.name);
    // Recovery path: discard, rebuild a full checkpoint from (replayed) state.
    cps.clear();
    assert.equal(cps.read(), null);
    assert.equal(cps.needsFull, true);
    assert.equal(cps.checkpoint(engine, 60).full, true);
    const { engine: restored } = restore(cps);
    assert.equal(snapshotAll(restored), snapshotAll(engine), d.name);
    sqlite.close();
  }
});

test('an added stray row is detected', () => {
  const sqlite = new SqliteStore({ dataDir: null });
  const cps = new CheckpointStore(sqlite.db);
  const engine = freshEngine();
  for (const s of workload(5, 20)) apply(engine, s);
  cps.checkpoint(engine, 20);
  const first = sqlite.db.prepare('SELECT * FROM checkpoint_state LIMIT 1').get() as Record<string, unknown>;
  sqlite.db
    .prepare(
      'INSERT INTO checkpoint_state (state_id, entry_key, ord, value, h1, h2) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .run('nobody/x', 'k', first.ord, first.value, first.h1, first.h2);
  assert.throws(() => cps.read(), isStateError(/corrupted/));
  sqlite.db.prepare("DELETE FROM checkpoint_state WHERE state_id = 'nobody/x'").run();
  assert.ok(cps.read() !== null);
  sqlite.close();
});

test('disk full: the checkpoint fails with STATE_ERROR, the previous one stays whole, and recovery works once space returns', () => {
  const dir = tempDir('sluice-ckpt-full-');
  try {
    const sqlite = new SqliteStore({ dataDir: dir });
    const db = sqlite.db;
    const cps = new CheckpointStore(db);
    const engine = freshEngine();
    const steps = workload(31, 400);
    for (const s of steps.slice(0, 20)) apply(engine, s);
    cps.checkpoint(engine, 20);
    const before = snapshotAll(engine);
    const beforeTables = tableState(engine);
    const epochBefore = engine.epoch;

    // Lots of new state, then almost no room left.
    const bulk: Row[] = [];
    for (let i = 0; i < 5000; i++)
      bulk.push({
        id: 1_000_000 + i,
        seller_id: 100 + i,
        amount: i % 97,
        tag: `bulk-tag-${i}-${'x'.repeat(40)}`,
      });
    engine.applyChanges('orders', { insert: bulk, delete: [] });
    for (const s of steps.slice(20)) apply(engine, s);
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 4}`);
    assert.throws(
      () => cps.checkpoint(engine, 400),
      isStateError(/^disk full: the checkpoint at epoch \d+ was not written/),
    );
    assert.equal(db.inTransaction, false, 'no transaction left open');
    assert.equal(cps.needsFull, true);

    // The previous checkpoint is intact and restores the earlier state.
    const stored = cps.read() ?? assert.fail('previous checkpoint');
    assert.equal(stored.journalOffset, 20);
    assert.equal(stored.checkpoint.epoch, epochBefore);
    const old = freshEngine();
    old.loadCheckpoint(stored.checkpoint);
    assert.equal(snapshotAll(old), before);
    assert.equal(tableState(old), beforeTables);

    // Incremental checkpoints are refused until a full one succeeds (the failed delta was consumed).
    assert.throws(
      () => cps.write(engine.takeCheckpoint(), 400),
      isStateError(/previous checkpoint write failed/),
    );
    // Still full: the full checkpoint fails the same way, still without damage.
    assert.throws(() => cps.checkpoint(engine, 400), isStateError(/^disk full/));
    assert.ok(cps.read() !== null);

    // Space returns.
    db.pragma('max_page_count = 1073741823');
    const stats = cps.checkpoint(engine, 400);
    assert.equal(stats.full, true);
    const { engine: restored, journalOffset } = restore(cps);
    assert.equal(journalOffset, 400);
    assert.equal(snapshotAll(restored), snapshotAll(engine));
    assert.equal(tableState(restored), tableState(engine));
    // And incremental again afterwards.
    apply(engine, { table: 'orders', insert: [{ id: 1, seller_id: 1, amount: 1, tag: 'z' }], delete: [] });
    assert.equal(cps.checkpoint(engine, 401).full, false);
    assert.equal(snapshotAll(restore(cps).engine), snapshotAll(engine));
    sqlite.close();
  } finally {
    removeDir(dir);
  }
});

test('a checkpoint is refused inside an open transaction, and the first checkpoint must be full', () => {
  const sqlite = new SqliteStore({ dataDir: null });
  const cps = new CheckpointStore(sqlite.db);
  const engine = freshEngine();
  apply(engine, { table: 'events', insert: [{ kind: 'a', v: 1 }], delete: [] });
  sqlite.begin();
  assert.throws(
    () => cps.checkpoint(engine, 1),
    (e: unknown) => e instanceof SluiceError && e.code === 'INTERNAL_ERROR',
  );
  sqlite.rollback();
  // Refused before the engine's changes were taken, so nothing is lost: the first one is full.
  assert.equal(cps.checkpoint(engine, 1).full, true);
  // An incremental checkpoint into an empty store is refused by write()…
  const otherDb = new SqliteStore({ dataDir: null });
  const other = new CheckpointStore(otherDb.db);
  apply(engine, { table: 'events', insert: [{ kind: 'b', v: 2 }], delete: [] });
  assert.throws(() => other.write(engine.takeCheckpoint(), 2), isStateError(/no previous checkpoint/));
  // …while checkpoint() takes a full one when the store is empty.
  const third = new CheckpointStore(new SqliteStore({ dataDir: null }).db);
  assert.equal(third.checkpoint(engine, 2).full, true);
  // write() inside a transaction: refused, and the next checkpoint is full (the delta was consumed).
  apply(engine, { table: 'events', insert: [{ kind: 'c', v: 3 }], delete: [] });
  sqlite.begin();
  assert.throws(
    () => cps.write(engine.takeCheckpoint(), 3),
    (e: unknown) => e instanceof SluiceError && e.code === 'INTERNAL_ERROR',
  );
  sqlite.rollback();
  assert.equal(cps.needsFull, true);
  assert.equal(cps.checkpoint(engine, 3).full, true);
  assert.equal(snapshotAll(restore(cps).engine), snapshotAll(engine));
  otherDb.close();
  sqlite.close();
});
