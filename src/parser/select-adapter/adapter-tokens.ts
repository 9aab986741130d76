// Our tokens as handed to node-sql-parser: each token rendered into the text it parses (same length,
// so offsets stay ours), long constant lists (constant-lists.ts) and ON conditions taken out of that text, the
// parenthesis matching the converter walks by, and node-sql-parser's infix operators as our tokens.
import type { IToken, TokenType } from 'chevrotain';
import { PG15_KEYWORDS } from '../../common/functions/pg-keywords.ts';
import type { InfixOp } from '../expr-builder.ts';
import { constantItemEnd } from './constant-lists.ts';
import { markOverlay, markPosition, markSubstring } from './call-keyword-commas.ts';
import { isLiteralEscape } from './like-escape-collate.ts';
import { castTypeStandIns } from './cast-type-words.ts';
import {
  closingParens,
  Caret,
  Comma,
  Arrow,
  OtherOp,
  ArrowText,
  AtGt,
  Concat,
  HashArrow,
  HashArrowText,
  HashMinus,
  LtAt,
  Dot,
  Eq,
  Gt,
  GtEq,
  Ident,
  isType,
  isWord,
  isWordText,
  LParen,
  Lt,
  LtEq,
  Minus,
  NotEq,
  NumberLit,
  Percent,
  Plus,
  QuotedIdent,
  RParen,
  Slash,
  Star,
  StringLit,
} from '../lexer.ts';

/** A token plus how it is rendered into the text node-sql-parser sees (always the same length). */
export interface AdapterToken {
  readonly tok: IToken;
  readonly render: string;
  /** Rendered as a comma (FROM/FOR inside SUBSTRING); the converter accepts it where a comma goes. */
  readonly asComma: boolean;
}

/**
 * The text node-sql-parser parses. Literals and quoted identifiers are masked (their values come
 * from our tokens; quoted identifiers are rendered unquoted), comments become spaces, and a few PostgreSQL forms node-sql-parser rejects are
 * rewritten: `f(DISTINCT x)` for any f, `SELECT ALL`, `SUBSTRING(s FROM a FOR b)`, `TIMESTAMPTZ '…'`.
 * Offsets are kept.
 */
const IS_VALUES = ['null', 'true', 'false', 'unknown'];

