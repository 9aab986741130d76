// The bytea and uuid functions as plan functions (sections 9.4, 9.5 and 9.14 of PostgreSQL's manual):
// length/octet_length, md5, encode, decode and || of bytea, and gen_random_uuid. All strict except
// gen_random_uuid, which takes nothing and differs per call (so the binder never folds it).
import type { Value } from '../types.ts';
import {
  byteaConcat,
  byteaLength,
  byteaMd5,
  decodeBytea,
  encodeBytea,
  randomUuid,
  utf8Length,
} from '../uuid-bytea.ts';

export const BINARY_FNS = [
  'bytea_length',
  'octet_length_text',
  'bytea_md5',
  'bytea_encode',
  'bytea_decode',
  'bytea_concat',
  'gen_random_uuid',
] as const;
export type BinaryFn = (typeof BINARY_FNS)[number];

const BINARY_FN_SET: ReadonlySet<string> = new Set(BINARY_FNS);
export function isBinaryFn(fn: string): fn is BinaryFn {
  return BINARY_FN_SET.has(fn);
}

type RowFn = (row: readonly Value[]) => Value;

function strict1(a: RowFn, f: (x: string) => Value): RowFn {
  return (row) => {
    const x = a(row);
    return x === null ? null : f(x as string);
  };
}

function strict2(a: RowFn, b: RowFn, f: (x: string, y: string) => Value): RowFn {
  return (row) => {
    const x = a(row);
    if (x === null) return null;
    const y = b(row);
    return y === null ? null : f(x as string, y as string);
  };
}

export function compileBinaryFunction(fn: BinaryFn, args: readonly RowFn[]): RowFn {
  const [a, b] = args as [RowFn, RowFn];
  switch (fn) {
    case 'bytea_length':
      return strict1(a, byteaLength);
    case 'octet_length_text':
      return strict1(a, utf8Length);
    case 'bytea_md5':
      return strict1(a, byteaMd5);
    case 'bytea_encode':
      return strict2(a, b, encodeBytea);
    case 'bytea_decode':
      return strict2(a, b, decodeBytea);
    case 'bytea_concat':
      return strict2(a, b, byteaConcat);
    case 'gen_random_uuid':
      return () => randomUuid();
  }
}
