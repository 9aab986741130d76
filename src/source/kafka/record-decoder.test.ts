// Decoding of Kafka records by format, and the reasons given for records that cannot be read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import type { KafkaRecord } from './kafka-client.ts';
import { PoisonRecord, RecordDecoder, type DecodeSpec } from './record-decoder.ts';

const checkRow = (row: Record<string, unknown>): string | null =>
  row.amount !== undefined && row.amount !== null && typeof row.amount !== 'number'
    ? `column "amount" expects a number, got ${JSON.stringify(row.amount)}`
    : null;

function spec(format: DecodeSpec['format'], primaryKey: string[] | null = ['id']): DecodeSpec {
  return { format, columns: ['id', 'seller', 'amount'], primaryKey, maxMessageBytes: 200, checkRow };
}

function rec(value: unknown, key?: unknown): KafkaRecord {
  const buf = (v: unknown): Buffer | null =>
    v === null || v === undefined
      ? null
      : Buffer.isBuffer(v)
        ? v
        : Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
  return { offsetNumber: 7, key: buf(key), value: buf(value) };
}

function reason(decoder: RecordDecoder, record: KafkaRecord): string {
  try {
    decoder.decode(record);
  } catch (error) {
    assert.ok(error instanceof PoisonRecord);
    return error.message;
  }
  assert.fail('expected a poison record');
}

test('json: the value is a row; bad JSON, unknown columns, wrong types and oversize are poison', () => {
  const d = new RecordDecoder(spec('json', null));
  assert.deepEqual(d.decode(rec({ id: 1, seller: 2, amount: 3.5 })), [
    { kind: 'upsert', row: { id: 1, seller: 2, amount: 3.5 } },
  ]);
  assert.match(reason(d, rec('{"id":')), /^value is not valid JSON/);
  assert.equal(reason(d, rec({ id: 1, colour: 'red' })), 'value has unknown column "colour"');
  assert.equal(reason(d, rec({ id: 1, amount: 'x' })), 'column "amount" expects a number, got "x"');
  assert.equal(reason(d, rec([1, 2])), 'value is not a JSON object');
  assert.equal(reason(d, rec(null)), 'message has no value');
  assert.match(reason(d, rec({ id: 1, seller: 'y'.repeat(300) })), /exceeds max_message_bytes 200/);
});

test('json: integers beyond 2^53 are read exactly', () => {
  const d = new RecordDecoder(spec('json', null));
  assert.deepEqual(d.decode(rec('{"id":9223372036854775807}')), [
    { kind: 'upsert', row: { id: 9223372036854775807n } },
  ]);
});

