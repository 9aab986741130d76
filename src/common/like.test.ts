// LIKE/ILIKE matched segment by segment: the same answers as the whole-pattern regular expression
// it replaced (kept here as the oracle, on inputs small enough for its backtracking), and patterns
// with many wildcards over long non-matching texts, which that regular expression took minutes on.
// A pattern ending in a lone escape character: PostgreSQL's error exactly where its matcher raises
// it (like_match.c's MatchText, transcribed here as the oracle), false elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileLike } from './like.ts';

/** The previous implementation: one backtracking RegExp for the whole pattern. */
function oracle(pattern: string, caseInsensitive: boolean): RegExp {
  const chars = Array.from(pattern);
  let src = '^';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '\\' && i + 1 < chars.length)
      src += (chars[++i] as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '%') src += '[\\s\\S]*';
    else if (c === '_') src += '[\\s\\S]';
    else src += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${src}$`, caseInsensitive ? 'isu' : 'su');
}

function endsInLoneEscape(pattern: string): boolean {
  return /(?:^|[^\\])(?:\\\\)*\\$/.test(pattern);
}

const patternChar = fc.constantFrom('a', 'b', 'A', 'é', 'É', '😀', '.', '*', '\n', '%', '%', '_', '\\');
const textChar = fc.constantFrom('a', 'b', 'A', 'é', 'É', '😀', '.', '*', '\n', '%', '_', '\\');

test('LIKE and ILIKE agree with the whole-pattern regular expression', () => {
  fc.assert(
    fc.property(
      fc.array(patternChar, { maxLength: 8 }).map((cs) => cs.join('')),
      fc.array(textChar, { maxLength: 10 }).map((cs) => cs.join('')),
      fc.boolean(),
      (pattern, text, caseInsensitive) => {
        // A pattern ending in a lone escape is PostgreSQL's error or false (below), never a match.
        fc.pre(!endsInLoneEscape(pattern));
        assert.equal(
          compileLike(pattern, caseInsensitive).test(text),
          oracle(pattern, caseInsensitive).test(text),
          `${JSON.stringify(text)} ${caseInsensitive ? 'ILIKE' : 'LIKE'} ${JSON.stringify(pattern)}`,
        );
      },
    ),
    { numRuns: 5000 },
  );
});

test('LIKE edge cases: empty pattern, only wildcards, escapes, overlapping ends', () => {
  const cases: [string, string, boolean][] = [
    ['', '', true],
    ['a', '', false],
    ['', '%', true],
    ['abc', '%%%', true],
    ['a', 'a%a', false],
    ['aa', 'a%a', true],
    ['abcabc', '%bc%bc', true],
    ['abcab', '%bc%bc', false],
    ['50%', '50\\%', true],
    ['50x', '50\\%', false],
    ['a\\', 'a\\\\', true],
    ['x😀y', 'x_y', true],
    ['line\nbreak', 'line%break', true],
  ];
  for (const [text, pattern, expected] of cases) {
    assert.equal(compileLike(pattern, false).test(text), expected, `${text} LIKE ${pattern}`);
  }
  assert.equal(compileLike('%É_A%', true).test('xxéba'), true);
});

test('many wildcards over a long text that does not match cost one pass per segment', () => {
  // The whole-pattern RegExp tried O(n^k) splits here (n = 100,000, k = 2,000): it did not finish.
  const text = 'a'.repeat(100_000);
  assert.equal(compileLike(`${'%a'.repeat(2000)}b`, false).test(text), false);
  assert.equal(compileLike(`${'%a'.repeat(2000)}%`, false).test(text), true);
  assert.equal(compileLike('%a%a%a%a%a%a%a%a%b%', true).test(text), false);
});

const LIKE_END = 'LIKE pattern must not end with escape character';

/** PostgreSQL 15's MatchText (like_match.c) on code points: 1 true, 0 false, -1 abort; throws. */
function matchText(t: readonly string[], ti: number, p: readonly string[], pi: number): number {
  if (p.length - pi === 1 && p[pi] === '%') return 1;
  while (ti < t.length && pi < p.length) {
    if (p[pi] === '\\') {
      pi++;
      if (pi >= p.length) throw new Error(LIKE_END);
      if (p[pi] !== t[ti]) return 0;
    } else if (p[pi] === '%') {
      pi++;
      while (pi < p.length) {
        if (p[pi] === '%') pi++;
        else if (p[pi] === '_') {
          if (ti >= t.length) return -1;
          ti++;
          pi++;
        } else break;
      }
      if (pi >= p.length) return 1;
      let first = p[pi];
      if (first === '\\') {
        if (p.length - pi < 2) throw new Error(LIKE_END);
        first = p[pi + 1];
      }
      for (; ti < t.length; ti++) {
        if (t[ti] !== first) continue;
        const matched = matchText(t, ti, p, pi);
        if (matched !== 0) return matched;
      }
      return -1;
    } else if (p[pi] === '_') {
      ti++;
      pi++;
      continue;
    } else if (p[pi] !== t[ti]) return 0;
    ti++;
    pi++;
  }
  if (ti < t.length) return 0;
  while (pi < p.length && p[pi] === '%') pi++;
  return pi >= p.length ? 1 : -1;
}

/** What PostgreSQL answers: 'true', 'false' or the error's message (ILIKE lower-cases both sides). */
function postgres(text: string, pattern: string, caseInsensitive: boolean): string {
  const fold = (s: string): string[] => Array.from(s, (c) => (caseInsensitive ? c.toLowerCase() : c));
  try {
    return String(matchText(fold(text), 0, fold(pattern), 0) === 1);
  } catch (error) {
    return (error as Error).message;
  }
}

function ours(text: string, pattern: string, caseInsensitive: boolean): string {
  try {
    return String(compileLike(pattern, caseInsensitive).test(text));
  } catch (error) {
    return (error as Error).message;
  }
}

test('a pattern ending in a lone escape: the error where PostgreSQL raises it, else false', () => {
  const cases: [string, string, string][] = [
    ['ab\\', 'ab\\', LIKE_END], // the escape reached with text left
    ['ab', 'ab\\', 'false'], // the text ends first
    ['abc', 'ab\\', LIKE_END],
    ['xb', 'ab\\', 'false'], // a mismatch before the escape
    ['', '%\\', 'false'], // no text to reach the `%` with
    ['a', '%\\', LIKE_END], // the escape right after a `%`
    ['a', '%__\\', 'false'], // too little text for the `_`s
    ['ab', '%__\\', LIKE_END],
    ['zab', '%ab\\', 'false'], // `ab` found, but at the end
    ['zabz', '%ab\\', LIKE_END],
    ['zabzab', 'z%ab\\', LIKE_END], // the first place `ab` matches is taken
    ['a\\\\', 'a\\\\\\', LIKE_END], // a\\ then a lone one
    ['AB', 'ab\\', 'false'],
  ];
  for (const [text, pattern, expected] of cases) {
    assert.equal(ours(text, pattern, false), expected, `${text} LIKE ${pattern}`);
    assert.equal(postgres(text, pattern, false), expected, `oracle: ${text} LIKE ${pattern}`);
  }
  assert.equal(ours('ABc', 'ab\\', true), LIKE_END);
});

test('a pattern ending in a lone escape answers as the matcher of PostgreSQL does', () => {
  const loneChar = fc.constantFrom('a', 'b', 'A', '😀', '%', '%', '_', '\\');
  fc.assert(
    fc.property(
      fc.array(loneChar, { maxLength: 7 }).map((cs) => `${cs.join('')}\\`),
      fc
        .array(fc.constantFrom('a', 'b', 'A', '😀', '%', '_', '\\'), { maxLength: 9 })
        .map((cs) => cs.join('')),
      fc.boolean(),
      (pattern, text, caseInsensitive) => {
        fc.pre(endsInLoneEscape(pattern));
        assert.equal(
          ours(text, pattern, caseInsensitive),
          postgres(text, pattern, caseInsensitive),
          `${JSON.stringify(text)} ${caseInsensitive ? 'ILIKE' : 'LIKE'} ${JSON.stringify(pattern)}`,
        );
      },
    ),
    { numRuns: 5000 },
  );
});

test('a long text against a pattern ending in a lone escape costs one pass per segment', () => {
  const text = 'a'.repeat(100_000);
  assert.equal(ours(text, `${'%a'.repeat(2000)}b\\`, false), 'false');
  assert.equal(ours(`${text}b${text}`, `${'%a'.repeat(2000)}b\\`, false), LIKE_END);
});
