// Type names as written → SqlType (with the aliases real schemas use), and the implicit coercion
// rules of the binder: numeric promotion, common types for CASE/COALESCE/IN, comparability.
import { SluiceError } from '../common/errors.ts';
import type { TypeName } from '../parser/ast.ts';
import type { SqlType } from '../common/types.ts';
import { T, arrayOf, typeName } from '../common/types.ts';
import { bindsBefore, bindsJournaled } from './journaled-binding.ts';

export function resolveTypeName(t: TypeName): SqlType {
  if (t.arrayDims !== undefined) {
    if (t.arrayDims > 1)
      throw new SluiceError('NOT_SUPPORTED', 'multidimensional arrays are not supported', {
        position: t.pos,
        hint: 'declare a one-dimensional array such as integer[]',
      });
    const { arrayDims: _dims, ...written } = t;
    const element = resolveTypeName(written);
    if (element.kind === 'jsonb' || element.kind === 'array')
      throw new SluiceError('NOT_SUPPORTED', `arrays of type ${typeName(element)} are not supported`, {
        position: t.pos,
      });
    return arrayOf(element);
  }
  const n = t.name.replace(/\s+/g, ' ').trim();
  const p0 = t.params[0];
  const p1 = t.params[1];
  switch (n) {
    case 'bool':
    case 'boolean':
      return T.bool;
    case 'smallint':
    case 'int2':
      return T.int16;
    case 'int':
    case 'integer':
    case 'int4':
    case 'mediumint':
      return T.int32;
    case 'bigint':
    case 'int8':
    case 'long':
      return T.int64;
    case 'real':
    case 'float4':
      return T.float32;
    case 'float':
      // PostgreSQL: float(p) with p <= 24 is real, otherwise double precision
      return p0 !== undefined && p0 <= 24 ? T.float32 : T.float64;
    case 'double':
    case 'double precision':
    case 'float8':
      return T.float64;
    case 'numeric':
    case 'decimal':
    case 'dec': {
      if (p0 === undefined) return T.numeric;
      const scale = p1 ?? 0;
      if (p0 < 1 || p0 > 1000) throw badModifier(t, `NUMERIC precision ${p0} must be between 1 and 1000`);
      if (scale > p0) throw badModifier(t, `NUMERIC scale ${scale} must be between 0 and precision ${p0}`);
      return { kind: 'numeric', precision: p0, scale };
    }
    case 'text':
    case 'string':
    case 'varchar':
    case 'character varying':
    case 'nvarchar':
      if (p0 === undefined) return T.text;
      if (p0 < 1) throw badModifier(t, 'length for type varchar must be at least 1');
      return { kind: 'text', maxLength: p0 };
    case 'bpchar':
      // PostgreSQL's bpchar without a length is char without one: each value kept as written, its
      // trailing spaces insignificant. It was read as char(1) here, which a journaled table or view
      // keeps, so its stored rows and state mean what they meant.
      // A SELECT's cast to bpchar was refused then, so a journaled one was written since: bpchar.
      if (p0 === undefined)
        return bindsJournaled() && t.inSelect !== true
          ? { kind: 'text', maxLength: 1, fixed: true }
          : T.bpchar;
      if (p0 < 1) throw badModifier(t, 'length for type char must be at least 1');
      return { kind: 'text', maxLength: p0, fixed: true };
    case 'char':
    case 'character':
    case 'nchar':
      if (p0 !== undefined && p0 < 1) throw badModifier(t, 'length for type char must be at least 1');
      return { kind: 'text', maxLength: p0 ?? 1, fixed: true };
    case 'date':
      return T.date;
    case 'timestamp':
    case 'timestamp without time zone':
    case 'datetime':
      return T.timestamp;
    case 'timestamptz':
    case 'timestamp with time zone':
      return T.timestamptz;
    case 'time':
    case 'time without time zone':
      return T.time;
    case 'interval':
      return T.interval;
    case 'jsonb':
    case 'json':
      // json is read as jsonb: one JSON type, with jsonb's canonical form and operators
      return T.jsonb;
    case 'uuid':
      return T.uuid;
    case 'bytea':
      return T.bytea;
    case 'timetz':
    case 'time with time zone':
      throw new SluiceError('NOT_SUPPORTED', 'type time with time zone is not supported', {
        position: t.pos,
        hint: 'use timestamp with time zone, or time',
      });
    default:
      throw new SluiceError('UNKNOWN_TYPE', `type "${t.name}" does not exist`, {
        position: t.pos,
        hint: 'supported types: boolean, smallint, integer, bigint, real, double precision, numeric, text, varchar(n), char(n), date, timestamp, timestamp with time zone, time, interval, jsonb, uuid, bytea, and arrays of them (integer[])',
      });
  }
}

