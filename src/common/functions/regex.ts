// PostgreSQL regular expressions (`~`, `~*`, SIMILAR TO, regexp_replace) run on a linear-time RE2
// engine, never on the backtracking JavaScript one: a user's pattern over user data cannot hold the
// event loop. PostgreSQL's syntax is translated to RE2's; what RE2 cannot do in linear time
// (back-references, lookaround) is rejected with INVALID_REGEX, as is a pattern over the length bound.
import { RE2JS } from 're2js';
import { SluiceError } from '../errors.ts';
import { MAX_PATTERN_LENGTH } from '../limits.ts';
import { checkLength } from './text.ts';

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

function replaceWith(m: ReturnType<RE2JS['matcher']>, replacement: string): string {
  if (!replacement.includes('\\')) return replacement;
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
}

/** Compiles a PostgreSQL regular expression; INVALID_REGEX when it is malformed or unsupported. */
export function compileRegex(pattern: string, caseInsensitive: boolean): SqlRegex {
  const t = translatePattern(pattern);
  let flags = RE2JS.DOTALL; // PostgreSQL's `.` and `[^x]` match a newline by default
  if (t.caseInsensitive ?? caseInsensitive) flags |= RE2JS.CASE_INSENSITIVE;
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
  return {
    test: (s) => re.matcher(s).find(),
    replace: (s, replacement, global) => {
      const m = re.matcher(s);
      let out = '';
      let last = 0;
      while (m.find()) {
        out += s.slice(last, m.start()) + replaceWith(m, replacement);
        last = m.end();
        checkLength(out.length + s.length - last);
        if (!global) break;
      }
      return last === 0 && out === '' ? s : out + s.slice(last);
    },
    count: (s, from) => {
      const m = re.matcher(s);
      let n = 0;
      for (let found = m.find(from); found; found = m.find()) n++;
      return n;
    },
    nth: (s, from, n) => {
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
