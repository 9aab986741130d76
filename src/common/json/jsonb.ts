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
  return objectFromMembers(
    pairs.map((p) => p[0]),
    pairs.map((p) => p[1]),
  );
}

/**
 * Work done reading jsonb input, for tests that bound it: comparisons of two object keys, and
 * numbers too long for the double fast path (read through parseDecimal's regular expression).
 */
export const jsonbInputCounts = { keyComparisons: 0, slowNumbers: 0 };

/** Members at i and j in storage order; equal keys by input position, so the last comes last. */
function memberOrder(keys: readonly string[], utf8Lengths: readonly number[], i: number, j: number): number {
  jsonbInputCounts.keyComparisons++;
  return (
    (utf8Lengths[i] as number) - (utf8Lengths[j] as number) ||
    compareCodePoints(keys[i] as string, keys[j] as string) ||
    i - j
  );
}

/** Insertion sort below this many members (no comparator closure); Array.sort above. */
const SMALL_OBJECT = 24;

/**
 * An object from its members in input order, as two parallel arrays the object then owns (they are
 * returned as they are when already in storage order with no key twice): keys in storage order, the
 * last of duplicates kept. Each key's UTF-8 length is measured once, not once per comparison.
 */
export function objectFromMembers(keys: string[], values: JsonNode[]): JsonObject {
  const n = keys.length;
  if (n < 2) return new JsonObject(keys, values);
  const lengths = new Array<number>(n);
  for (let i = 0; i < n; i++) lengths[i] = utf8Length(keys[i] as string);
  let inOrder = true;
  for (let i = 1; i < n && inOrder; i++) {
    jsonbInputCounts.keyComparisons++;
    const c = (lengths[i - 1] as number) - (lengths[i] as number);
    inOrder = c < 0 || (c === 0 && compareCodePoints(keys[i - 1] as string, keys[i] as string) < 0);
  }
  if (inOrder) return new JsonObject(keys, values);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (n <= SMALL_OBJECT) {
    for (let i = 1; i < n; i++) {
      const m = order[i] as number;
      let k = i - 1;
      while (k >= 0 && memberOrder(keys, lengths, order[k] as number, m) > 0) {
        order[k + 1] = order[k] as number;
        k--;
      }
      order[k + 1] = m;
    }
  } else {
    order.sort((i, j) => memberOrder(keys, lengths, i, j));
  }
  const outKeys: string[] = [];
  const outValues: JsonNode[] = [];
  for (let p = 0; p < n; p++) {
    const i = order[p] as number;
    const next = order[p + 1];
    if (next !== undefined && keys[next] === keys[i]) continue; // a later duplicate follows: it wins
    outKeys.push(keys[i] as string);
    outValues.push(values[i] as JsonNode);
  }
  return new JsonObject(outKeys, outValues);
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
    const { keys, values } = node;
    if (keys.length === 0) return '{}';
    const parts = new Array<string>(keys.length);
    for (let i = 0; i < keys.length; i++) {
      parts[i] = `${JSON.stringify(keys[i])}: ${printNode(values[i] as JsonNode, normalized)}`;
    }
    return `{${parts.join(', ')}}`;
  }
  if (node.length === 0) return '[]';
  const parts = new Array<string>(node.length);
  for (let i = 0; i < node.length; i++) parts[i] = printNode(node[i] as JsonNode, normalized);
  return `[${parts.join(', ')}]`;
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
// A hand-written reader: one pass over the text by char code, no regular expression, match array or
// substring per element in the common cases (blanks, numbers of up to 15 digits, strings without
// escapes), members gathered in two arrays the object keeps. About 0.5 µs an element went to those.

function invalidJson(detail: string): SluiceError {
  return new SluiceError('INVALID_CAST', 'invalid input syntax for type json', { detail });
}

/** A string with escapes, validated and decoded by JSON.parse (the rare case). */
const ESCAPED_STRING = /"((?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*)"/y;
/** Digits whose value a double holds exactly (15 < log10(2^53)). */
const EXACT_DIGITS = 15;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * What jsonb input refuses of a string's escapes, as PostgreSQL does: `\u0000` (text holds no NUL)
 * and a surrogate escape without its partner escape right after it. `quoted` is the string as
 * written, already matched by ESCAPED_STRING (so every backslash starts a well-formed escape).
 */
