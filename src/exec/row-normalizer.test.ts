// The generated insert normalizer against TableStore's general path: on random columns and random
// JSON-ish rows it accepts only rows the general path accepts, with the very same values, and it
// does accept the plain valid rows it exists for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { T, typeName, type SqlType, type Value } from '../common/types.ts';
import { TableStore } from './table-store.ts';
import {
  compileInsertColumnsNormalizer,
  compileInsertNormalizer,
  compileInsertValuesNormalizer,
  NOT_KEY_ONLY,
  isKeyOnlyDelete,
  keyDeleteKey,
  keyDeleteNormalizer,
} from './row-normalizer.ts';

const TYPES: readonly SqlType[] = [
  T.int16,
  T.int32,
  T.int64,
  T.float32,
  T.float64,
  T.numeric,
  T.text,
  { kind: 'text', maxLength: 3 },
  T.bool,
  T.date,
  T.timestamp,
];
const NAMES = ['a', 'b', 'constructor', 'toString', 'x y', '"q"', 'é'];

// Edge values of every type's range and of JSON's kinds.
const EDGES: readonly unknown[] = [
  null,
  undefined,
  true,
  false,
  0,
  -0,
  1,
  -1,
  1.5,
  32767,
  32768,
  -32768,
  -32769,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 53 - 1,
  -(2 ** 53) + 1,
  NaN,
  Infinity,
  -Infinity,
  1e300,
  5e-324,
  '',
  'abcd',
  'ab',
  '12',
  '1.5',
  '2024-02-29',
  '2024-02-29 12:00:00',
  'true',
  [],
  {},
];

const rawValue = fc.oneof(fc.constantFrom(...EDGES), fc.integer(), fc.double(), fc.string({ maxLength: 5 }));

const tableArb = fc.uniqueArray(
  fc.record({ name: fc.constantFrom(...NAMES), type: fc.constantFrom(...TYPES), nullable: fc.boolean() }),
  { minLength: 1, maxLength: 4, selector: (c) => c.name },
);

function rowArb(names: readonly string[]) {
  return fc.dictionary(fc.constantFrom(...names, 'zz', '__proto__'), rawValue, { maxKeys: 5 });
}

function same(a: readonly Value[], b: readonly Value[]): boolean {
  return a.length === b.length && a.every((v, i) => Object.is(v, b[i]) || String(v) === String(b[i]));
}

test('the generated normalizer accepts only what the general path accepts, with the same values', () => {
  fc.assert(
    fc.property(
      tableArb.chain((cols) =>
        fc.tuple(
          fc.constant(cols),
          fc.boolean(),
          fc.array(rowArb(cols.map((c) => c.name)), { maxLength: 8 }),
        ),
      ),
      ([cols, withDefaults, rows]) => {
        const defaults = withDefaults ? cols.map((c) => (c.nullable ? null : defaultFor(c.type))) : null;
        const store = new TableStore({
          kind: 'table',
          name: 't',
          columns: cols,
          primaryKey: null,
          sql: '',
          ...(defaults === null
            ? {}
            : { defaults: defaults.map((value) => (value === null ? null : { sql: String(value), value })) }),
        });
        const fast = compileInsertNormalizer(cols, defaults);
        const byValues = compileInsertValuesNormalizer(cols, defaults);
        for (const raw of rows) {
          const input = JSON.parse(JSON.stringify(raw, (_k, v: unknown) => (typeof v === 'bigint' ? 1 : v)));
          const got = fast(input);
          // The same row by position (only its own fields: a row with another field is not one).
          if (Object.keys(input).every((k) => cols.some((c) => c.name === k))) {
            const values = cols.map((c) => (Object.hasOwn(input, c.name) ? input[c.name] : undefined));
            const byPosition = byValues(values);
            assert.equal(byPosition === null, got === null, JSON.stringify(input));
            if (got !== null) assert.ok(same(byPosition as Value[], got));
          }
          if (got === null) continue;
          const reference = store.normalizeRowGeneral(input, 'insert', 0); // throws if it refuses
          assert.ok(same(got, reference), `${JSON.stringify(input)}: ${String(got)} vs ${String(reference)}`);
        }
      },
    ),
    { numRuns: 400 },
  );
});

