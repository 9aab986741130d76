// Ingest rows into typed rows. The fast path, one function per table, is generated from the table's
// columns: each column's check written out (no switch over the type per value, no Map lookup per
// field name); it answers null when anything is off — an unknown field, a value of the wrong type
// or range, a NULL in a NOT NULL column — and the general path at the end of this file then finds
// and names the problem. The fast path never accepts what the general one refuses.
import { SluiceError } from '../common/errors.ts';
import { INVALID_INGEST, coerceIngest, coerceIngestFast } from '../common/cast.ts';
import { typeName, type SqlType, type Value } from '../common/types.ts';
import type { TableDef } from '../planner/catalog.ts';
import { generatedFunction } from '../common/generated-function.ts';
import { bigintAsText } from '../common/values.ts';

export type InsertNormalizer = (input: unknown) => Value[] | null;

interface ColumnShape {
  readonly name: string;
  readonly type: SqlType;
  readonly nullable: boolean;
}

/**
 * The test a raw JSON value `v` must pass to be stored unchanged in a column of `type`, as a JS
 * expression; null when the type needs the general coercion (it converts, e.g. text to numeric).
 */
function directTest(type: SqlType): string | null {
  switch (type.kind) {
    case 'int':
      if (type.bits === 64) return `typeof v === 'number' && isSafeInteger(v)`;
      if (type.bits === 32) return `typeof v === 'number' && (v | 0) === v`;
      return `typeof v === 'number' && (v | 0) === v && v <= 32767 && v >= -32768`;
    case 'float':
      // Any double, NaN and ±Infinity included (a JSON reader refuses 1e400 before it reads as
      // Infinity); real (float4) rounds: general path.
      return type.bits === 64 ? `typeof v === 'number'` : null;
    case 'text':
      return type.maxLength === undefined ? `typeof v === 'string'` : null;
    case 'bool':
      return `typeof v === 'boolean'`;
    default:
      return null;
  }
}

/**
 * The generated checks of one row: on success, locals c0..cN hold the typed values. `byPosition`:
 * the input is an array of the columns' raw values (undefined: absent), not a row object.
 */
function checkLines(
  columns: readonly ColumnShape[],
  defaults: readonly Value[] | null,
  byPosition = false,
): string[] {
  const names = columns.map((c) => JSON.stringify(c.name));
  const lines: string[] = byPosition
    ? [`let v;`]
    : [
        `if (input === null || typeof input !== 'object' || isArray(input)) return FAIL;`,
        // Unknown fields: the general path names the first one.
        `for (const k in input) { switch (k) { ${names.map((n) => `case ${n}:`).join(' ')} break; default: return FAIL; } }`,
        `let v;`,
      ];
  columns.forEach((c, i) => {
    const name = names[i] as string;
    const missing = defaults !== null ? `v = defaults[${i}];` : c.nullable ? `v = null;` : `return FAIL;`;
    const whenNull = c.nullable ? `v = null;` : `return FAIL;`;
    const test = directTest(c.type);
    // An integer has no -0 (JSON's -0 parses to it): + 0 makes it 0, so it groups and matches as 0.
    const check =
      test !== null
        ? `if (!(${test})) return FAIL;${c.type.kind === 'int' ? ' v = v + 0;' : ''}`
        : `v = coerce(v, types[${i}]); if (v === INVALID${c.nullable ? '' : ' || v === null'}) return FAIL;`;
    // A name Object.prototype has ("constructor") must not read the prototype's value.
    const read = byPosition
      ? `input[${i}]`
      : c.name in Object.prototype
        ? `hasOwn(input, ${name}) ? input[${name}] : undefined`
        : `input[${name}]`;
    lines.push(
      `v = ${read};`,
      `if (v === undefined) { ${missing} ${c.nullable ? '' : 'if (v === null) return FAIL;'} }`,
      `else if (v === null) { ${whenNull} }`,
      `else { ${check} }`,
      `const c${i} = v;`,
    );
  });
  return lines;
}

