// The journal is replayed under REPLAY_SQL_LIMITS: a statement that was accepted once (under an
// engine's own wider limits, or an older version's) must replay at every later start, whatever
// today's limits would say of it as a new statement.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_SQL_LIMITS, Engine } from '../../src/index.ts';
import { openRuntime, removeDir, tempDir } from './helpers.ts';

test('DDL accepted under wider limits replays under the default ones', () => {
  const dir = tempDir();
  const terms = DEFAULT_SQL_LIMITS.maxExpressionDepth + 100;
  const view = `CREATE MATERIALIZED VIEW wide AS SELECT k, ${Array.from({ length: terms }, () => 'v').join(' + ')} AS s FROM t`;
  try {
    const wide = openRuntime(dir, {
      checkpoint: null,
      createEngine: () => new Engine({ limits: { ...DEFAULT_SQL_LIMITS, maxExpressionDepth: terms * 2 } }),
    });
    wide.executeScript('CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER)');
    wide.executeScript(view);
    wide.ingest('t', { insert: [{ k: 1, v: 2 }] });
    wide.close();
    // Today's limits refuse it as a new statement...
    assert.equal(
      new Engine().executeScript(`CREATE TABLE t (k INTEGER, v INTEGER); ${view}`).error?.code,
      'NESTING_TOO_DEEP',
    );
    // ...but the journal holding it replays.
    const again = openRuntime(dir, { checkpoint: null });
    try {
      assert.deepEqual(again.engine.viewSnapshot('wide').rows, [{ k: 1, s: 2 * terms }]);
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
  }
});
