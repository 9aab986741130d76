// A script's text before lexing: where its statements are, where an offset is (line and column),
// and whether it is well-formed Unicode. Splitting follows the lexer's rules for what hides a `;`
// (string literals, quoted names, comments), so limits on the number and size of statements are
// checked before anything is lexed, and only one statement's tokens need to exist at a time.
import type { SourcePosition } from '../common/errors.ts';

/** One statement's text: `start` to `end` (exclusive, without its `;`), possibly with leading trivia. */
export interface StatementSpan {
  readonly start: number;
  readonly end: number;
}

const QUOTE = 0x27;
const DOUBLE_QUOTE = 0x22;
const MINUS = 0x2d;
const SLASH = 0x2f;
const STAR = 0x2a;
const SEMICOLON = 0x3b;
const LF = 0x0a;
const CR = 0x0d;

/** The lexer's whitespace: space, tab, LF, CR, form feed, vertical tab. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === LF || c === CR || c === 0x0c || c === 0x0b;
}

/** The offset just after the literal opened by the quote at `i` (`''` / `""` stay inside); the end if unterminated. */
function skipQuoted(sql: string, i: number, quote: number): number {
  const mark = quote === QUOTE ? "'" : '"';
  for (let from = i + 1; ;) {
    const close = sql.indexOf(mark, from);
    if (close < 0) return sql.length;
    if (sql.charCodeAt(close + 1) !== quote) return close + 1;
    from = close + 2;
  }
}

/** The offset of the line break ending the `--` comment at `i` (or the end). */
function skipLineComment(sql: string, i: number): number {
  let j = i + 2;
  while (j < sql.length && sql.charCodeAt(j) !== LF && sql.charCodeAt(j) !== CR) j++;
  return j;
}

/** The offset just after the (nested, as in PostgreSQL) block comment at `i`; -1 if unterminated. */
function skipBlockComment(sql: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < sql.length) {
    const c = sql.charCodeAt(j);
    if (c === SLASH && sql.charCodeAt(j + 1) === STAR) {
      depth++;
      j += 2;
    } else if (c === STAR && sql.charCodeAt(j + 1) === SLASH) {
      depth--;
      j += 2;
      if (depth === 0) return j;
    } else j++;
  }
  return -1;
}

/**
 * The statements of `sql` in order: split at every `;` outside literals, quoted names and
 * comments. Statements holding only whitespace and comments are left out. Stops after `max`
 * statements (the caller refuses the script then; 16 MiB of `SELECT 1;` are 1.8M statements).
 */
export function splitScript(sql: string, max = Infinity): StatementSpan[] {
  const spans: StatementSpan[] = [];
  let start = 0;
  let content = false;
  let i = 0;
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    if (c === QUOTE || c === DOUBLE_QUOTE) {
      i = skipQuoted(sql, i, c);
      content = true;
    } else if (c === MINUS && sql.charCodeAt(i + 1) === MINUS) {
      i = skipLineComment(sql, i);
    } else if (c === SLASH && sql.charCodeAt(i + 1) === STAR) {
      const next = skipBlockComment(sql, i);
      // An unterminated comment is an error (PostgreSQL's "unterminated /* comment"), not nothing:
      // kept as content, so a script whose last statement is only such a comment is not silently
      // shorter than what was sent.
      if (next < 0) content = true;
      i = next < 0 ? sql.length : next;
    } else if (c === SEMICOLON) {
      if (content && spans.push({ start, end: i }) > max) return spans;
      start = i + 1;
      content = false;
      i++;
    } else {
      if (!isSpace(c)) content = true;
      i++;
    }
  }
  if (content) spans.push({ start, end: sql.length });
  return spans;
}

/** The offset of the first character at or after `start` that is neither whitespace nor comment. */
export function skipTrivia(sql: string, start: number, end: number): number {
  let i = start;
  while (i < end) {
    const c = sql.charCodeAt(i);
    if (isSpace(c)) i++;
    else if (c === MINUS && sql.charCodeAt(i + 1) === MINUS) i = skipLineComment(sql, i);
    else if (c === SLASH && sql.charCodeAt(i + 1) === STAR) {
      const next = skipBlockComment(sql, i);
      if (next < 0) break; // left for the lexer, which reports it
      i = next;
    } else break;
  }
  return Math.min(i, end);
}

/**
 * Line and column (1-based, in UTF-16 code units, as the lexer counts them) of offsets in a text,
 * asked in increasing order: one pass over the text however many positions are asked.
 */
export class PositionCursor {
  private offset = 0;
  private line = 1;
  private column = 1;

  constructor(private readonly text: string) {}

  at(offset: number): SourcePosition {
    if (offset < this.offset) {
      this.offset = 0;
      this.line = 1;
      this.column = 1;
    }
    const text = this.text;
    for (; this.offset < offset && this.offset < text.length; this.offset++) {
      const c = text.charCodeAt(this.offset);
      // A line ends at LF, at CR not followed by LF, and (once) at CRLF.
      if (c === LF || (c === CR && text.charCodeAt(this.offset + 1) !== LF)) {
        this.line++;
        this.column = 1;
      } else this.column++;
    }
    return { line: this.line, column: this.column };
  }
}

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The offset of the first unpaired UTF-16 surrogate in `text`, or -1 when it is well-formed. (In a
 * `u` regular expression a surrogate pair is one code point, so the class matches only lone halves.)
 */
export function illFormedAt(text: string): number {
  return text.search(LONE_SURROGATE);
}
