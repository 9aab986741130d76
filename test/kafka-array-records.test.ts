// Kafka records and arrays, without a broker: a source record's JSON array becomes an int[] /
// numeric[] / text[] value exactly (big integers, numeric scales, NULL elements); a sink writes it as
// a JSON array in every format, also after the changelog's wire text is re-read for the sink, so a
// topic round trip gives back the same array.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coerceIngest } from '../src/common/cast.ts';
import { T, arrayOf, type SqlType, type Value } from '../src/common/types.ts';
import { SqlArray } from '../src/common/array/sql-array.ts';
import { exactKey } from '../src/common/values.ts';
import { parseJsonExact, parseWireForRewrite, stringifyWire } from '../src/common/json-codec.ts';
import { formatEpoch } from '../src/sink/kafka-sink.ts';
import { RecordDecoder } from '../src/source/kafka/record-decoder.ts';

const SPEC = {
  format: 'json',
  columns: ['id', 'big', 'money', 'tags'],
  primaryKey: null,
  maxMessageBytes: 10_000,
  checkRow: () => null,
} as const;

const TYPES: Record<string, SqlType> = {
  big: arrayOf(T.int64),
  money: arrayOf({ kind: 'numeric', precision: 12, scale: 2 }),
  tags: arrayOf(T.text),
};

const RECORD =
  '{"id": 1, "big": [9223372036854775807, null, -3], "money": [1.5, "0.10"], "tags": ["a b", null, "", "NULL"]}';

function coerceRow(row: Record<string, unknown>): Record<string, Value> {
  const out: Record<string, Value> = { id: row.id as number };
  for (const [name, type] of Object.entries(TYPES)) {
    const r = coerceIngest(row[name], type);
    assert.ok(r.ok, `${name}: ${r.ok ? '' : r.expected}`);
    out[name] = r.value;
  }
  return out;
}

const show = (row: Record<string, Value>): string =>
  Object.keys(TYPES)
    .map((k) => `${k}=${String(exactKey(row[k] as SqlArray))}`)
    .join(' ');

test('a Kafka source reads JSON arrays into array columns exactly; a sink writes them back as JSON arrays', () => {
  const [change] = new RecordDecoder(SPEC).decode({
    offsetNumber: 0,
    key: null,
    value: Buffer.from(RECORD),
  });
  assert.ok(change !== undefined && change.kind === 'upsert');
  const row = coerceRow(change.row);
  assert.equal(String(row.big), '{9223372036854775807,NULL,-3}');
  assert.equal(String(row.money), '{1.50,0.10}');
  assert.equal(String(row.tags), '{"a b",NULL,"","NULL"}');

  const reread = parseWireForRewrite(stringifyWire({ changes: [{ op: '+I', row }] })) as {
    changes: { op: '+I'; row: Record<string, unknown> }[];
  };
  const readers = {
    upsert: new RecordDecoder({ ...SPEC, format: 'upsert', primaryKey: ['id'] }),
    debezium: new RecordDecoder({ ...SPEC, format: 'debezium', primaryKey: ['id'] }),
  };
  for (const changes of [[{ op: '+I' as const, row }], reread.changes]) {
    for (const format of ['changelog', 'upsert', 'debezium'] as const) {
      const out = formatEpoch(format, 3, changes, ['id']);
      const message = out.find((m) => m.value !== null);
      assert.ok(message !== undefined, format);
      const text = String(message.value);
      assert.match(
        text,
        /"big":\["9223372036854775807",null,-3\]/,
        `${format}: a JSON array, big integers as strings`,
      );
      let written: Record<string, unknown>;
      if (format === 'changelog') written = (parseJsonExact(text) as { row: Record<string, unknown> }).row;
      else {
        const [op] = readers[format].decode({
          offsetNumber: 1,
          key: message.key === null ? null : Buffer.from(message.key),
          value: Buffer.from(text),
        });
        assert.ok(op !== undefined && op.kind === 'upsert', format);
        written = op.row;
      }
      assert.equal(show(coerceRow(written)), show(row), `${format}: the same arrays`);
    }
  }
});