/** A type modifier out of its range, e.g. numeric(0) or varchar(0) (PostgreSQL's messages). */
function badModifier(t: TypeName, message: string): SluiceError {
  return new SluiceError('INVALID_DEFINITION', message, { position: t.pos });
}

/** The result type of arithmetic between two numeric types. */
export function numericResultType(a: SqlType, b: SqlType): SqlType {
  if (a.kind === 'unknown') return b.kind === 'unknown' ? T.int32 : b;
  if (b.kind === 'unknown') return a;
  if (a.kind === 'float' || b.kind === 'float') {
    return a.kind === 'float' && b.kind === 'float' && a.bits === 32 && b.bits === 32 ? T.float32 : T.float64;
  }
  if (a.kind === 'numeric' || b.kind === 'numeric') return T.numeric;
  if (a.kind === 'int' && b.kind === 'int') return a.bits >= b.bits ? a : b;
  return T.float64;
}

function category(t: SqlType): string {
  switch (t.kind) {
    case 'int':
    case 'float':
    case 'numeric':
      return 'numeric';
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      return 'datetime';
    default:
      return t.kind;
  }
}

/**
 * The common type of several expressions (CASE branches, COALESCE args, IN lists, comparisons), or
 * null when they cannot be matched. `unknown` (NULL) adapts to anything.
 */
export function commonType(types: readonly SqlType[]): SqlType | null {
  let result: SqlType = T.unknown;
  for (const t of types) {
    if (t.kind === 'unknown') continue;
    if (result.kind === 'unknown') {
      result = t;
      continue;
    }
    if (category(result) !== category(t)) return null;
    if (result.kind === 'array' && t.kind === 'array') {
      // arrays coerce as their elements do (PostgreSQL's array coercion): int[] and bigint[] meet
      const element = commonType([result.element, t.element]);
      if (element === null) return null;
      result = arrayOf(element);
    } else if (category(t) === 'numeric') result = numericResultType(result, t);
    // date < timestamp < timestamptz, as PostgreSQL's implicit casts go
    else if (t.kind === 'timestamptz' || result.kind === 'timestamptz') result = T.timestamptz;
    else if (t.kind === 'timestamp' || result.kind === 'timestamp') result = T.timestamp;
    else if (t.kind === 'text' && result.kind === 'text') {
      result =
        result.maxLength === t.maxLength && result.fixed === t.fixed
          ? result
          : (longerVarchar(result, t) ?? T.text);
    }
  }
  return result;
}

/**
 * varchar(n) beside varchar(m): PostgreSQL's common type is varchar (no length), which compares with
 * char as bpchar does (trailing spaces insignificant) where text does not. Sluice has no varchar
 * without a length, so it is varchar of the longer length, which holds every value of both and
 * compares alike. Statements journaled before this rule keep text (their views' stored state).
 */
function longerVarchar(a: SqlType, b: SqlType): SqlType | null {
  if (a.kind !== 'text' || b.kind !== 'text' || a.fixed === true || b.fixed === true) return null;
  if (a.maxLength === undefined || b.maxLength === undefined || bindsBefore(2)) return null;
  return a.maxLength >= b.maxLength ? a : b;
}

export function describeType(t: SqlType): string {
  return typeName(t);
}
