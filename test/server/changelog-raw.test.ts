// A lazy change set (its rows value arrays, src/common/raw-changes.ts) encodes to exactly the bytes
// of the same change set given as row objects: the stored entry and the WebSocket message alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeOp, ViewChangeSet } from '../../src/common/changes.ts';
import type { Value } from '../../src/common/types.ts';
import {
  ChangeList,
  lazyChangeSet,
  rawChangesOf,
  withTimeFields,
  type RawChange,
} from '../../src/common/raw-changes.ts';
import {
  encodeChanges,
  encodeChangesStored,
  encodeChangesWire,
  wireMessageGeneric,
} from '../../src/storage/changelog-codec.ts';

/** The same change set as plain data (rows as objects), which the row encoder reads. */
function plain(cs: ViewChangeSet): ViewChangeSet {
  return JSON.parse(
    JSON.stringify(cs, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
    (_k, v: unknown) => (typeof v === 'string' && /^-?\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v),
  ) as ViewChangeSet;
}

test('lazy change sets encode byte for byte as their row objects do', () => {
  let seed = 7;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed % n;
  };
  const values: Value[] = [
    0,
    -7,
    1.5,
    1e21,
    2 ** 53,
    'a',
    'q"\\\n',
    '\u2028ü',
    '',
    null,
    true,
    false,
    2n ** 70n,
  ];
  const ops: ChangeOp[] = ['+I', '-D', '-U', '+U'];
  const columnSets = [
    ['seller_id', 'total'],
    ['bucket', 'sellers', 'x'],
    // Index-like names come first in a row object; a repeated name is one key there.
    ['b', '1', 'a'],
    ['a', 'b', 'a'],
    [],
  ];
  let rawEncoded = 0;
  for (let round = 0; round < 300; round++) {
    const columns = columnSets[rand(columnSets.length)]!;
    const rows: RawChange[] = Array.from({ length: columns.length === 0 ? 0 : rand(12) }, () => ({
      op: ops[rand(4)]!,
      row: columns.map(() => values[rand(values.length)]!),
      n: rand(4) === 0 ? 2 + rand(5) : 1,
    }));
    const errors =
      rand(5) === 0
        ? [
            {
              op: '+E' as const,
              error: {
                code: 'DIVISION_BY_ZERO',
                message: 'division by zero',
                row: { a: 1 },
                epoch: round,
                count: 1,
              },
            },
          ]
        : [];
    const lazy = lazyChangeSet(
      'v',
      round,
      { t: { offset: round } },
      { columns, rows: ChangeList.of(rows) },
      errors,
    );
    const timed =
      rand(2) === 0
        ? withTimeFields(lazy, '2024-06-01 00:00:00+00', rand(2) === 0 ? { t: '2024-01-01 00:00:01' } : null)
        : lazy;
    assert.ok(rawChangesOf(timed) !== undefined);
    // Encoded before anything reads `changes` (the server's order), then against the row objects.
    const both = encodeChanges(timed, true);
    const stored = encodeChangesStored(timed);
    const wire = encodeChangesWire(timed);
    const reference = plain(timed);
    assert.equal(both.stored, encodeChanges(reference, true).stored);
    assert.equal(both.wire, wireMessageGeneric(reference));
    assert.equal(stored, both.stored);
    assert.equal(wire, both.wire);
    assert.deepEqual(timed.changes, reference.changes);
    if (rows.length > 0 && columns[0] === 'seller_id') rawEncoded++;
  }
  assert.ok(rawEncoded > 10);
});

test('a lazy change set builds its row objects once, and only when read', () => {
  const row: Value[] = [1, 'x'];
  const cs = lazyChangeSet(
    'v',
    1,
    {},
    { columns: ['a', 'b'], rows: ChangeList.of([{ op: '+I', row, n: 1 }]) },
    [],
  );
  encodeChanges(cs, true);
  const first = cs.changes;
  assert.deepEqual(first, [{ op: '+I', row: { a: 1, b: 'x' } }]);
  assert.equal(cs.changes, first);
  assert.equal(withTimeFields(cs, 'c', null).changes, first);
  assert.deepEqual(Object.keys(cs), ['view', 'epoch', 'positions', 'changes']);
});
