// PostgreSQL regular expressions (`~`, `~*`, SIMILAR TO, regexp_replace) run on a linear-time RE2
// engine, never on the backtracking JavaScript one: a user's pattern over user data cannot hold the
// event loop. PostgreSQL's syntax is translated to RE2's; what RE2 cannot do in linear time
// (back-references, lookaround) is rejected with INVALID_REGEX, as is a pattern over the length bound.
import { MatcherInput, RE2JS, type MatcherInputBase } from 're2js';
import { SluiceError } from '../errors.ts';
import { MAX_PATTERN_LENGTH } from '../limits.ts';
import { checkLength } from './text.ts';
import { charOffset } from '../values.ts';

/**
 * Compiled patterns kept per call site (patterns that come from data are compiled per distinct
 * value): at most this many, of at most this many pattern characters together, so a column of
 * distinct long patterns cannot make the cache grow without bound.
 */
const CACHE_SIZE = 1000;
const CACHE_CHARS = 64 * 1024;

function invalidRegex(message: string, hint?: string): SluiceError {
  return new SluiceError('INVALID_REGEX', `invalid regular expression: ${message}`, {
    ...(hint !== undefined ? { hint } : {}),
  });
}

const UNSUPPORTED_HINT = 'Sluice runs regular expressions in linear time (RE2), which cannot do this';

/** A compiled PostgreSQL regular expression. */
export interface SqlRegex {
  /** Whether the pattern matches anywhere in `s`. */
  test(s: string): boolean;
  /** `s` with the first (or every) match replaced, PostgreSQL's `\1`…`\9`, `\&` in `replacement`. */
  replace(s: string, replacement: string, global: boolean): string;
  /** Non-overlapping matches in `s` from UTF-16 offset `from` (an empty match advances one place). */
  count(s: string, from: number): number;
  /** The `n`-th (1-based) match from UTF-16 offset `from`: the whole match and its groups. */
  nth(s: string, from: number, n: number): RegexMatch | null;
}

/**
 * One match: its text and its capture groups' texts (null for a group that took no part), with
 * their UTF-16 [start, end) offsets in `spans` (index 0 the whole match; -1 for a group not taken).
 */
export interface RegexMatch {
  readonly match: string;
  readonly groups: readonly (string | null)[];
  readonly spans: readonly (readonly [number, number])[];
}

/** The 1-based character (code point) position of UTF-16 offset `offset` in `s`. */
export function charOfOffset(s: string, offset: number): number {
  let chars = 1;
  for (let i = 0; i < offset; i++) {
    const code = s.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < offset) i++;
    chars++;
  }
  return chars;
}

/** The UTF-16 offset of the 1-based character (code point) position `start`; s.length when beyond. */
export function offsetOfChar(s: string, start: number): number {
  let offset = 0;
  for (let c = 1; c < start && offset < s.length; c++) {
    const code = s.charCodeAt(offset);
    offset += code >= 0xd800 && code <= 0xdbff && offset + 1 < s.length ? 2 : 1;
  }
  return offset;
}

function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9a-fA-F]$/.test(c);
}

/**
 * PostgreSQL's advanced regular expression syntax (ARE) as RE2 syntax. The differences handled:
 * `\y`/`\Y` are word boundaries (`\b` is backspace), `\Z` is the end of the string, `\x..`, `\u....`,
 * `\U........` are code points, `***=` makes the rest a literal; back-references, lookaround,
 * `\m`/`\M`, collating elements and embedded options other than a leading `(?i)`/`(?c)` are refused.
 */