export function renderTokens(tokens: readonly IToken[], lists: ReadonlyMap<number, number>): AdapterToken[] {
  const hidden = new Set<number>();
  const commas = new Set<number>();
  const timestampWords = new Set<number>();
  const concatWords = new Set<number>();
  // Cast types node-sql-parser lacks (`x::bpchar`) are shown as ones it knows (cast-type-words.ts).
  const renamed = castTypeStandIns(tokens);
  const fillerNames = new Set<number>();
  for (const [open, close] of lists) {
    if (isWordText(tokens[open], 'values')) {
      // The first row stays; the comma after it and every later row are hidden.
      let first = open + 1;
      while (tokens[first]!.tokenType !== RParen) first++;
      for (let i = first + 1; i <= close; i++) hidden.add(i);
    } else for (let i = constantItemEnd(tokens, open + 1); i < close; i++) hidden.add(i);
  }
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const prev = tokens[i - 1];
    if (isWordText(token, 'distinct') || isWordText(token, 'all')) {
      if (isType(prev, LParen) && isType(tokens[i - 2], Ident)) hidden.add(i);
      if (isWordText(token, 'all') && isWordText(prev, 'select') && !isWordText(tokens[i + 1], 'distinct')) {
        hidden.add(i);
      }
    }
    if (isWordText(token, 'substring') && isType(tokens[i + 1], LParen)) markSubstring(tokens, i + 1, commas);
    if (isWordText(token, 'position') && isType(tokens[i + 1], LParen)) markPosition(tokens, i + 1, commas);
    if (isWordText(token, 'overlay') && isType(tokens[i + 1], LParen)) markOverlay(tokens, i + 1, commas);
    // node-sql-parser reads `a CROSS JOIN b` and `a NATURAL JOIN b` as table a aliased "cross" or
    // "natural": it sees a plain JOIN, and the converter takes the join's kind from our tokens.
    // (After AS it is an alias, which PostgreSQL refuses: the converter reports it.)
    const next = tokens[i + 1];
    if (!isWordText(prev, 'as')) {
      if (isWordText(token, 'cross') && isWordText(next, 'join')) hidden.add(i);
      if (isWordText(token, 'natural') && NATURAL_FOLLOWERS.some((w) => isWordText(next, w))) hidden.add(i);
    }
    // `a JOIN b JOIN c USING (k) USING (j)`: node-sql-parser takes one qualifier per join and the
    // converter reads USING lists from our tokens, so a USING list right after another is hidden.
    if (isWordText(token, 'using') && followsUsingList(tokens, i)) {
      for (let j = i; j < tokens.length; j++) {
        hidden.add(j);
        if (tokens[j]!.tokenType === RParen) break;
      }
    }
    // Typed literals node-sql-parser lacks: TIMESTAMPTZ '…' is read as TIMESTAMP '…', and
    // TIMESTAMP/TIME WITH[OUT] TIME ZONE '…' without the zone words; the converter reads the whole
    // type name from our tokens.
    if (isWordText(token, 'timestamptz') && isType(next, StringLit)) timestampWords.add(i);
    if (
      (isWordText(token, 'timestamp') || isWordText(token, 'time')) &&
      (isWordText(next, 'with') || isWordText(next, 'without')) &&
      isWordText(tokens[i + 2], 'time') &&
      isWordText(tokens[i + 3], 'zone') &&
      isType(tokens[i + 4], StringLit)
    ) {
      hidden
        .add(i + 1)
        .add(i + 2)
        .add(i + 3);
    }
    // `x AT TIME ZONE z` for any x: node-sql-parser reads it on a column only, so it sees `x || z`
    // and the converter builds the operator from our tokens, with PostgreSQL's precedence.
    if (isWordText(token, 'at') && isWordText(next, 'time') && isWordText(tokens[i + 2], 'zone')) {
      concatWords.add(i);
      hidden.add(i + 1).add(i + 2);
    }
    // `x IS [NOT] DISTINCT FROM y`: node-sql-parser reads only `IS DISTINCT FROM column`, so it
    // sees `x || y` and the converter builds the operator from our tokens, with PostgreSQL's
    // precedence (expr-builder.ts).
    const negatedDistinct = isWordText(next, 'not') ? 1 : 0;
    if (
      isWordText(token, 'is') &&
      isWordText(tokens[i + 1 + negatedDistinct], 'distinct') &&
      isWordText(tokens[i + 2 + negatedDistinct], 'from') &&
      i + 3 + negatedDistinct < tokens.length
    ) {
      concatWords.add(i);
      for (let j = i + 1; j <= i + 2 + negatedDistinct; j++) hidden.add(j);
    }
    // `BETWEEN [A]SYMMETRIC`, which node-sql-parser does not read: the converter takes it from our tokens
    if ((isWordText(token, 'symmetric') || isWordText(token, 'asymmetric')) && isWordText(prev, 'between'))
      hidden.add(i);
    // `x IS [NOT] NULL/TRUE/FALSE/UNKNOWN`: node-sql-parser refuses it after a comparison
    // (`a = b IS NULL`), so it sees `x || NULL` and the converter builds the test from our tokens,
    // with PostgreSQL's precedence (looser than `=`).
    const isValueAt = negatedDistinct + 1;
    if (isWordText(token, 'is') && IS_VALUES.some((w) => isWordText(tokens[i + isValueAt], w))) {
      concatWords.add(i);
      if (negatedDistinct === 1) hidden.add(i + 1);
    }
    // The postfix `x ISNULL` / `x NOTNULL` (PostgreSQL's spellings of IS [NOT] NULL), which
    // node-sql-parser reads as an alias: it sees `x ||null` / `x || null` (the same lengths) and the
    // converter builds the test from our tokens. Only after an operand: elsewhere the word is a name.
    if ((isWordText(token, 'isnull') || isWordText(token, 'notnull')) && endsOperand(prev)) {
      renamed.set(i, isWordText(token, 'isnull') ? '||null' : '|| null');
    }
    // `s LIKE p ESCAPE 'c'` (or ESCAPE NULL): node-sql-parser takes ESCAPE after a literal pattern
    // only, so the clause is hidden from it and the converter reads it from our tokens after the
    // pattern (expression-converter.ts).
    if (isWordText(token, 'escape') && endsOperand(prev) && isLiteralEscape(next)) {
      hidden.add(i).add(i + 1);
    } else if (isWordText(token, 'escape') && endsOperand(prev) && startsEscapeOperand(next)) {
      // `s LIKE p ESCAPE e` with any other operand (a column, a call, a parenthesised expression):
      // node-sql-parser sees `s LIKE p || e` and the converter builds the ESCAPE from our tokens.
      concatWords.add(i);
    }
    // EXTRACT(field FROM x): node-sql-parser knows some field words only (not `millisecond`,
    // `microsecond`, `msec`, `ms`, `us`…, nor PostgreSQL's quoted `"year"` or string `'year'`): the
    // field is shown as `day` (laid out where the token was: layoutTokens), and the converter reads
    // the field from our token.
    if (isWordText(tokens[i - 2], 'extract') && isType(prev, LParen) && isWordText(next, 'from')) {
      const quoted = isType(token, QuotedIdent) || isType(token, StringLit);
      if (isWord(token) || (quoted && token.image.length >= 3))
        renamed.set(i, 'day'.padEnd(token.image.length));
    }
    // `x COLLATE "C"` for any x: node-sql-parser reads COLLATE after a column only, so it sees
    // `x || q_q` (the name masked as a quoted identifier) and the converter checks the collation.
    if (isWordText(token, 'collate') && (isType(next, QuotedIdent) || isType(next, Ident))) {
      renamed.set(i, '||'.padEnd(token.image.length));
    }
    // PostgreSQL's non-reserved words node-sql-parser will not read as a name (`SELECT at, by FROM
    // t`): where one is a name it is shown a filler name, as a quoted identifier is, and the
    // converter reads the name from our token.
    if (
      isWord(token) &&
      !isWordText(prev, '.') &&
      wordIsName(token.image.toLowerCase(), prev, next, tokens[i + 2])
    )
      fillerNames.add(i);
    // A window's frame is read from our tokens only (node-sql-parser knows few of its forms).
    if (isWordText(token, 'over') && isType(next, LParen)) hideFrame(tokens, i + 1, hidden);
    // PERCENT_RANK() and CUME_DIST() OVER, which node-sql-parser does not read, as window
    // functions it does; the converter takes the name from our token.
    const ranking = RANKING_STAND_INS[token.image.toLowerCase()];
    if (ranking !== undefined && isType(next, LParen) && isType(tokens[i + 2], RParen)) {
      if (isWordText(tokens[i + 3], 'over') && isWord(token))
        renamed.set(i, ranking.padEnd(token.image.length));
    }
    // STRING_AGG(x, d) OVER, which node-sql-parser does not read, as LAG(x, d) OVER, which it
    // reads with any arguments; the converter takes the name from our token (windowCall).
    if (
      isWordText(token, 'string_agg') &&
      isType(next, LParen) &&
      isWordText(tokens[closeOf(tokens, i + 1) + 1], 'over')
    ) {
      renamed.set(i, 'lag'.padEnd(token.image.length));
      // DISTINCT, which LAG does not take, hidden: the converter refuses it from our token.
      if (isWordText(tokens[i + 2], 'distinct')) hidden.add(i + 2);
    }
    // Named arguments `f(a => 1, b := 2)`, which node-sql-parser does not read: it sees
    // `f(     1,      2)` and the converter reads each name from our tokens (functionCallNode).
    if ((isType(prev, LParen) || isType(prev, Comma)) && namedArgumentAt(tokens, i)) {
      hidden
        .add(i)
        .add(i + 1)
        .add(i + 2);
    }
    // OFFSET n ROWS (node-sql-parser knows only OFFSET n).
    if ((isWordText(token, 'row') || isWordText(token, 'rows')) && isWordText(tokens[i - 2], 'offset')) {
      if (prev?.tokenType === NumberLit) hidden.add(i);
    }
  }
  return tokens.map((tok, i) => {
    const length = tok.image.length;
    let render = tok.image;
    if (hidden.has(i)) render = ' '.repeat(length);
    else if (renamed.has(i)) render = renamed.get(i)!;
    else if (timestampWords.has(i)) render = 'timestamp'.padEnd(length);
    else if (concatWords.has(i)) render = '||';
    // `a ^ b`: node-sql-parser has no `^`; it sees `a * b` and the converter builds the power from
    // our token, with PostgreSQL's precedence (expr-builder.ts)
    else if (tok.tokenType === Caret) render = '*';
    else if (commas.has(i)) render = ','.padEnd(length);
    else if (tok.tokenType === StringLit) render = `'${'x'.repeat(length - 2)}'`;
    // Quoted identifiers become plain ones: node-sql-parser mishandles `x::int "Alias"` and reads
    // `LIKE "col"` as a string. The filler is never a keyword.
    else if (tok.tokenType === QuotedIdent || fillerNames.has(i)) render = `q${'_'.repeat(length - 2)}q`;
    else if (tok.tokenType === NumberLit) render = '1'.repeat(length);
    return { tok, render, asComma: commas.has(i) };
  });
}

