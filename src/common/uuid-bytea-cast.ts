// Casts to and from uuid and bytea (only text and unknown literals on the other side, as PostgreSQL
// allows without functions), and their ingest coercion. Kept apart so cast.ts only dispatches here.
import { SluiceError } from './errors.ts';
import type { SqlType, Value } from './types.ts';
import { typeName } from './types.ts';
import { parseBytea, parseUuid } from './uuid-bytea.ts';

const isBinary = (t: SqlType): boolean => t.kind === 'uuid' || t.kind === 'bytea';
const isTextual = (t: SqlType): boolean => t.kind === 'text' || t.kind === 'unknown';

function cannotCast(from: SqlType, to: SqlType): SluiceError {
  return new SluiceError('INVALID_CAST', `cannot cast type ${typeName(from)} to ${typeName(to)}`);
}

/**
 * CAST(v AS to) when either side is uuid or bytea, else undefined. uuid → text and bytea → text are
 * the values themselves (their canonical text is their output form, bytea_output = hex).
 */
export function castBinary(v: Value, from: SqlType, to: SqlType): Value | undefined {
  if (!isBinary(to)) {
    if (!isBinary(from) || isTextual(to)) return undefined;
    throw cannotCast(from, to);
  }
  if (from.kind === to.kind) return v;
  if (!isTextual(from) || typeof v !== 'string') throw cannotCast(from, to);
  if (to.kind === 'bytea') return parseBytea(v);
  const u = parseUuid(v);
  if (u === null) throw new SluiceError('INVALID_CAST', `invalid input syntax for type uuid: "${v}"`);
  return u;
}

/** An ingested JSON value for a uuid or bytea column: its text in any input form. */
export function coerceBinary(
  v: unknown,
  type: SqlType,
): { ok: true; value: Value } | { ok: false; expected: string } {
  if (type.kind === 'uuid') {
    const u = typeof v === 'string' ? parseUuid(v) : null;
    return u === null
      ? { ok: false, expected: "a uuid such as 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'" }
      : { ok: true, value: u };
  }
  const expected = "a bytea such as '\\x0102ff'";
  if (typeof v !== 'string') return { ok: false, expected };
  try {
    return { ok: true, value: parseBytea(v) };
  } catch {
    return { ok: false, expected };
  }
}
