// The jsonb operators that build a new value (PostgreSQL 16 manual, table 9.46): `a || b`
// (concatenation: arrays append, objects merge with b's value winning, anything else as a
// one-element array first — not recursive) and `j - key` / `j - index` (delete a key or matching
// string elements, or the element at an index, negative from the end).
import { SluiceError } from '../errors.ts';
import { JsonObject, Jsonb, makeObject, type JsonNode } from './jsonb.ts';

const asArray = (n: JsonNode): readonly JsonNode[] => (Array.isArray(n) ? (n as readonly JsonNode[]) : [n]);

/** `a || b`. */
export function jsonbConcat(a: Jsonb, b: Jsonb): Jsonb {
  const x = a.root;
  const y = b.root;
  if (x instanceof JsonObject && y instanceof JsonObject) {
    const pairs: [string, JsonNode][] = [];
    x.keys.forEach((k, i) => pairs.push([k, x.values[i] as JsonNode]));
    y.keys.forEach((k, i) => pairs.push([k, y.values[i] as JsonNode]));
    return Jsonb.of(makeObject(pairs));
  }
  return Jsonb.of([...asArray(x), ...asArray(y)]);
}

function cannotDeleteFromScalar(): SluiceError {
  return new SluiceError('INVALID_VALUE', 'cannot delete from scalar');
}

/** `j - key`: an object without the key, an array without its string elements equal to key. */
export function jsonbDeleteKey(j: Jsonb, key: string): Jsonb {
  const n = j.root;
  if (n instanceof JsonObject) {
    if (n.get(key) === undefined) return j;
    const pairs: [string, JsonNode][] = [];
    n.keys.forEach((k, i) => {
      if (k !== key) pairs.push([k, n.values[i] as JsonNode]);
    });
    return Jsonb.of(makeObject(pairs));
  }
  if (Array.isArray(n)) return Jsonb.of((n as readonly JsonNode[]).filter((e) => e !== key));
  throw cannotDeleteFromScalar();
}

/** `j - index`: an array without the element at index (negative from the end); out of range: j. */
export function jsonbDeleteIndex(j: Jsonb, index: number): Jsonb {
  const n = j.root;
  if (n instanceof JsonObject) {
    throw new SluiceError('INVALID_VALUE', 'cannot delete from object using integer index');
  }
  if (!Array.isArray(n)) throw cannotDeleteFromScalar();
  const items = n as readonly JsonNode[];
  const i = index < 0 ? index + items.length : index;
  if (i < 0 || i >= items.length) return j;
  return Jsonb.of([...items.slice(0, i), ...items.slice(i + 1)]);
}
