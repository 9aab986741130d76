// Scalar functions given the largest arguments a statement may pass (a text of millions of
// characters, a template longer than any real one): the work one call does is bounded by its
// result, never by building an array of the input's characters, and what cannot be bounded that way
// is refused with a code. Work is counted (characters a function iterates), never timed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, SluiceError, type Value } from '../src/index.ts';
import { MAX_PATTERN_LENGTH, MAX_TEXT_LENGTH } from '../src/common/limits.ts';

function one(e: Engine, expr: string): Value {
  const row = e.execute(`SELECT ${expr} AS x`)[0]?.rows?.[0];
  assert.ok(row !== undefined, `no row for ${expr}`);
  return row['x'] as Value;
}

/** Characters handed out by string iterators (`for…of` over a text, `Array.from(text)`) during `run`. */
function charactersIterated(run: () => void): number {
  const original = String.prototype[Symbol.iterator];
  let count = 0;
  String.prototype[Symbol.iterator] = function* counted(this: string): Generator<string> {
    for (const c of original.call(this) as Iterable<string>) {
      count++;
      yield c;
    }
  };
  try {
    run();
  } finally {
    String.prototype[Symbol.iterator] = original;
  }
  return count;
}

describe('text functions over a long text', () => {
  // A million characters with a surrogate pair at both ends, so positions count code points.
  const long = `'😀' || repeat('aB c', 250000) || '😀'`;

  const cases: readonly (readonly [string, Value])[] = [
    [`length(left(${long}, 3))`, 3],
    [`length(left(${long}, -3))`, 999_999],
    [`length(right(${long}, 3))`, 3],
    [`length(right(${long}, -3))`, 999_999],
    [`length(substring(${long}, 5))`, 999_998],
    [`length(substr(${long}, 999999, 10))`, 4],
    [`strpos(${long}, 'c😀')`, 1_000_001],
    [`length(btrim(${long}, '😀a'))`, 999_999],
    [`length(lpad(${long}, 1000005, '😀x'))`, 1_000_005],
    [`length(rpad(${long}, 10))`, 10],
    [`left(reverse(${long}), 3)`, '😀c '],
    [`left(initcap(${long}), 8)`, '😀Ab Cab '],
  ];
  for (const [expr, expected] of cases) {
    it(`${expr.replace(long, 'long')} iterates no character of the text`, () => {
      const e = new Engine();
      let value: Value = null;
      const iterated = charactersIterated(() => {
        value = one(e, expr);
      });
      assert.deepEqual(value, expected);
      // The short arguments (a trim set, a fill) may be iterated; the text never is.
      assert.ok(iterated <= 16, `${iterated} characters iterated`);
    });
  }

  it('counts characters, not UTF-16 halves, and maps case per character', () => {
    const e = new Engine();
    assert.equal(one(e, `reverse('a😀b🎉')`), '🎉b😀a');
    assert.equal(one(e, `initcap('ǅx İİ ßa σΣ')`), 'Ǆx İi̇ SSa Σσ');
    assert.equal(one(e, `substr('😀a😀', 2, 1)`), 'a');
    assert.equal(one(e, `right('😀b😀', 2)`), 'b😀');
    assert.equal(one(e, `btrim('😀x😀', '😀')`), 'x');
  });

  it('refuses a case mapping that grows past the text limit (ß upper-cased is SS)', () => {
    const e = new Engine();
    const half = MAX_TEXT_LENGTH / 2;
    assert.equal(one(e, `length(upper(repeat('ß', ${half})))`), MAX_TEXT_LENGTH);
    for (const expr of [
      `upper(repeat('ß', ${half + 1}))`,
      `initcap(repeat('ß ', ${Math.floor(MAX_TEXT_LENGTH / 3) + 1}))`,
    ]) {
      assert.throws(
        () => one(e, `length(${expr})`),
        (err: unknown) => err instanceof SluiceError && err.code === 'STRING_TOO_LONG',
        expr,
      );
    }
    assert.equal(one(e, `lower(repeat('İ', 3))`), 'i̇i̇i̇');
  });
});

describe('to_char and to_timestamp templates', () => {
  it(`accepts a template of ${MAX_PATTERN_LENGTH} characters`, () => {
    const e = new Engine();
    assert.equal(
      one(e, `length(to_char(date '2024-01-05', repeat('-', ${MAX_PATTERN_LENGTH})))`),
      MAX_PATTERN_LENGTH,
    );
  });

  for (const expr of [
    `to_char(date '2024-01-05', repeat('Day', 5000000))`,
    `to_char(timestamp '2024-01-05 10:00', repeat('-', ${MAX_PATTERN_LENGTH + 1}))`,
    `to_timestamp('2024', repeat('Y', ${MAX_PATTERN_LENGTH + 1}))`,
  ]) {
    it(`refuses ${expr.slice(0, 40)}… (a longer template) with INVALID_VALUE`, () => {
      const e = new Engine();
      assert.throws(
        () => one(e, expr),
        (err: unknown) =>
          err instanceof SluiceError &&
          err.code === 'INVALID_VALUE' &&
          err.message === 'formatting pattern too long',
      );
    });
  }

  it('refuses a template from a column row by row, and keeps the other rows', () => {
    const e = new Engine();
    e.execute(`CREATE TABLE t (id int PRIMARY KEY, p text)`);
    e.execute(`INSERT INTO t VALUES (1, 'YYYY'), (2, 'MM')`);
    assert.deepEqual(e.execute(`SELECT id, to_char(date '2024-03-05', p) AS s FROM t ORDER BY id`)[0]?.rows, [
      { id: 1, s: '2024' },
      { id: 2, s: '03' },
    ]);
    assert.throws(
      () => e.execute(`INSERT INTO t VALUES (3, to_char(date '2024-03-05', repeat('-', 5000)))`),
      (err: unknown) => err instanceof SluiceError && err.code === 'INVALID_VALUE',
    );
    assert.equal(e.execute(`SELECT count(*) AS n FROM t`)[0]?.rows?.[0]?.['n'], 2);
  });
});