function build<T>(
  name: string,
  params: string,
  body: string[],
  columns: readonly ColumnShape[],
  defaults: readonly Value[] | null,
): T {
  // The generated text holds only column positions and JSON-quoted column names.
  const factory = generatedFunction(
    'isArray',
    'isSafeInteger',
    'hasOwn',
    'coerce',
    'INVALID',
    'types',
    'defaults',
    `return function ${name}(${params}) {\n${body.join('\n')}\n};`,
  ) as (...args: unknown[]) => T;
  return factory(
    Array.isArray,
    Number.isSafeInteger,
    Object.hasOwn,
    coerceIngestFast,
    INVALID_INGEST,
    columns.map((c) => c.type),
    defaults,
  );
}

/**
 * Builds the table's insert normalizer. `defaults[i]` is the value an omitted column gets (null
 * when the table has no DEFAULTs: then an omitted column is NULL).
 */
export function compileInsertNormalizer(
  columns: readonly ColumnShape[],
  defaults: readonly Value[] | null,
): InsertNormalizer {
  const body = checkLines(columns, defaults).map((l) => l.replaceAll('return FAIL', 'return null'));
  body.push(`return [${columns.map((_, i) => `c${i}`).join(', ')}];`);
  return build<InsertNormalizer>('normalizeInsert', 'input', body, columns, defaults);
}

/**
 * The same checks of one row given as its columns' raw values by position (undefined: absent), as a
 * source's reader finds them in a record's bytes: no row object, no field names read. Null when
 * anything is off; the caller then takes the row object path, which names the problem.
 */
export type InsertValuesNormalizer = (values: readonly unknown[]) => Value[] | null;

export function compileInsertValuesNormalizer(
  columns: readonly ColumnShape[],
  defaults: readonly Value[] | null,
): InsertValuesNormalizer {
  const body = checkLines(columns, defaults, true).map((l) => l.replaceAll('return FAIL', 'return null'));
  body.push(`return [${columns.map((_, i) => `c${i}`).join(', ')}];`);
  return build<InsertValuesNormalizer>('normalizeInsertValues', 'input', body, columns, defaults);
}

/**
 * The same checks over a whole batch of rows, writing row r's values at index r of one array per
 * column, each array then cut to the batch's length: true when every row passed, false at the first
 * that does not (the arrays then hold a part of the batch, to be dropped). An insert-only batch is
 * read column by column and never builds a row array. One call per batch, with the column arrays in
 * locals, where a call per row read `out[i]` per value. The arrays may be empty (they grow as by
 * pushes) or a past batch's (table-lent-columns.ts: overwritten in place, no allocation); never
 * pre-sized: packed arrays, like every other batch's, keep the operators' element loads monomorphic
 * (pre-sized holey ones cost a tenth at batch size 1).
 */
export type InsertColumnsNormalizer = (inputs: readonly unknown[], columns: Value[][]) => boolean;

export function compileInsertColumnsNormalizer(
  columns: readonly ColumnShape[],
  defaults: readonly Value[] | null,
): InsertColumnsNormalizer {
  const body = [
    ...columns.map((_, i) => `const out${i} = out[${i}];`),
    `for (let r = 0; r < inputs.length; r++) {`,
    `const input = inputs[r];`,
    ...checkLines(columns, defaults).map((l) => l.replaceAll('return FAIL', 'return false')),
    ...columns.map((_, i) => `out${i}[r] = c${i};`),
    `}`,
    // A past batch's longer arrays are cut to this one's length (in place: no allocation).
    ...columns.map((_, i) => `if (out${i}.length !== inputs.length) out${i}.length = inputs.length;`),
    'return true;',
  ];
  return build<InsertColumnsNormalizer>('normalizeInsertColumns', 'inputs, out', body, columns, defaults);
}

/**
 * A delete naming only its row's primary key (`{"id": 7}`, the common delete) typed without the
 * general path's checks and allocations: the key columns' values, NULL elsewhere, exactly the row
 * `normalizeRowGeneral` builds for it. Null when the row is anything else (another field, a value
 * the fast coercion declines, NULL in the key): the general path then builds it or names the problem.
 * Null for every row of a table whose columns are all key columns (such a delete is not key-only).
 */
