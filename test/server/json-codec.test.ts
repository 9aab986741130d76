// Exact JSON for Sluice values: big integers are never rounded on the way in or out, storage JSON
// round-trips every value (bigint, NaN, ±Infinity), and the fast paths agree with the careful ones.
import { Decimal } from '../../src/common/decimal.ts';
import { coerceIngest } from '../../src/common/cast.ts';
import { T } from '../../src/common/types.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../support/random-workload.ts';
import {
  bytesAsText,
  decodeStored,
  decodeUtf8Strict,
  describeJsonPath,
  encodeStored,
  findIllFormedText,
  hasLongDigitRun,
  invalidUtf8Offset,
  isRowObject,
  loneSurrogateIndex,
  mayHoldLoneSurrogate,
  parseJsonExact,
  stringifyWire,
} from '../../src/common/json-codec.ts';

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

test('a safe 16-digit integer stays a number; fractions past 15 digits are exact decimals', () => {
  const parsed = parseJsonExact(
    '{"a": 1000000000000000, "b": 0.12345678901234567, "c": 1e300, "s": "12345678901234567890"}',
  ) as Record<string, unknown>;
  assert.equal(parsed.a, 1000000000000000);
  // Read from its text (a numeric column keeps every digit); a float column takes the nearest double.
  assert.ok(parsed.b instanceof Decimal);
  assert.equal(parsed.b.toString(), '0.12345678901234567');
  const asFloat = coerceIngest(parsed.b, T.float64);
  assert.ok(asFloat.ok);
  assert.equal(asFloat.value, 0.12345678901234567);
  assert.equal(parsed.c, 1e300);
  assert.equal(parsed.s, '12345678901234567890');
});

test('a fraction that a double rounds to an integer is still read exactly', () => {
  // Found by the decimal property test: the doubles of these texts print as short integers.
  const parsed = parseJsonExact(
    '{"a": 3363735970207246.750000000000, "b": 1.00000000000000001, "c": -0.99999999999999999}',
  ) as Record<string, unknown>;
  assert.ok(parsed.a instanceof Decimal);
  assert.equal(parsed.a.toString(), '3363735970207246.750000000000');
  assert.ok(parsed.b instanceof Decimal);
  assert.equal(parsed.b.toString(), '1.00000000000000001');
  assert.ok(parsed.c instanceof Decimal);
  assert.equal(parsed.c.toString(), '-0.99999999999999999');
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

test('storage JSON keeps -0 and objects whose keys look like its tags (journal and checkpoints alike)', () => {
  // One codec for the journal and the checkpoint store: what one keeps exactly, the other does too.
  const back = decodeStored(encodeStored({ k: ['x'], i: [-0, 0, 1.5], d: [] })) as { i: number[] };
  assert.ok(Object.is(back.i[0], -0), '-0 survives storage');
  assert.ok(Object.is(back.i[1], 0));
  const tricky = { $i: '5', $f: 'NaN', $$x: 1, plain: 2 };
  assert.deepEqual(decodeStored(encodeStored(tricky)), tricky);
  // Text written before -0 was tagged decodes as it always did.
  assert.deepEqual(decodeStored('{"k":["a"],"i":[{"$i":"12"},{"$f":"NaN"},0],"d":[]}'), {
    k: ['a'],
    i: [12n, NaN, 0],
    d: [],
  });
});

test('rows must be objects of column values (objects and arrays only a jsonb column takes)', () => {
  assert.ok(isRowObject({ a: 1, b: null, c: 'x', d: 1n, e: false }));
  assert.ok(isRowObject({ a: { b: 1 } }));
  assert.ok(isRowObject({ a: [1] }));
  assert.ok(!isRowObject([1]));
  assert.ok(!isRowObject(null));
  assert.ok(!isRowObject('x'));
});

test('well-formed text: lone surrogates are found, pairs are not', () => {
  assert.equal(loneSurrogateIndex('plain'), -1);
  assert.equal(loneSurrogateIndex('pair \ud83d\ude00'), -1);
  assert.equal(loneSurrogateIndex('ab\ud800'), 2);
  assert.equal(loneSurrogateIndex('\udc00x'), 0);
  assert.equal(loneSurrogateIndex('\ud83d\ude00\ud83d'), 2);
  assert.equal(mayHoldLoneSurrogate('{"a": "\\ud800"}'), true);
  assert.equal(mayHoldLoneSurrogate('{"a": "\\u00e9 \\uE000"}'), false);
  const found = findIllFormedText(parseJsonExact('{"insert": [{"a": 1}, {"b": "x\\udfff"}]}'));
  assert.deepEqual(found && { path: found.path, inKey: found.inKey, index: found.index }, {
    path: ['insert', 1, 'b'],
    inKey: false,
    index: 1,
  });
  const key = findIllFormedText(parseJsonExact('[{"na\\ud800me": 1}]'));
  assert.equal(key?.inKey, true);
  assert.equal(describeJsonPath(key?.path ?? []), '$[0]["na\\ud800me"]');
  assert.equal(findIllFormedText(parseJsonExact('[{"a": "ok \\ud83d\\ude00"}]')), null);
  // Iterative: nesting far deeper than the stack allows.
  let deep: unknown = 'x\ud800';
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.equal(findIllFormedText(deep)?.path.length, 200_000);
});

test('UTF-8: strict decoding refuses what is not UTF-8; bytesAsText shows it as \\xHH', () => {
  assert.equal(decodeUtf8Strict(Buffer.from('héllo 😀')), 'héllo 😀');
  const surrogate = Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x62]);
  assert.equal(decodeUtf8Strict(surrogate), null);
  assert.equal(invalidUtf8Offset(surrogate), 1);
  assert.equal(bytesAsText(surrogate), 'a\\xED\\xA0\\x80b');
  assert.equal(bytesAsText(Buffer.from([0xe5, 0xa5, 0xbd, 0xff])), '好\\xFF');
  assert.equal(bytesAsText(Buffer.from('ok')), 'ok');
  assert.equal(loneSurrogateIndex(bytesAsText(Buffer.from([0xed, 0xbf, 0xbf]))), -1);
});

