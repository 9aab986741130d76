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
 * PostgreSQL's default escape character backslash (a trailing lone backslash stands for itself).
 * Characters are code points (the `u` flag): `_` matches one character, never half of a pair.
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