export function translatePattern(pattern: string): { source: string; caseInsensitive?: boolean } {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw invalidRegex(
      `pattern too long`,
      `a pattern may have at most ${MAX_PATTERN_LENGTH} characters, this one has ${pattern.length}`,
    );
  }
  if (pattern.startsWith('***=')) return { source: RE2JS.quote(pattern.slice(4)) };
  let p = pattern.startsWith('***:') ? pattern.slice(4) : pattern;
  let caseInsensitive: boolean | undefined;
  const options = /^\(\?([a-z]+)\)/.exec(p);
  if (options !== null) {
    for (const flag of options[1] as string) {
      if (flag === 'i') caseInsensitive = true;
      else if (flag === 'c') caseInsensitive = false;
      else throw invalidRegex(`embedded option "${flag}" is not supported`, UNSUPPORTED_HINT);
    }
    p = p.slice(options[0].length);
  }
  let out = '';
  let inBracket = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    if (c === '\\') {
      const n = p[i + 1];
      if (n === undefined) throw invalidRegex('invalid escape \\ sequence');
      i++;
      if (n >= '1' && n <= '9' && !inBracket) {
        throw invalidRegex('back-references are not supported', UNSUPPORTED_HINT);
      }
      switch (n) {
        case 'y':
          out += inBracket ? 'y' : '\\b';
          break;
        case 'Y':
          out += inBracket ? 'Y' : '\\B';
          break;
        case 'm':
        case 'M':
          throw invalidRegex(`\\${n} is not supported`, 'use \\y for a word boundary');
        case 'Z':
          out += '\\z';
          break;
        case 'b':
          out += '\\x08';
          break;
        case 'e':
          out += '\\x1b';
          break;
        case 'x':
        case 'u':
        case 'U': {
          const max = n === 'x' ? 8 : n === 'u' ? 4 : 8;
          let hex = '';
          while (hex.length < max && isHex(p[i + 1])) hex += p[++i];
          if (hex === '' || (n !== 'x' && hex.length !== max))
            throw invalidRegex('invalid escape \\ sequence');
          out += `\\x{${hex}}`;
          break;
        }
        case '0':
          out += '\\x00';
          break;
        default:
          // \d \s \w \D \S \W \A \t \n \r \f \v and escaped punctuation; RE2 rejects any other letter
          out += `\\${n}`;
      }
      continue;
    }
    if (inBracket) {
      if (c === '[' && (p[i + 1] === '.' || p[i + 1] === '=')) {
        throw invalidRegex('collating elements and equivalence classes are not supported', UNSUPPORTED_HINT);
      }
      if (c === '[' && p[i + 1] === ':') {
        const end = p.indexOf(':]', i + 2);
        if (end < 0) throw invalidRegex('brackets [] not balanced');
        out += p.slice(i, end + 2);
        i = end + 1;
        continue;
      }
      if (c === ']' && !/\[\^?$/.test(out)) inBracket = false;
      out += c;
      continue;
    }
    if (c === '[') {
      if (p.startsWith('[[:<:]]', i) || p.startsWith('[[:>:]]', i)) {
        throw invalidRegex('[[:<:]] and [[:>:]] are not supported', 'use \\y for a word boundary');
      }
      inBracket = true;
      out += c;
      // a `]` right after `[` or `[^` is a literal member
      if (p[i + 1] === '^') out += p[++i];
      if (p[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(' && p[i + 1] === '?') {
      const rest = p.slice(i + 2, i + 4);
      if (rest.startsWith(':')) {
        out += '(?:';
        i += 2;
        continue;
      }
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!') {
        throw invalidRegex('lookahead and lookbehind constraints are not supported', UNSUPPORTED_HINT);
      }
      throw invalidRegex('embedded options are only supported at the start of the pattern', UNSUPPORTED_HINT);
    }
    out += c;
  }
  if (inBracket) throw invalidRegex('brackets [] not balanced');
  return caseInsensitive === undefined ? { source: out } : { source: out, caseInsensitive };
}

/** Whether a pattern has a non-greedy quantifier (then PostgreSQL prefers the shorter match). */
function hasNonGreedy(source: string): boolean {
  return /(?:[*+?}])\?/.test(source.replace(/\\./g, ''));
}

/**
 * A replacement text read once: its literal pieces, and where PostgreSQL's `\1`…`\9` (a group
 * number) and `\&` (0, the whole match) stand; `\\` is a backslash, any other escape is kept.
 */
function parseReplacement(replacement: string): (string | number)[] {
  const pieces: (string | number)[] = [];
  let text = '';
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i] as string;
    const n = replacement[i + 1];
    if (c !== '\\' || n === undefined) {
      text += c;
      continue;
    }
    i++;
    if ((n >= '1' && n <= '9') || n === '&') {
      if (text !== '') pieces.push(text);
      text = '';
      pieces.push(n === '&' ? 0 : Number(n));
    } else if (n === '\\') text += '\\';
    else text += `\\${n}`;
  }
  if (text !== '') pieces.push(text);
  return pieces;
}

/** The replacement for a match given by its spans (a group the spans do not hold is empty). */
function expandReplacement(
  s: string,
  spans: readonly number[],
  pieces: readonly (string | number)[],
): string {
  let out = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') out += piece;
    else if (2 * piece + 1 < spans.length && (spans[2 * piece] as number) >= 0)
      out += s.slice(spans[2 * piece], spans[2 * piece + 1]);
  }
  return out;
}

