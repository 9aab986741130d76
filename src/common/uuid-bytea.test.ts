// Unit tests of uuid and bytea against the manual's examples (8.4, 8.12, 9.5): input forms, errors,
// encode/decode, and the claim the representation rests on: comparing the canonical strings is
// PostgreSQL's byte order (memcmp, then the shorter first).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { castValue, coerceIngest } from './cast.ts';
import { SluiceError } from './errors.ts';
import { T } from './types.ts';
import { compareValues, valuesEqual } from './values.ts';
import {
  byteaConcat,
  byteaMd5,
  byteaOf,
  bytesOf,
  decodeBytea,
  encodeBytea,
  parseBytea,
  parseUuid,
  randomUuid,
} from './uuid-bytea.ts';

const CANON = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';

test('uuid: every input form of section 8.12 reads as the canonical text; others are refused', () => {
  const accepted = [
    'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
    '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
    'a0eebc999c0b4ef8bb6d6bb9bd380a11',
    'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11',
    '{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}',
    CANON,
  ];
  for (const s of accepted) assert.equal(parseUuid(s), CANON, s);
  const refused = [
    '',
    '{}',
    'a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11', // a hyphen not after a group of four
    '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', // unbalanced brace
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1', // 31 digits
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111', // 33
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1-',
    ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    'g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    'a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11',
  ];
  for (const s of refused) assert.equal(parseUuid(s), null, s);
  assert.match(randomUuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('bytea: hex and escape input (8.4.1, 8.4.2), and their errors', () => {
  const cases: [string, string][] = [
    ['\\xDEADBEEF', '\\xdeadbeef'],
    ['\\x de ad\tbe\nef ', '\\xdeadbeef'],
    ['\\x', '\\x'],
    ['', '\\x'],
    ['abc \\153\\154\\155 \\052\\251\\124', '\\x616263206b6c6d202aa954'],
    ['\\\\', '\\x5c'],
    ['\\000', '\\x00'],
    ['é', '\\xc3a9'],
  ];
  for (const [input, out] of cases) assert.equal(parseBytea(input), out, input);
  const errors: [string, RegExp][] = [
    ['\\x123', /odd number of digits/],
    ['\\x0g', /invalid hexadecimal digit: "g"/],
    ['\\x1 2', /invalid hexadecimal digit: " "|odd number/],
    ['\\9', /invalid input syntax for type bytea/],
    ['\\400', /invalid input syntax for type bytea/],
    ['a\\', /invalid input syntax for type bytea/],
  ];
  for (const [input, message] of errors) {
    assert.throws(
      () => parseBytea(input),
      (e: unknown) => e instanceof SluiceError && message.test(e.message),
      input,
    );
  }
});

test('encode and decode (table 9.12), md5 and ||', () => {
  assert.equal(encodeBytea(parseBytea('123\\000\\001'), 'base64'), 'MTIzAAE=');
  assert.equal(decodeBytea('MTIzAAE=', 'base64'), '\\x3132330001');
  assert.equal(encodeBytea('\\x1234567890', 'hex'), '1234567890');
  assert.equal(encodeBytea('\\x5c00ff41', 'ESCAPE'), '\\\\\\000\\377A');
  assert.equal(decodeBytea('a\\\\b\\101\\000', 'escape'), '\\x615c624100');
  assert.equal(decodeBytea(' 12 34\n', 'hex'), '\\x1234');
  assert.equal(decodeBytea('MTIz\nAAE=', 'base64'), '\\x3132330001');
  // base64 lines of 76 characters, as PostgreSQL writes them
  const long = encodeBytea(byteaOf(new Uint8Array(100)), 'base64');
  assert.deepEqual(
    long.split('\n').map((l) => l.length),
    [76, 60],
  );
  assert.equal(byteaMd5(parseBytea('Th\\000omas')), '8ab2d3c9689aaf18b4958c334c82d8b1');
  assert.equal(byteaConcat('\\x123456', '\\x789a00bcde'), '\\x123456789a00bcde');
  for (const [s, f, message] of [
    ['x', 'base32', /unrecognized encoding: "base32"/],
    ['MTIz!AE=', 'base64', /invalid symbol "!"/],
    ['MTIzA', 'base64', /invalid base64 end sequence/],
    ['MTI=z', 'base64', /invalid symbol "="|invalid base64 end sequence/],
    ['123', 'hex', /odd number of digits/],
  ] as const) {
    assert.throws(() => decodeBytea(s, f), message, `${s} ${f}`);
  }
});

test('property: encode then decode gives the bytes back in every format', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 200 }),
      fc.constantFrom('hex', 'base64', 'escape'),
      (bytes, format) => {
        const b = byteaOf(bytes);
        assert.equal(decodeBytea(encodeBytea(b, format), format), b);
        assert.deepEqual([...bytesOf(b)], [...bytes]);
      },
    ),
  );
});

test("property: the canonical strings compare as PostgreSQL's bytes do (memcmp, then length)", () => {
  const uuidOf = (bytes: Uint8Array): string => {
    const u = parseUuid(Buffer.from(bytes).toString('hex').toUpperCase());
    assert.ok(u !== null);
    return u;
  };
  const sign = (n: number): number => Math.sign(n);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 6 }), fc.uint8Array({ maxLength: 6 }), (a, b) => {
      const x = byteaOf(a);
      const y = byteaOf(b);
      assert.equal(sign(compareValues(x, y)), sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      assert.equal(valuesEqual(x, y) || x === y, Buffer.from(a).equals(Buffer.from(b)));
    }),
  );
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 16, maxLength: 16 }),
      fc.uint8Array({ minLength: 16, maxLength: 16 }),
      (a, b) => {
        assert.equal(
          sign(compareValues(uuidOf(a), uuidOf(b))),
          sign(Buffer.compare(Buffer.from(a), Buffer.from(b))),
        );
      },
    ),
  );
});

test('casts: only with text; ingest takes any input form and names what it expects', () => {
  assert.equal(castValue(CANON.toUpperCase(), T.text, T.uuid), CANON);
  assert.equal(castValue(CANON, T.uuid, T.text), CANON);
  assert.equal(castValue('\\x01', T.bytea, T.text), '\\x01');
  assert.equal(castValue('\\xAB', T.text, T.bytea), '\\xab');
  assert.throws(() => castValue(1, T.int32, T.uuid), /cannot cast type integer to uuid/);
  assert.throws(() => castValue(CANON, T.uuid, T.int32), /cannot cast type uuid to integer/);
  assert.throws(() => castValue('\\x01', T.bytea, T.uuid), /cannot cast type bytea to uuid/);
  assert.throws(() => castValue('\\x01', T.bytea, T.date), /cannot cast type bytea to date/);
  assert.throws(() => castValue('nope', T.text, T.uuid), /invalid input syntax for type uuid: "nope"/);
  assert.deepEqual(coerceIngest(`{${CANON}}`, T.uuid), { ok: true, value: CANON });
  assert.deepEqual(coerceIngest('\\x0A', T.bytea), { ok: true, value: '\\x0a' });
  assert.equal(coerceIngest(12, T.uuid).ok, false);
  assert.equal(coerceIngest('\\x0', T.bytea).ok, false);
  assert.equal(coerceIngest([1], T.bytea).ok, false);
});
