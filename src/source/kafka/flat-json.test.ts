// The flat row reader: what it reads is exactly what the general path (strict UTF-8 + exact JSON)
// reads, what it declines goes to the general path, and plain rows never reach that path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Value } from '../../common/types.ts';
import { decodeUtf8Strict, parseJsonExact } from '../../common/json-codec.ts';
import { FlatJsonReader } from './flat-json.ts';
import type { KafkaRecord } from './kafka-client.ts';
import { PoisonRecord, RecordDecoder } from './record-decoder.ts';

const COLUMNS = ['id', 'seller', 'amount', 'note', 'ok', '7', ''];

/** The general path's reading of the bytes, or the error it throws. */
function general(bytes: Buffer): { value: unknown } | { error: true } {
  const text = decodeUtf8Strict(bytes);
  if (text === null) return { error: true };
  try {
    return { value: parseJsonExact(text) };
  } catch {
    return { error: true };
  }
}

/** Bytes a record's value may sit between in a fetch buffer (the next record's, a batch header's). */
const FRAMES = ['', '}', '0', '1}', 'e5', ' ', '"', ',"id":1}', 'ue}', '\u0000'].map((t) => Buffer.from(t));
let frameAt = 0;

/**
 * Asserts that whatever the flat reader reads, it reads as the general path does (order and all),
 * and that it reads the same bytes inside a larger buffer (`rowIn`) alike, never past their end.
 */
function agrees(reader: FlatJsonReader, bytes: Buffer): boolean {
  const row = reader.row(bytes);
  const before = FRAMES[frameAt++ % FRAMES.length] as Buffer;
  const after = FRAMES[(frameAt * 7) % FRAMES.length] as Buffer;
  const framed = Buffer.concat([before, bytes, after]);
  const inner = reader.rowIn(framed, before.length, before.length + bytes.length);
  assert.deepStrictEqual(inner, row, `inside ${framed.toString('latin1')}`);
  // By position: the same success, each column's value or undefined (absent), read from the frame too.
  const values: unknown[] = ['stale'];
  assert.equal(reader.valuesIn(framed, before.length, before.length + bytes.length, values), row !== null);
  if (row !== null) {
    assert.equal(values.length, COLUMNS.length);
    COLUMNS.forEach((c, i) => assert.ok(Object.is(values[i], Object.hasOwn(row, c) ? row[c] : undefined), c));
    assert.deepStrictEqual(reader.rowAgain(framed, before.length, before.length + bytes.length), row);
  }
  if (row === null) return false;
  const expected = general(bytes);
  assert.ok('value' in expected, `flat reader read what JSON refuses: ${bytes.toString('latin1')}`);
  assert.deepStrictEqual(row, expected.value, bytes.toString('latin1'));
  assert.deepStrictEqual(Object.keys(row), Object.keys(expected.value as object));
  for (const k of Object.keys(row))
    assert.ok(Object.is(row[k], (expected.value as Record<string, unknown>)[k]));
  assert.equal(Object.getPrototypeOf(row), Object.prototype);
  return true;
}

test('reads plain flat rows exactly as JSON.parse does', () => {
  const reader = new FlatJsonReader(COLUMNS);
  const cases = [
    '{"id":1,"seller":2,"amount":3}',
    ' {\t"id" : -0 ,\n"amount":\r0.5e-3 } ',
    '{}',
    '{ }',
    '{"note":"a b, {c}: [d]","ok":true,"amount":null}',
    '{"ok":false,"7":12,"":"empty name"}',
    '{"amount":123456789012345}',
    '{"amount":-123456789012345}',
    '{"amount":1.25E+2,"id":0}',
    '{"amount":9999.9999999999}',
    '{"note":"123456789012345"}',
  ];
  for (const text of cases) assert.ok(agrees(reader, Buffer.from(text)), text);
});

test('declines what only the general path reads exactly, and what is not JSON', () => {
  const reader = new FlatJsonReader(COLUMNS);
  const declined = [
    '{"amount":1234567890123456}', // 16 digits: the exact parser's
    '{"amount":1.23456789012345}', // 15 digits and a point
    '{"note":"1234567890123456"}', // a long run in a string (the exact reparse)
    '{"amount":1e1234567890123456}',
    '{"note":"caf\u00e9"}', // beyond ASCII
    '{"note":"a\\"b"}', // an escape
    '{"note":"\\ud800"}', // a lone surrogate escape
    '{"id":1,"id":2}', // a duplicate field
    '{"colour":"red"}', // not a column
    '{"id":{"a":1}}',
    '{"id":[1]}',
    '[1,2]',
    '"text"',
    '1',
    'null',
    '',
    '{"id":01}',
    '{"id":1.}',
    '{"id":.5}',
    '{"id":-}',
    '{"id":1e}',
    '{"id":+1}',
    '{"id":1,}',
    '{"id":1 "seller":2}',
    '{"id":1}x',
    '{"id":1',
    '{"id":tru}',
    '{"id":truex}',
    '{"id":NaN}',
    // beyond a double: the general path refuses it, naming the column
    '{"id":1e400}',
    '{"id":-1E+400}',
    "{'id':1}",
    '{"note":"tab\there"}',
    '{"__proto__":1}',
    '\ufeff{"id":1}',
  ];
  for (const text of declined) assert.equal(reader.row(Buffer.from(text)), null, text);
  assert.equal(reader.declined, declined.length);
  assert.equal(reader.read, 0);
});

