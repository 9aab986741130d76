// JSONB values as PostgreSQL keeps them (section 8.14 of its manual): numbers exact (numeric), object
// keys sorted by length then bytes with the last duplicate kept, printed as `{"a": 1, "b": [1, 2]}`.
// An immutable object like Decimal and Interval: one canonical text to print and store, one key per
// value (1.0 and 1 are equal jsonb numbers, so they share a key) and PostgreSQL's total order.
import { SluiceError } from '../errors.ts';
import { Decimal, compareDecimals, parseDecimal } from '../decimal.ts';

/** A parsed JSON value: numbers are exact Decimals, objects a JsonObject with canonical key order. */
export type JsonNode = null | boolean | string | Decimal | readonly JsonNode[] | JsonObject;

export class JsonObject {
  constructor(
    /** Keys in jsonb's storage order (UTF-8 length, then bytes), each once. */
    readonly keys: readonly string[],
    readonly values: readonly JsonNode[],
  ) {}

  get(key: string): JsonNode | undefined {
    // keys are few; a linear scan beats building a Map per value
    const i = this.keys.indexOf(key);
    return i < 0 ? undefined : this.values[i];
  }
}

/** Deepest nesting accepted: deeper input is refused, never a stack overflow. */
export const MAX_JSON_DEPTH = 256;

export class Jsonb {
  private keyText: string | undefined;
  private constructor(
    readonly root: JsonNode,
    /** PostgreSQL's output text of the value. */
    readonly text: string,
  ) {}

  static of(root: JsonNode): Jsonb {
    return new Jsonb(root, printNode(root, false));
  }

  /** A Map key: equal values (numbers of any scale: 1.0 and 1) share it. */
  key(): string {
    if (this.keyText === undefined) {
      const norm = printNode(this.root, true);
      this.keyText = `j${norm.length}:${norm}`;
    }
    return this.keyText;
  }

  toString(): string {
    return this.text;
  }

  /** Inside stringifyWire: a slot the JSON text replaces (JSON, not a string); elsewhere its text. */
  toJSON(): string {
    if (!rawActive) return this.text;
    const slots = (rawSlots ??= []);
    slots.push(this.text);
    return `${RAW_MARK}${slots.length - 1}`;
  }
}

// ---- raw JSON inside JSON.stringify (Node 20 has no JSON.rawJSON) ---------------------------------
// A per-process nonce makes the placeholder unforgeable by a string value: it never leaves the process.
const NONCE = Math.random().toString(36).slice(2, 12) + Date.now().toString(36);
const RAW_MARK = `\u0001jsonb${NONCE}:`;
const RAW_QUOTED = new RegExp(`"\\\\u0001jsonb${NONCE}:(\\d+)"`, 'g');
/** Inside withRawJsonb: whether toJSON writes placeholders, and their texts (allocated on first use). */
let rawActive = false;
let rawSlots: string[] | null = null;

/** JSON.stringify-like `emit`, with every Jsonb written as its JSON text rather than a string. */
export function withRawJsonb(emit: () => string): string {
  const outerActive = rawActive;
  const outerSlots = rawSlots;
  rawActive = true;
  rawSlots = null;
  let out: string;
  let slots: string[] | null;
  try {
    out = emit();
  } finally {
    slots = rawSlots;
    rawActive = outerActive;
    rawSlots = outerSlots;
  }
  return slots === null
    ? out
    : out.replace(RAW_QUOTED, (_m, i: string) => (slots as string[])[Number(i)] as string);
}

// ---- canonical order and text -----------------------------------------------------------------

function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) n += c < 0x800 ? 1 : c >= 0xd800 && c <= 0xdbff ? 0 : 2; // a pair: 4 bytes in all
  }
  return n;
}

/** Code point order, which is UTF-8 byte order (PostgreSQL compares jsonb strings in C collation here). */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // a surrogate (a code point above U+FFFF) sorts after every BMP unit
    const xs = x >= 0xd800 && x <= 0xdfff ? x + 0x10000 : x;
    const ys = y >= 0xd800 && y <= 0xdfff ? y + 0x10000 : y;
    return xs < ys ? -1 : 1;
  }
  return a.length - b.length;
}

