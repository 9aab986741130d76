// The one rule for a view's ended history (ChangelogStore.historyEnd / resumeRefusal), on the store
// alone: a record at epoch E ends the history of the incarnation created at or before E, whatever
// its reason; a view created after E is bounded by its creation epoch instead. The record names the
// incarnation it ends (an earlier version reads that), and one per name is kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChangelogStore } from '../../src/storage/changelog-store.ts';
import { SqliteStore } from '../../src/storage/sqlite-store.ts';

const RETAIN_ALL = { epochs: null, ms: null };

function answer(log: ChangelogStore, view: string, from: number, current: number): string {
  const horizon = log.prune(view, current, 0, RETAIN_ALL);
  const refusal = log.resumeRefusal(view, from, horizon);
  if (refusal === null) return 'served';
  if (/created again/.test(refusal.message)) return 'dropped';
  if (/recomputed/.test(refusal.message)) return 'recomputed';
  if (/created at epoch/.test(refusal.message)) return 'before creation';
  return refusal.message;
}

function record(store: SqliteStore, view: string): unknown {
  return store.db
    .prepare('SELECT incarnation, epoch, reason FROM changelog_history_ends WHERE view = ?')
    .get(view);
}

test('dropped, created again at that epoch or later; recomputed; dropped again', () => {
  const store = new SqliteStore({ dataDir: null });
  try {
    const log = new ChangelogStore(store.db);
    log.register('v', 10, 0);
    log.append('v', 2, 0, 'x');
    assert.equal(answer(log, 'v', 1, 3), 'served');
    log.drop('v', -1, 3);
    assert.deepEqual(record(store, 'v'), { incarnation: 10, epoch: 3, reason: 'dropped' });
    // Created again at the drop epoch: the record ends the new incarnation's history at 3, and names it.
    log.register('v', 20, 3);
    assert.deepEqual(record(store, 'v'), { incarnation: 20, epoch: 3, reason: 'dropped' });
    assert.deepEqual(log.historyEnd('v'), { epoch: 3, reason: 'dropped' });
    assert.equal(answer(log, 'v', 3, 3), 'dropped');
    assert.equal(answer(log, 'v', 1, 3), 'dropped');
    assert.equal(answer(log, 'v', 4, 4), 'served');
    // Recomputed later: the one record moves on, and says why.
    log.endHistory('v', 6);
    assert.deepEqual(record(store, 'v'), { incarnation: 20, epoch: 6, reason: 'recomputed' });
    assert.equal(answer(log, 'v', 5, 7), 'recomputed');
    assert.equal(answer(log, 'v', 7, 7), 'served');
    // Dropped, and created again after a write: the record said nothing of it and is gone.
    log.drop('v', -1, 7);
    log.register('v', 30, 8);
    assert.equal(record(store, 'v'), undefined);
    assert.equal(log.historyEnd('v'), null);
    assert.equal(answer(log, 'v', 7, 8), 'before creation');
    assert.equal(answer(log, 'v', 8, 8), 'served');
    // Another name's drop at a later epoch forgets a dropped name's record that can apply no more.
    log.register('w', 40, 8);
    log.drop('w', -1, 8);
    log.register('x', 50, 8);
    log.drop('x', -1, 9);
    assert.equal(record(store, 'w'), undefined);
    assert.deepEqual(record(store, 'x'), { incarnation: 50, epoch: 9, reason: 'dropped' });
  } finally {
    store.close();
  }
});
