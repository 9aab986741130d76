// LIKE and ILIKE without backtracking. A pattern compiled to one JavaScript RegExp (`^.*a.*a.*b$`)
// backtracks: with k wildcards a non-matching text of n characters costs O(n^k) steps, so
// `repeat('a', 100000) LIKE repeat('%a', 2000) || 'b'` (or a view's constant `%a%a%a%a%b` over an
// ingested long text) held the event loop for minutes. Here the pattern is cut at its `%`s into
// segments of fixed length (literal characters and `_`); each segment is a RegExp without any
// repetition, and the segments are matched left to right, each at its earliest place after the one
// before: a wildcard between them absorbs any gap, so the earliest place never loses a match that
// a later one would find. A text of n characters costs O(n · pattern length) at most.

import { SluiceError } from './errors.ts';

/** A compiled LIKE pattern. */
export interface LikeMatcher {
  /** Whether the whole of `s` matches the pattern. */
  test(s: string): boolean;
}

const REGEX_SYNTAX = /[.*+?^${}()|[\]\\]/g;

/**
 * The pattern's segments between unescaped `%`s, each as RegExp source of fixed length, with
 * PostgreSQL's default escape character backslash (a pattern ending in a lone one is not read
 * here: loneEscapeMatcher). Characters are code points (the `u` flag): `_` matches one character,
 * never half of a pair.
 */
function likeSegments(pattern: string): string[] {
  const chars = Array.from(pattern);
  const segments: string[] = [];
  let current = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '\\' && i + 1 < chars.length) {
      current += (chars[++i] as string).replace(REGEX_SYNTAX, '\\$&');
    } else if (c === '%') {
      segments.push(current);
      current = '';
    } else if (c === '_') current += '[\\s\\S]';
    else current += c.replace(REGEX_SYNTAX, '\\$&');
  }
  segments.push(current);
  return segments;
}

export function compileLike(pattern: string, caseInsensitive: boolean): LikeMatcher {
  if (endsInLoneEscape(pattern)) return loneEscapeMatcher(pattern, caseInsensitive);
  const flags = caseInsensitive ? 'iu' : 'u';
  const segments = likeSegments(pattern);
  if (segments.length === 1) return new RegExp(`^(?:${segments[0] as string})$`, flags);
  const first = segments[0] as string;
  const last = segments[segments.length - 1] as string;
  // Sticky: the first segment only at the start of the text.
  const head = first === '' ? null : new RegExp(first, `${flags}y`);
  // Global: searched from where the segment before ended (empty ones, from `%%`, match anywhere).
  const middles = segments
    .slice(1, -1)
    .filter((s) => s !== '')
    .map((s) => new RegExp(s, `${flags}g`));
  const tail = last === '' ? null : new RegExp(`(?:${last})$`, `${flags}g`);
  return {
    test(s: string): boolean {
      let at = 0;
      if (head !== null) {
        head.lastIndex = 0;
        if (!head.test(s)) return false;
        at = head.lastIndex;
      }
      for (const middle of middles) {
        middle.lastIndex = at;
        if (!middle.test(s)) return false;
        at = middle.lastIndex;
      }
      if (tail === null) return true;
      tail.lastIndex = at;
      return tail.test(s);
    },
  };
}

/** Whether the pattern's last backslash escapes nothing (it ends in an odd run of them). */
export function endsInLoneEscape(pattern: string): boolean {
  let run = 0;
  while (run < pattern.length && pattern[pattern.length - 1 - run] === '\\') run++;
  return run % 2 === 1;
}

function likeEndError(): SluiceError {
  return new SluiceError('INVALID_VALUE', 'LIKE pattern must not end with escape character');
}

/** Where a match reached the next `%` (text and token index), or why it stopped before one. */
type Reached = { readonly t: number; readonly p: number } | 'false' | 'abort';

type LikeToken = { readonly kind: 'char'; readonly c: string } | { readonly kind: 'any' | 'percent' | 'end' };

