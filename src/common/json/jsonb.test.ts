// JSONB against PostgreSQL's manual (sections 8.14 and 9.16), table by table: input and canonical
// output, containment and existence, the order of 8.14.4, the path operators; and properties: the
// text round-trips, equal values share a key, the order is a total order agreeing with the keys, and
// the generated-expression fast path compares jsonb as jsonb, never as its text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Jsonb, compareJsonb, jsonbFromParsed, parseJsonb, withRawJsonb } from './jsonb.ts';
import {
  jsonbArrayLength,
  jsonbContains,
  jsonbExists,
  jsonbGet,
  jsonbGetText,
  jsonbPath,
  jsonbPathText,
  jsonbTypeof,
  parseTextArray,
} from './jsonb-ops.ts';
import { decodeStored, encodeStored, parseJsonExact, stringifyWire } from '../json-codec.ts';
import { compareValues, encodeOne, valuesEqual } from '../values.ts';
import { castValue } from '../cast.ts';
import { T } from '../types.ts';
import { compileScalar, compileScalarClosure, type ScalarExpr } from '../scalar-expr.ts';
import { generateScalar } from '../scalar-codegen.ts';
import { SluiceError } from '../errors.ts';

const j = parseJsonb;

test('8.14.1: input and canonical output', () => {
  const cases: [string, string][] = [
    ['5', '5'],
    ['[1, 2, "foo", null]', '[1, 2, "foo", null]'],
    ['{"bar": "baz", "balance": 7.77, "active":false}', '{"bar": "baz", "active": false, "balance": 7.77}'],
    [
      '{"foo": [true, "bar"], "tags": {"a": 1, "b": null}}',
      '{"foo": [true, "bar"], "tags": {"a": 1, "b": null}}',
    ],
    ['{"reading": 1.230e-5}', '{"reading": 0.00001230}'],
    ['{"a":1,"a":2}', '{"a": 2}'],
    [' {"b":1 , "a" : [ ] }\n', '{"a": [], "b": 1}'],
    ['-0', '0'],
    ['1E3', '1000'],
    ['"\\u00e9\\n\\"x\\""', '"é\\n\\"x\\""'],
    ['{"\\u0061": 1}', '{"a": 1}'],
    // keys by UTF-8 length, then bytes: "é" is 2 bytes, so after "b"
    ['{"é": 1, "b": 2, "aa": 3}', '{"b": 2, "aa": 3, "é": 1}'],
    ['123456789012345678901234567890.000', '123456789012345678901234567890.000'],
  ];
  for (const [input, output] of cases) assert.equal(j(input).text, output, input);
});

test('invalid JSON is INVALID_CAST with PostgreSQL message; nesting is bounded', () => {
  for (const bad of [
    '',
    '{',
    '{"a": }',
    '[1,]',
    "{'a': 1}",
    '01',
    '1.',
    'nul',
    '"\u0001"',
    '[1] x',
    'NaN',
    '+1',
  ]) {
    assert.throws(
      () => j(bad),
      (e: unknown) =>
        e instanceof SluiceError &&
        e.code === 'INVALID_CAST' &&
        e.message === 'invalid input syntax for type json',
      bad,
    );
  }
  assert.throws(() => j('['.repeat(300) + ']'.repeat(300)), /invalid input syntax/);
  assert.equal(jsonbFromParsed(JSON.parse('['.repeat(300) + ']'.repeat(300))), null);
  assert.equal(j('['.repeat(200) + ']'.repeat(200)).text.length, 400);
});

