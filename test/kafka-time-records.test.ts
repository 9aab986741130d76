// Kafka records and the date/time types, without a broker: a sink writes each value as PostgreSQL's
// text in every format, and a source reading that text back gets the same value (an interval with
// its three fields, a timestamptz as the same instant), so a topic round trip loses nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coerceIngest } from '../src/common/cast.ts';
import { T, type SqlType, type Value } from '../src/common/types.ts';
import { Interval } from '../src/common/time/interval.ts';
import { formatEpoch } from '../src/sink/kafka-sink.ts';
import { RecordDecoder } from '../src/source/kafka/record-decoder.ts';

const COLUMNS: Record<string, SqlType> = {
  took: T.interval,
  started: T.timestamptz,
  clock: T.time,
  day: T.date,
  at: T.timestamp,
};

test('a Kafka sink writes date/time values as PostgreSQL text; a source reads them back exactly', () => {
  const input: Record<string, unknown> = {
    took: '-1 days +02:03:04.5',
    started: '2024-10-27T02:30:00+02:00',
    clock: '23:59:59.999999',
    day: '2024-02-29',
    at: '2024-02-29 13:45:00.25',
  };
  const row: Record<string, Value> = { id: 1 };
  for (const [name, type] of Object.entries(COLUMNS)) {
    const r = coerceIngest(input[name], type);
    assert.ok(r.ok, name);
    row[name] = r.value;
  }
  assert.equal(row.started, '2024-10-27 00:30:00+00');
  const decoder = new RecordDecoder({
    format: 'json',
    columns: ['id', ...Object.keys(COLUMNS)],
    primaryKey: null,
    maxMessageBytes: 10_000,
    checkRow: () => null,
  });
  for (const format of ['changelog', 'upsert', 'debezium'] as const) {
    const out = formatEpoch(format, 3, [{ op: '+I', row }], ['id']);
    const message = out.find((m) => m.value !== null);
    assert.ok(message !== undefined, format);
    assert.match(String(message.value), /"took":"-1 days \+02:03:04\.5"/, format);
    assert.match(String(message.value), /"started":"2024-10-27 00:30:00\+00"/, format);
    const parsed = JSON.parse(String(message.value)) as Record<string, unknown>;
    const written = (parsed.row ?? parsed.after ?? parsed) as Record<string, unknown>;
    const [change] = decoder.decode({
      offsetNumber: 0,
      key: null,
      value: Buffer.from(JSON.stringify(written)),
    });
    assert.ok(change !== undefined && change.kind === 'upsert', format);
    for (const [name, type] of Object.entries(COLUMNS)) {
      const back = coerceIngest(change.row[name], type);
      assert.ok(back.ok, `${format} ${name}`);
      if (back.value instanceof Interval) {
        assert.equal(back.value.storageText(), (row[name] as Interval).storageText(), `${format} ${name}`);
      } else assert.equal(back.value, row[name], `${format} ${name}`);
    }
  }
});
