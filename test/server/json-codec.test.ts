// Exact JSON for Sluice values: big integers are never rounded on the way in or out, storage JSON
// round-trips every value (bigint, NaN, ±Infinity), and the fast paths agree with the careful ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeStored,
  encodeStored,
  isRowObject,
  parseJsonExact,
  stringifyWire,
} from '../../src/source/json-codec.ts';

test('request JSON keeps integers beyond 2^53 exact as bigints', () => {
  const parsed = parseJsonExact(
    '[{"a": 9007199254740993, "b": -12345678901234567890, "c": 1.5, "d": "9007199254740993", "e": 123456789012345}]',
  ) as Record<string, unknown>[];
  assert.equal(parsed[0]?.a, 9007199254740993n);
  assert.equal(parsed[0]?.b, -12345678901234567890n);
  assert.equal(parsed[0]?.c, 1.5);
  assert.equal(parsed[0]?.d, '9007199254740993');
  assert.equal(parsed[0]?.e, 123456789012345);
});

test('a safe 16-digit integer stays a number; floats with long mantissas stay floats', () => {
  const parsed = parseJsonExact(
    '{"a": 1000000000000000, "b": 0.12345678901234567, "c": 1e300, "s": "12345678901234567890"}',
  ) as Record<string, unknown>;
  assert.equal(parsed.a, 1000000000000000);
  assert.equal(parsed.b, 0.12345678901234567);
  assert.equal(parsed.c, 1e300);
  assert.equal(parsed.s, '12345678901234567890');
});

test('invalid JSON throws on both paths', () => {
  assert.throws(() => parseJsonExact('{"a": 1'));
  assert.throws(() => parseJsonExact('{"a": 12345678901234567890'));
  assert.throws(() => parseJsonExact(''));
});

test('wire JSON writes bigints as strings and non-finite floats as strings', () => {
  assert.equal(
    stringifyWire({ a: 9007199254740993n, b: 1, c: null }),
    '{"a":"9007199254740993","b":1,"c":null}',
  );
  assert.equal(stringifyWire([NaN, Infinity, -Infinity, null]), '["NaN","Infinity","-Infinity",null]');
  assert.equal(stringifyWire({ x: 'null' }), '{"x":"null"}');
});

test('storage JSON round-trips every value exactly', () => {
  const rows = [
    {
      a: 9007199254740993n,
      b: -1n << 62n,
      c: NaN,
      d: Infinity,
      e: -Infinity,
      f: null,
      g: 'x',
      h: true,
      i: 0.1,
    },
  ];
  const back = decodeStored(encodeStored(rows)) as Record<string, unknown>[];
  assert.equal(back[0]?.a, 9007199254740993n);
  assert.equal(back[0]?.b, -1n << 62n);
  assert.ok(Number.isNaN(back[0]?.c));
  assert.equal(back[0]?.d, Infinity);
  assert.equal(back[0]?.e, -Infinity);
  assert.equal(back[0]?.f, null);
  assert.equal(back[0]?.g, 'x');
  assert.equal(back[0]?.h, true);
  assert.equal(back[0]?.i, 0.1);
  assert.equal(encodeStored([{ a: 1, b: 'y' }]), '[{"a":1,"b":"y"}]');
});

test('rows must be flat objects of scalars', () => {
  assert.ok(isRowObject({ a: 1, b: null, c: 'x', d: 1n, e: false }));
  assert.ok(!isRowObject({ a: { b: 1 } }));
  assert.ok(!isRowObject({ a: [1] }));
  assert.ok(!isRowObject([1]));
  assert.ok(!isRowObject(null));
  assert.ok(!isRowObject('x'));
});
