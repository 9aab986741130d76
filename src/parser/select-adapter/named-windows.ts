// Named windows (`WINDOW w AS (…)`, `OVER w`, `OVER (w ORDER BY … ROWS …)`), resolved on one plain
// SELECT's tokens before node-sql-parser sees them (it reads few of their forms): each reference
// becomes `OVER (` the definition's tokens — copies that keep their line and column, so errors
// point into the WINDOW clause — and what the reference adds `)`, with PostgreSQL's rules on what
// it may add; the WINDOW clause is removed. A SELECT without named windows keeps its tokens.
import type { IToken } from 'chevrotain';
import { SluiceError } from '../../common/errors.ts';
import {
  Comma,
  identName,
  isType,
  isWord,
  isWordText,
  LParen,
  posOf,
  QuotedIdent,
  RParen,
  syntaxErrorAt,
} from '../lexer.ts';
import type { SelectStmt } from '../ast.ts';
import type { FromCall } from './window-tvf-syntax.ts';

/** Words that open a window specification's parts (anything else first is a window's name). */
const SPEC_WORDS = ['partition', 'order', 'rows', 'range', 'groups'];
/** Words that may follow the WINDOW clause. */
const AFTER_WINDOW = ['order', 'limit', 'offset', 'fetch', 'for'];

/** A window's specification tokens (inside its parentheses) and which parts it has. */
interface Spec {
  readonly tokens: readonly IToken[];
  readonly partition: boolean;
  readonly order: boolean;
  readonly frame: boolean;
}

function isName(token: IToken | undefined): token is IToken {
  return token !== undefined && (isWord(token) || token.tokenType === QuotedIdent);
}

function invalid(message: string, token: IToken, hint?: string): SluiceError {
  return new SluiceError('INVALID_DEFINITION', message, {
    position: posOf(token),
    ...(hint !== undefined ? { hint } : {}),
  });
}

/** Which parts the tokens of a specification have at their own level. */
function specOf(tokens: readonly IToken[]): Spec {
  let depth = 0;
  let partition = false;
  let order = false;
  let frame = false;
  for (const t of tokens) {
    if (isType(t, LParen)) depth++;
    else if (isType(t, RParen)) depth--;
    else if (depth === 0) {
      if (isWordText(t, 'partition')) partition = true;
      else if (isWordText(t, 'order')) order = true;
      else if (isWordText(t, 'rows') || isWordText(t, 'range') || isWordText(t, 'groups')) frame = true;
    }
  }
  return { tokens, partition, order, frame };
}

/** The index of the `)` closing the `(` at `open`, or -1. */
function closing(tokens: readonly IToken[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (isType(tokens[i], LParen)) depth++;
    else if (isType(tokens[i], RParen) && --depth === 0) return i;
  }
  return -1;
}

/**
 * `inner` (a specification's tokens) resolved against the windows defined so far: a leading name
 * is replaced by that window's tokens, which `inner` may only extend as PostgreSQL allows.
 */
function resolve(
  inner: readonly IToken[],
  windows: ReadonlyMap<string, Spec>,
  copy: boolean,
  /** The specification's `(`, where PostgreSQL reports what it may not add. */
  open: IToken,
): Spec {
  const first = inner[0];
  if (!isName(first) || SPEC_WORDS.some((w) => isWordText(first, w))) return specOf(inner);
  const name = identName(first);
  const base = windows.get(name);
  if (base === undefined) throw invalid(`window "${name}" does not exist`, first);
  const rest = specOf(inner.slice(1));
  if (rest.partition) throw invalid(`cannot override PARTITION BY clause of window "${name}"`, open);
  if (rest.order && base.order) throw invalid(`cannot override ORDER BY clause of window "${name}"`, open);
  if (base.frame) {
    throw invalid(
      `cannot copy window "${name}" because it has a frame clause`,
      open,
      copy ? 'Omit the parentheses in this OVER clause.' : undefined,
    );
  }
  return specOf([...base.tokens, ...rest.tokens]);
}

/** A token standing for `(` or `)` at `at`'s position. */
function paren(type: typeof LParen, image: string, at: IToken): IToken {
  return { ...at, tokenType: type, image, tokenTypeIdx: type.tokenTypeIdx! };
}

/**
 * The SELECT's tokens with its named windows resolved (and `derived`, the placeholder tokens of its
 * subqueries, for the copies); the same objects when it has none. `maxTokens` bounds the result.
 */
