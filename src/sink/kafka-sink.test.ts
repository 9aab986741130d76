// Message formats of the Kafka sink: upsert, Debezium and changelog, each carrying its epoch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatEpoch, type WireChange } from './kafka-sink.ts';

const changes: WireChange[] = [
  { op: '+I', row: { seller: 1, total: 10 } },
  { op: '-U', row: { seller: 2, total: 5 } },
  { op: '+U', row: { seller: 2, total: 7 } },
  { op: '-D', row: { seller: 3, total: 1 } },
];

test('upsert: the view key is the message key, deletes are tombstones, -U is folded into +U', () => {
  const out = formatEpoch('upsert', 4, changes, ['seller']);
  assert.deepEqual(
    out.map((m) => [m.key, m.value]),
    [
      ['{"seller":1}', '{"seller":1,"total":10}'],
      ['{"seller":2}', '{"seller":2,"total":7}'],
      ['{"seller":3}', null],
    ],
  );
  for (const m of out) assert.deepEqual(m.headers, { 'sluice-epoch': '4' });
  assert.throws(() => formatEpoch('upsert', 4, changes, null), /unique key/);
});

test('debezium: before/after/op envelopes, an update pairs -U with +U', () => {
  const out = formatEpoch('debezium', 9, changes, ['seller']).map((m) => JSON.parse(m.value ?? 'null'));
  assert.deepEqual(out, [
    { before: null, after: { seller: 1, total: 10 }, op: 'c' },
    { before: { seller: 2, total: 5 }, after: { seller: 2, total: 7 }, op: 'u' },
    { before: { seller: 3, total: 1 }, after: null, op: 'd' },
  ]);
});

test('changelog: one message per change with its epoch and op', () => {
  const out = formatEpoch('changelog', 2, [{ op: '+I', row: { b: 1 }, n: 3 }], null);
  assert.deepEqual(out, [
    { key: null, value: '{"epoch":2,"op":"+I","row":{"b":1},"n":3}', headers: { 'sluice-epoch': '2' } },
  ]);
});