/**
 * Whether `token` can start the operand of an ESCAPE (a name, a parenthesis, CASE or CAST); a word
 * PostgreSQL reserves otherwise (`FROM`, `AND`…) cannot: there `escape` is a column alias.
 */
function startsEscapeOperand(token: IToken | undefined): boolean {
  if (token === undefined) return false;
  if (isType(token, LParen) || isType(token, QuotedIdent)) return true;
  if (!isType(token, Ident)) return false;
  const word = token.image.toLowerCase();
  return word === 'case' || word === 'cast' || PG15_KEYWORDS.get(word) !== 'reserved';
}

/** Whether `token` can end an operand (a name, a literal, a closing parenthesis). */
function endsOperand(token: IToken | undefined): boolean {
  if (token === undefined) return false;
  if (isType(token, RParen) || isType(token, NumberLit) || isType(token, StringLit)) return true;
  if (isType(token, QuotedIdent)) return true;
  return isType(token, Ident) && !OPERAND_STARTS.has(token.image.toLowerCase());
}

/** Words after which an ISNULL / NOTNULL is a name, not the postfix test. */
const OPERAND_STARTS = new Set([
  'select',
  'distinct',
  'all',
  'as',
  'by',
  'from',
  'where',
  'and',
  'or',
  'not',
  'on',
]);

