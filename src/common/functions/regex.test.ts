// regex.ts's searches against the way they were made before: RE2JS's Matcher, one `find` after
// another, a replacement read character by character per match (the reference below). Random texts
// with surrogate pairs, lone surrogates, case and newlines, patterns with literal forms, groups,
// empty matches, non-greedy quantifiers and anchors; then the engine searches each call makes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileRe2, compileRegex, type RegexMatch } from './regex.ts';
import { RE2JS } from 're2js';
import { MAX_TEXT_LENGTH } from '../limits.ts';

/** The searches as the Matcher made them (the implementation before the engine was called directly). */
function reference(pattern: string, caseInsensitive: boolean) {
  const { re } = compileRe2(pattern, caseInsensitive);
  const matches = (s: string, from: number): ReturnType<RE2JS['matcher']>[] => {
    const m = re.matcher(s);
    const out: ReturnType<RE2JS['matcher']>[] = [];
    for (let found = m.find(from); found; found = m.find()) out.push(m);
    return out;
  };
  const expand = (m: ReturnType<RE2JS['matcher']>, replacement: string): string => {
    let out = '';
    for (let i = 0; i < replacement.length; i++) {
      const c = replacement[i] as string;
      const n = replacement[i + 1];
      if (c !== '\\' || n === undefined) {
        out += c;
        continue;
      }
      i++;
      if (n >= '1' && n <= '9') out += Number(n) <= m.groupCount() ? (m.group(Number(n)) ?? '') : '';
      else if (n === '&') out += m.group() ?? '';
      else if (n === '\\') out += '\\';
      else out += `\\${n}`;
    }
    return out;
  };
  return {
    test: (s: string): boolean => re.matcher(s).find(),
    count: (s: string, from: number): number => matches(s, from).length,
    nth: (s: string, from: number, n: number): RegexMatch | null => {
      const m = re.matcher(s);
      let k = 0;
      for (let found = m.find(from); found; found = m.find()) {
        if (++k < n) continue;
        const groups: (string | null)[] = [];
        const spans: [number, number][] = [[m.start(), m.end()]];
        for (let g = 1; g <= m.groupCount(); g++) {
          groups.push(m.group(g) ?? null);
          spans.push([m.start(g), m.end(g)]);
        }
        return { match: m.group() ?? '', groups, spans };
      }
      return null;
    },
    replace: (s: string, replacement: string, global: boolean): string => {
      const m = re.matcher(s);
      let out = '';
      let last = 0;
      while (m.find()) {
        out += s.slice(last, m.start()) + expand(m, replacement);
        last = m.end();
        if (!global) break;
      }
      return out + s.slice(last);
    },
  };
}

const pieces = ['a', 'b', 'ab', 'A', 'é', 'É', ',', ' ', '\n', '😀', '\ud83d', '\ude00', 'x', '.', '-'];
const texts = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => p.join(''));
const patterns = fc.constantFrom(
  ...[
    'a',
    'ab',
    'ba',
    ',',
    'a b',
    'é',
    '😀',
    'a-b',
    'x.',
    '\\.',
    '***=a.',
    'A',
    '(?i)a',
    '(?c)a',
    '',
    'x*',
    'a*',
    'a+',
    'a+?',
    'a*?b',
    '(a)(b)?',
    '(a|b)(c|d)',
    '(a)|(b)',
    '((a)b)',
    '[ab]',
    '[^a]',
    '.',
    '^a',
    'a$',
    '\\ya',
    'b\\y',
    '\\w+',
    '\\s',
    '(é|😀)',
    '[😀é]+',
    '(x)*',
    '(a*)*',
    'a{2}',
    'a{1,2}?',
  ],
);
const replacements = fc.constantFrom(
  '',
  'x',
  '\\&',
  '\\1',
  '\\2\\1',
  '\\\\',
  '\\q',
  'a\\',
  '<\\&>',
  '\\9',
  '\\0',
);