export type KeyDeleteNormalizer = (input: unknown) => Value[] | null;

export function keyDeleteNormalizer(
  columns: readonly ColumnShape[],
  primaryKey: readonly number[] | null,
): KeyDeleteNormalizer {
  const fill = keyDeleteFill(columns, primaryKey);
  if (fill === null) return () => null;
  const width = columns.length;
  return (input) => {
    const row = new Array<Value>(width);
    for (let c = 0; c < width; c++) row[c] = null;
    return fill(input, row) ? row : null;
  };
}

/** What `keyDeleteKey`'s function answers for a delete that is not a plain key-only one. */
export const NOT_KEY_ONLY: unique symbol = Symbol('not a key-only delete');

/** The primary key a key-only delete names, or NOT_KEY_ONLY (`keyDeleteNormalizer`'s test). */
export type KeyDeleteKey = (input: unknown) => Value | typeof NOT_KEY_ONLY;

/**
 * The key of the row `keyDeleteNormalizer` would build, by `keyOf` over one scratch row the
 * function keeps (key columns overwritten per call, NULL elsewhere): a keyed table's delete reads
 * only the key, so a full-width row per delete was built for nothing but `keyOf` and garbage.
 */
export function keyDeleteKey(
  columns: readonly ColumnShape[],
  primaryKey: readonly number[] | null,
  keyOf: (row: readonly Value[]) => Value,
): KeyDeleteKey {
  const fill = keyDeleteFill(columns, primaryKey);
  if (fill === null) return () => NOT_KEY_ONLY;
  const scratch = new Array<Value>(columns.length).fill(null);
  return (input) => (fill(input, scratch) ? keyOf(scratch) : NOT_KEY_ONLY);
}

/**
 * Writes a key-only delete's key values into `row` at the key's positions; false when the input is
 * not one (any other field, a value the fast coercion declines, NULL in the key). Null for a table
 * without a key or whose columns are all key columns (such a delete is not key-only).
 */
function keyDeleteFill(
  columns: readonly ColumnShape[],
  primaryKey: readonly number[] | null,
): ((input: unknown, row: Value[]) => boolean) | null {
  const pk = primaryKey ?? [];
  if (pk.length === 0 || pk.length >= columns.length) return null;
  const names = pk.map((i) => (columns[i] as ColumnShape).name);
  const types = pk.map((i) => (columns[i] as ColumnShape).type);
  // The one key column's name, for a test per field without `includes` (the common key).
  const only = names.length === 1 ? (names[0] as string) : null;
  return (input, row) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return false;
    const obj = input as Record<string, unknown>;
    // Every field a key column (the general path refuses unknown ones, and any other column makes
    // the delete a whole-row one).
    if (only !== null) {
      for (const name in obj) if (name !== only) return false;
    } else for (const name in obj) if (!names.includes(name)) return false;
    for (let j = 0; j < names.length; j++) {
      const name = names[j] as string;
      if (!Object.hasOwn(obj, name)) return false;
      const v = coerceIngestFast(obj[name], types[j] as SqlType);
      if (v === INVALID_INGEST || v === null) return false;
      row[pk[j] as number] = v;
    }
    return true;
  };
}

// ---- the general path -------------------------------------------------------------------------

/** Whether a delete row (already validated) names only primary-key columns. */
export function isKeyOnlyDelete(def: TableDef, obj: Record<string, unknown>): boolean {
  const pk = def.primaryKey;
  return pk !== null && def.columns.some((c, i) => !pk.includes(i) && !Object.hasOwn(obj, c.name));
}

/**
 * Any JSON row object into a typed row array, checked column by column, or an error naming the
 * table, the column and the row: the path every row the generated one declines takes, and every
 * delete. `insertDefaults` as for `compileInsertNormalizer`.
 */