/**
 * Whether `word` (PostgreSQL non-reserved) is a name here rather than the keyword it also is:
 * `at` but for AT TIME ZONE, `by` but after GROUP/ORDER/PARTITION, `partition` but before BY,
 * `recursive` but after WITH, `session` but before `(` (the window
 * table function); `global`, `set` and `show` are never keywords in a query.
 */
function wordIsName(
  word: string,
  prev: IToken | undefined,
  next: IToken | undefined,
  after: IToken | undefined,
): boolean {
  switch (word) {
    case 'at':
      return !(isWordText(next, 'time') && isWordText(after, 'zone'));
    case 'by':
      return !['group', 'order', 'partition'].some((w) => isWordText(prev, w));
    case 'partition':
      return !isWordText(next, 'by');
    case 'recursive':
      return !isWordText(prev, 'with');
    case 'session':
      return !isType(next, LParen);
    case 'global':
    case 'set':
    case 'show':
      return true;
    default:
      return false;
  }
}

/** Window functions node-sql-parser does not read, and the ones (no longer) it is shown instead. */
const RANKING_STAND_INS: Readonly<Record<string, string>> = { percent_rank: 'row_number', cume_dist: 'rank' };

/** The index of the `)` closing the `(` at `open` (tokens.length when none does). */
function closeOf(tokens: readonly IToken[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.tokenType === LParen) depth++;
    else if (t.tokenType === RParen && --depth === 0) return i;
  }
  return tokens.length;
}