test('the digit-run probe finds exactly what /\\d[\\d.]{15}/ finds', () => {
  const reference = /\d[\d.]{15}/;
  const cases = [
    '',
    '1234567890123456',
    '123456789012345',
    '.123456789012345',
    '.1234567890123456',
    '1.00000000000000001',
    '[{"a":1,"b":3363735970207246.75}]',
    `${'x'.repeat(31)}1234567890123456`,
    `${'x'.repeat(17)}123456789012345,1234567890123456`,
  ];
  let seed = 7;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let k = 0; k < 20_000; k++) {
    let s = '';
    const alphabet = rand(2) === 0 ? '0123456789.' : '0123456789.a,"';
    for (let j = rand(60); j > 0; j--) s += alphabet[rand(alphabet.length)];
    cases.push(s);
  }
  for (const s of cases) assert.equal(hasLongDigitRun(s), reference.test(s), s);
});

test('the digit-run search reads about one character in ten of an ingest body of short numbers', () => {
  // A body like the HTTP benchmark's: ids of 7 digits, numbers of up to 5.
  const rng = new Rng(11);
  const rand = (n: number): number => rng.int(0, n - 1);
  const rows: string[] = [];
  for (let i = 0; i < 1000; i++)
    rows.push(`{"order_id":${1_000_000 + i},"seller_id":${rand(100_000)},"amount":${1 + rand(100)}}`);
  const body = `[${rows.join(',')}]`;
  // The search reads its text only through `length` and `charCodeAt`: count the reads.
  let reads = 0;
  const counted = {
    length: body.length,
    charCodeAt: (i: number): number => {
      reads++;
      return body.charCodeAt(i);
    },
  } as unknown as string;
  assert.equal(hasLongDigitRun(counted), false);
  // Measuring every run a probe lands in from both ends read 35% of the characters.
  assert.ok(reads <= body.length / 8, `${reads} reads of ${body.length} characters`);
  const withLong = `${body.slice(0, -1)},{"order_id":12345678901234567}]`;
  assert.equal(hasLongDigitRun(withLong), true);
});

test('strict UTF-8 decoding reads ASCII bytes as they are, at any offset of their buffer', () => {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const rng = new Rng(5);
  const rand = (n: number): number => rng.int(0, n - 1);
  for (let k = 0; k < 2_000; k++) {
    const whole = new Uint8Array(rand(40) + 8);
    // Mostly ASCII; now and then a byte past it (a UTF-8 lead, a continuation, a BOM's first byte).
    for (let i = 0; i < whole.length; i++)
      whole[i] = rand(8) === 0 ? [0xc3, 0xa9, 0xef, 0xff][rand(4)]! : rand(128);
    const bytes = whole.subarray(rand(4), whole.length - rand(4));
    let expected: string | null;
    try {
      expected = decoder.decode(bytes);
    } catch {
      expected = null;
    }
    assert.equal(decodeUtf8Strict(bytes), expected);
  }
  assert.equal(decodeUtf8Strict(new Uint8Array(0)), '');
  assert.equal(decodeUtf8Strict(Buffer.from('\ufeff[1]')), '\ufeff[1]');
});
