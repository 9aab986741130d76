// PostgreSQL's set-returning jsonb functions, as FROM items expand them (common/expand.ts):
// jsonb_array_elements[_text] (an array's elements), jsonb_each[_text] (an object's key and value
// pairs, in jsonb's key order) and jsonb_object_keys, with PostgreSQL's errors for a value of the
// wrong kind. The `_text` forms give a string's own text, SQL NULL for JSON null, else the JSON text.
import { SluiceError } from '../errors.ts';
import type { Value } from '../types.ts';
import { Jsonb, JsonObject, jsonNodeText, type JsonNode } from './jsonb.ts';

export const JSONB_SET_FUNCTIONS = [
  'jsonb_array_elements',
  'jsonb_array_elements_text',
  'jsonb_each',
  'jsonb_each_text',
  'jsonb_object_keys',
] as const;

export type JsonbSetFunction = (typeof JSONB_SET_FUNCTIONS)[number];

export function isJsonbSetFunction(name: string): name is JsonbSetFunction {
  return (JSONB_SET_FUNCTIONS as readonly string[]).includes(name);
}

/** The columns each gives, by PostgreSQL's names (a single unnamed one takes the function's). */
export function jsonbSetColumns(fn: JsonbSetFunction): readonly string[] | null {
  if (fn === 'jsonb_each' || fn === 'jsonb_each_text') return ['key', 'value'];
  if (fn === 'jsonb_object_keys') return null;
  return ['value'];
}

function asText(n: JsonNode): string | null {
  if (n === null) return null;
  return typeof n === 'string' ? n : jsonNodeText(n);
}

/** The tuples `fn` yields for the value `j`. */
export function jsonbSetTuples(fn: JsonbSetFunction, j: Jsonb): Value[][] {
  const n = j.root;
  switch (fn) {
    case 'jsonb_array_elements':
    case 'jsonb_array_elements_text': {
      if (!Array.isArray(n)) {
        throw new SluiceError(
          'INVALID_VALUE',
          n instanceof JsonObject
            ? 'cannot extract elements from an object'
            : 'cannot extract elements from a scalar',
        );
      }
      const items = n as readonly JsonNode[];
      return fn === 'jsonb_array_elements' ? items.map((x) => [Jsonb.of(x)]) : items.map((x) => [asText(x)]);
    }
    case 'jsonb_each':
    case 'jsonb_each_text': {
      if (!(n instanceof JsonObject))
        throw new SluiceError('INVALID_VALUE', `cannot call ${fn} on a non-object`);
      return n.keys.map((k, i) => {
        const v = n.values[i] as JsonNode;
        return [k, fn === 'jsonb_each' ? Jsonb.of(v) : asText(v)];
      });
    }
    case 'jsonb_object_keys': {
      if (!(n instanceof JsonObject)) {
        throw new SluiceError(
          'INVALID_VALUE',
          `cannot call jsonb_object_keys on ${Array.isArray(n) ? 'an array' : 'a scalar'}`,
        );
      }
      return n.keys.map((k) => [k]);
    }
  }
}