/** Hides a window's frame clause (`ROWS …` up to the `)` of `OVER (`, at `open`). */
function hideFrame(tokens: readonly IToken[], open: number, hidden: Set<number>): void {
  let depth = 0;
  let frame = false;
  for (let i = open; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.tokenType === LParen) depth++;
    else if (token.tokenType === RParen && --depth === 0) return;
    if (depth === 1 && ['rows', 'range', 'groups'].some((w) => isWordText(token, w))) frame = true;
    if (frame) hidden.add(i);
  }
}

export const NATURAL_FOLLOWERS = ['join', 'inner', 'left', 'right', 'full'];

/** Words that end the condition of `JOIN … ON` at its own nesting level (LEFT/RIGHT unless a call). */
export const ON_ENDS = new Set([
  'join',
  'inner',
  'left',
  'right',
  'full',
  'cross',
  'natural',
  'on',
  'using',
  'where',
  'group',
  'having',
  'order',
  'limit',
  'offset',
  'union',
  'intersect',
  'except',
  'window',
  'fetch',
  'for',
  'into',
]);

/**
 * The conditions of `JOIN … ON`, as ON's index → index after its condition. node-sql-parser takes
 * ~0.3 ms for each ON it parses (ten times a WHERE of the same length), and it reads
 * `a JOIN b ON x, c` as the condition `(x, c)`: it sees each ON and its condition as blanks, and
 * the conditions are parsed apart, together (`Conditions`).
 */
export function onConditions(tokens: readonly IToken[]): Map<number, number> {
  const conditions = new Map<number, number>();
  let lastEnd = -1;
  for (let i = 0; i < tokens.length; i++) {
    // An ON right after another join's condition is the outer qualifier of a nested join
    // (`a JOIN b JOIN c ON x ON y`), as is one after a nested join's USING list.
    const nested = lastEnd === i || followsUsing(tokens, i);
    if (!isWordText(tokens[i], 'on') || !(nested || followsJoin(tokens, i))) continue;
    let depth = 0;
    let j = i + 1;
    for (; j < tokens.length; j++) {
      const token = tokens[j]!;
      if (token.tokenType === LParen) depth++;
      else if (token.tokenType === RParen && --depth < 0) break;
      else if (depth === 0 && token.tokenType === Comma) break;
      else if (depth === 0 && isWord(token) && ON_ENDS.has(token.image.toLowerCase())) {
        const call = /^(left|right)$/i.test(token.image) && isType(tokens[j + 1], LParen);
        if (!call) break;
      }
    }
    if (j > i + 1) conditions.set(i, j);
    lastEnd = j;
    i = j - 1; // an ON inside a condition (in a subquery) is part of it
  }
  return conditions;
}

/** Whether the ON at tokens[on] follows `JOIN relation USING (names)` (a nested join's qualifier). */
function followsUsing(tokens: readonly IToken[], on: number): boolean {
  return isWordText(tokens[on], 'on') && followsUsingList(tokens, on);
}

