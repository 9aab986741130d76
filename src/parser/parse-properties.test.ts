// Parser property tests (fast-check): any input parses or throws a SluiceError, generated
// expressions, FROM trees and SELECTs print and parse back to the same shape with exact positions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseStatements } from './parse.ts';
import { adapterDiagnostics } from './select-adapter.ts';
import { SluiceError } from '../common/errors.ts';
import type { Statement } from './ast.ts';
import {
  RUNS,
  bareShape,
  checkLeafPositions,
  exprArb,
  mutatedSql,
  parseOrExplain,
  printExpr,
  printSelect,
  selectArb,
  seeded,
  toComparable,
  type Bare,
} from '../../test/support/parser-arbitraries.ts';
import { one, stmt } from '../../test/support/parse-helpers.ts';
describe('properties', () => {
  it('any input either parses or throws a SluiceError (never an internal error)', () => {
    fc.assert(
      fc.property(
        fc.oneof(mutatedSql, fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 40 })),
        (sql) => {
          try {
            parseStatements(sql);
          } catch (error) {
            assert.ok(
              error instanceof SluiceError,
              `non-SluiceError for ${JSON.stringify(sql)}: ${String(error)}`,
            );
            assert.notEqual(
              error.code,
              'INTERNAL_ERROR',
              `internal error for ${JSON.stringify(sql)}: ${error.message}`,
            );
            assert.ok(error.position === undefined || error.position.line >= 1);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('printed random expressions parse back identically through SELECT and DML', () => {
    // node-sql-parser rejects some valid SQL outright (see the limitations tests); those inputs are
    // skipped, but the adapter must never lose its way on SQL node-sql-parser accepted.
    let rejected = 0;
    let runs = 0;
    fc.assert(
      fc.property(exprArb.expr, fc.integer(), (e, seed) => {
        runs++;
        let state = seed >>> 0;
        const rand = (): number => {
          state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
          return state / 2 ** 32;
        };
        const text = printExpr(e, rand);
        // Same-length prefixes, so positions must agree exactly.
        const selectSql = `SELECT           ${text}`;
        const updateSql = `UPDATE t SET c = ${text}`;
        const update = stmt(parseOrExplain(updateSql), 'update');
        assert.deepEqual(
          toComparable(update.assignments[0]!.value),
          bareShape(e),
          `round trip failed for: ${text}`,
        );
        checkLeafPositions(updateSql, update.assignments[0]!.value);
        const divergences = adapterDiagnostics.divergences;
        let fromSelect: Statement;
        try {
          fromSelect = one(selectSql);
        } catch (error) {
          const rejectedByLibrary =
            error instanceof SluiceError &&
            error.code === 'SYNTAX_ERROR' &&
            adapterDiagnostics.divergences === divergences;
          if (!rejectedByLibrary) throw new Error(`${JSON.stringify(selectSql)}: ${String(error)}`);
          rejected++;
          return;
        }
        const item = stmt(fromSelect, 'select').query.items[0];
        assert.equal(item?.kind, 'expr', selectSql);
        assert.deepEqual(update.assignments[0]!.value, item.expr, `paths differ for: ${text}`);
      }),
      { numRuns: RUNS },
    );
    assert.ok(rejected < runs * 0.1, `node-sql-parser rejected ${rejected} of ${runs} expressions`);
  });

  it('printed random SELECT statements parse back to the same tree', () => {
    let rejected = 0;
    let runs = 0;
    fc.assert(
      fc.property(selectArb, fc.integer(), (q, seed) => {
        runs++;
        const { sql, expected } = printSelect(q, seeded(seed));
        const divergences = adapterDiagnostics.divergences;
        let parsed: Statement;
        try {
          parsed = one(sql);
        } catch (error) {
          const rejectedByLibrary =
            error instanceof SluiceError &&
            error.code === 'SYNTAX_ERROR' &&
            adapterDiagnostics.divergences === divergences;
          if (!rejectedByLibrary) throw new Error(`${JSON.stringify(sql)}: ${String(error)}`);
          if (process.env['SHOW_REJECTED'])
            console.log('REJ', JSON.stringify(sql).slice(0, 300), String(error));
          rejected++;
          return;
        }
        assert.deepEqual(toComparable(stmt(parsed, 'select').query), bareShape(expected as Bare), sql);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
    assert.ok(rejected < runs * 0.15, `node-sql-parser rejected ${rejected} of ${runs} statements`);
  });
});
