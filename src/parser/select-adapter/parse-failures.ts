// What a failure of node-sql-parser means: the token budget it may be handed, and its errors turned
// into ours — NOT_SUPPORTED for a construct Sluice does not maintain, else a syntax error at the
// first token out of place, never node-sql-parser's own message.
import type { IToken } from 'chevrotain';
import { notSupported, parseError, SluiceError } from '../../common/errors.ts';
import type { SourcePosition } from '../../common/errors.ts';
import {
  Comma,
  endPosOf,
  Ident,
  identName,
  isType,
  isWordText,
  LBracket,
  RBracket,
  LParen,
  Minus,
  OtherOp,
  Plus,
  posOf,
  QuotedIdent,
  RParen,
  Star,
  StringLit,
  syntaxErrorAt,
} from '../lexer.ts';
import { isNode, child } from './loose-ast.ts';
import { AGGREGATE_WINDOW_FUNCTIONS, WINDOW_FUNCTIONS, WINDOW_FUNCTIONS_HINT } from './call-converter.ts';
import {
  type AdapterToken,
  INFIX_TYPES,
  isStarOperand,
  followsJoin,
  hiddenFilterConditions,
} from './adapter-tokens.ts';

/**
 * node-sql-parser takes tens of µs per token, so the tokens it is handed are what bound the time
 * one SELECT holds the server: refused past `max`, before it runs, at the first token beyond.
 */
export function checkParsedTokens(tokens: readonly AdapterToken[], max: number): void {
  if (tokens.length <= max) return;
  let seen = 0;
  for (const { tok, render } of tokens) {
    if (render.trim() === '' || ++seen <= max) continue;
    throw new SluiceError('STATEMENT_TOO_LARGE', `query is too large (more than ${max} tokens to parse)`, {
      position: posOf(tok),
      detail: 'the constants of IN lists do not count',
      hint: 'split it into several statements or views; long lists of constants belong in an IN list',
    });
  }
}

/** node-sql-parser's failure → a short PostgreSQL-style error at the offending token. */
export function translateParseFailure(
  error: unknown,
  tokens: readonly AdapterToken[],
  /** Where each token ends in the text node-sql-parser read (inclusive). */
  ends: readonly number[],
): SluiceError {
  if (error instanceof SluiceError) return error;
  const location = isNode(error) ? child(error, 'location') : undefined;
  const start = location !== undefined ? child(location, 'start') : undefined;
  const offset = typeof start?.['offset'] === 'number' ? start['offset'] : undefined;
  let index = tokens.length;
  if (offset !== undefined) {
    const found = ends.findIndex((end) => end >= offset);
    if (found >= 0) index = found;
  } else index = 0;
  const construct = unsupportedConstructUpTo(tokens, index);
  if (construct !== undefined) return construct;
  const misplaced = misplacedTokenUpTo(tokens, index);
  if (misplaced !== undefined) return syntaxErrorAt(misplaced);
  const token = tokens[index]?.tok;
  if (token === undefined) {
    return parseError('syntax error at end of input', endPosOf(tokens[tokens.length - 1]!.tok));
  }
  return syntaxErrorAt(token);
}

/**
 * When node-sql-parser rejects the text, a construct we do not support anyway (and that it may not
 * parse) is the better explanation if it appears at or before the failure point.
 */
