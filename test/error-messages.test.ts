// Messages of rejected writes: rows are counted from 1 everywhere (the first row is "row 1"), a
// JSON number beyond a double (1e400, which parses to Infinity) is "out of range" for the column's
// type rather than "got null", and INSERT errors point at the offending value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, SluiceError, type Value } from '../src/index.ts';
import { parseJsonExact } from '../src/common/json-codec.ts';

function rejected(run: () => unknown): SluiceError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof SluiceError, String(error));
    return error;
  }
  assert.fail('expected the write to be rejected');
}

function engine(): Engine {
  const e = new Engine();
  e.execute('CREATE TABLE w (id INT PRIMARY KEY, i INT, r REAL, d DOUBLE PRECISION, n NUMERIC(5,2))');
  e.execute('INSERT INTO w (id) VALUES (1), (2)');
  return e;
}

describe('rejected rows are counted from 1', () => {
  it('insert and delete rows, in messages and details alike', () => {
    const e = engine();
    const bad = rejected(() => e.applyChanges('w', { insert: [{ id: 3 }, { id: 4, i: 'x' }] }));
    assert.equal(bad.code, 'INVALID_VALUE');
    assert.equal(bad.detail, 'in insert row 2; column type integer');
    const unknown = rejected(() => e.applyChanges('w', { insert: [{ id: 5, nope: 1 }] }));
    assert.equal(unknown.detail, 'in insert row 1');
    const missing = rejected(() => e.applyChanges('w', { delete: [{ id: 1 }, { id: 99 }] }));
    assert.equal(missing.message, 'delete row 2: no row with this primary key in table "w"');
    const notNull = rejected(() => e.applyChanges('w', { insert: [{ id: 6 }, { i: 1 }] }));
    assert.equal(notNull.code, 'NOT_NULL_VIOLATION');
    assert.equal(notNull.detail, 'in insert row 2 (column missing)');
    const notObject = rejected(() => e.applyChanges('w', { insert: [{ id: 7 }, 5 as never] }));
    assert.equal(notObject.message, 'insert row 2 for table "w" is not an object');
    assert.equal(e.epoch, 1);
  });

  it('an INSERT names its VALUES row, and points at the value or the row', () => {
    const e = engine();
    const error = rejected(() => e.execute('INSERT INTO w (id, i) VALUES (3, 1), (NULL, 2)'));
    assert.equal(error.code, 'NOT_NULL_VIOLATION');
    assert.equal(error.detail, 'in VALUES row 2');
    assert.deepEqual(error.position, { line: 1, column: 39 });
  });
});

describe('1e400 is out of range, not null', () => {
  const body = parseJsonExact('{"id": 10, "i": 1e400, "r": 1e400, "d": -1e400, "n": 1e400}') as Record<
    string,
    Value
  >;

  for (const [column, type] of [
    ['i', 'integer'],
    ['r', 'real'],
    ['d', 'double precision'],
    ['n', 'numeric(5,2)'],
  ] as const) {
    it(`ingested into a ${type} column`, () => {
      const e = engine();
      const error = rejected(() =>
        e.applyChanges('w', { insert: [{ id: 10, [column]: body[column] ?? null }] }),
      );
      assert.equal(error.code, 'INVALID_VALUE');
      assert.equal(
        error.message,
        `invalid value for column "${column}" of table "w": number out of range for type ${type}`,
      );
    });
  }

  it('in SQL, a literal beyond a double is out of range where it is written', () => {
    const error = rejected(() => engine().execute('INSERT INTO w (id, d) VALUES (10, -1e400)'));
    assert.equal(error.code, 'NUMERIC_OVERFLOW');
    assert.equal(error.message, 'numeric literal "1e400" is out of range');
    assert.deepEqual(error.position, { line: 1, column: 36 });
  });
});
