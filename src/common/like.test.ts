// LIKE/ILIKE matched segment by segment: the same answers as the whole-pattern regular expression
// it replaced (kept here as the oracle, on inputs small enough for its backtracking), and patterns
// with many wildcards over long non-matching texts, which that regular expression took minutes on.
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

const patternChar = fc.constantFrom('a', 'b', 'A', 'é', 'É', '😀', '.', '*', '\n', '%', '%', '_', '\\');
const textChar = fc.constantFrom('a', 'b', 'A', 'é', 'É', '😀', '.', '*', '\n', '%', '_', '\\');

test('LIKE and ILIKE agree with the whole-pattern regular expression', () => {
  fc.assert(
    fc.property(
      fc.array(patternChar, { maxLength: 8 }).map((cs) => cs.join('')),
      fc.array(textChar, { maxLength: 10 }).map((cs) => cs.join('')),
      fc.boolean(),
      (pattern, text, caseInsensitive) => {
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
    ['a\\', 'a\\', true],
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
