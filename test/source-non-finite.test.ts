// A Kafka json source's double column takes NaN and ±Infinity sent as text, on the flat reader's
// typed path and on the general path, while a number beyond a double (1e400) is poison where it is
// read, naming its column; an integer column refuses NaN as the table's write path does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';
import type { KafkaRecord } from '../src/source/kafka/kafka-client.ts';
import { PoisonRecord, RecordDecoder } from '../src/source/kafka/record-decoder.ts';

function decoder(): RecordDecoder {
  const engine = new Engine();
  engine.execute(
    `CREATE SOURCE s (id integer PRIMARY KEY, x double precision, i integer)
       FROM KAFKA (brokers '127.0.0.1:19092', topic 's', format 'json')`,
  );
  return new RecordDecoder({
    format: 'json',
    columns: ['id', 'x', 'i'],
    primaryKey: ['id'],
    maxMessageBytes: 1000,
    checkRow: () => null,
    typing: engine.sourceRowTyping('s'),
  });
}

const record = (text: string): KafkaRecord => ({ offsetNumber: 0, key: null, value: Buffer.from(text) });

function reason(d: RecordDecoder, text: string): string {
  try {
    d.decodeTyped(record(text));
  } catch (error) {
    assert.ok(error instanceof PoisonRecord, String(error));
    return error.message;
  }
  assert.fail(`expected ${text} to be poison`);
}

test('a double column takes "NaN" and "±Infinity" from Kafka; 1e400 is poison where it is read', () => {
  const d = decoder();
  for (const [text, x] of [
    ['{"id":1,"x":"NaN"}', NaN],
    ['{"id":2,"x":"Infinity"}', Infinity],
    ['{"id":3,"x":"-Infinity","i":5}', -Infinity],
    // an escape takes the general path
    ['{"id":4,"x":"\\u004eaN"}', NaN],
  ] as const) {
    const row = d.decodeTyped(record(text));
    assert.ok(Object.is(row[1], x), `${text}: ${String(row[1])}`);
  }
  assert.equal(
    reason(d, '{"id":5,"x":1e400}'),
    'invalid value for column "x": number out of range for type double precision',
  );
  assert.equal(
    reason(d, '{"id":5,"i":-1e400}'),
    'invalid value for column "i": number out of range for type double precision',
  );
  assert.match(reason(d, '{"id":6,"i":"NaN"}'), /^invalid value for column "i" of table "s"/);
});