/** Whether tokens[at] comes right after the `)` of a `USING (names)` list. */
function followsUsingList(tokens: readonly IToken[], at: number): boolean {
  if (tokens[at - 1]?.tokenType !== RParen) return false;
  for (let i = at - 2; i >= 0; i--) {
    const token = tokens[i]!;
    if (token.tokenType === LParen) return isWordText(tokens[i - 1], 'using');
    if (token.tokenType !== Comma && !isWord(token) && token.tokenType !== QuotedIdent) return false;
  }
  return false;
}

/** Whether the ON at tokens[on] follows `JOIN relation` (any other ON is left to node-sql-parser). */
export function followsJoin(tokens: readonly IToken[], on: number): boolean {
  let depth = 0;
  for (let i = on - 1; i >= 0; i--) {
    const token = tokens[i]!;
    if (token.tokenType === RParen) depth++;
    else if (token.tokenType === LParen && --depth < 0) return false;
    else if (depth > 0) continue;
    else if (isWordText(token, 'join')) return true;
    else if (token.tokenType === Comma || (isWord(token) && ON_ENDS.has(token.image.toLowerCase())))
      return false;
    else if (isWordText(token, 'from') || isWordText(token, 'select')) return false;
  }
  return false;
}

export function matchParens(tokens: readonly AdapterToken[]): Int32Array {
  return closingParens(tokens.map((t) => t.tok));
}

export const INFIX_TOKENS: Readonly<Record<string, readonly [InfixOp, TokenType | string]>> = {
  '+': ['+', Plus],
  '-': ['-', Minus],
  '*': ['*', Star],
  '/': ['/', Slash],
  '%': ['%', Percent],
  '=': ['=', Eq],
  '<>': ['<>', NotEq],
  '!=': ['<>', NotEq],
  '<': ['<', Lt],
  '<=': ['<=', LtEq],
  '>': ['>', Gt],
  '>=': ['>=', GtEq],
  '||': ['||', Concat],
  '->': ['->', Arrow],
  '->>': ['->>', ArrowText],
  '#>': ['#>', HashArrow],
  '#>>': ['#>>', HashArrowText],
  '#-': ['#-', HashMinus],
  '@>': ['@>', AtGt],
  '<@': ['<@', LtAt],
  '?': ['?', OtherOp],
  '?|': ['?|', OtherOp],
  '?&': ['?&', OtherOp],
  '&&': ['&&', OtherOp],
  AND: ['and', 'and'],
  OR: ['or', 'or'],
};

export const INFIX_TYPES: ReadonlySet<TokenType> = new Set(
  Object.values(INFIX_TOKENS)
    .map(([, type]) => type)
    .filter((type): type is TokenType => typeof type !== 'string'),
);

/** Whether a `*` after `before` is multiplication (so a name may follow it) rather than a select-list star. */
export function isStarOperand(before: IToken | undefined): boolean {
  if (before === undefined) return false;
  if (before.tokenType === Comma || before.tokenType === Dot || before.tokenType === LParen) return false;
  return !isWordText(before, 'select') && !isWordText(before, 'distinct') && !isWordText(before, 'all');
}

/**
 * Whether a named argument's `name =>` (or the older `name :=`) starts at `i`. Our lexer reads `=>`
 * as `=` `>` and `:=` as `:` `=`; PostgreSQL lexes each as one operator, so the two must touch.
 */
export function namedArgumentAt(tokens: readonly IToken[], i: number): boolean {
  return isNamedArgument(tokens[i], tokens[i + 1], tokens[i + 2]);
}

/** Whether the three tokens `name`, `a`, `b` are a named argument's `name =>` or `name :=`. */
export function isNamedArgument(
  name: IToken | undefined,
  a: IToken | undefined,
  b: IToken | undefined,
): boolean {
  if (!(isWord(name) || name?.tokenType === QuotedIdent) || a === undefined || b === undefined) return false;
  if (b.startOffset !== a.startOffset + a.image.length) return false;
  return (isType(a, Eq) && isType(b, Gt)) || (a.tokenType === OtherOp && a.image === ':' && isType(b, Eq));
}