export function expandNamedWindows(
  tokens: readonly IToken[],
  derived: ReadonlyMap<IToken, SelectStmt>,
  windowTvfs: ReadonlyMap<IToken, FromCall>,
  maxTokens: number,
): {
  tokens: readonly IToken[];
  derived: ReadonlyMap<IToken, SelectStmt>;
  windowTvfs: ReadonlyMap<IToken, FromCall>;
} {
  // The WINDOW clause at the SELECT's own level, and whether any OVER names a window.
  let clause = -1;
  let named = false;
  for (let i = 0, depth = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (isType(t, LParen)) depth++;
    else if (isType(t, RParen)) depth--;
    else if (depth === 0 && isWordText(t, 'window') && clause < 0) clause = i;
    if (isWordText(t, 'over')) {
      const next = tokens[i + 1];
      const ref = isType(next, LParen) ? tokens[i + 2] : next;
      if (isName(ref) && !SPEC_WORDS.some((w) => isWordText(ref, w))) named = true;
    }
  }
  if (clause < 0 && !named) return { tokens, derived, windowTvfs };

  // The definitions, in order (each may name an earlier one).
  const windows = new Map<string, Spec>();
  let end = tokens.length;
  if (clause >= 0) {
    let i = clause + 1;
    for (;;) {
      const name = tokens[i];
      if (!isName(name)) throw syntaxErrorAt(name ?? tokens[tokens.length - 1]!);
      if (!isWordText(tokens[i + 1], 'as')) throw syntaxErrorAt(tokens[i + 1] ?? name);
      if (!isType(tokens[i + 2], LParen)) throw syntaxErrorAt(tokens[i + 2] ?? name);
      const close = closing(tokens, i + 2);
      if (close < 0) throw syntaxErrorAt(tokens[tokens.length - 1]!);
      const key = identName(name);
      if (windows.has(key)) throw invalid(`window "${key}" is already defined`, tokens[i + 2]!);
      windows.set(key, resolve(tokens.slice(i + 3, close), windows, false, tokens[i + 2]!));
      i = close + 1;
      if (isType(tokens[i], Comma)) {
        i++;
        continue;
      }
      const next = tokens[i];
      if (next !== undefined && !AFTER_WINDOW.some((w) => isWordText(next, w))) throw syntaxErrorAt(next);
      end = i;
      break;
    }
  }

  // Every OVER naming a window becomes OVER ( its tokens … ).
  const out: IToken[] = [];
  const push = (t: IToken): void => {
    out.push(t);
    if (out.length > maxTokens) {
      throw new SluiceError(
        'STATEMENT_TOO_LARGE',
        `query is too large (more than ${maxTokens} tokens to parse)`,
        {
          position: posOf(t),
          detail: 'each OVER naming a window counts the tokens of its definition',
        },
      );
    }
  };
  for (let i = 0; i < tokens.length; i++) {
    if (i === clause) {
      i = end - 1;
      continue;
    }
    const t = tokens[i]!;
    push(t);
    if (!isWordText(t, 'over')) continue;
    const next = tokens[i + 1];
    if (isName(next) && !isType(next, LParen)) {
      // OVER w: the whole window, its frame included.
      const key = identName(next);
      const spec = windows.get(key);
      if (spec === undefined) throw invalid(`window "${key}" does not exist`, next);
      push(paren(LParen, '(', next));
      for (const s of spec.tokens) push(s);
      push(paren(RParen, ')', next));
      i++;
      continue;
    }
    const ref = tokens[i + 2];
    if (!isType(next, LParen) || !isName(ref) || SPEC_WORDS.some((w) => isWordText(ref, w))) continue;
    // OVER (w …): w's partition and order, extended.
    const close = closing(tokens, i + 1);
    if (close < 0) continue;
    const spec = resolve(tokens.slice(i + 2, close), windows, true, next!);
    push(next!);
    for (const s of spec.tokens) push(s);
    push(tokens[close]!);
    i = close;
  }

  // Offsets of their own (the text node-sql-parser parses is laid out from them); the copies keep
  // the line and column they were written at.
  const renumbered: IToken[] = [];
  const copies = new Map<IToken, IToken[]>();
  let offset = out[0]?.startOffset ?? 0;
  for (const t of out) {
    const c: IToken = { ...t, startOffset: offset, endOffset: offset + t.image.length - 1 };
    offset += t.image.length + 1;
    renumbered.push(c);
    const list = copies.get(t);
    if (list === undefined) copies.set(t, [c]);
    else list.push(c);
  }
  // Placeholder tokens (derived tables, window table functions) keep what they stand for.
  const moved = <V>(map: ReadonlyMap<IToken, V>): Map<IToken, V> => {
    const out = new Map<IToken, V>();
    for (const [token, value] of map) for (const c of copies.get(token) ?? []) out.set(c, value);
    return out;
  };
  return { tokens: renumbered, derived: moved(derived), windowTvfs: moved(windowTvfs) };
}