test('table 9.45: -> ->> #> #>>', () => {
  const arr = j('[{"a":"foo"},{"b":"bar"},{"c":"baz"}]');
  assert.equal(jsonbGet(arr, 2)?.text, '{"c": "baz"}');
  assert.equal(jsonbGet(arr, -3)?.text, '{"a": "foo"}');
  assert.equal(jsonbGet(arr, 3), null);
  assert.equal(jsonbGet(j('{"a": {"b":"foo"}}'), 'a')?.text, '{"b": "foo"}');
  assert.equal(jsonbGetText(j('[1,2,3]'), 2), '3');
  assert.equal(jsonbGetText(j('{"a":1,"b":2}'), 'b'), '2');
  assert.equal(jsonbGetText(j('{"a":null}'), 'a'), null);
  assert.equal(jsonbGet(j('{"a":null}'), 'a')?.text, 'null');
  assert.equal(jsonbGet(j('{"a":1}'), 0), null);
  assert.equal(jsonbGet(j('[1]'), 'a'), null);
  const doc = j('{"a": {"b": ["foo","bar"]}}');
  assert.equal(jsonbPath(doc, parseTextArray('{a,b,1}'))?.text, '"bar"');
  assert.equal(jsonbPathText(doc, parseTextArray('{a,b,1}')), 'bar');
  assert.equal(jsonbPathText(doc, parseTextArray('{a,b,-1}')), 'bar');
  assert.equal(jsonbPath(doc, parseTextArray('{a,x}')), null);
  assert.equal(jsonbPath(doc, parseTextArray('{}')), doc);
  assert.equal(jsonbPath(doc, parseTextArray('{a,NULL}')), null);
});

test('text[] path literals', () => {
  assert.deepEqual(parseTextArray('{a,b,0}'), ['a', 'b', '0']);
  assert.deepEqual(parseTextArray(' { a , "b c" , "x\\"y", NULL, "NULL" } '), [
    'a',
    'b c',
    'x"y',
    null,
    'NULL',
  ]);
  assert.deepEqual(parseTextArray('{}'), []);
  for (const bad of ['a,b', '{a,,b}', '{{a}}', '{"a}', '{a}b'])
    assert.throws(() => parseTextArray(bad), /malformed array literal/, bad);
});

test('table 9.46 and 8.14.3: containment and existence', () => {
  const cases: [string, string, boolean][] = [
    ['{"a":1, "b":2}', '{"b":2}', true],
    ['"foo"', '"foo"', true],
    ['[1, 2, 3]', '[1, 3]', true],
    ['[1, 2, 3]', '[3, 1]', true],
    ['[1, 2, 3]', '[1, 2, 2]', true],
    ['{"product": "PostgreSQL", "version": 9.4, "jsonb": true}', '{"version": 9.4}', true],
    ['[1, 2, [1, 3]]', '[1, 3]', false],
    ['[1, 2, [1, 3]]', '[[1, 3]]', true],
    ['{"foo": {"bar": "baz"}}', '{"bar": "baz"}', false],
    ['{"foo": {"bar": "baz"}}', '{"foo": {}}', true],
    ['["foo", "bar"]', '"foo"', true],
    ['"foo"', '["foo"]', false],
    ['{"a": 1.0}', '{"a": 1}', true],
    ['{"a": [1]}', '{"a": 1}', false],
    ['[{"a": 1, "b": 2}]', '[{"a": 1}]', true],
    ['[]', '[]', true],
    ['{}', '[]', false],
  ];
  for (const [a, b, want] of cases) assert.equal(jsonbContains(j(a), j(b)), want, `${a} @> ${b}`);
  const exists: [string, string, boolean][] = [
    ['{"a":1, "b":2}', 'b', true],
    ['["a", "b", "c"]', 'b', true],
    ['{"foo": "bar"}', 'foo', true],
    ['{"foo": "bar"}', 'bar', false],
    ['{"foo": {"bar": "baz"}}', 'bar', false],
    ['"foo"', 'foo', true],
    ['[1]', '1', false],
  ];
  for (const [a, k, want] of exists) assert.equal(jsonbExists(j(a), k), want, `${a} ? ${k}`);
});

