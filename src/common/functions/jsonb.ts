// The jsonb operators and functions as plan functions (section 9.16 of PostgreSQL's manual), over
// the operations in ../json/jsonb-ops.ts: -> ->> #> #>> @> ? and jsonb_extract_path(_text),
// jsonb_typeof, jsonb_array_length. All strict: NULL in, NULL out (a NULL path element finds nothing).
import type { Value } from '../types.ts';
import { Jsonb } from '../json/jsonb.ts';
import {
  jsonbConcat,
  jsonbDeleteIndex,
  jsonbDeleteKey,
  jsonbDeletePath,
  jsonbSet,
  jsonbStripNulls,
} from '../json/jsonb-edit.ts';
import {
  jsonbArrayLength,
  jsonbContains,
  jsonbExists,
  jsonbGet,
  jsonbGetText,
  jsonbPath,
  jsonbPathText,
  jsonbTypeof,
  parseTextArray,
} from '../json/jsonb-ops.ts';

export const JSONB_FNS = [
  'jsonb_get',
  'jsonb_get_text',
  'jsonb_path',
  'jsonb_path_text',
  'jsonb_contains',
  'jsonb_exists',
  'jsonb_typeof',
  'jsonb_array_length',
  'jsonb_extract_path',
  'jsonb_extract_path_text',
  'jsonb_concat',
  'jsonb_delete_key',
  'jsonb_delete_index',
  'jsonb_delete_path',
  'jsonb_set',
  'jsonb_strip_nulls',
] as const;
export type JsonbFn = (typeof JSONB_FNS)[number];

const JSONB_FN_SET: ReadonlySet<string> = new Set(JSONB_FNS);
export function isJsonbFn(fn: string): fn is JsonbFn {
  return JSONB_FN_SET.has(fn);
}

type RowFn = (row: readonly Value[]) => Value;

/** A key or an index: an integer argument indexes an array, a text one names a field. */
function keyOf(v: Value): string | number {
  return typeof v === 'string' ? v : Number(v);
}

/** The text[] literal of #> / #>>, parsed once per distinct text (a path is nearly always constant). */
function pathReader(): (text: string) => (string | null)[] {
  let lastText: string | undefined;
  let last: (string | null)[] = [];
  return (text) => {
    if (text !== lastText) {
      last = parseTextArray(text);
      lastText = text;
    }
    return last;
  };
}

export function compileJsonbFunction(fn: JsonbFn, args: readonly RowFn[]): RowFn {
  const [a, b] = args as [RowFn, RowFn | undefined];
  const binary = (f: (j: Jsonb, y: Value) => Value): RowFn => {
    const g = b as RowFn;
    return (row) => {
      const x = a(row);
      if (x === null) return null;
      const y = g(row);
      return y === null ? null : f(x as Jsonb, y);
    };
  };
  switch (fn) {
    case 'jsonb_get':
      return binary((j, k) => jsonbGet(j, keyOf(k)));
    case 'jsonb_get_text':
      return binary((j, k) => jsonbGetText(j, keyOf(k)));
    case 'jsonb_path': {
      const read = pathReader();
      return binary((j, p) => jsonbPath(j, read(p as string)));
    }
    case 'jsonb_path_text': {
      const read = pathReader();
      return binary((j, p) => jsonbPathText(j, read(p as string)));
    }
    case 'jsonb_contains':
      return binary((j, other) => jsonbContains(j, other as Jsonb));
    case 'jsonb_concat':
      return binary((j, other) => jsonbConcat(j, other as Jsonb));
    case 'jsonb_delete_key':
      return binary((j, k) => jsonbDeleteKey(j, k as string));
    case 'jsonb_delete_index':
      return binary((j, i) => jsonbDeleteIndex(j, Number(i)));
    case 'jsonb_delete_path': {
      const read = pathReader();
      return binary((j, p) => jsonbDeletePath(j, read(p as string)));
    }
    case 'jsonb_set': {
      const read = pathReader();
      return (row) => {
        const values = args.map((g) => g(row));
        if (values.some((v) => v === null)) return null;
        const [j, p, v, create] = values as [Jsonb, string, Jsonb, boolean | undefined];
        return jsonbSet(j, read(p), v, create ?? true);
      };
    }
    case 'jsonb_strip_nulls':
      return (row) => {
        const x = a(row);
        return x === null ? null : jsonbStripNulls(x as Jsonb);
      };
    case 'jsonb_exists':
      return binary((j, k) => jsonbExists(j, k as string));
    case 'jsonb_typeof':
      return (row) => {
        const x = a(row);
        return x === null ? null : jsonbTypeof(x as Jsonb);
      };
    case 'jsonb_array_length':
      return (row) => {
        const x = a(row);
        return x === null ? null : jsonbArrayLength(x as Jsonb);
      };
    case 'jsonb_extract_path':
    case 'jsonb_extract_path_text': {
      const rest = args.slice(1);
      const asText = fn === 'jsonb_extract_path_text';
      return (row) => {
        const x = a(row);
        if (x === null) return null;
        const path = rest.map((g) => g(row) as string | null);
        return asText ? jsonbPathText(x as Jsonb, path) : jsonbPath(x as Jsonb, path);
      };
    }
  }
}