/** jsonb's key order: shorter (in bytes) first, then by bytes. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  return utf8Length(a) - utf8Length(b) || compareCodePoints(a, b);
}

/** An object from pairs in input order: keys in storage order, the last of duplicates kept. */
export function makeObject(pairs: readonly (readonly [string, JsonNode])[]): JsonObject {
  const last = new Map<string, JsonNode>();
  for (const [k, v] of pairs) {
    last.delete(k);
    last.set(k, v);
  }
  const keys = [...last.keys()].sort(compareKeys);
  return new JsonObject(
    keys,
    keys.map((k) => last.get(k) as JsonNode),
  );
}

function stripTrailingZeros(d: Decimal): string {
  const t = d.toString();
  if (!t.includes('.')) return t;
  const s = t.replace(/0+$/, '').replace(/\.$/, '');
  return s === '-0' ? '0' : s;
}

/** PostgreSQL's jsonb output; `normalized` writes numbers without trailing zeros (for keys). */
function printNode(node: JsonNode, normalized: boolean): string {
  if (node === null) return 'null';
  if (typeof node === 'boolean') return node ? 'true' : 'false';
  if (typeof node === 'string') return JSON.stringify(node);
  if (node instanceof Decimal) return normalized ? stripTrailingZeros(node) : node.toString();
  if (node instanceof JsonObject) {
    if (node.keys.length === 0) return '{}';
    let out = '{';
    node.keys.forEach((k, i) => {
      out += `${i === 0 ? '' : ', '}${JSON.stringify(k)}: ${printNode(node.values[i] as JsonNode, normalized)}`;
    });
    return `${out}}`;
  }
  if (node.length === 0) return '[]';
  return `[${node.map((x) => printNode(x, normalized)).join(', ')}]`;
}

export function jsonNodeText(node: JsonNode): string {
  return printNode(node, false);
}

// ---- PostgreSQL's order (section 8.14.4) ---------------------------------------------------------
// Object > Array > Boolean > Number > String > Null; arrays by length then elements, objects by pair
// count then key-1, value-1, key-2 … in storage order (so '{"aa": 1, "c": 1}' > '{"b": 1, "d": 1}':
// "c" is stored first and "c" > "b"). Strings compare in C collation here. A top-level empty array sorts below every
// scalar, null included (PostgreSQL's historical exception).

function rank(n: JsonNode): number {
  if (n === null) return 0;
  if (typeof n === 'string') return 1;
  if (n instanceof Decimal) return 2;
  if (typeof n === 'boolean') return 3;
  return n instanceof JsonObject ? 5 : 4;
}

function compareNodes(a: JsonNode, b: JsonNode): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return compareCodePoints(a as string, b as string);
    case 2:
      return compareDecimals(a as Decimal, b as Decimal);
    case 3:
      return a === b ? 0 : a === false ? -1 : 1;
    case 4: {
      const x = a as readonly JsonNode[];
      const y = b as readonly JsonNode[];
      if (x.length !== y.length) return x.length < y.length ? -1 : 1;
      for (let i = 0; i < x.length; i++) {
        const c = compareNodes(x[i] as JsonNode, y[i] as JsonNode);
        if (c !== 0) return c;
      }
      return 0;
    }
    default: {
      const x = a as JsonObject;
      const y = b as JsonObject;
      if (x.keys.length !== y.keys.length) return x.keys.length < y.keys.length ? -1 : 1;
      for (let i = 0; i < x.keys.length; i++) {
        // pairs are visited in storage order, but two keys compare as strings (PostgreSQL's varstr_cmp)
        const k = compareCodePoints(x.keys[i] as string, y.keys[i] as string);
        if (k !== 0) return k;
        const c = compareNodes(x.values[i] as JsonNode, y.values[i] as JsonNode);
        if (c !== 0) return c;
      }
      return 0;
    }
  }
}

export function compareJsonb(a: Jsonb, b: Jsonb): number {
  const x = a.root;
  const y = b.root;
  const emptyX = Array.isArray(x) && x.length === 0;
  const emptyY = Array.isArray(y) && y.length === 0;
  if (emptyX !== emptyY) {
    const other = emptyX ? y : x;
    if (rank(other) < 4) return emptyX ? -1 : 1;
  }
  return compareNodes(x, y);
}

// ---- input --------------------------------------------------------------------------------------

function invalidJson(detail: string): SluiceError {
  return new SluiceError('INVALID_CAST', 'invalid input syntax for type json', { detail });
}

