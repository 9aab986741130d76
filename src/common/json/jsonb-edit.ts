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

type Path = readonly (string | null)[];

/** An array index path element (PostgreSQL errors otherwise); `level` is 0-based. */
function pathIndex(path: Path, level: number): number {
  const p = path[level] as string;
  if (!/^\s*[+-]?\d+\s*$/.test(p)) {
    throw new SluiceError('INVALID_VALUE', `path element at position ${level + 1} is not an integer: "${p}"`);
  }
  return Number(p);
}

function checkNulls(path: Path): void {
  const i = path.indexOf(null);
  if (i >= 0) throw new SluiceError('INVALID_VALUE', `path element at position ${i + 1} is null`);
}

/**
 * The node with the value at `path` (from `level`) replaced by `value`, or — `value` undefined —
 * deleted; `create` adds a missing last step (an array index out of range: at the start when it is
 * negative, else at the end). Earlier steps must exist, else the node is returned unchanged.
 */
function setPath(
  n: JsonNode,
  path: Path,
  level: number,
  value: JsonNode | undefined,
  create: boolean,
): JsonNode {
  const last = level === path.length - 1;
  if (n instanceof JsonObject) {
    const key = path[level] as string;
    const current = n.get(key);
    if (current === undefined && !(last && create && value !== undefined)) return n;
    const pairs: [string, JsonNode][] = [];
    n.keys.forEach((k, i) => {
      if (k !== key) pairs.push([k, n.values[i] as JsonNode]);
      else if (!last) pairs.push([k, setPath(current as JsonNode, path, level + 1, value, create)]);
      else if (value !== undefined) pairs.push([k, value]);
    });
    if (current === undefined) pairs.push([key, value as JsonNode]);
    return makeObject(pairs);
  }
  if (Array.isArray(n)) {
    const items = n as readonly JsonNode[];
    const given = pathIndex(path, level);
    const i = given < 0 ? given + items.length : given;
    if (i < 0 || i >= items.length) {
      if (!last || !create || value === undefined) return n;
      return given < 0 ? [value, ...items] : [...items, value];
    }
    const next = last ? value : setPath(items[i] as JsonNode, path, level + 1, value, create);
    return next === undefined
      ? [...items.slice(0, i), ...items.slice(i + 1)]
      : [...items.slice(0, i), next, ...items.slice(i + 1)];
  }
  return n;
}

/** `j #- path`: j without the value at the path. */
export function jsonbDeletePath(j: Jsonb, path: Path): Jsonb {
  const n = j.root;
  if (!(n instanceof JsonObject) && !Array.isArray(n)) {
    throw new SluiceError('INVALID_VALUE', 'cannot delete path in scalar');
  }
  checkNulls(path);
  if (path.length === 0) return j;
  return Jsonb.of(setPath(n, path, 0, undefined, false));
}

/** jsonb_set(j, path, value [, create_if_missing]). */
export function jsonbSet(j: Jsonb, path: Path, value: Jsonb, create: boolean): Jsonb {
  const n = j.root;
  if (!(n instanceof JsonObject) && !Array.isArray(n)) {
    throw new SluiceError('INVALID_VALUE', 'cannot set path in scalar');
  }
  checkNulls(path);
  if (path.length === 0) return j;
  return Jsonb.of(setPath(n, path, 0, value.root, create));
}

function stripNulls(n: JsonNode): JsonNode {
  if (n instanceof JsonObject) {
    const pairs: [string, JsonNode][] = [];
    n.keys.forEach((k, i) => {
      const v = n.values[i] as JsonNode;
      if (v !== null) pairs.push([k, stripNulls(v)]);
    });
    return makeObject(pairs);
  }
  if (Array.isArray(n)) return (n as readonly JsonNode[]).map(stripNulls);
  return n;
}

/** jsonb_strip_nulls(j): every object field whose value is null removed, at any depth. */
export function jsonbStripNulls(j: Jsonb): Jsonb {
  return Jsonb.of(stripNulls(j.root));
}