test('table 9.49: jsonb_typeof and jsonb_array_length', () => {
  assert.equal(jsonbTypeof(j('-123.4')), 'number');
  assert.equal(jsonbTypeof(j('null')), 'null');
  assert.equal(jsonbTypeof(j('{}')), 'object');
  assert.equal(jsonbTypeof(j('[]')), 'array');
  assert.equal(jsonbTypeof(j('"x"')), 'string');
  assert.equal(jsonbTypeof(j('false')), 'boolean');
  assert.equal(jsonbArrayLength(j('[1,2,3,{"f1":1,"f2":[5,6]},4]')), 5);
  assert.throws(() => jsonbArrayLength(j('{"a": 1}')), /cannot get array length of a non-array/);
  assert.throws(() => jsonbArrayLength(j('1')), /cannot get array length of a scalar/);
});

test('8.14.4: Object > Array > Boolean > Number > String > Null, sizes first, empty array lowest', () => {
  const ascending = [
    '[]',
    'null',
    '""',
    '"a"',
    '"b"',
    '-1',
    '1',
    '1.5',
    '10',
    'false',
    'true',
    '[10]',
    '[[]]',
    '[1, 1]',
    '{}',
    '{"b": 1}',
    '{"b": 2}',
    '{"a": 1, "b": 1}',
    '{"aa": 1, "c": 1}',
    '{"d": 1, "aa": 1}',
  ];
  for (let i = 0; i < ascending.length; i++) {
    for (let k = 0; k < ascending.length; k++) {
      const c = Math.sign(compareJsonb(j(ascending[i] as string), j(ascending[k] as string)));
      assert.equal(c, Math.sign(i - k), `${ascending[i]} vs ${ascending[k]}`);
    }
  }
  // the manual's example: pairs in storage order ("c" before "aa"), keys compared as strings
  assert.ok(compareJsonb(j('{"aa": 1, "c": 1}'), j('{"b": 1, "d": 1}')) > 0);
});

test('casts: text ↔ jsonb, jsonb scalars to numbers and booleans', () => {
  assert.equal((castValue('{"b":1,"a":2}', T.text, T.jsonb) as Jsonb).text, '{"a": 2, "b": 1}');
  assert.equal(castValue(j('[1, 2.50]'), T.jsonb, T.text), '[1, 2.50]');
  assert.equal(String(castValue(j('4.50'), T.jsonb, T.numeric)), '4.50');
  assert.equal(castValue(j('42'), T.jsonb, T.int32), 42);
  assert.equal(castValue(j('true'), T.jsonb, T.bool), true);
  assert.throws(() => castValue(j('"42"'), T.jsonb, T.int32), /cannot cast jsonb string to type integer/);
  assert.throws(() => castValue(j('1'), T.jsonb, T.date), /cannot cast type jsonb to date/);
});

