// Messages of rejected writes: rows are counted from 1 everywhere (the first row is "row 1"), a
// JSON number beyond a double (1e400) is refused by the JSON reader as "out of range" rather than
// read as Infinity (or "got null"), and INSERT errors point at the offending value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, SluiceError, type Value } from '../src/index.ts';
import { JsonNumberOutOfRange, parseJsonExact } from '../src/common/json-codec.ts';

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
  // The JSON reader refuses a number beyond a double itself, naming where it is (on JSON.parse's
  // path, and on the exact parser's, which a run of 16 digits elsewhere in the text selects).
  for (const [text, where] of [
    ['{"id": 10, "d": 1e400}', '$.d'],
    ['[{"id": 10, "d": -1e400}]', '$[0].d'],
    ['{"id": 10, "j": {"a": [1, 2E+400]}}', '$.j.a[1]'],
    ['{"id": 1234567890123456789, "d": 1e400}', '$.d'],
    [`{"id": 10, "n": ${'9'.repeat(400)}.5}`, '$.n'],
  ] as const) {
    it(`the JSON reader refuses ${text.slice(0, 40)}`, () => {
      const error = rejected(() => parseJsonExact(text));
      assert.ok(error instanceof JsonNumberOutOfRange);
      assert.equal(error.code, 'INVALID_VALUE');
      assert.equal(error.message, 'number out of range for type double precision');
      assert.equal(error.detail, `at ${where}`);
    });
  }

  it('a string spelling an exponent, and numbers within range, read as they are', () => {
    assert.deepEqual(parseJsonExact('{"s": "1e400", "d": 1e308, "e": -2.5e-300}'), {
      s: '1e400',
      d: 1e308,
      e: -2.5e-300,
    });
  });

  // A non-finite double reaches the write path only as a value (a statement's, a stored row's): a
  // double or real column holds it; integer and numeric columns cannot (PostgreSQL: "integer out of
  // range" for 'NaN'::float8::int; its numeric holds NaN and ±Infinity, Sluice's does not).
  for (const value of [Infinity, -Infinity, NaN]) {
    for (const column of ['r', 'd'] as const) {
      it(`${String(value)} is a value of a ${column === 'r' ? 'real' : 'double precision'} column`, () => {
        const e = engine();
        e.applyChanges('w', { insert: [{ id: 10, [column]: value }] });
        const [result] = e.execute(`SELECT ${column} FROM w WHERE id = 10`) as unknown as {
          rows: Record<string, Value>[];
        }[];
        assert.ok(Object.is(result?.rows[0]?.[column], value));
      });
    }
    for (const [column, type] of [
      ['i', 'integer'],
      ['n', 'numeric(5,2)'],
    ] as const) {
      it(`${String(value)} is refused by a ${type} column`, () => {
        const error = rejected(() => engine().applyChanges('w', { insert: [{ id: 10, [column]: value }] }));
        assert.equal(error.code, 'INVALID_VALUE');
        assert.equal(
          error.message,
          `invalid value for column "${column}" of table "w": number out of range for type ${type}`,
        );
      });
    }
  }

  // A JSON integer of 309 digits or more reads as an exact bigint (a numeric column may hold it), so
  // the reader cannot refuse it: a double or real column must, as PostgreSQL's float8in does.
  for (const column of ['d', 'r'] as const) {
    it(`a JSON integer beyond every double is out of range for a ${column === 'd' ? 'double precision' : 'real'} column, not Infinity`, () => {
      const [row] = parseJsonExact(`[{"id": 10, "${column}": -1${'0'.repeat(400)}}]`) as Record<
        string,
        Value
      >[];
      assert.equal(typeof row?.[column], 'bigint');
      const e = engine();
      const before = e.tableRows('w').length;
      const error = rejected(() => e.applyChanges('w', { insert: [row as Record<string, Value>] }));
      assert.equal(error.code, 'INVALID_VALUE');
      assert.match(
        error.message,
        new RegExp(
          `^invalid value for column "${column}" of table "w": expected a number within the range of`,
        ),
      );
      assert.equal(e.tableRows('w').length, before);
    });
  }

  it('in SQL, a literal beyond a double is out of range where it is written', () => {
    const error = rejected(() => engine().execute('INSERT INTO w (id, d) VALUES (10, -1e400)'));
    assert.equal(error.code, 'NUMERIC_OVERFLOW');
    assert.equal(error.message, 'numeric literal "1e400" is out of range');
    assert.deepEqual(error.position, { line: 1, column: 36 });
  });
});