const WS = /[ \t\n\r]*/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"((?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*)"/y;

/**
 * JSON text → jsonb, exactly (numbers as written, as numeric). INVALID_CAST with PostgreSQL's message
 * when the text is not JSON; nesting deeper than MAX_JSON_DEPTH is refused the same way.
 */
export function parseJsonb(text: string): Jsonb {
  let pos = 0;
  const skip = (): void => {
    WS.lastIndex = pos;
    WS.exec(text);
    pos = WS.lastIndex;
  };
  const fail = (what: string): never => {
    const near = text.slice(pos, pos + 20);
    throw invalidJson(
      pos >= text.length
        ? `the input ends where ${what} was expected`
        : `expected ${what} at character ${pos + 1}: ${JSON.stringify(near)}`,
    );
  };
  const str = (): string => {
    STRING.lastIndex = pos;
    const m = STRING.exec(text);
    if (m === null) return fail('a string');
    pos = STRING.lastIndex;
    const body = m[1] as string;
    return body.includes('\\') ? (JSON.parse(m[0]) as string) : body;
  };
  const value = (depth: number): JsonNode => {
    if (depth > MAX_JSON_DEPTH) throw invalidJson(`nesting deeper than ${MAX_JSON_DEPTH} levels`);
    skip();
    const c = text.charCodeAt(pos);
    if (c === 0x22) return str();
    if (c === 0x7b) {
      pos++;
      const pairs: [string, JsonNode][] = [];
      skip();
      if (text.charCodeAt(pos) === 0x7d) {
        pos++;
        return makeObject(pairs);
      }
      for (;;) {
        skip();
        const k = str();
        skip();
        if (text.charCodeAt(pos) !== 0x3a) fail('":"');
        pos++;
        pairs.push([k, value(depth + 1)]);
        skip();
        const d = text.charCodeAt(pos++);
        if (d === 0x7d) return makeObject(pairs);
        if (d !== 0x2c) {
          pos--;
          fail('"," or "}"');
        }
      }
    }
    if (c === 0x5b) {
      pos++;
      const items: JsonNode[] = [];
      skip();
      if (text.charCodeAt(pos) === 0x5d) {
        pos++;
        return items;
      }
      for (;;) {
        items.push(value(depth + 1));
        skip();
        const d = text.charCodeAt(pos++);
        if (d === 0x5d) return items;
        if (d !== 0x2c) {
          pos--;
          fail('"," or "]"');
        }
      }
    }
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, pos)) {
        pos += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (m === null) return fail('a JSON value');
    pos = NUMBER.lastIndex;
    return parseDecimal(m[0]) as Decimal;
  };
  const root = value(0);
  skip();
  if (pos < text.length) fail('the end of the input');
  return Jsonb.of(root);
}

/**
 * An ingested JSON value (REST rows and Kafka records, already parsed exactly: bigints and long
 * decimals kept) → jsonb; null when it holds something JSON cannot (a non-finite number) or nests
 * deeper than MAX_JSON_DEPTH.
 */
export function jsonbFromParsed(v: unknown): Jsonb | null {
  const node = (x: unknown, depth: number): JsonNode | undefined => {
    if (depth > MAX_JSON_DEPTH) return undefined;
    if (x === null || typeof x === 'boolean' || typeof x === 'string') return x;
    if (typeof x === 'number') return Number.isFinite(x) ? (parseDecimal(String(x)) as Decimal) : undefined;
    if (typeof x === 'bigint') return Decimal.fromInt(x);
    if (x instanceof Decimal) return x;
    if (x instanceof Jsonb) return x.root;
    if (Array.isArray(x)) {
      const out: JsonNode[] = [];
      for (const e of x as unknown[]) {
        const n = node(e, depth + 1);
        if (n === undefined) return undefined;
        out.push(n);
      }
      return out;
    }
    if (typeof x === 'object') {
      const pairs: [string, JsonNode][] = [];
      for (const [k, e] of Object.entries(x as Record<string, unknown>)) {
        const n = node(e, depth + 1);
        if (n === undefined) return undefined;
        pairs.push([k, n]);
      }
      return makeObject(pairs);
    }
    return undefined;
  };
  const root = node(v, 0);
  return root === undefined ? null : Jsonb.of(root);
}
