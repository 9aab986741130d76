// Ingest's fast path, one function per table: generated from the table's columns, it turns a JSON
// insert row into a typed row with each column's check written out (no switch over the type per
// value, no Map lookup per field name), or answers null when anything is off — an unknown field, a
// value of the wrong type or range, a NULL in a NOT NULL column — and the general path
// (TableStore.normalizeRow) then finds and names the problem. It never accepts what that path refuses.
import { INVALID_INGEST, coerceIngestFast } from '../common/cast.ts';
import type { SqlType, Value } from '../common/types.ts';

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
      // Finite doubles only (v - v is NaN for NaN and ±Infinity); real (float4) rounds: general path.
      return type.bits === 64 ? `typeof v === 'number' && v - v === 0` : null;
    case 'text':
      return type.maxLength === undefined ? `typeof v === 'string'` : null;
    case 'bool':
      return `typeof v === 'boolean'`;
    default:
      return null;
  }
}

/** The generated checks of one row: on success, locals c0..cN hold the typed values. */
function checkLines(columns: readonly ColumnShape[], defaults: readonly Value[] | null): string[] {
  const names = columns.map((c) => JSON.stringify(c.name));
  const lines: string[] = [
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
    const check =
      test !== null
        ? `if (!(${test})) return FAIL;`
        : `v = coerce(v, types[${i}]); if (v === INVALID${c.nullable ? '' : ' || v === null'}) return FAIL;`;
    // A name Object.prototype has ("constructor") must not read the prototype's value.
    const read =
      c.name in Object.prototype ? `hasOwn(input, ${name}) ? input[${name}] : undefined` : `input[${name}]`;
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
  const factory = new Function(
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
 * The same checks, appending the row's values to one array per column (all of them or, answering
 * false, none): an insert-only batch is read column by column and never builds a row array. The
 * arrays are pushed to, never pre-sized: packed arrays, like every other batch's, keep the
 * operators' element loads monomorphic (pre-sized holey ones cost a tenth at batch size 1).
 */
export type InsertColumnsNormalizer = (input: unknown, columns: Value[][]) => boolean;

export function compileInsertColumnsNormalizer(
  columns: readonly ColumnShape[],
  defaults: readonly Value[] | null,
): InsertColumnsNormalizer {
  const body = checkLines(columns, defaults).map((l) => l.replaceAll('return FAIL', 'return false'));
  columns.forEach((_, i) => body.push(`out[${i}].push(c${i});`));
  body.push('return true;');
  return build<InsertColumnsNormalizer>('normalizeInsertColumns', 'input, out', body, columns, defaults);
}