/** Whether RE2 reads `source` as exactly its own characters (no operator, escape or surrogate). */
function isPlainLiteral(source: string): boolean {
  return source !== '' && !/[\\^$.|?*+()[\]{}\ud800-\udfff]/.test(source);
}

/**
 * RE2JS's engine entry under its Matcher (typed loosely by the package): one search of `input`
 * from `start`, the [start, end) offsets of the match and of `ngroup - 1` groups (-1 when not
 * taken). Called directly, a match's groups come from the one search that finds it, where the
 * Matcher finds the match and then searches again for its groups.
 */
interface RegexEngine {
  matchMachineInput(
    input: MatcherInputBase,
    start: number,
    end: number,
    anchor: number,
    ngroup: number,
  ): [boolean, number[] | null];
}
const UNANCHORED = 0;

/** A search of `s` from a given offset: the match's spans (with its groups' when asked), or null. */
function searcher(re: RE2JS, s: string, withGroups: boolean): (from: number) => number[] | null {
  const engine = re.re2() as unknown as RegexEngine;
  const input = MatcherInput.utf16(s);
  const ngroup = withGroups ? 1 + re.groupCount() : 1;
  return (from) => {
    const [found, spans] = engine.matchMachineInput(input, from, s.length, UNANCHORED, ngroup);
    return found ? spans : null;
  };
}

/**
 * Where the search after a match goes on: its end, or after an empty match one character further
 * (past the text's end when it is there), so that match is not found again.
 */
function nextSearch(s: string, spans: readonly number[]): number {
  const end = spans[1] as number;
  if (end > (spans[0] as number)) return end;
  return end < s.length ? charOffset(s, 1, end) : end + 1;
}

/**
 * A pattern that is a plain literal (and case-sensitive), searched with the string's own
 * `indexOf`: its leftmost-longest matches are exactly the literal's non-overlapping occurrences,
 * and RE2JS's per-match cost (a capture array and an engine call per match) goes.
 */
function literalRegex(literal: string): SqlRegex {
  return {
    test: (s) => s.includes(literal),
    replace: (s, replacement, global) => {
      // no groups: \1…\9 are empty, \& is the literal itself
      let text = '';
      for (const piece of parseReplacement(replacement)) {
        if (typeof piece === 'string') text += piece;
        else if (piece === 0) text += literal;
      }
      if (!global) {
        const at = s.indexOf(literal);
        if (at < 0) return s;
        checkLength(s.length - literal.length + text.length);
        return s.slice(0, at) + text + s.slice(at + literal.length);
      }
      const pieces = s.split(literal);
      // every match changes the length by the same amount, so the last total is the largest one
      if (text.length > literal.length)
        checkLength(s.length + (pieces.length - 1) * (text.length - literal.length));
      return pieces.join(text);
    },
    count: (s, from) => {
      let n = 0;
      for (let at = s.indexOf(literal, from); at >= 0; at = s.indexOf(literal, at + literal.length)) n++;
      return n;
    },
    nth: (s, from, n) => {
      let k = 0;
      for (let at = s.indexOf(literal, from); at >= 0; at = s.indexOf(literal, at + literal.length)) {
        if (++k === n) return { match: literal, groups: [], spans: [[at, at + literal.length]] };
      }
      return null;
    },
  };
}

/**
 * A PostgreSQL regular expression as RE2JS compiles it (with its translated source, and whether it
 * ignores case); INVALID_REGEX when it is malformed or unsupported.
 */
export function compileRe2(
  pattern: string,
  caseInsensitive: boolean,
): { re: RE2JS; source: string; insensitive: boolean } {
  const t = translatePattern(pattern);
  const insensitive = t.caseInsensitive ?? caseInsensitive;
  let flags = RE2JS.DOTALL; // PostgreSQL's `.` and `[^x]` match a newline by default
  if (insensitive) flags |= RE2JS.CASE_INSENSITIVE;
  // PostgreSQL's whole match is greedy unless its first quantifier is not: the longest one then.
  if (!hasNonGreedy(t.source)) flags |= RE2JS.LONGEST_MATCH;
  let re: RE2JS;
  try {
    re = RE2JS.compile(t.source, flags);
  } catch (error) {
    // RE2's message without the (translated) pattern text it quotes
    const message =
      error instanceof Error
        ? error.message.replace(/^error parsing regexp: /, '').replace(/: `[^]*`$/, '')
        : 'malformed';
    throw invalidRegex(message);
  }
  return { re, source: t.source, insensitive };
}