function checkEscapes(quoted: string): void {
  let highEnd = -1; // where a high surrogate's escape ended, while it waits for its low one
  for (let i = quoted.indexOf('\\'); i !== -1; i = quoted.indexOf('\\', i)) {
    const unicode = quoted.charCodeAt(i + 1) === 0x75;
    const unit = unicode ? Number.parseInt(quoted.slice(i + 2, i + 6), 16) : -1;
    const high = unit >= 0xd800 && unit <= 0xdbff;
    const low = unit >= 0xdc00 && unit <= 0xdfff;
    if (highEnd !== -1) {
      if (i !== highEnd || !(high || low)) throw invalidJson(LOW_MUST_FOLLOW);
      if (high) throw invalidJson('Unicode high surrogate must not follow a high surrogate.');
      highEnd = -1;
    } else if (unit === 0) {
      throw new SluiceError('INVALID_CAST', 'unsupported Unicode escape sequence', {
        detail: '\\u0000 cannot be converted to text.',
      });
    } else if (low) throw invalidJson(LOW_MUST_FOLLOW);
    i += unicode ? 6 : 2;
    if (high) highEnd = i;
  }
  if (highEnd !== -1) throw invalidJson(LOW_MUST_FOLLOW);
}
const LOW_MUST_FOLLOW = 'Unicode low surrogate must follow a high surrogate.';

class JsonbReader {
  pos = 0;
  constructor(
    private readonly text: string,
    private readonly refuseUntextableEscapes: boolean,
  ) {}

  fail(what: string): never {
    const near = this.text.slice(this.pos, this.pos + 20);
    throw invalidJson(
      this.pos >= this.text.length
        ? `the input ends where ${what} was expected`
        : `expected ${what} at character ${this.pos + 1}: ${JSON.stringify(near)}`,
    );
  }

  skip(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  str(): string {
    const text = this.text;
    const start = this.pos;
    if (text.charCodeAt(start) === 0x22) {
      for (let i = start + 1; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 0x22) {
          this.pos = i + 1;
          return text.slice(start + 1, i);
        }
        if (c === 0x5c || c < 0x20) break; // an escape, or a control character (refused below)
      }
    }
    ESCAPED_STRING.lastIndex = start;
    const m = ESCAPED_STRING.exec(text);
    if (m === null) return this.fail('a string');
    this.pos = ESCAPED_STRING.lastIndex;
    if (this.refuseUntextableEscapes) checkEscapes(m[0]);
    return JSON.parse(m[0]) as string;
  }

  /** A JSON number (-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?, the longest such prefix), exactly. */
  num(): Decimal {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    const neg = text.charCodeAt(pos) === 0x2d;
    if (neg) pos++;
    const first = text.charCodeAt(pos);
    if (first === 0x30) pos++;
    else if (first > 0x30 && first <= 0x39) while (isDigit(text.charCodeAt(++pos)));
    else return this.fail('a JSON value');
    const intEnd = pos;
    let fracEnd = pos;
    if (text.charCodeAt(pos) === 0x2e && isDigit(text.charCodeAt(pos + 1))) {
      pos += 2;
      while (isDigit(text.charCodeAt(pos))) pos++;
      fracEnd = pos;
    }
    let exponent = false;
    const e = text.charCodeAt(pos);
    if (e === 0x65 || e === 0x45) {
      let q = pos + 1;
      const s = text.charCodeAt(q);
      if (s === 0x2b || s === 0x2d) q++;
      if (isDigit(text.charCodeAt(q))) {
        while (isDigit(text.charCodeAt(++q)));
        pos = q;
        exponent = true;
      }
    }
    this.pos = pos;
    const digitsStart = neg ? start + 1 : start;
    const fracDigits = fracEnd === intEnd ? 0 : fracEnd - intEnd - 1;
    if (exponent || intEnd - digitsStart + fracDigits > EXACT_DIGITS) {
      jsonbInputCounts.slowNumbers++;
      return parseDecimal(text.slice(start, pos)) as Decimal;
    }
    // value = digits / 10^fracDigits, both exact in a double; -0 and -0.00 are zero (as numeric_in)
    let unscaled = 0;
    for (let i = digitsStart; i < intEnd; i++) unscaled = unscaled * 10 + text.charCodeAt(i) - 0x30;
    for (let i = intEnd + 1; i < fracEnd; i++) unscaled = unscaled * 10 + text.charCodeAt(i) - 0x30;
    return new Decimal(neg ? -unscaled : unscaled, fracDigits);
  }

  value(depth: number): JsonNode {
    if (depth > MAX_JSON_DEPTH) throw invalidJson(`nesting deeper than ${MAX_JSON_DEPTH} levels`);
    this.skip();
    const text = this.text;
    const c = text.charCodeAt(this.pos);
    if (c === 0x22) return this.str();
    if (c === 0x7b) return this.object(depth);
    if (c === 0x5b) return this.array(depth);
    if (c === 0x74 && text.startsWith('true', this.pos)) {
      this.pos += 4;
      return true;
    }
    if (c === 0x66 && text.startsWith('false', this.pos)) {
      this.pos += 5;
      return false;
    }
    if (c === 0x6e && text.startsWith('null', this.pos)) {
      this.pos += 4;
      return null;
    }
    return this.num();
  }