test('upsert: key → row, a tombstone deletes, the key must agree with the value', () => {
  const d = new RecordDecoder(spec('upsert'));
  // Without the engine's key identity (`keyIdentity`), a key's identity is its values' text (keyText: each with its length).
  const upsert5 = { kind: 'upsert', row: { seller: 2, id: 5 }, identity: '1:5' };
  assert.deepEqual(d.decode(rec({ seller: 2 }, { id: 5 })), [upsert5]);
  assert.deepEqual(d.decode(rec({ seller: 2 }, 5)), [upsert5]);
  assert.deepEqual(d.decode(rec(null, { id: 5 })), [{ kind: 'delete', key: { id: 5 }, identity: '1:5' }]);
  assert.equal(reason(d, rec({ seller: 2 })), 'message has no key');
  assert.equal(reason(d, rec({ seller: 2 }, { other: 1 })), 'key column "id" is missing');
  assert.match(reason(d, rec({ id: 6 }, { id: 5 })), /differs from the key's/);
});

test('debezium: c/r insert, u replaces (and removes a changed key), d deletes, tombstones are ignored', () => {
  const d = new RecordDecoder(spec('debezium'));
  const row = { id: 1, seller: 2, amount: 1 };
  const identity = '1:1';
  assert.deepEqual(d.decode(rec({ before: null, after: row, op: 'c' })), [{ kind: 'upsert', row, identity }]);
  assert.deepEqual(d.decode(rec({ schema: {}, payload: { before: null, after: row, op: 'r' } })), [
    { kind: 'upsert', row, identity },
  ]);
  assert.deepEqual(d.decode(rec({ before: row, after: { ...row, amount: 2 }, op: 'u' })), [
    { kind: 'upsert', row: { ...row, amount: 2 }, identity },
  ]);
  assert.deepEqual(d.decode(rec({ before: row, after: { ...row, id: 9 }, op: 'u' })), [
    { kind: 'delete', key: { id: 1 }, identity },
    { kind: 'upsert', row: { ...row, id: 9 }, identity: '1:9' },
  ]);
  assert.deepEqual(d.decode(rec({ before: row, after: null, op: 'd' })), [
    { kind: 'delete', key: { id: 1 }, identity },
  ]);
  assert.deepEqual(d.decode(rec(null, { id: 1 })), []);
  assert.match(reason(d, rec({ before: null, after: row, op: 'x' })), /no valid "op"/);
  assert.equal(
    reason(d, rec({ before: null, after: null, op: 'd' })),
    'Debezium delete without a "before" row',
  );
});

test('text that is not well-formed Unicode is poison, in values and keys, with a well-formed reason', () => {
  const json = new RecordDecoder(spec('json', null));
  assert.equal(
    reason(json, rec(String.raw`{"id": 1, "seller": "x\ud800"}`)),
    'value holds text that is not well-formed Unicode: lone surrogate U+D800 in $.seller',
  );
  assert.match(
    reason(json, rec(String.raw`{"id": 1, "sel\udc01ler": 2}`)),
    /lone surrogate U\+DC01 in the key \$\["sel\\udc01ler"\]/,
  );
  const bytes: KafkaRecord = {
    offsetNumber: 8,
    key: null,
    value: Buffer.concat([
      Buffer.from('{"id": 1, "seller": "'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ]),
  };
  assert.equal(reason(json, bytes), 'value is not valid UTF-8 (invalid byte sequence at byte 21)');
  const upsert = new RecordDecoder(spec('upsert'));
  assert.match(
    reason(upsert, rec({ seller: 2 }, String.raw`{"id": "\udbff"}`)),
    /^key holds text that is not well-formed/,
  );
  // A surrogate pair is well-formed text.
  assert.deepEqual(json.decode(rec(String.raw`{"id": 1, "seller": "\ud83d\ude00"}`)), [
    { kind: 'upsert', row: { id: 1, seller: '😀' } },
  ]);
});

test('json with the source typing: decodeTyped hands the typed row on; the same records are poison', () => {
  // A stand-in for the source's normalizeRow: an array in column order, a SluiceError on a bad value.
  const typed = (row: Record<string, unknown>): Value[] => {
    if (row.amount !== undefined && row.amount !== null && typeof row.amount !== 'number') {
      throw new SluiceError(
        'INVALID_VALUE',
        `column "amount" expects a number, got ${JSON.stringify(row.amount)}`,
      );
    }
    return [(row.id ?? null) as Value, (row.seller ?? null) as Value, (row.amount ?? null) as Value];
  };
  const d = new RecordDecoder({ ...spec('json', ['id']), typing: { typed, eventTime: null } });
  assert.deepEqual(d.decodeTyped(rec({ id: 1, seller: 2, amount: 3.5 })), [1, 2, 3.5]);
  assert.deepEqual(d.decodeTyped(rec('{"id":9223372036854775807}')), [9223372036854775807n, null, null]);
  const typedReason = (record: KafkaRecord): string => {
    try {
      d.decodeTyped(record);
    } catch (error) {
      assert.ok(error instanceof PoisonRecord);
      return error.message;
    }
    assert.fail('expected a poison record');
  };
  assert.match(typedReason(rec('{"id":')), /^value is not valid JSON/);
  assert.match(typedReason(rec(Buffer.from([0x7b, 0xff, 0x7d]))), /^value is not valid UTF-8/);
  assert.equal(typedReason(rec({ id: 1, colour: 'red' })), 'value has unknown column "colour"');
  assert.equal(typedReason(rec({ id: 1, amount: 'x' })), 'column "amount" expects a number, got "x"');
  assert.equal(typedReason(rec([1, 2])), 'value is not a JSON object');
  assert.equal(typedReason(rec(null)), 'message has no value');
  assert.match(typedReason(rec({ id: 1, seller: 'y'.repeat(300) })), /exceeds max_message_bytes 200/);
  // Only a json decoder with a typing decodes this way.
  assert.throws(() => new RecordDecoder(spec('upsert')).decodeTyped(rec({ id: 1 }, 1)), /typed decoding/);
});

test("json with the engine's typing: rows read by position type exactly as rows read as objects", async () => {
  const { Engine } = await import('../../exec/engine.ts');
  const engine = new Engine();
  engine.execute(
    `CREATE SOURCE s (id BIGINT NOT NULL, seller INTEGER, amount DOUBLE PRECISION, note TEXT,
     PRIMARY KEY (id)) FROM KAFKA (brokers 'k1:9092', topic 't', format 'json')`,
  );
  const typing = engine.sourceRowTyping('s');
  assert.ok(typing !== null && typing.typedValues !== undefined);
  // The values path is taken (a values path answering a fixed row shows it).
  const declining = new RecordDecoder({
    format: 'json',
    columns: ['id', 'seller', 'amount', 'note'],
    primaryKey: ['id'],
    maxMessageBytes: 200,
    checkRow: () => null,
    typing: { ...typing, typedValues: () => [42] },
  });
  assert.deepEqual(declining.decodeTyped(rec('{"id":1}')), [42]);
  // ... only when it reads the source's columns in the source's order.
  const reordered = new RecordDecoder({
    format: 'json',
    columns: ['seller', 'id', 'amount', 'note'],
    primaryKey: ['id'],
    maxMessageBytes: 200,
    checkRow: () => null,
    typing: { ...typing, typedValues: () => [42] },
  });
  assert.deepEqual(reordered.decodeTyped(rec('{"id":1}')), [1, null, null, null]);
  const base: DecodeSpec = {
    format: 'json',
    columns: ['id', 'seller', 'amount', 'note'],
    primaryKey: ['id'],
    maxMessageBytes: 200,
    checkRow: () => null,
  };
  const byPosition = new RecordDecoder({ ...base, typing });
  const byObject = new RecordDecoder({ ...base, typing: { typed: typing.typed, eventTime: null } });
  const outcome = (d: RecordDecoder, text: string): unknown => {
    try {
      return d.decodeTyped(rec(text));
    } catch (error) {
      assert.ok(error instanceof PoisonRecord);
      return `poison: ${error.message}`;
    }
  };
  const cases = [
    '{"id":1,"seller":2,"amount":0.25,"note":"a"}',
    '{"note":"b","id":2}', // absent: NULL
    '{"id":3,"seller":null,"amount":null}',
    '{"id":4,"seller":"7"}', // a text the general path coerces
    '{"id":5,"seller":2147483648}', // out of range: poison, named
    '{"seller":1}', // NOT NULL key absent
    '{"id":-0,"amount":-0}',
    '{"id":6,"note":7}',
    '{"id":9223372036854775807}', // declined by the flat reader
    '{"id":8,"colour":"red"}',
  ];
  for (const text of cases) assert.deepStrictEqual(outcome(byPosition, text), outcome(byObject, text), text);
  // Every case but the declined ones was read once by position (no second count for a re-read).
  assert.equal(byPosition.flat.read, byObject.flat.read);
  assert.equal(byPosition.flat.declined, byObject.flat.declined);
});

test('a number beyond a double is poison where it is read, naming its column, in every format', () => {
  const outOfRange = 'number out of range for type double precision';
  const json = new RecordDecoder(spec('json', null));
  assert.equal(
    reason(json, rec('{"id":1,"amount":1e400}')),
    `invalid value for column "amount": ${outOfRange}`,
  );
  assert.equal(
    reason(json, rec('{"id":1,"amount":-1e400}')),
    `invalid value for column "amount": ${outOfRange}`,
  );
  // nested (a jsonb column's value), and on the exact parser's path (a run of 16 digits)
  assert.equal(
    reason(json, rec('{"id":1,"seller":{"a":[2e400]}}')),
    `invalid value for column "seller": ${outOfRange} (at $.a[0] of its value)`,
  );
  assert.equal(
    reason(json, rec('{"id":12345678901234567890,"amount":1e400}')),
    `invalid value for column "amount": ${outOfRange}`,
  );
  const upsert = new RecordDecoder(spec('upsert'));
  assert.equal(
    reason(upsert, rec('{"amount":1e400}', '{"id":1}')),
    `invalid value for column "amount": ${outOfRange}`,
  );
  assert.equal(reason(upsert, rec('{"amount":1}', '{"id":1e400}')), `key holds a ${outOfRange} at $.id`);
  const debezium = new RecordDecoder(spec('debezium'));
  assert.equal(
    reason(debezium, rec('{"schema":{},"payload":{"op":"c","after":{"id":1,"amount":-1e400}}}')),
    `invalid value for column "amount": ${outOfRange}`,
  );
  assert.equal(
    reason(debezium, rec('{"op":"c","after":{"id":1},"ts_ms":1e400}')),
    `value holds a ${outOfRange} at $.ts_ms`,
  );
});
