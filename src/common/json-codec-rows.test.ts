// The flat row array reader against JSON.parse: on every body it takes, the same rows (keys in the
// same order, -0 kept, integers exact); on every body it declines (null), the general path decides.
// Seeded random bodies mixing what it takes with what it must decline, and the edges by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  FlatRowArrayReader,
  parseFlatRowArray,
  rowBuildersCompiled,
  rowShapeLookups,
} from './json-codec-rows.ts';

const RUNS = { seed: 4848, numRuns: 3000 };

/** The rows as comparable text: keys in order, -0 told apart from 0. */
function exact(rows: unknown): string {
  return JSON.stringify(rows, (_k, v: unknown) => (Object.is(v, -0) ? '<-0>' : v));
}

function sameAsJsonParse(text: string): void {
  const fast = parseFlatRowArray(Buffer.from(text, 'utf8'));
  if (fast === null) return;
  const reference = JSON.parse(text) as unknown;
  assert.equal(exact(fast), exact(reference), text);
  for (const row of fast) assert.equal(Object.getPrototypeOf(row), Object.prototype);
}

const space = fc.constantFrom('', '', ' ', '\n', '\t ', '\r\n');
const takenKey = fc.oneof(
  fc.constantFrom('order_id', 'seller_id', 'amount', '', 'x y', 'constructor'),
  fc.integer({ min: 0, max: 99 }).map((i) => `k${i}`),
);
const otherKey = fc.oneof(fc.constantFrom('__proto__', '1', 'é', 'a"b', 'a\\b'), fc.string({ maxLength: 6 }));
const key = fc.oneof({ arbitrary: takenKey, weight: 30 }, { arbitrary: otherKey, weight: 1 });
const takenValue = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('-0', '0', '123456789012345', '-999999999999999', 'null', 'true', 'false'),
  fc.stringMatching(/^[ -!#-[\]-~]{0,8}$/).map((s) => `"${s}"`),
);
const otherValue = fc.oneof(
  fc.constantFrom('01', '-', '1.5', '1e3', '1E3', '1234567890123456', '9007199254740993', 'nul', '[1]', '{}'),
  fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"a\\nb"', '"\\u0041"', '"é"', '"tab\there"'),
);
const value = fc.oneof({ arbitrary: takenValue, weight: 30 }, { arbitrary: otherValue, weight: 1 });
const row = fc
  .array(fc.tuple(space, key, space, value, space), { minLength: 1, maxLength: 4 })
  .map(
    (fields) =>
      `{${fields.map(([s1, k, s2, v, s3]) => `${s1}${JSON.stringify(k)}${s2}:${s3}${v}${s1}`).join(',')}}`,
  );
const body = fc
  .tuple(
    space,
    fc.array(fc.tuple(space, row), { maxLength: 6 }),
    space,
    fc.constantFrom('', '', '', '', '', ',', ' x', ']'),
  )
  .map(([s, rows, s2, tail]) => `${s}[${rows.map(([sp, r]) => `${sp}${r}`).join(',')}${s2}]${tail}`);

test('every body it takes gives exactly what JSON.parse gives (random bodies, declines included)', () => {
  let taken = 0;
  fc.assert(
    fc.property(body, (text) => {
      if (parseFlatRowArray(Buffer.from(text, 'utf8')) !== null) taken++;
      sameAsJsonParse(text);
    }),
    RUNS,
  );
  assert.ok(taken > 500, `only ${taken} bodies taken: the property would test nothing`);
});

test('read in slices, a body gives what JSON.parse gives, each slice ending at its first row end', () => {
  let sliced = 0;
  fc.assert(
    fc.property(body, fc.integer({ min: 1, max: 40 }), (text, step) => {
      const bytes = Buffer.from(text, 'utf8');
      const reader = new FlatRowArrayReader(bytes);
      let reads = 0;
      let rows: ReturnType<FlatRowArrayReader['read']>;
      for (;;) {
        const until = reader.offset + step;
        rows = reader.read(until);
        reads++;
        if (rows !== undefined) break;
        // Stopped just past a row's comma, at or beyond the offset asked for.
        assert.ok(reader.offset >= until, text);
        assert.equal(bytes[reader.offset - 1], 0x2c, text);
      }
      // Null (a body the reader declines, or one whose new key lists ran past the budget) leaves it
      // to the general path, as a whole read does.
      if (rows === null) return;
      if (reads > 1) sliced++;
      assert.equal(exact(rows), exact(JSON.parse(text)), text);
    }),
    RUNS,
  );
  assert.ok(sliced > 300, `only ${sliced} bodies read in more than one slice`);
});

test('the edges: what it takes and what it leaves to the general path', () => {
  const takes = [
    '[{"a":1,"b":-0,"c":"x y","d":null,"e":true,"f":false}]',
    ' [ { "a" : 1 } ,\n{"a":2} ] ',
    '[{"a":1},{"b":2},{"a":3}]',
    '[{"a":123456789012345,"b":-123456789012345}]',
    '[{"":5}]',
    '[{"constructor":1,"toString":"x"}]',
  ];
  for (const text of takes) {
    assert.notEqual(parseFlatRowArray(Buffer.from(text)), null, text);
    sameAsJsonParse(text);
  }
  const declines = [
    '[{"a":1,"a":2}]', // a duplicate key: JSON.parse keeps the last, a literal would too, but by another rule
    '[{"__proto__":1}]', // a literal would set the prototype
    '[{"1":1}]', // an index key
    '[{"a":01}]',
    '[{"a":1.5}]',
    '[{"a":1e3}]',
    '[{"a":1234567890123456}]', // 16 digits: may round
    '[{}]',
    '[]',
    '[{"a":"\\n"}]',
    '[{"a":"é"}]',
    '[{"a":1}] x',
    '[{"a":1},]',
    '[{"a":-}]',
    '[{"a":[1]}]',
    '[{"a":1}',
    '{"a":1}',
    '{"insert":[{"a":1}]}',
    '',
  ];
  for (const text of declines) assert.equal(parseFlatRowArray(Buffer.from(text)), null, text);
  assert.equal(
    parseFlatRowArray(Buffer.from(`[{${Array.from({ length: 65 }, (_, i) => `"k${i}":1`).join(',')}}]`)),
    null,
  );
});

test('one row builder per key list, not one per row or per body', () => {
  const before = rowBuildersCompiled.count;
  const rows = Array.from({ length: 500 }, (_, i) => `{"bench_x":${i},"bench_y":"v${i}"}`).join(',');
  for (let b = 0; b < 20; b++) assert.equal(parseFlatRowArray(Buffer.from(`[${rows}]`))?.length, 500);
  assert.equal(rowBuildersCompiled.count - before, 1);
});

test('a body whose rows keep changing keys compiles a few builders, then is left to the general path', () => {
  const before = rowBuildersCompiled.count;
  const rows = Array.from({ length: 2000 }, (_, i) => `{"hostile_${i}":${i}}`).join(',');
  const text = `[${rows}]`;
  assert.equal(parseFlatRowArray(Buffer.from(text)), null);
  assert.ok(
    rowBuildersCompiled.count - before <= 4,
    `${rowBuildersCompiled.count - before} builders compiled`,
  );
  // A body of a few key lists is still taken, and the next body starts with its own allowance.
  const mixed = `[${['{"m_a":1}', '{"m_b":2}', '{"m_a":3}', '{"m_c":4}'].join(',')}]`;
  assert.deepEqual(parseFlatRowArray(Buffer.from(mixed)), JSON.parse(mixed));
});

test('a key list longer than 1,024 bytes is left to the general path: no code is generated for it', () => {
  const before = rowBuildersCompiled.count;
  const long = 'k'.repeat(1025);
  assert.equal(parseFlatRowArray(Buffer.from(`[{"${long}":1}]`)), null);
  assert.equal(parseFlatRowArray(Buffer.from(`[{"${'a'.repeat(600)}":1,"${'b'.repeat(425)}":2}]`)), null);
  assert.equal(rowBuildersCompiled.count - before, 0);
  // At the bound it is still taken.
  const atBound = `[{"${'c'.repeat(1000)}":1,"${'d'.repeat(24)}":2}]`;
  assert.deepEqual(parseFlatRowArray(Buffer.from(atBound)), JSON.parse(atBound));
  assert.equal(rowBuildersCompiled.count - before, 1);
});

test('a body in a slice of a larger buffer reads only its own bytes', () => {
  const whole = Buffer.from('xx[{"a":"ab","b":2}]yy');
  const rows = parseFlatRowArray(whole.subarray(2, whole.length - 2));
  assert.deepEqual(rows, [{ a: 'ab', b: 2 }]);
});

test("a row's field heads compared with the previous row's: near misses take the general path", () => {
  const takes = [
    '[{"ab":1,"c":2},{"abc":3,"c":4}]', // the previous key a prefix of this one
    '[{"abc":1,"c":2},{"ab":3,"c":4}]', // this key a prefix of the previous one
    '[{"ab":1,"c":2},{"ab" :3,"c":4},{"ab":5, "c" :6}]', // a space before a colon
    '[{"ab":1,"c":2},{"ab":3,"c":4,"d":5},{"ab":6}]', // one field more, then fewer
    '[{"ab":1,"c":2},{"c":3,"ab":4}]', // the same keys in another order
    '[{"a:":1},{"a:":2},{"a":3}]', // a colon inside the key
  ];
  for (const text of takes) {
    assert.notEqual(parseFlatRowArray(Buffer.from(text)), null, text);
    sameAsJsonParse(text);
  }
  // A head cut by the end of the body's bytes, though the buffer goes on to complete it.
  const whole = Buffer.from('[{"ab":1},{"ab":2}]');
  assert.equal(parseFlatRowArray(whole.subarray(0, 13)), null);
  assert.equal(parseFlatRowArray(Buffer.from('[{"ab":1},{"ab"')), null);
});

test("a body with the last body's keys compares its rows with that body's shape: no lookup by key text", () => {
  const body = (from: number): Buffer =>
    Buffer.from(`[${Array.from({ length: 50 }, (_, i) => `{"last_a":${from + i},"last_b":"x"}`).join(',')}]`);
  assert.notEqual(parseFlatRowArray(body(0)), null);
  const before = rowShapeLookups.count;
  for (let b = 1; b <= 20; b++)
    assert.deepEqual(parseFlatRowArray(body(b * 50))?.[0], { last_a: b * 50, last_b: 'x' });
  assert.equal(rowShapeLookups.count - before, 0);
  // Another key list in between is looked up once, and the first is taken as before.
  const other = '[{"last_c":1}]';
  assert.deepEqual(parseFlatRowArray(Buffer.from(other)), JSON.parse(other));
  assert.deepEqual(parseFlatRowArray(body(0))?.[49], { last_a: 49, last_b: 'x' });
  assert.equal(rowShapeLookups.count - before, 2);
});