test('random rows and mutated bytes: never a reading that differs from the general path', () => {
  let seed = 20261203;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)] as T;
  const scalars = [
    () => String(rand(1e6) - 5e5),
    () => String((rand(1e6) - 5e5) / 64),
    () => `${rand(10)}.${rand(1000)}e${pick(['', '+', '-'])}${rand(30)}`,
    () => JSON.stringify('s'.repeat(rand(5)) + String(rand(1e9))),
    () => pick(['true', 'false', 'null', '-0', '0', '"x"']),
    () => String(rand(2 ** 30) * 2 ** 23 + rand(2 ** 23)),
  ];
  const space = () => pick(['', '', '', ' ', '\n', '\t ']);
  const reader = new FlatJsonReader(COLUMNS);
  let read = 0;
  for (let i = 0; i < 20_000; i++) {
    const fields = COLUMNS.filter(() => rand(3) !== 0).sort(() => rand(3) - 1);
    const body = fields.map((c) => `${space()}"${c}"${space()}:${space()}${pick(scalars)()}${space()}`);
    const bytes = Buffer.from(`${space()}{${body.join(',')}}${space()}`);
    if (rand(2) === 0) {
      // A mutation: a byte replaced, dropped or duplicated.
      const at = rand(bytes.length);
      const mutated =
        rand(3) === 0
          ? Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)])
          : rand(2) === 0
            ? Buffer.concat([bytes.subarray(0, at), bytes.subarray(at, at + 1), bytes.subarray(at)])
            : Buffer.from(bytes).fill(
                pick([0x22, 0x2c, 0x3a, 0x7b, 0x7d, 0x30, 0x2e, 0x65, 0x2d, 0x20]),
                at,
                at + 1,
              );
      if (agrees(reader, mutated)) read++;
    } else if (agrees(reader, bytes)) read++;
  }
  // Most unmutated rows are plain: the reader is not vacuously declining everything.
  assert.ok(read > 8_000, `read ${read}`);
});

test("a json source's plain records are typed without the general path; others as before", () => {
  const decoder = new RecordDecoder({
    format: 'json',
    columns: ['id', 'seller', 'amount'],
    primaryKey: ['id'],
    maxMessageBytes: 200,
    checkRow: () => null,
    typing: {
      typed: (row) => {
        const cell = (v: unknown): Value => (v === undefined ? null : (v as Value));
        return [cell(row.id), cell(row.seller), cell(row.amount)];
      },
      eventTime: null,
    },
  });
  const rec = (text: string): KafkaRecord => ({
    offsetNumber: 0,
    key: null,
    value: Buffer.from(text),
  });
  for (let i = 0; i < 100; i++) {
    assert.deepEqual(decoder.decodeTyped(rec(`{"id":${i},"seller":${i % 7},"amount":${i / 4}}`)), [
      i,
      i % 7,
      i / 4,
    ]);
  }
  assert.equal(decoder.flat.read, 100);
  assert.equal(decoder.flat.declined, 0);
  // Escapes, big integers and poison still go the general way, with the same results and reasons.
  assert.deepEqual(decoder.decodeTyped(rec('{"id":9223372036854775807,"seller":"\\u0041"}')), [
    9223372036854775807n,
    'A',
    null,
  ]);
  const reason = (text: string): string => {
    try {
      decoder.decodeTyped(rec(text));
    } catch (error) {
      assert.ok(error instanceof PoisonRecord);
      return error.message;
    }
    return 'read';
  };
  assert.equal(reason('{"id":1,"colour":"red"}'), 'value has unknown column "colour"');
  assert.equal(reason('[1]'), 'value is not a JSON object');
  assert.match(reason('{"id":'), /^value is not valid JSON/);
  assert.match(reason('{"seller":"\\udc00"}'), /lone surrogate/);
  assert.equal(decoder.flat.read, 100);
  assert.equal(decoder.flat.declined, 5);
});
