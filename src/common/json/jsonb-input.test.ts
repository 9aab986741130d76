// The jsonb input path against the one it replaced, kept below verbatim as the oracle: the same
// values, key order, duplicate keys (the last wins), `__proto__` keys, -0, long and exponent numbers,
// escapes and lone surrogates, the same nesting limit, and the same error for every bad text; and
// bounds on the work: object keys compared O(n log n) times (n - 1 when already in order), numbers of
// up to 15 digits read without parseDecimal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SluiceError } from '../errors.ts';
import { Decimal, parseDecimal } from '../decimal.ts';
import { parseJsonExact } from '../json-codec.ts';
import {
  Jsonb,
  JsonObject,
  MAX_JSON_DEPTH,
  compareKeys,
  jsonbFromParsed,
  jsonbInputCounts,
  parseJsonb,
  type JsonNode,
} from './jsonb.ts';

// ---- the oracle: the input path before it was rewritten for speed -------------------------------

/** An object from pairs in input order: keys in storage order, the last of duplicates kept. */
function makeObject(pairs: readonly (readonly [string, JsonNode])[]): JsonObject {
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

// ---- the old input path --------------------------------------------------------------------------------------

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
export function referenceParseJsonb(text: string): Jsonb {
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
export function referenceJsonbFromParsed(v: unknown): Jsonb | null {
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

// ---- comparing the two -----------------------------------------------------------------------

/** Everything that tells two nodes apart, the representation of numbers included. */
function shape(node: JsonNode): unknown {
  if (node instanceof Decimal)
    return { unscaled: node.unscaled, type: typeof node.unscaled, scale: node.scale };
  if (node instanceof JsonObject) return { keys: [...node.keys], values: node.values.map(shape) };
  if (Array.isArray(node)) return (node as readonly JsonNode[]).map(shape);
  return node;
}

function outcome(run: () => Jsonb | null): unknown {
  try {
    const v = run();
    return v === null ? null : { text: v.text, key: v.key(), root: shape(v.root) };
  } catch (e) {
    if (!(e instanceof SluiceError)) throw e;
    return { code: e.code, message: e.message, detail: e.detail };
  }
}

function sameAsOracle(text: string): void {
  const stored = outcome(() => parseJsonb(text, 'stored'));
  assert.deepEqual(
    stored,
    outcome(() => referenceParseJsonb(text)),
    text.slice(0, 200),
  );
  // Input reads the same, but for the escapes PostgreSQL's jsonb refuses: \u0000, and a surrogate
  // escape without its partner escape right after it (a raw lone surrogate is not an escape).
  const input = outcome(() => parseJsonb(text));
  if (!untextableEscape(text)) assert.deepEqual(input, stored, text.slice(0, 200));
  else if (!isRefusal(stored))
    assert.equal(isRefusal(input) && input.code, 'INVALID_CAST', text.slice(0, 200));
}

function isRefusal(o: unknown): o is { code: string; message: string; detail?: string } {
  return typeof o === 'object' && o !== null && 'code' in o;
}

/** Whether a JSON text has an escape jsonb input refuses: a model of the rule by regular expressions. */
function untextableEscape(text: string): boolean {
  const escapes = text.replace(/\\[^u]/g, '  '); // blank the other escapes (and an escaped backslash)
  if (/\\u0000/.test(escapes)) return true;
  const paired = escapes.replace(/\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}/g, '');
  return /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(paired);
}

test('jsonb input refuses \\u0000 and unpaired surrogate escapes with PostgreSQL messages; stored text reads them back', () => {
  const cases: [string, string | null][] = [
    ['"a\\u0000"', 'unsupported Unicode escape sequence'],
    ['{"\\u0000": 1}', 'unsupported Unicode escape sequence'],
    ['"\\\\\\u0000"', 'unsupported Unicode escape sequence'],
    ['"\\ud800"', 'Unicode low surrogate must follow a high surrogate.'],
    ['"\\udc00"', 'Unicode low surrogate must follow a high surrogate.'],
    ['"\\ud800x"', 'Unicode low surrogate must follow a high surrogate.'],
    ['"\\ud800\\n"', 'Unicode low surrogate must follow a high surrogate.'],
    ['"\\ud800\\ud800"', 'Unicode high surrogate must not follow a high surrogate.'],
    ['"\\ud83d\\ude00\\u00e9"', null],
    ['"x\\\\u0000"', null],
    ['"\\uD800\\uDC00"', null],
  ];
  for (const [text, refusal] of cases) {
    const input = outcome(() => parseJsonb(text));
    if (refusal === null) assert.ok(!isRefusal(input), text);
    else {
      assert.ok(isRefusal(input) && input.code === 'INVALID_CAST', text);
      assert.equal(refusal.startsWith('Unicode') ? input.detail : input.message, refusal, text);
    }
    assert.deepEqual(
      outcome(() => parseJsonb(text, 'stored')),
      outcome(() => referenceParseJsonb(text)),
      text,
    );
  }
});

const blank = fc.constantFrom('', '', ' ', '\n', '\t', ' \r\n ');
const oddKey = fc.oneof(
  fc.constantFrom('a', 'b', 'aa', 'ab', 'ba', '', '__proto__', 'constructor', 'toString', '10', '2'),
  fc.constantFrom('é', 'ß', 'e\u0301', '\u{1F600}', '\uFFFF', '\uD800', '\uDC00x', 'a\\b', 'x"y', '\u0000'),
  fc.string({ unit: 'binary', maxLength: 5 }),
);
// A key written escaped (JSON.stringify) or raw where JSON allows it (lone surrogates stay raw).
const keyText = fc
  .tuple(oddKey, fc.boolean())
  .map(([k, raw]) => (raw && !/["\\\u0000-\u001f]/.test(k) ? `"${k}"` : JSON.stringify(k)));
const digits = (min: number, max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc
    .tuple(
      fc.constantFrom('', '-'),
      digits(1, 18),
      digits(0, 18),
      fc.constantFrom('', 'e5', 'E-3', 'e+0', 'e400'),
    )
    .map(([s, a, b, e]) => `${s}${a.replace(/^0+(?=\d)/, '')}${b === '' ? '' : `.${b}`}${e}`),
  fc.constantFrom(
    '-0',
    '-0.0',
    '0.000',
    '9007199254740993',
    '999999999999999',
    '1000000000000000',
    '-999999999999999.5',
  ),
);
const { json: jsonText } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    fc.constantFrom('true', 'false', 'null'),
    fc.string({ unit: 'binary', maxLength: 6 }).map((s) => JSON.stringify(s)),
    fc
      .array(fc.tuple(blank, tie('json'), blank), { maxLength: 5 })
      .map((xs) => `[${xs.map(([a, v, b]) => a + v + b).join(',')}]`),
    fc
      .array(fc.tuple(blank, keyText, blank, tie('json')), { maxLength: 6 })
      .map((ps) => `{${ps.map(([a, k, b, v]) => `${a}${k}${b}:${v}`).join(',')}}`),
  ),
}));

test('parseJsonb reads every JSON text exactly as the old reader did', () => {
  fc.assert(
    fc.property(blank, jsonText, blank, (a, text, b) => sameAsOracle(a + text + b)),
    { numRuns: 2000 },
  );
});

test("parseJsonb refuses every damaged text with the old reader's error", () => {
  fc.assert(
    fc.property(
      jsonText,
      fc.nat(),
      fc.constantFrom('', ',', '"', '}', ']', '-', '.', 'e', '\u0001', 'x', '\\'),
      (text, at, insert) => {
        const i = at % (text.length + 1);
        sameAsOracle(text.slice(0, i) + insert + text.slice(i + 1)); // one character replaced or dropped
        sameAsOracle(text.slice(0, i)); // cut short
      },
    ),
    { numRuns: 2000 },
  );
});

test('wide objects (the sorted path) with many duplicates, and nesting at and past the limit', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(keyText, numberText), { minLength: 20, maxLength: 120 }), (members) => {
      sameAsOracle(`{${members.map(([k, v]) => `${k}: ${v}`).join(', ')}}`);
    }),
    { numRuns: 200 },
  );
  for (const depth of [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 10_000]) {
    sameAsOracle(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
    sameAsOracle(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
  }
});