/** Compiles a PostgreSQL regular expression; INVALID_REGEX when it is malformed or unsupported. */
export function compileRegex(pattern: string, caseInsensitive: boolean): SqlRegex {
  const { re, source, insensitive } = compileRe2(pattern, caseInsensitive);
  if (!insensitive && isPlainLiteral(source)) return literalRegex(source);
  const groupCount = re.groupCount();
  return {
    // RE2JS's test asks for no positions, so it runs on its DFA rather than the capturing NFA
    test: (s) => re.test(s),
    replace: (s, replacement, global) => {
      const pieces = parseReplacement(replacement);
      // the groups' spans only when the replacement reads a group the pattern has
      const search = searcher(
        re,
        s,
        pieces.some((p) => typeof p === 'number' && p > 0 && p <= groupCount),
      );
      const parts: string[] = [];
      let length = 0;
      let last = 0;
      for (let spans = search(0); spans !== null; spans = global ? search(nextSearch(s, spans)) : null) {
        const text = expandReplacement(s, spans, pieces);
        parts.push(s.slice(last, spans[0]), text);
        length += (spans[0] as number) - last + text.length;
        last = spans[1] as number;
        checkLength(length + s.length - last);
      }
      if (parts.length === 0) return s;
      parts.push(s.slice(last));
      return parts.join('');
    },
    count: (s, from) => {
      const search = searcher(re, s, false);
      let n = 0;
      for (let spans = search(from); spans !== null; spans = search(nextSearch(s, spans))) n++;
      return n;
    },
    nth: (s, from, n) => {
      const search = searcher(re, s, false);
      let k = 0;
      for (let spans = search(from); spans !== null; spans = search(nextSearch(s, spans))) {
        if (++k < n) continue;
        // the n-th match found again from its start (the leftmost match from there), with its groups
        const all = groupCount === 0 ? spans : searcher(re, s, true)(spans[0] as number);
        if (all === null) throw new Error('regex: a match not found again with its groups');
        const groups: (string | null)[] = [];
        const pairs: [number, number][] = [[all[0] as number, all[1] as number]];
        for (let g = 1; g <= groupCount; g++) {
          const start = all[2 * g] as number;
          const end = all[2 * g + 1] as number;
          groups.push(start < 0 ? null : s.slice(start, end));
          pairs.push([start, end]);
        }
        return { match: s.slice(all[0], all[1]), groups, spans: pairs };
      }
      return null;
    },
  };
}

/**
 * SQL's SIMILAR TO pattern as a PostgreSQL regular expression matching the whole string: `%` is
 * `.*`, `_` is `.`, `|`, `*`, `+`, `?`, `{m,n}`, `()` and `[...]` keep their meaning, `\` escapes.
 */
export function similarToRegex(pattern: string): string {
  if (pattern.length > MAX_PATTERN_LENGTH) translatePattern(pattern); // raises the length error
  let out = '^(?:';
  let inBracket = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === undefined) throw invalidRegex('invalid escape \\ sequence');
      i++;
      out += /[a-zA-Z0-9]/.test(n) ? n : `\\${n}`;
      continue;
    }
    if (inBracket) {
      if (c === ']') inBracket = false;
      out += c;
      continue;
    }
    switch (c) {
      case '%':
        out += '.*';
        break;
      case '_':
        out += '.';
        break;
      case '[':
        inBracket = true;
        out += c;
        if (pattern[i + 1] === '^') out += pattern[++i];
        if (pattern[i + 1] === ']') out += pattern[++i];
        break;
      case '(':
        out += '(?:';
        break;
      case '.':
      case '^':
      case '$':
        out += `\\${c}`;
        break;
      default:
        out += c;
    }
  }
  return `${out})$`;
}

/** Per call site: a constant pattern compiled once, others through a bounded cache. */
export function regexCompiler(caseInsensitive: boolean, similar: boolean): (pattern: string) => SqlRegex {
  const cache = new Map<string, SqlRegex>();
  let chars = 0;
  return (pattern) => {
    let re = cache.get(pattern);
    if (re === undefined) {
      re = compileRegex(similar ? similarToRegex(pattern) : pattern, caseInsensitive);
      if (cache.size < CACHE_SIZE && chars + pattern.length <= CACHE_CHARS) {
        cache.set(pattern, re);
        chars += pattern.length;
      }
    }
    return re;
  };
}
