// A view grouped by a constant, whose aggregates read no column (COUNT(*) alone): its generated
// one-row Reduce step has no locals and no arguments. It was refused with an internal error (the
// step's code declared `let id, ;`); it is created, and one-row epochs keep it equal to the count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from '../src/index.ts';

test('a view grouped by a constant with COUNT(*) alone is created and counts through one-row epochs', () => {
  const engine = new Engine();
  engine.execute('CREATE TABLE t (a INT)');
  engine.execute("CREATE MATERIALIZED VIEW v AS SELECT 'p' AS g, COUNT(*) AS n FROM t GROUP BY 'p'");
  engine.execute(
    'CREATE MATERIALIZED VIEW w AS SELECT 1 AS g, COUNT(*) AS n FROM t WHERE true GROUP BY 1 + 0',
  );
  let held = 0;
  for (let i = 0; i < 50; i++) {
    if (i % 7 === 6) {
      engine.applyChanges('t', { delete: [{ a: i - 1 }] });
      held -= 1;
    } else {
      engine.applyChanges('t', { insert: [{ a: i }] });
      held += 1;
    }
    assert.deepEqual(engine.viewSnapshot('v').rows, [{ g: 'p', n: held }]);
    assert.deepEqual(engine.viewSnapshot('w').rows, [{ g: 1, n: held }]);
  }
});
