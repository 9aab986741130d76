// EpochTimeStore: a row only when an epoch's time differs from the epoch before (also after a gap, as
// when recording resumes after a checkpoint), lookups at any epoch, and pruning that keeps the row in force.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { EpochTimeStore } from './epoch-time-store.ts';

const rows = (db: Database.Database): number[] =>
  (db.prepare('SELECT epoch FROM epoch_times ORDER BY epoch').all() as { epoch: number }[]).map(
    (r) => r.epoch,
  );

test('stores an epoch only when its clock or a watermark changed, and answers every epoch', () => {
  const db = new Database(':memory:');
  const store = new EpochTimeStore(db);
  store.record(1, 100, { t: null });
  store.record(2, 100, { t: null }); // unchanged
  store.record(3, 200, { t: null }); // the clock
  store.record(4, 200, { t: '2024-01-01 10:00:00' }); // a watermark only
  store.record(5, 200, { t: '2024-01-01 10:00:00', u: null }); // a new table
  assert.deepEqual(rows(db), [1, 3, 4, 5]);
  assert.equal(store.at(0), undefined);
  assert.deepEqual(store.at(2), { clock: 100, watermarks: { t: null } });
  assert.deepEqual(store.at(4), { clock: 200, watermarks: { t: '2024-01-01 10:00:00' } });
  assert.deepEqual(store.at(9)?.watermarks, { t: '2024-01-01 10:00:00', u: null });

  // A new store on the same file (a restart) compares with what is stored, not with nothing.
  const again = new EpochTimeStore(db);
  again.record(6, 200, { t: '2024-01-01 10:00:00', u: null });
  assert.deepEqual(rows(db), [1, 3, 4, 5]);
  again.record(7, 300, { t: '2024-01-01 10:00:00', u: null });
  assert.deepEqual(rows(db), [1, 3, 4, 5, 7]);

  // Pruning below epoch 6 keeps the row in force there (5) and everything after.
  again.prune(6);
  assert.deepEqual(rows(db), [5, 7]);
  assert.deepEqual(again.at(6)?.clock, 200);
  again.prune(0);
  assert.deepEqual(rows(db), [5, 7]);
});
