// Kafka records and JSONB, without a broker: a source record's JSON value (object, array, scalar)
// becomes a jsonb value with its numbers exact; a sink writes a jsonb value as JSON (not a string
// holding it) in every format, also after the changelog's wire text is re-read for the sink, so a
// topic round trip gives back the same jsonb value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coerceIngest } from '../src/common/cast.ts';
import { T, type Value } from '../src/common/types.ts';
import { Jsonb, parseJsonb } from '../src/common/json/jsonb.ts';
import { parseJsonExact, parseWireForRewrite, stringifyWire } from '../src/common/json-codec.ts';
import { formatEpoch } from '../src/sink/kafka-sink.ts';
import { RecordDecoder } from '../src/source/kafka/record-decoder.ts';

const SPEC = {
  format: 'json',
  columns: ['id', 'doc'],
  primaryKey: null,
  maxMessageBytes: 10_000,
  checkRow: () => null,
} as const;

const DOC = '{"a": [1, 2.50, 123456789012345678901234567890.5], "b": {"c": null, "é": "x"}, "10": true}';

test('a Kafka source reads a JSON value into jsonb exactly; a sink writes it back as JSON', () => {
  const decoder = new RecordDecoder(SPEC);
  const [change] = decoder.decode({
    offsetNumber: 0,
    key: null,
    value: Buffer.from(`{"id": 1, "doc": ${DOC}}`),
  });
  assert.ok(change !== undefined && change.kind === 'upsert');
  const coerced = coerceIngest(change.row.doc, T.jsonb);
  assert.ok(coerced.ok);
  const doc = coerced.value as Jsonb;
  // exact digits; 2.50 reads as the JSON parser gives it (2.5, an equal jsonb number)
  assert.equal(doc.key(), parseJsonb(DOC).key());
  assert.match(doc.text, /123456789012345678901234567890\.5/);

  const row: Record<string, Value> = { id: 1, doc };
  // the live rows, and the rows as a sink reads them back from the changelog's wire text
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
      assert.doesNotMatch(text, /"doc":"/, `${format}: JSON, not a string`);
      assert.match(text, /123456789012345678901234567890\.5/, `${format}: digits kept`);
      let written: unknown;
      if (format === 'changelog') written = (parseJsonExact(text) as { row: { doc: unknown } }).row.doc;
      else {
        const [op] = readers[format].decode({
          offsetNumber: 1,
          key: message.key === null ? null : Buffer.from(message.key),
          value: Buffer.from(text),
        });
        assert.ok(op !== undefined && op.kind === 'upsert', format);
        written = op.row.doc;
      }
      const again = coerceIngest(written, T.jsonb);
      assert.ok(again.ok, format);
      assert.equal((again.value as Jsonb).key(), doc.key(), `${format}: the same jsonb value`);
    }
  }
});