/** Aggregates Sluice computes whose FILTER clause node-sql-parser's grammar does not read. */
const HIDDEN_FILTER_AGGREGATES: ReadonlySet<string> = new Set([
  'jsonb_object_agg',
  'jsonb_agg',
  'json_agg',
  'bool_and',
  'bool_or',
  'every',
  'var_pop',
  'var_samp',
  'variance',
  'stddev_pop',
  'stddev_samp',
  'stddev',
]);

/**
 * `agg(...) FILTER (WHERE cond)` for the aggregates above (not followed by OVER): the WHERE's index
 * → the index of the FILTER's `)`. The clause is hidden from node-sql-parser and its condition
 * parsed on its own, as ON conditions are (select-adapter.ts).
 */
export function hiddenFilterConditions(tokens: readonly IToken[]): Map<number, number> {
  const found = new Map<number, number>();
  const opens: number[] = [];
  const openOf = new Map<number, number>();
  tokens.forEach((tok, i) => {
    if (tok.tokenType === LParen) opens.push(i);
    else if (tok.tokenType === RParen) {
      const open = opens.pop();
      if (open !== undefined) openOf.set(i, open);
    }
  });
  const closeOf = new Map<number, number>();
  for (const [close, open] of openOf) closeOf.set(open, close);
  for (let i = 1; i + 2 < tokens.length; i++) {
    if (!isWordText(tokens[i], 'filter') || !isType(tokens[i + 1], LParen)) continue;
    if (!isWordText(tokens[i + 2], 'where')) continue;
    const callOpen = openOf.get(i - 1);
    const name = callOpen === undefined ? undefined : tokens[callOpen - 1];
    if (name === undefined || !isWord(name) || !HIDDEN_FILTER_AGGREGATES.has(name.image.toLowerCase()))
      continue;
    const close = closeOf.get(i + 1);
    if (close === undefined || close <= i + 3 || isWordText(tokens[close + 1], 'over')) continue;
    found.set(i + 2, close);
  }
  return found;
}

/**
 * A masked literal longer than this is shown to node-sql-parser at this length: its value comes
 * from our token, and node-sql-parser reads a literal one character at a time (≈ 0.5 µs each).
 */
export const SHOWN_LITERAL_LENGTH = 40;

/** The text node-sql-parser parses, and where each token lies in it (`ends` inclusive). */
export interface LaidOutTokens {
  readonly text: string;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/**
 * Lays the rendered tokens out compactly: each token's render in order, one blank where the
 * statement had any space or comment between two tokens, a hidden token one blank, a masked
 * literal longer than SHOWN_LITERAL_LENGTH cut to it. node-sql-parser's cost grows with the
 * characters it reads, not the tokens, so without this a 1 MB literal, comment or run of blanks
 * in a SELECT held the server a second or more while the token limits saw a handful of tokens.
 * The text the SQL library reads is now at most a few characters per token.
 */
export function layoutTokens(tokens: readonly AdapterToken[]): LaidOutTokens {
  const pieces: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let length = 0;
  let previousEnd: number | undefined;
  for (const { tok, render } of tokens) {
    if (previousEnd !== undefined && tok.startOffset > previousEnd + 1) {
      pieces.push(' ');
      length++;
    }
    previousEnd = tok.endOffset ?? tok.startOffset;
    const shown = shownRender(tok, render);
    starts.push(length);
    pieces.push(shown);
    length += shown.length;
    ends.push(length - 1);
  }
  return { text: pieces.join(''), starts, ends };
}

function shownRender(tok: IToken, render: string): string {
  if (render.length <= SHOWN_LITERAL_LENGTH) return render;
  if (render.trim() === '') return ' ';
  if (tok.tokenType === StringLit && render.startsWith("'") && render.endsWith("'")) {
    return `'${'x'.repeat(SHOWN_LITERAL_LENGTH - 2)}'`;
  }
  if (tok.tokenType === NumberLit) return '1'.repeat(SHOWN_LITERAL_LENGTH);
  return render;
}
