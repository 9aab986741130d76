// Statements that must be refused: each with its error code, a part of its message and the column
// the error points at (line 1), checked through Engine.execute.
import assert from 'node:assert/strict';
import type { Engine } from '../../src/exec/engine.ts';
import type { SluiceError } from '../../src/common/errors.ts';

/** [SQL, error code, text the message holds, column of the error's position]. */
export type RefusedStatement = readonly [string, string, string, number];

export function assertRefused(engine: Engine, cases: readonly RefusedStatement[]): void {
  for (const [sql, code, message, column] of cases) {
    assert.throws(
      () => engine.execute(sql),
      (e: unknown) => {
        const err = e as SluiceError;
        assert.equal(err.code, code, sql);
        assert.ok(err.message.includes(message), `${sql}: ${err.message}`);
        assert.equal(err.position?.column, column, `${sql}: column`);
        return true;
      },
    );
  }
}