export function unsupportedConstructUpTo(
  tokens: readonly AdapterToken[],
  limit: number,
): SluiceError | undefined {
  const word = (i: number, w: string): boolean => isWordText(tokens[i]?.tok, w);
  const FRAME_HINT =
    'write ROWS BETWEEN n PRECEDING AND CURRENT ROW, or no frame (RANGE UNBOUNDED PRECEDING)';
  for (let i = 0; i <= limit && i < tokens.length; i++) {
    const tok = tokens[i]!.tok;
    const pos = posOf(tok);
    if (i === 0 && word(i, 'with')) return notSupported('WITH (common table expression)', pos);
    const nested =
      isType(tokens[i - 1]?.tok, LParen) && tokens.slice(0, i).some((t) => t.tok.tokenType !== LParen);
    if (word(i, 'select') && nested) return notSupported('subquery', pos);
    if (word(i, 'grouping') && word(i + 1, 'sets')) return notSupported('GROUPING SETS', pos);
    if ((word(i, 'rollup') || word(i, 'cube')) && isType(tokens[i + 1]?.tok, LParen)) {
      return notSupported(tok.image.toUpperCase(), pos);
    }
    if (word(i, 'fetch')) return notSupported('FETCH FIRST', pos);
    if (word(i, 'for') && ['update', 'share', 'no', 'key'].some((w) => word(i + 1, w))) {
      return notSupported(`FOR ${tokens[i + 1]!.tok.image.toUpperCase()}`, pos);
    }
    if (word(i, 'tablesample')) return notSupported('TABLESAMPLE', pos);
    if (word(i, 'lateral')) return notSupported('LATERAL', pos);
    if (word(i, 'over') && isType(tokens[i - 1]?.tok, RParen)) {
      // node-sql-parser reads no RANGE/GROUPS frame: name the frame unit the window holds.
      for (let j = i + 1, depth = 0; j < tokens.length; j++) {
        const t = tokens[j]!.tok;
        if (isType(t, LParen)) depth++;
        else if (isType(t, RParen) && --depth <= 0) break;
        if (depth === 1 && (word(j, 'range') || word(j, 'groups'))) {
          return notSupported(`${t.image.toUpperCase()} window frame`, posOf(t), FRAME_HINT);
        }
      }
      // Name the function whose call the OVER follows, as the converter does; one Sluice computes
      // is not why the text failed to parse.
      let fn: IToken | undefined;
      for (let j = i - 1, depth = 0; j >= 0; j--) {
        const t = tokens[j]!.tok;
        if (isType(t, RParen)) depth++;
        else if (isType(t, LParen) && --depth === 0) {
          fn = tokens[j - 1]?.tok;
          break;
        }
      }
      if (fn === undefined || !isType(fn, Ident)) return notSupported('window function', pos);
      const name = identName(fn);
      if (!WINDOW_FUNCTIONS.includes(name) && !AGGREGATE_WINDOW_FUNCTIONS.includes(name))
        return notSupported(`window function ${name.toUpperCase()}`, posOf(fn), WINDOW_FUNCTIONS_HINT);
      continue;
    }
    if (word(i, 'order') && word(i + 1, 'by')) {
      // ORDER BY inside a call's parentheses: an ordered aggregate node-sql-parser does not read.
      for (let j = i - 1, depth = 0; j >= 0; j--) {
        const t = tokens[j]!.tok;
        if (isType(t, RParen)) depth++;
        else if (isType(t, LParen) && --depth < 0) {
          const fn = tokens[j - 1]?.tok;
          // (not after OVER, nor after BY: `PARTITION BY (x ORDER BY y)` is a syntax error)
          if (fn !== undefined && isType(fn, Ident) && !word(j - 1, 'over') && !word(j - 1, 'by'))
            return notSupported(`ORDER BY inside ${identName(fn).toUpperCase()}`, pos);
          break;
        }
      }
    }
    if (['union', 'intersect', 'except'].some((w) => word(i, w))) {
      return notSupported(tok.image.toUpperCase(), pos);
    }
    if (word(i, 'distinct') && word(i + 1, 'on')) return notSupported('DISTINCT ON', pos);
    if (word(i, 'within') && word(i + 1, 'group')) return notSupported('WITHIN GROUP', pos);
    if (word(i, 'filter') && isType(tokens[i + 1]?.tok, LParen)) {
      // a FILTER node-sql-parser did not see (hiddenFilterConditions): what failed is its condition
      if (hiddenFilterConditions(tokens.map((t) => t.tok)).has(i + 2)) continue;
      // after an aggregate node-sql-parser reads FILTER for (not before OVER): the condition failed
      if (filteredAggregateName(tokens, i) !== null && !filterBeforeOver(tokens, i)) continue;
      return filterOnNonAggregate(tokens, i, pos);
    }
    if (word(i, 'interval') && tokens[i + 1]?.tok.tokenType === StringLit)
      return notSupported('INTERVAL with this qualifier', pos, "write INTERVAL '…' or INTERVAL '10' SECOND");
    if (word(i, 'array') && isType(tokens[i + 1]?.tok, LParen)) return notSupported('ARRAY(subquery)', pos);
    if (tok.tokenType === LBracket && isSlice(tokens, i)) return notSupported('array slice', pos);
    if (tok.tokenType === OtherOp && tok.image !== '~' && tok.image !== '!~') {
      return notSupported(`operator ${tok.image}`, pos);
    }
  }
  return undefined;
}

export const JOIN_WORDS = ['join', 'cross', 'natural', 'inner', 'left', 'right', 'full', 'outer'];
export const CLAUSE_WORDS: readonly string[] = [
  'from',
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
  'into',
];
export const MISPLACED_WORDS = new Set<string>([
  ...CLAUSE_WORDS,
  'and',
  'or',
  'is',
  'in',
  'like',
  'ilike',
  'between',
  'then',
  'else',
  'end',
  'as',
]);

/**
 * node-sql-parser sometimes fails far from the mistake (it reads reserved words as names): point at
 * a clause keyword where a value is expected (`SELECT a, FROM t`) or a name after `*`, as PostgreSQL does.
 */