test('the key-only delete fast path builds exactly the general key-only delete row, or declines', () => {
  let accepted = 0;
  fc.assert(
    fc.property(
      tableArb
        .chain((cols) =>
          fc.tuple(
            fc.constant(cols),
            fc.subarray(
              cols.map((_, i) => i),
              { minLength: 1 },
            ),
          ),
        )
        .chain(([cols, pk]) => {
          const pkNames = pk.map((i) => (cols[i] as { name: string }).name);
          // Exactly the key's fields, with values often valid for their type, else any row.
          const plain = fc.oneof(
            fc.integer({ min: -100, max: 100 }),
            fc.string({ maxLength: 2 }),
            fc.boolean(),
          );
          const keyRow = fc
            .array(fc.oneof(plain, rawValue), { minLength: pkNames.length, maxLength: pkNames.length })
            .map((vs) => Object.fromEntries(pkNames.map((n, i) => [n, vs[i]])));
          const rows = fc.oneof(keyRow, keyRow, rowArb(pkNames), rowArb(cols.map((c) => c.name)));
          return fc.tuple(fc.constant(cols), fc.constant(pk), fc.array(rows, { maxLength: 8 }));
        }),
      ([cols, pk, rows]) => {
        const def = { kind: 'table' as const, name: 't', columns: cols, primaryKey: pk, sql: '' };
        const store = new TableStore(def);
        const fast = keyDeleteNormalizer(cols, pk);
        // The key alone, over a scratch row reused from delete to delete (the table's resolve path).
        const fastKey = keyDeleteKey(cols, pk, (row) => store.keyOf(row));
        for (const raw of rows) {
          const input = JSON.parse(JSON.stringify(raw)) as Record<string, unknown>;
          const got = fast(input);
          const key = fastKey(input);
          assert.equal(key === NOT_KEY_ONLY, got === null, `${JSON.stringify(input)}: both paths or neither`);
          if (got === null) continue;
          accepted++;
          const reference = store.normalizeRowGeneral(input, 'delete', 0); // throws if it refuses
          assert.ok(same(got, reference), `${JSON.stringify(input)}: ${String(got)} vs ${String(reference)}`);
          assert.ok(isKeyOnlyDelete(def, input), `${JSON.stringify(input)} is a key-only delete`);
          assert.ok(Object.is(key, store.keyOf(reference)), `${JSON.stringify(input)}: its key`);
        }
      },
    ),
    { numRuns: 400 },
  );
  // The fast path must be exercised, not skipped: it takes 47–98 deletes of a run's random rows
  // (fast-check draws a new seed each run), so the bound sits well under the least seen.
  assert.ok(accepted >= 10, `the fast path took ${accepted} deletes`);
  // The delete it exists for.
  const cols = [
    { name: 'id', type: T.int32, nullable: false },
    { name: 'v', type: T.text, nullable: true },
  ];
  assert.deepEqual(keyDeleteNormalizer(cols, [0])({ id: 7 }), [7, null]);
  assert.equal(keyDeleteNormalizer(cols, [0])({ id: 7, v: 'x' }), null);
  assert.equal(keyDeleteNormalizer(cols, [0, 1])({ id: 7, v: 'x' }), null);
});

function defaultFor(type: SqlType): Value {
  return type.kind === 'text'
    ? 'd'
    : type.kind === 'bool'
      ? false
      : type.kind === 'int' || type.kind === 'float'
        ? 7
        : null;
}