test('jsonbFromParsed converts every ingested value as the old conversion did', () => {
  const odd = fc.constantFrom<unknown>(
    NaN,
    Infinity,
    -0,
    0.1,
    1e21,
    2 ** 53,
    -(2 ** 53) + 1,
    5e-324,
    12n,
    undefined,
  );
  const extra = fc.oneof(
    odd,
    fc.constant(parseDecimal('1.50')),
    fc.constant(parseJsonb('{"b": [1], "a": 2}')),
  );
  fc.assert(
    fc.property(jsonText, fc.jsonValue(), extra, (text, value, e) => {
      let exact: unknown = null;
      try {
        exact = parseJsonExact(text);
      } catch {
        // the ingest reader refuses 1e400 and duplicate keys itself, before any conversion
      }
      for (const v of [exact, JSON.parse(text) as unknown, value, [value, e], { x: e, y: value }]) {
        assert.deepEqual(
          outcome(() => jsonbFromParsed(v)),
          outcome(() => referenceJsonbFromParsed(v)),
        );
      }
    }),
    { numRuns: 1000 },
  );
  const deep: unknown[] = [];
  let at = deep;
  for (let i = 0; i < 300; i++) at.push((at = []));
  assert.equal(jsonbFromParsed(deep), referenceJsonbFromParsed(deep));
  assert.equal(jsonbFromParsed(deep), null);
});

test('work: keys compared n - 1 times in order and O(n log n) times out of order; short numbers without parseDecimal', () => {
  const n = 1000;
  const inOrder = Array.from({ length: n }, (_, i) => `"k${String(i).padStart(4, '0')}": ${i}`);
  let before = jsonbInputCounts.keyComparisons;
  parseJsonb(`{${inOrder.join(',')}}`);
  assert.equal(jsonbInputCounts.keyComparisons - before, n - 1);
  before = jsonbInputCounts.keyComparisons;
  const v = parseJsonb(`{${[...inOrder].reverse().join(',')}}`);
  assert.equal((v.root as JsonObject).keys[0], 'k0000');
  const used = jsonbInputCounts.keyComparisons - before;
  assert.ok(used <= 2 * n * Math.log2(n), `${used} comparisons for ${n} keys`);
  // twelve keys out of order: at most 11 + 12·11/2 comparisons (the check, then insertion sort)
  before = jsonbInputCounts.keyComparisons;
  parseJsonb(`{${Array.from({ length: 12 }, (_, i) => `"${'x'.repeat(12 - i)}": 1`).join(',')}}`);
  assert.ok(jsonbInputCounts.keyComparisons - before <= 1 + 66);

  const slow = jsonbInputCounts.slowNumbers;
  parseJsonb(
    `[${Array.from({ length: 10_000 }, (_, i) => `${i % 2 ? '-' : ''}${i}.${i}`).join(',')}, 999999999999999, -0]`,
  );
  jsonbFromParsed(Array.from({ length: 10_000 }, (_, i) => i - 5000));
  assert.equal(jsonbInputCounts.slowNumbers, slow);
  parseJsonb('[1000000000000000, 1e2, 0.5]'); // 16 digits, an exponent: the exact path
  jsonbFromParsed([0.5]);
  assert.equal(jsonbInputCounts.slowNumbers, slow + 3);
});