export function misplacedTokenUpTo(tokens: readonly AdapterToken[], limit: number): IToken | undefined {
  let inFrom = false;
  let plainTokens: IToken[] | undefined;
  const plain = (): IToken[] => (plainTokens ??= tokens.map(({ tok }) => tok));
  for (let i = 1; i <= limit && i < tokens.length; i++) {
    const tok = tokens[i]!.tok;
    const prev = tokens[i - 1]!.tok;
    if (isWordText(prev, 'from') || isWordText(prev, 'select')) inFrom = isWordText(prev, 'from');
    else if (CLAUSE_WORDS.some((w) => isWordText(prev, w))) inFrom = false;
    // The words of a join are reserved: no alias in FROM (a select-list label may be any word).
    if (inFrom && isWordText(prev, 'as') && JOIN_WORDS.some((w) => isWordText(tok, w))) return tok;
    // ON only ever follows `JOIN relation`.
    if (inFrom && isWordText(tok, 'on') && !followsJoin(plain(), i)) return tok;
    // `FILTER (WHERE`: the clause's own WHERE
    const filterWhere = isWordText(tok, 'where') && isWordText(tokens[i - 2]?.tok, 'filter');
    const expectsValue =
      prev.tokenType === Comma ||
      (prev.tokenType === LParen && !filterWhere) ||
      // A select-list `*` is no operator: `SELECT * FROM` is fine.
      (INFIX_TYPES.has(prev.tokenType) && (prev.tokenType !== Star || isStarOperand(tokens[i - 2]?.tok))) ||
      ['select', 'where', 'having', 'by', 'and', 'or', 'not', 'when', 'then', 'else'].some((w) =>
        isWordText(prev, w),
      ) ||
      (isWordText(prev, 'distinct') && isWordText(tokens[i - 2]?.tok, 'select'));
    const afterNot =
      isWordText(prev, 'not') && ['in', 'like', 'ilike', 'between'].some((w) => isWordText(tok, w));
    if (expectsValue && !afterNot) {
      if ([...MISPLACED_WORDS].some((w) => isWordText(tok, w))) return tok;
      if (
        tok.tokenType === Comma ||
        (INFIX_TYPES.has(tok.tokenType) && ![Minus, Plus, Star].includes(tok.tokenType))
      ) {
        return tok;
      }
    }
    const starAlias = prev.tokenType === Star && (i === 1 || !isStarOperand(tokens[i - 2]!.tok));
    if (starAlias && (tok.tokenType === QuotedIdent || isType(tok, Ident))) return tok;
  }
  return undefined;
}

/** Aggregates node-sql-parser reads `FILTER (WHERE …)` after (the others: hiddenFilterConditions). */
const PARSED_FILTER_AGGREGATES: ReadonlySet<string> = new Set([
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'string_agg',
  'array_agg',
]);

/** The name of the aggregate `agg(...)` right before the FILTER at `at`, when the parser reads its FILTER. */
function filteredAggregateName(tokens: readonly AdapterToken[], at: number): string | null {
  let j = at - 1;
  if (!isType(tokens[j]?.tok, RParen)) return null;
  for (let depth = 0; j >= 0; j--) {
    const t = tokens[j]!.tok;
    if (isType(t, RParen)) depth++;
    else if (isType(t, LParen) && --depth === 0) break;
  }
  const name = tokens[j - 1]?.tok;
  if (name === undefined || !isType(name, Ident)) return null;
  const fn = identName(name);
  return PARSED_FILTER_AGGREGATES.has(fn) ? fn : null;
}

/** Whether the FILTER (…) at `at` is followed by OVER (a window function). */
function filterBeforeOver(tokens: readonly AdapterToken[], at: number): boolean {
  for (let k = at + 1, depth = 0; k < tokens.length; k++) {
    const t = tokens[k]!.tok;
    if (isType(t, LParen)) depth++;
    else if (isType(t, RParen) && --depth === 0) return isWordText(tokens[k + 1]?.tok, 'over');
  }
  return false;
}

/**
 * `f(...) FILTER (...)`, which node-sql-parser parses only after an aggregate: FILTER on another
 * function is PostgreSQL's error at the function's name; elsewhere it is not SQL we know.
 */
function filterOnNonAggregate(tokens: readonly AdapterToken[], at: number, pos: SourcePosition): SluiceError {
  // `agg(...) FILTER (WHERE ...) OVER (...)`, which node-sql-parser does not read: valid SQL.
  if (filterBeforeOver(tokens, at)) return notSupported('FILTER in a window function', pos);
  let j = at - 1;
  if (isType(tokens[j]?.tok, RParen)) {
    for (let depth = 0; j >= 0; j--) {
      const t = tokens[j]!.tok;
      if (isType(t, RParen)) depth++;
      else if (isType(t, LParen) && --depth === 0) break;
    }
    const name = tokens[j - 1]?.tok;
    if (name !== undefined && (isType(name, Ident) || name.tokenType === QuotedIdent)) {
      return new SluiceError(
        'INVALID_DEFINITION',
        `FILTER specified, but ${identName(name)} is not an aggregate function`,
        {
          position: posOf(name),
        },
      );
    }
  }
  return notSupported('FILTER here', pos);
}

/** Whether the `[` at `at` holds a `:` at its own level (`a[1:2]`, a slice). */
function isSlice(tokens: readonly AdapterToken[], at: number): boolean {
  let depth = 0;
  for (let i = at + 1; i < tokens.length; i++) {
    const t = tokens[i]!.tok;
    if (t.tokenType === LBracket) depth++;
    else if (t.tokenType === RBracket) {
      if (depth === 0) return false;
      depth--;
    } else if (depth === 0 && t.tokenType === OtherOp && t.image.startsWith(':')) return true;
  }
  return false;
}
