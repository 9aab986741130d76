// SQL types and runtime values shared by every layer. Integers are exact 64-bit: a JS number while
// the value is a safe integer, a bigint beyond that (never rounded). NUMERIC is an exact Decimal
// (./decimal.ts: unscaled integer and scale, as PostgreSQL keeps it). DATE is 'YYYY-MM-DD', TIMESTAMP
// 'YYYY-MM-DD HH:MM:SS[.ffffff]', TIMESTAMPTZ the UTC instant 'YYYY-MM-DD HH:MM:SS[.ffffff]+00' and
// TIME 'HH:MM:SS[.ffffff]' text, so ordering them is ordering strings. INTERVAL is an Interval
// (./time/interval.ts: months, days, microseconds, as PostgreSQL keeps it). JSONB is a Jsonb
// (./json/jsonb.ts: the parsed value with exact numbers and its canonical text). UUID and BYTEA are
// their canonical output text, which orders as their bytes do (./uuid-bytea.ts). Arrays are a
// SqlArray (./array/sql-array.ts).

import type { Decimal } from './decimal.ts';
import type { Interval } from './time/interval.ts';
import type { Jsonb } from './json/jsonb.ts';
import type { SqlArray } from './array/sql-array.ts';

export type Value = null | boolean | number | bigint | string | Decimal | Interval | Jsonb | SqlArray;

/** A user-facing row: column name → value. */
export type Row = Record<string, Value>;

export type SqlType =
  | { readonly kind: 'bool' }
  | { readonly kind: 'int'; readonly bits: 16 | 32 | 64 }
  | { readonly kind: 'float'; readonly bits: 32 | 64 }
  | { readonly kind: 'numeric'; readonly precision?: number; readonly scale?: number }
  | { readonly kind: 'text'; readonly maxLength?: number; readonly fixed?: boolean }
  | { readonly kind: 'date' }
  | { readonly kind: 'timestamp' }
  | { readonly kind: 'timestamptz' }
  | { readonly kind: 'time' }
  | { readonly kind: 'interval' }
  | { readonly kind: 'jsonb' }
  | { readonly kind: 'uuid' }
  | { readonly kind: 'bytea' }
  /** A one-dimensional array of a scalar type (never of an array or of unknown). */
  | { readonly kind: 'array'; readonly element: SqlType }
  /** The type of a bare NULL literal before context gives it one. */
  | { readonly kind: 'unknown' };

export const T = {
  bool: { kind: 'bool' },
  int16: { kind: 'int', bits: 16 },
  int32: { kind: 'int', bits: 32 },
  int64: { kind: 'int', bits: 64 },
  float32: { kind: 'float', bits: 32 },
  float64: { kind: 'float', bits: 64 },
  numeric: { kind: 'numeric' },
  text: { kind: 'text' },
  /** PostgreSQL's bpchar: char without a length, each value kept as it is, its trailing spaces insignificant. */
  bpchar: { kind: 'text', fixed: true },
  date: { kind: 'date' },
  timestamp: { kind: 'timestamp' },
  timestamptz: { kind: 'timestamptz' },
  time: { kind: 'time' },
  interval: { kind: 'interval' },
  jsonb: { kind: 'jsonb' },
  uuid: { kind: 'uuid' },
  bytea: { kind: 'bytea' },
  unknown: { kind: 'unknown' },
} as const satisfies Record<string, SqlType>;

/** PostgreSQL's name for a type, as shown in column metadata. */
export function typeName(type: SqlType): string {
  switch (type.kind) {
    case 'bool':
      return 'boolean';
    case 'int':
      return type.bits === 16 ? 'smallint' : type.bits === 32 ? 'integer' : 'bigint';
    case 'float':
      return type.bits === 32 ? 'real' : 'double precision';
    case 'numeric':
      return type.precision !== undefined
        ? `numeric(${type.precision}${type.scale !== undefined ? `,${type.scale}` : ''})`
        : 'numeric';
    case 'text':
      // char without a length is PostgreSQL's bpchar (COALESCE(c, s) of a char(n) c and a text s)
      if (type.maxLength === undefined) return type.fixed === true ? 'bpchar' : 'text';
      return `${type.fixed === true ? 'character' : 'character varying'}(${type.maxLength})`;
    case 'date':
      return 'date';
    case 'timestamp':
      return 'timestamp';
    case 'timestamptz':
      return 'timestamp with time zone';
    case 'time':
      return 'time';
    case 'interval':
      return 'interval';
    case 'jsonb':
      return 'jsonb';
    case 'uuid':
      return 'uuid';
    case 'bytea':
      return 'bytea';
    case 'array':
      return `${typeName(type.element)}[]`;
    case 'unknown':
      return 'unknown';
  }
}

/** The array type of elements of `element`. */
export function arrayOf(element: SqlType): SqlType {
  return { kind: 'array', element };
}

export function isNumeric(type: SqlType): boolean {
  return type.kind === 'int' || type.kind === 'float' || type.kind === 'numeric';
}

export function sameType(a: SqlType, b: SqlType): boolean {
  return typeName(a) === typeName(b);
}

/** Column metadata as the API shows it. */
export interface ColumnInfo {
  readonly name: string;
  readonly type: string;
  readonly nullable: boolean;
}