export function normalizeRowGeneral(
  def: TableDef,
  columnIndex: ReadonlyMap<string, number>,
  insertDefaults: readonly Value[] | null,
  input: unknown,
  what: 'insert' | 'delete',
  index: number,
): Value[] {
  const t = def;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new SluiceError('INVALID_VALUE', `${what} row ${index + 1} for table "${t.name}" is not an object`);
  }
  const obj = input as Record<string, unknown>;
  for (const name in obj) {
    if (!columnIndex.has(name)) {
      throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" of table "${t.name}" does not exist`, {
        detail: `in ${what} row ${index + 1}`,
      });
    }
  }
  const pk = t.primaryKey;
  const keyOnly = what === 'delete' && isKeyOnlyDelete(def, obj);
  if (what === 'delete' && pk !== null) {
    const missing = pk.map((k) => t.columns[k]?.name ?? '').filter((name) => !Object.hasOwn(obj, name));
    if (missing.length > 0) {
      throw new SluiceError(
        'INVALID_VALUE',
        `delete row ${index + 1} for table "${t.name}" must name the primary key column "${missing[0]}"`,
        {
          hint: 'name the whole row, or just its primary key columns',
        },
      );
    }
  }
  const columns = t.columns;
  const row = new Array<Value>(columns.length);
  const defaults = what === 'insert' ? insertDefaults : null;
  if (!keyOnly) {
    let ok = true;
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i] as (typeof columns)[number];
      const raw = ownField(obj, c.name);
      const v =
        raw === undefined && defaults !== null ? (defaults[i] as Value) : coerceIngestFast(raw, c.type);
      if (v === INVALID_INGEST || (v === null && !c.nullable)) {
        ok = false;
        break;
      }
      row[i] = v;
    }
    if (ok) return row;
  }
  t.columns.forEach((c, i) => {
    const present = Object.hasOwn(obj, c.name);
    if (keyOnly && pk !== null && !pk.includes(i)) {
      row[i] = null;
      return;
    }
    const value = ownField(obj, c.name);
    const coerced =
      value === undefined && defaults !== null
        ? { ok: true as const, value: defaults[i] as Value }
        : coerceIngest(value, c.type);
    if (!coerced.ok) {
      // NaN or ±Infinity for a column that cannot hold it (integer: as PostgreSQL's 'NaN'::float8::int,
      // "integer out of range"); JSON would print it as null, so it is named rather than shown.
      const problem =
        typeof value === 'number' && !Number.isFinite(value)
          ? `number out of range for type ${typeName(c.type)}`
          : `expected ${coerced.expected}, got ${describeValue(value)}`;
      throw new SluiceError(
        'INVALID_VALUE',
        `invalid value for column "${c.name}" of table "${t.name}": ${problem}`,
        {
          detail: `in ${what} row ${index + 1}; column type ${typeName(c.type)}`,
        },
      );
    }
    if (coerced.value === null && !c.nullable) {
      throw new SluiceError(
        'NOT_NULL_VIOLATION',
        `null value in column "${c.name}" of table "${t.name}" violates not-null constraint`,
        {
          detail: `in ${what} row ${index + 1}${present ? '' : ' (column missing)'}`,
        },
      );
    }
    row[i] = coerced.value;
  });
  return row;
}

/** Characters of a rejected value quoted in its error message. */
const DESCRIBED_CHARS = 200;

/**
 * A rejected value as JSON, cut to DESCRIBED_CHARS: the message must not repeat a 5 MB string, and
 * JSON.stringify recurses, so an array nested 100,000 deep (valid JSON, which the body parser reads
 * without recursion) exhausted the stack and turned a 400 into a 500.
 */
function describeValue(value: unknown): string {
  if (typeof value === 'string' && value.length > DESCRIBED_CHARS) {
    return `${JSON.stringify(value.slice(0, DESCRIBED_CHARS))}... (${value.length} characters)`;
  }
  let text: string;
  try {
    text = JSON.stringify(value, bigintAsText);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return Array.isArray(value) ? '[...] (nested too deeply to show)' : '{...} (nested too deeply to show)';
  }
  return text.length <= DESCRIBED_CHARS
    ? text
    : `${text.slice(0, DESCRIBED_CHARS)}... (${text.length} characters)`;
}

/** A row object's own field: a column named like an Object.prototype member ("constructor") is not inherited. */
function ownField(obj: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(obj, name) ? obj[name] : undefined;
}
