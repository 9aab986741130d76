// The changelog store on its own: append is idempotent (replay does not rewrite), reads are ranged and
// ordered, retention by epochs and by time moves the horizon, and incarnations of a view are kept apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SluiceError } from '../../src/common/errors.ts';
import { ChangelogStore } from '../../src/storage/changelog-store.ts';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';
import { TableLog } from '../../src/storage/table-log.ts';
import { removeDir, tempDir } from './helpers.ts';

test('append is idempotent and reads are ranged', () => {
  const store = new SqliteStore({ dataDir: null });
  const log = new ChangelogStore(store.db);
  log.register('v', 1, 0);
  log.append('v', 1, 100, 'a');
  log.append('v', 3, 100, 'b');
  log.append('v', 3, 100, 'REWRITTEN');
  log.append('w', 2, 100, 'other view');
  assert.deepEqual(log.read('v', 0, 10, 10), [
    { epoch: 1, message: 'a' },
    { epoch: 3, message: 'b' },
  ]);
  assert.deepEqual(log.read('v', 1, 10, 10), [{ epoch: 3, message: 'b' }]);
  assert.deepEqual(log.read('v', 0, 2, 10), [{ epoch: 1, message: 'a' }]);
  assert.deepEqual(log.read('v', 0, 10, 1), [{ epoch: 1, message: 'a' }]);
  store.close();
});

test('retention by epochs and by time moves the horizon', () => {
  const store = new SqliteStore({ dataDir: null });
  const log = new ChangelogStore(store.db);
  log.register('v', 1, 0);
  for (let e = 1; e <= 10; e++) log.append('v', e, e * 1000, `m${e}`);
  assert.equal(log.prune('v', 10, 10_000, { epochs: null, ms: null }), 0);
  assert.equal(log.prune('v', 10, 10_000, { epochs: 4, ms: null }), 6);
  assert.deepEqual(
    log.read('v', 0, 10, 100).map((c) => c.epoch),
    [7, 8, 9, 10],
  );
  // time: entries older than now - ms go; the horizon is the newest epoch removed
  assert.equal(log.prune('v', 10, 9_500, { epochs: null, ms: 1_000 }), 8);
  assert.deepEqual(
    log.read('v', 0, 10, 100).map((c) => c.epoch),
    [9, 10],
  );
  assert.equal(log.info('v')?.horizon, 8);
  store.close();
});

test('incarnations: a later one wins, an earlier one is reported as historical', () => {
  const store = new SqliteStore({ dataDir: null });
  const log = new ChangelogStore(store.db);
  assert.equal(log.register('v', 5, 3).incarnation, 5);
  assert.equal(log.register('v', 5, 3).horizon, 3);
  assert.equal(
    log.register('v', 2, 1).incarnation,
    5,
    'an older incarnation does not replace the stored one',
  );
  assert.equal(log.register('v', 9, 7).incarnation, 9);
  log.append('v', 8, 0, 'x');
  log.drop('v');
  assert.equal(log.info('v'), undefined);
  assert.deepEqual(log.read('v', 0, 100, 10), []);
  store.close();
});

test('the table log appends DDL and batches in one sequence and survives reopening', () => {
  const dir = tempDir();
  try {
    const hooks = { beforeAppend: () => undefined, afterDdl: () => undefined };
    let store = new SqliteStore({ dataDir: dir });
    let log = new TableLog(store, hooks);
    log.appendDdl({ epoch: 0, sql: 'CREATE TABLE t (a BIGINT)' });
    const positions = log.appendBatch({
      epoch: 1,
      table: 't',
      columns: ['a'],
      inserts: [[2n ** 62n]],
      deletes: [],
    });
    assert.deepEqual(positions, { t: { offset: 2 } });
    log.appendBatch({ epoch: 2, table: 't', columns: ['a'], inserts: [], deletes: [[1]] });
    log.retractLastBatch();
    store.commit();
    store.close();
    const owner = new SqliteStore({ dataDir: dir });
    assert.throws(
      () => new SqliteStore({ dataDir: dir }),
      (e: unknown) =>
        e instanceof SluiceError && e.code === 'STATE_ERROR' && /another Sluice server/.test(e.hint ?? ''),
    );
    owner.close();
    store = new SqliteStore({ dataDir: dir });
    log = new TableLog(store, hooks);
    const entries = [...log.entries()];
    assert.equal(entries.length, 2);
    assert.equal(entries[0]?.kind, 'ddl');
    const batch = entries[1];
    assert.ok(batch?.kind === 'batch');
    assert.equal(batch.inserts[0]?.a, 2n ** 62n);
    assert.deepEqual(batch.positions, { t: { offset: 2 } });
    assert.equal(log.lastOffset, 2);
    store.close();
  } finally {
    removeDir(dir);
  }
});