test('every type and nullability against every edge value: the same answer as the general path', () => {
  let accepted = 0;
  for (const type of TYPES)
    for (const nullable of [true, false]) {
      const cols = [{ name: 'c', type, nullable }];
      const store = new TableStore({ kind: 'table', name: 't', columns: cols, primaryKey: null, sql: '' });
      const fast = compileInsertNormalizer(cols, null);
      const intoColumns = compileInsertColumnsNormalizer(cols, null);
      const byValues = compileInsertValuesNormalizer(cols, null);
      for (const value of EDGES) {
        const input = value === undefined ? {} : { c: value };
        const got = fast(input);
        // By position: the same answer, the same values.
        const byPosition = byValues([value]);
        assert.equal(byPosition === null, got === null, `${typeName(type)} ${String(value)} by position`);
        if (got !== null) assert.ok(same(byPosition as Value[], got));
        // The column-writing variant accepts exactly the same rows, with the same values.
        const column: Value[][] = [[]];
        assert.equal(intoColumns([input], column), got !== null, `${typeName(type)} ${String(value)}`);
        if (got === null) continue;
        assert.ok(
          same(
            column.map((c) => c[0] as Value),
            got,
          ),
        );
        accepted++;
        const reference = store.normalizeRowGeneral(input, 'insert', 0);
        assert.ok(
          same(got, reference),
          `${typeName(type)} ${String(value)}: ${String(got)} vs ${String(reference)}`,
        );
      }
    }
  assert.ok(accepted > 40, `the fast path took ${accepted} edge values`);
});

test('plain valid rows take the fast path; a prototype member is not a field', () => {
  const cols = [
    { name: 'id', type: T.int64, nullable: true },
    { name: 'seller', type: T.int32, nullable: false },
    { name: 'price', type: T.float64, nullable: false },
    { name: 'note', type: T.text, nullable: true },
    { name: 'constructor', type: T.int16, nullable: true },
  ];
  const fast = compileInsertNormalizer(cols, null);
  assert.deepEqual(fast({ id: 1, seller: 2, price: 0.5, note: 'n', constructor: 3 }), [1, 2, 0.5, 'n', 3]);
  assert.deepEqual(fast({ seller: -2147483648, price: -0 }), [null, -2147483648, -0, null, null]);
  assert.equal(fast({ seller: 2147483648, price: 1 }), null, 'int out of range');
  // A double's NaN and ±Infinity are values (JSON readers refuse 1e400 before it reads as Infinity).
  assert.deepEqual(fast({ seller: 1, price: -Infinity }), [null, 1, -Infinity, null, null]);
  assert.deepEqual(fast({ seller: 1, price: NaN }), [null, 1, NaN, null, null]);
  assert.equal(fast({ seller: NaN, price: 1 }), null, 'NaN is no integer');
  assert.equal(fast({ seller: null, price: 1 }), null, 'NOT NULL');
  assert.equal(fast({ seller: 1, price: 1, other: 1 }), null, 'unknown field');
  assert.equal(fast([1, 2]), null, 'not an object');
  const byValues = compileInsertValuesNormalizer(cols, null);
  assert.deepEqual(byValues([1, 2, 0.5, 'n', 3]), [1, 2, 0.5, 'n', 3]);
  assert.deepEqual(byValues([undefined, -2147483648, -0, undefined, undefined]), [
    null,
    -2147483648,
    -0,
    null,
    null,
  ]);
  assert.equal(byValues([undefined, 1, 1, undefined, 1.5]), null, 'not an int16');
  assert.equal(byValues([undefined, null, 1]), null, 'NOT NULL');
});

test('the column-writing normalizer takes a whole batch, and refuses it at the first bad row', () => {
  const cols = [
    { name: 'id', type: T.int32, nullable: false },
    { name: 'note', type: T.text, nullable: true },
  ];
  const intoColumns = compileInsertColumnsNormalizer(cols, [null, 'none']);
  const columns: Value[][] = [[], []];
  assert.equal(intoColumns([{ id: 1, note: 'a' }, { id: 2 }, { id: 3, note: null }], columns), true);
  assert.deepEqual(columns, [
    [1, 2, 3],
    ['a', 'none', null],
  ]);
  // A row the fast path declines anywhere in the batch declines the batch (the general path names it).
  assert.equal(intoColumns([{ id: 4 }, { id: 'x' }, { id: 5 }], [[], []]), false);
  assert.equal(intoColumns([{ id: 4 }, { id: 5, extra: 1 }], [[], []]), false);
  assert.equal(intoColumns([{ id: 4 }, { note: 'no id' }], [[], []]), false);
});