  object(depth: number): JsonObject {
    this.pos++;
    const keys: string[] = [];
    const values: JsonNode[] = [];
    this.skip();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return new JsonObject(keys, values);
    }
    for (;;) {
      this.skip();
      keys.push(this.str());
      this.skip();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail('":"');
      this.pos++;
      values.push(this.value(depth + 1));
      this.skip();
      const d = this.text.charCodeAt(this.pos++);
      if (d === 0x7d) return objectFromMembers(keys, values);
      if (d !== 0x2c) {
        this.pos--;
        this.fail('"," or "}"');
      }
    }
  }

  array(depth: number): JsonNode[] {
    this.pos++;
    const items: JsonNode[] = [];
    this.skip();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return items;
    }
    for (;;) {
      items.push(this.value(depth + 1));
      this.skip();
      const d = this.text.charCodeAt(this.pos++);
      if (d === 0x5d) return items;
      if (d !== 0x2c) {
        this.pos--;
        this.fail('"," or "]"');
      }
    }
  }
}

/** Statements of a journal replay running (asReplayedJsonbInput): their jsonb input reads as stored. */
let replaying = 0;

/**
 * Runs `run` with jsonb input read as stored text is: a journal replay re-runs a statement an older
 * version accepted (a view or a DEFAULT with `'"\u0000"'::jsonb`), which must not be refused now.
 */
export function asReplayedJsonbInput<T>(run: () => T): T {
  replaying++;
  try {
    return run();
  } finally {
    replaying--;
  }
}

/**
 * JSON text → jsonb, exactly (numbers as written, as numeric). INVALID_CAST with PostgreSQL's message
 * when the text is not JSON; nesting deeper than MAX_JSON_DEPTH is refused the same way. Text a user
 * typed or cast (`'…'::jsonb`) is `input`: `\u0000` and unpaired surrogate escapes are refused, as
 * PostgreSQL refuses them. A value read back from the journal, a checkpoint or a cursor is `stored`:
 * it was accepted once (an ingested object may hold either) and must read back as it was written.
 */
export function parseJsonb(text: string, from: 'input' | 'stored' = 'input'): Jsonb {
  const reader = new JsonbReader(text, from === 'input' && replaying === 0);
  const root = reader.value(0);
  reader.skip();
  if (reader.pos < text.length) reader.fail('the end of the input');
  return Jsonb.of(root);
}

function nodeFromParsed(x: unknown, depth: number): JsonNode | undefined {
  if (depth > MAX_JSON_DEPTH) return undefined;
  if (x === null || typeof x === 'boolean' || typeof x === 'string') return x;
  if (typeof x === 'number') {
    // a safe integer's shortest text is its digits (no exponent), so this is parseDecimal(String(x))
    if (Number.isSafeInteger(x)) return new Decimal(x, 0);
    jsonbInputCounts.slowNumbers++;
    return Number.isFinite(x) ? (parseDecimal(String(x)) as Decimal) : undefined;
  }
  if (typeof x === 'bigint') return Decimal.fromInt(x);
  if (x instanceof Decimal) return x;
  if (x instanceof Jsonb) return x.root;
  if (Array.isArray(x)) {
    const out: JsonNode[] = new Array<JsonNode>(x.length);
    for (let i = 0; i < x.length; i++) {
      const n = nodeFromParsed(x[i], depth + 1);
      if (n === undefined) return undefined;
      out[i] = n;
    }
    return out;
  }
  if (typeof x === 'object') {
    const keys = Object.keys(x);
    const values: JsonNode[] = new Array<JsonNode>(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const n = nodeFromParsed((x as Record<string, unknown>)[keys[i] as string], depth + 1);
      if (n === undefined) return undefined;
      values[i] = n;
    }
    return objectFromMembers(keys, values);
  }
  return undefined;
}

/**
 * An ingested JSON value (REST rows and Kafka records, already parsed exactly: bigints and long
 * decimals kept) → jsonb; null when it holds something JSON cannot (a non-finite number) or nests
 * deeper than MAX_JSON_DEPTH.
 */
export function jsonbFromParsed(v: unknown): Jsonb | null {
  const root = nodeFromParsed(v, 0);
  return root === undefined ? null : Jsonb.of(root);
}