/**
 * A pattern ending in a lone escape never matches; PostgreSQL raises "LIKE pattern must not end with
 * escape character" when, and only when, its matcher (like_match.c, MatchText) reaches that escape
 * with text left, or after a `%` with nothing but `_`s between them — so `'ab' LIKE 'ab\'` is false
 * and `'abc' LIKE 'ab\'` an error. MatchText tries the places of each `%`'s next segment left to
 * right and, once a try reaches the next `%`, never returns false from it (its answer is true, the
 * error, or "no match anywhere"): so the first place where a segment matches whole is the one taken,
 * and this walks segment by segment like compileLike, in O(n · pattern length). ILIKE compares
 * lower-cased characters, as PostgreSQL lower-cases text and pattern.
 */
function loneEscapeMatcher(pattern: string, caseInsensitive: boolean): LikeMatcher {
  const fold = (c: string): string => (caseInsensitive ? c.toLowerCase() : c);
  const chars = Array.from(pattern);
  const tokens: LikeToken[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '\\') {
      const next = chars[++i];
      tokens.push(next === undefined ? { kind: 'end' } : { kind: 'char', c: fold(next) });
    } else if (c === '%') tokens.push({ kind: 'percent' });
    else if (c === '_') tokens.push({ kind: 'any' });
    else tokens.push({ kind: 'char', c: fold(c) });
  }
  return {
    test(s: string): boolean {
      const text = Array.from(s, fold);
      const n = text.length;
      // Matches from text[t] and tokens[p] up to the next `%` (its index and the text's there), or
      // 'false' at a mismatch, or 'abort' when the text runs out first (no match anywhere then).
      const run = (t: number, p: number): Reached => {
        for (; t < n; t++, p++) {
          const token = tokens[p] as LikeToken;
          if (token.kind === 'end') throw likeEndError();
          if (token.kind === 'percent') return { t, p };
          if (token.kind === 'char' && token.c !== text[t]) return 'false';
        }
        return 'abort';
      };
      let at: Reached = run(0, 0);
      while (typeof at !== 'string') {
        let { t, p } = at;
        // PostgreSQL skips the `%`s and `_`s after a `%` (each `_` taking a character)
        for (let token = tokens[p] as LikeToken; token.kind === 'percent' || token.kind === 'any';) {
          if (token.kind === 'any' && t++ >= n) return false;
          token = tokens[++p] as LikeToken;
        }
        const first = tokens[p] as LikeToken;
        // not a `%` nor a `_`: the lone escape itself, or a character to search for
        if (first.kind !== 'char') throw likeEndError();
        const c = first.c;
        let next: Reached = 'abort';
        for (let from = t; from < n; from++) {
          if (text[from] !== c) continue;
          next = run(from, p);
          if (next !== 'false') break;
          next = 'abort';
        }
        at = next;
      }
      return false;
    },
  };
}

/**
 * PostgreSQL's like_escape(pattern, escape): the pattern rewritten for the default escape character
 * backslash, which is how PostgreSQL itself reads `LIKE pattern ESCAPE e`. An empty escape means
 * none (every backslash is doubled); otherwise it must be one character, which then escapes the
 * character after it, and a backslash not escaped by it becomes a literal one.
 */
export function likeEscape(pattern: string, escape: string): string {
  if (escape === '') return pattern.replaceAll('\\', '\\\\');
  const chars = Array.from(escape);
  if (chars.length !== 1) {
    throw new SluiceError('INVALID_VALUE', 'invalid escape string', {
      hint: 'Escape string must be empty or one character.',
    });
  }
  if (escape === '\\') return pattern;
  let out = '';
  let afterEscape = false;
  for (const c of pattern) {
    if (c === escape && !afterEscape) {
      out += '\\';
      afterEscape = true;
    } else if (c === '\\') {
      out += afterEscape ? '\\' : '\\\\';
      afterEscape = false;
    } else {
      out += c;
      afterEscape = false;
    }
  }
  return out;
}
