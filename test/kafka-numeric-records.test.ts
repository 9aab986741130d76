// Kafka records and exact NUMERIC, without a broker: a source record's JSON number is decoded from
// its text (a numeric column then takes it digit for digit), and a sink writes a numeric as the
// string of its exact digits in every format, so a topic round trip loses nothing. (The suites
// under test/kafka run the same decoder and formatter against a real broker.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Decimal, parseDecimal } from '../src/common/decimal.ts';
import { coerceIngest } from '../src/common/cast.ts';
import type { SqlType } from '../src/common/types.ts';
import { formatEpoch } from '../src/sink/kafka-sink.ts';
import { RecordDecoder } from '../src/source/kafka/record-decoder.ts';

const MONEY: SqlType = { kind: 'numeric', precision: 20, scale: 2 };

test('a Kafka source reads numeric JSON numbers exactly; a sink writes the digits back', () => {
  const decoder = new RecordDecoder({
    format: 'json',
    columns: ['id', 'amount'],
    primaryKey: null,
    maxMessageBytes: 1000,
    checkRow: () => null,
  });
  const text = '{"id":1,"amount":12345678901234567.89}';
  const [change] = decoder.decode({ offsetNumber: 0, key: null, value: Buffer.from(text) });
  assert.ok(change !== undefined && change.kind === 'upsert');
  const coerced = coerceIngest(change.row.amount, MONEY);
  assert.ok(coerced.ok);
  assert.equal(String(coerced.value), '12345678901234567.89', 'not 12345678901234568');
  const value = coerced.value as Decimal;

  for (const format of ['changelog', 'upsert', 'debezium'] as const) {
    const out = formatEpoch(format, 3, [{ op: '+I', row: { id: 1, amount: value } }], ['id']);
    const message = out.find((m) => m.value !== null);
    assert.ok(message !== undefined, format);
    assert.match(String(message.value), /"amount":"12345678901234567\.89"/, format);
    // read back by a source: the string is the exact decimal again
    const parsed = JSON.parse(String(message.value)) as Record<string, unknown>;
    const row = (parsed.row ?? parsed.after ?? parsed) as Record<string, unknown>;
    const back = coerceIngest(row.amount, MONEY);
    assert.ok(back.ok);
    assert.equal((back.value as Decimal).toString(), value.toString(), format);
  }
  assert.equal(parseDecimal('1.50')?.toJSON(), '1.50');
});