describe('regular expressions against the Matcher, one find after another', () => {
  it('test, count, nth and replace answer as before for random texts, patterns and flags', () => {
    fc.assert(
      fc.property(
        texts,
        patterns,
        fc.boolean(),
        replacements,
        fc.nat(45),
        fc.integer({ min: 1, max: 5 }),
        (s, pattern, insensitive, replacement, fromChar, n) => {
          const mine = compileRegex(pattern, insensitive);
          const old = reference(pattern, insensitive);
          // `from` on a code point boundary, as offsetOfChar gives it
          let from = 0;
          for (let c = 0; c < fromChar && from < s.length; c++) {
            const code = s.charCodeAt(from);
            const low = s.charCodeAt(from + 1);
            from += code >= 0xd800 && code <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
          }
          assert.equal(mine.test(s), old.test(s));
          assert.equal(mine.count(s, from), old.count(s, from));
          assert.deepEqual(mine.nth(s, from, n), old.nth(s, from, n));
          assert.equal(mine.replace(s, replacement, true), old.replace(s, replacement, true));
          assert.equal(mine.replace(s, replacement, false), old.replace(s, replacement, false));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

/** Counts RE2JS's engine searches (the entry its Matcher calls) while `f` runs. */
function engineSearches(f: () => unknown): number {
  const proto = Object.getPrototypeOf(RE2JS.compile('a').re2()) as {
    matchMachineInput: (...a: unknown[]) => unknown;
  };
  const real = proto.matchMachineInput;
  let calls = 0;
  proto.matchMachineInput = function (this: unknown, ...args: unknown[]) {
    calls++;
    return real.apply(this, args);
  };
  try {
    f();
  } finally {
    proto.matchMachineInput = real;
  }
  return calls;
}

describe('engine searches per call', () => {
  const s = 'ab'.repeat(1000);
  it('a plain literal pattern is searched without the engine', () => {
    const re = compileRegex('ab', false);
    assert.equal(
      engineSearches(() => assert.equal(re.count(s, 0), 1000)),
      0,
    );
    assert.equal(
      engineSearches(() => assert.equal(re.replace(s, 'x', true), 'x'.repeat(1000))),
      0,
    );
    assert.equal(
      engineSearches(() => assert.equal(re.nth(s, 0, 1000)?.spans[0]?.[0], 1998)),
      0,
    );
  });
  it('a yes-or-no match asks for no positions', () => {
    assert.equal(
      engineSearches(() => assert.equal(compileRegex('(a|b)(c|d)', false).test(s), false)),
      0,
    );
  });
  it('a replacement reading groups takes them from the search that finds the match: one per match', () => {
    const re = compileRegex('(a)(b)', false);
    assert.equal(
      engineSearches(() => assert.equal(re.replace(s, '\\2\\1', true), 'ba'.repeat(1000))),
      1001,
    );
    assert.equal(
      engineSearches(() => assert.equal(re.count(s, 0), 1000)),
      1001,
    );
  });
  it('the n-th match searches again for groups only when the pattern has some', () => {
    const noGroups = compileRegex('[ab]', false);
    assert.equal(
      engineSearches(() => assert.equal(noGroups.nth(s, 0, 3)?.match, 'a')),
      3,
    );
    const oneGroup = compileRegex('(a)b', false);
    assert.equal(
      engineSearches(() => assert.equal(oneGroup.nth(s, 0, 3)?.groups[0], 'a')),
      4,
    );
  });
});

describe('a replacement past the longest text', () => {
  const s = `a${'b'.repeat(MAX_TEXT_LENGTH - 10)}`;
  for (const pattern of ['a', '(a)', 'b']) {
    it(`is refused with STRING_TOO_LONG for '${pattern}', a shorter one is not`, () => {
      const re = compileRegex(pattern, false);
      assert.throws(() => re.replace(s, 'x'.repeat(20), true), { code: 'STRING_TOO_LONG' });
      assert.equal(re.replace(s, '', false).length, s.length - 1);
    });
  }
});