// Arbitrary JSON text with awkward numbers, duplicate keys, escapes and nesting.
const numberText = fc.oneof(
  fc.integer().map(String),
  fc
    .tuple(fc.integer({ min: -999, max: 999 }), fc.nat(9999), fc.integer({ min: -5, max: 5 }))
    .map(([a, b, e]) => `${a}.${String(b).padStart(4, '0')}e${e}`),
  fc.constantFrom('0.10', '1.0', '-0', '123456789012345678901234567890.5', '1e20'),
);
const { json: jsonText } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    fc.constantFrom('true', 'false', 'null'),
    fc.string({ maxLength: 4 }).map((s) => JSON.stringify(s)),
    fc.array(tie('json'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
    fc
      .array(fc.tuple(fc.constantFrom('a', 'b', 'aa', 'é', '$j', '10', ''), tie('json')), { maxLength: 4 })
      .map((ps) => `{${ps.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
}));

test('properties: canonical text round-trips, storage and wire keep values exactly', () => {
  fc.assert(
    fc.property(jsonText, (text) => {
      const v = j(text);
      assert.equal(j(v.text).text, v.text); // canonical text is a fixed point
      const stored = decodeStored(encodeStored({ row: [v, 1n] })) as { row: [Jsonb, bigint] };
      assert.ok(stored.row[0] instanceof Jsonb);
      assert.equal(stored.row[0].text, v.text);
      // on the wire the value is JSON itself: parsing the wire text gives the value back
      const wire = stringifyWire({ doc: v, s: v.text });
      const back = parseJsonExact(wire) as { doc: unknown; s: string };
      assert.equal(back.s, v.text, 'a string holding the text stays a string');
      assert.equal(jsonbFromParsed(back.doc)?.key(), v.key());
    }),
    { numRuns: 300 },
  );
});

test('properties: equal values share a key; the order is total and agrees with equality', () => {
  fc.assert(
    fc.property(jsonText, jsonText, jsonText, (x, y, z) => {
      const [a, b, c] = [j(x), j(y), j(z)];
      const ab = compareJsonb(a, b);
      assert.ok(Math.sign(ab) + Math.sign(compareJsonb(b, a)) === 0, 'antisymmetric');
      assert.equal(ab === 0, a.key() === b.key());
      assert.equal(valuesEqual(a, b), ab === 0);
      assert.equal(encodeOne(a) === encodeOne(b), ab === 0);
      if (ab <= 0 && compareJsonb(b, c) <= 0) assert.ok(compareJsonb(a, c) <= 0);
      assert.equal(Math.sign(compareValues(a, b)), Math.sign(ab));
    }),
    { numRuns: 300 },
  );
});

test('generated expressions compare jsonb as jsonb, not as its text', () => {
  const col = (index: number): ScalarExpr => ({ kind: 'col', index, name: `c${index}`, type: T.jsonb });
  const eq: ScalarExpr = { kind: 'call', fn: 'eq', args: [col(0), col(1)], type: T.bool };
  const lt: ScalarExpr = { kind: 'call', fn: 'lt', args: [col(0), col(1)], type: T.bool };
  const rows: [Jsonb, Jsonb][] = [
    [j('{"a": 1.0}'), j('{"a": 1}')], // equal values, different texts
    [j('[1, 2]'), j('[3]')], // "[1, 2]" < "[3]" as text, but the longer array is greater
    [j('10'), j('9')], // 10 > 9 as numbers, "10" < "9" as text
  ];
  for (const e of [eq, lt]) {
    const generated = generateScalar(e, compileScalarClosure);
    const closure = compileScalarClosure(e);
    const compiled = compileScalar(e);
    for (const row of rows) {
      const want = closure(row);
      if (generated !== null) assert.equal(generated(row), want);
      assert.equal(compiled(row), want);
    }
  }
  assert.equal(compileScalarClosure(eq)(rows[0] as [Jsonb, Jsonb]), true);
  assert.equal(compileScalarClosure(lt)(rows[1] as [Jsonb, Jsonb]), false);
  assert.equal(compileScalarClosure(lt)(rows[2] as [Jsonb, Jsonb]), false);
});

test('withRawJsonb: a string cannot forge a placeholder; nested calls keep their own slots', () => {
  const v = j('{"x": [1, 2.50]}');
  const forged = '\u0001jsonb:0';
  assert.equal(stringifyWire({ a: forged, b: v }), `{"a":${JSON.stringify(forged)},"b":{"x": [1, 2.50]}}`);
  assert.equal(
    withRawJsonb(() => JSON.stringify([v, withRawJsonb(() => JSON.stringify(v))])),
    '[{"x": [1, 2.50]},"{\\"x\\": [1, 2.50]}"]',
  );
  assert.equal(JSON.stringify(v), JSON.stringify(v.text), 'outside the wire writer: its text');
  // the writer's slow paths (a bigint retries with a replacer, a null re-checks non-finite floats)
  assert.equal(
    stringifyWire({ n: 1n, d: v, z: null, f: NaN }),
    '{"n":"1","d":{"x": [1, 2.50]},"z":null,"f":"NaN"}',
  );
});
