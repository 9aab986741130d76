// The jsonb operators and functions of PostgreSQL's section 9.16 on Jsonb values: -> ->> #> #>>,
// @> <@ (containment, section 8.14.3), ? (key exists), jsonb_typeof, jsonb_array_length, and the
// text[] path literal ('{a,b,0}') that #> and #>> take.
import { SluiceError } from '../errors.ts';
import { parseArrayText } from '../array/sql-array.ts';
import { Decimal, compareDecimals } from '../decimal.ts';
import { JsonObject, Jsonb, jsonNodeText, type JsonNode } from './jsonb.ts';

/** One step down: an object's key, or an array's index (negative counts from the end); else undefined. */
function step(node: JsonNode, key: string | number): JsonNode | undefined {
  if (node instanceof JsonObject) return typeof key === 'string' ? node.get(key) : undefined;
  if (!Array.isArray(node)) return undefined;
  const items = node as readonly JsonNode[];
  let i: number;
  if (typeof key === 'number') i = key;
  else {
    // a path element on an array must be an integer (PostgreSQL: otherwise no match)
    if (!/^\s*[+-]?\d+\s*$/.test(key)) return undefined;
    i = Number(key);
  }
  if (i < 0) i += items.length;
  return i >= 0 && i < items.length ? items[i] : undefined;
}

/** `j -> key` / `j -> index`: the field or element as jsonb, NULL when there is none. */
export function jsonbGet(j: Jsonb, key: string | number): Jsonb | null {
  const n = step(j.root, key);
  return n === undefined ? null : Jsonb.of(n);
}

/** The text ->> and #>> give: a string's own text, NULL for JSON null, else the JSON text. */
function asText(n: JsonNode | undefined): string | null {
  if (n === undefined || n === null) return null;
  return typeof n === 'string' ? n : jsonNodeText(n);
}

export function jsonbGetText(j: Jsonb, key: string | number): string | null {
  return asText(step(j.root, key));
}

function walk(j: Jsonb, path: readonly (string | null)[]): JsonNode | undefined {
  let n: JsonNode | undefined = j.root;
  for (const p of path) {
    if (p === null || n === undefined) return undefined;
    n = step(n, p);
  }
  return n;
}

/** `j #> path`: the value at the path (the whole value for an empty path), NULL when there is none. */
export function jsonbPath(j: Jsonb, path: readonly (string | null)[]): Jsonb | null {
  const n = walk(j, path);
  return n === undefined ? null : path.length === 0 ? j : Jsonb.of(n);
}

export function jsonbPathText(j: Jsonb, path: readonly (string | null)[]): string | null {
  return asText(walk(j, path));
}

function isContainer(n: JsonNode): boolean {
  return Array.isArray(n) || n instanceof JsonObject;
}

function scalarEqual(a: JsonNode, b: JsonNode): boolean {
  if (a instanceof Decimal && b instanceof Decimal) return compareDecimals(a, b) === 0;
  return a === b;
}

/** PostgreSQL's JsonbDeepContains: does `a` contain `b` (both the same kind of value)? */
function contains(a: JsonNode, b: JsonNode): boolean {
  if (a instanceof JsonObject) {
    if (!(b instanceof JsonObject)) return false;
    for (let i = 0; i < b.keys.length; i++) {
      const mine = a.get(b.keys[i] as string);
      const theirs = b.values[i] as JsonNode;
      if (mine === undefined) return false;
      if (isContainer(theirs) || isContainer(mine)) {
        if (!sameKind(mine, theirs) || !contains(mine, theirs)) return false;
      } else if (!scalarEqual(mine, theirs)) return false;
    }
    return true;
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b)) return false;
    const items = a as readonly JsonNode[];
    for (const want of b as readonly JsonNode[]) {
      const found = isContainer(want)
        ? items.some((have) => sameKind(have, want) && contains(have, want))
        : items.some((have) => !isContainer(have) && scalarEqual(have, want));
      if (!found) return false;
    }
    return true;
  }
  return !isContainer(b) && scalarEqual(a, b);
}

function sameKind(a: JsonNode, b: JsonNode): boolean {
  return Array.isArray(a)
    ? Array.isArray(b)
    : a instanceof JsonObject
      ? b instanceof JsonObject
      : !isContainer(b);
}

/** `a @> b`. At the top level an array may contain a scalar (`'["a"]' @> '"a"'`), as in PostgreSQL. */
export function jsonbContains(a: Jsonb, b: Jsonb): boolean {
  if (Array.isArray(a.root) && !isContainer(b.root)) return contains(a.root, [b.root]);
  return contains(a.root, b.root);
}

/** `j ? key`: a top-level key, a string element of a top-level array, or the string itself. */
export function jsonbExists(j: Jsonb, key: string): boolean {
  const n = j.root;
  if (n instanceof JsonObject) return n.get(key) !== undefined;
  if (Array.isArray(n)) return (n as readonly JsonNode[]).some((x) => x === key);
  return n === key;
}

export function jsonbTypeof(j: Jsonb): string {
  const n = j.root;
  if (n === null) return 'null';
  if (typeof n === 'string') return 'string';
  if (typeof n === 'boolean') return 'boolean';
  if (n instanceof Decimal) return 'number';
  return n instanceof JsonObject ? 'object' : 'array';
}

export function jsonbArrayLength(j: Jsonb): number {
  const n = j.root;
  if (Array.isArray(n)) return n.length;
  throw new SluiceError(
    'INVALID_VALUE',
    n instanceof JsonObject
      ? 'cannot get array length of a non-array'
      : 'cannot get array length of a scalar',
  );
}

// ---- text[] literals --------------------------------------------------------------------------

/**
 * A one-dimensional text[] literal as PostgreSQL reads it: `{a,b,0}`, `{"a b","x\"y"}`, `{}`;
 * an unquoted NULL is a null element. INVALID_CAST otherwise (nested arrays included).
 */
export function parseTextArray(text: string): (string | null)[] {
  return parseArrayText(text, 'malformed');
}
