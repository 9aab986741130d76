// GROUP BY ROLLUP (…), CUBE (…), GROUPING SETS (…) and `()`, read from one plain SELECT's tokens
// before node-sql-parser sees them (it reads none of them): the GROUP BY list becomes the plain list
// of the distinct grouping expressions, in the order they are first written (their tokens as
// written, so errors keep their positions), and the grouping sets are kept as lists of indices into
// it. The binder (planner/bind-grouping-sets.ts) turns a query of several sets into a UNION ALL of
// one GROUP BY per set. A GROUP BY without these constructs keeps its tokens.
import type { IToken } from 'chevrotain';
import { SluiceError } from '../../common/errors.ts';
import {
  closingParens,
  Comma,
  isType,
  isWordText,
  LParen,
  posOf,
  QuotedIdent,
  syntaxErrorAt,
} from '../lexer.ts';

/**
 * Grouping sets one query may expand to: each becomes a branch that reads the query's FROM again
 * (PostgreSQL allows 4,096; a view maintains one aggregate per set).
 */
export const MAX_GROUPING_SETS = 64;

/** Words that end a GROUP BY clause at its own level. */
const AFTER_GROUP_BY = ['having', 'window', 'order', 'limit', 'offset', 'fetch', 'for'];

export interface GroupingSetTokens {
  /** The SELECT's tokens with its GROUP BY list written plainly (absent if nothing changed). */
  readonly tokens: readonly IToken[];
  /** Each grouping set, as indices into the plain GROUP BY list; absent without these constructs. */
  readonly sets?: readonly (readonly number[])[];
}

/** A grouping element's sets, each a list of expressions (their token ranges). */
type Sets = IToken[][][];

/** Rewrites a plain SELECT's GROUP BY when it holds ROLLUP, CUBE, GROUPING SETS or `()`. */
export function expandGroupingSetTokens(tokens: readonly IToken[]): GroupingSetTokens {
  const close = closingParens(tokens);
  let by = -1;
  for (let i = 0; i + 1 < tokens.length; i++) {
    const c = close[i]!;
    if (c > i) i = c;
    else if (isWordText(tokens[i], 'group') && isWordText(tokens[i + 1], 'by')) {
      by = i + 1;
      break;
    }
  }
  if (by < 0) return { tokens };
  // GROUP BY ALL (the default) and GROUP BY DISTINCT (PostgreSQL 14: duplicate sets removed after
  // the constructs are expanded): the word is read here, node-sql-parser reads neither.
  const quantifier = isWordText(tokens[by + 1], 'distinct') || isWordText(tokens[by + 1], 'all');
  const distinctSets = quantifier && isWordText(tokens[by + 1], 'distinct');
  const listStart = quantifier ? by + 2 : by + 1;
  let end = listStart;
  for (; end < tokens.length; end++) {
    const c = close[end]!;
    if (c > end) end = c;
    else if (AFTER_GROUP_BY.some((w) => isWordText(tokens[end], w))) break;
  }
  const elements = splitTopLevel(tokens, listStart, end, close);
  // GROUPING(…) in a plain GROUP BY is 0 (its one set holds every expression): read as that set.
  const constructs = elements.some(([lo, hi]) => isConstruct(tokens, lo, hi, close));
  if (!constructs && !callsGrouping(tokens, close)) {
    return quantifier ? { tokens: [...tokens.slice(0, by + 1), ...tokens.slice(listStart)] } : { tokens };
  }
  const reader = new SetReader(tokens, close);
  let product: Sets = [[]];
  for (const [lo, hi] of elements) product = reader.cross(product, reader.element(lo, hi, true), tokens[lo]!);
  // The distinct expressions, by their text, in the order first written.
  const plain: IToken[][] = [];
  const indexOf = new Map<string, number>();
  const allSets = product.map((set) => {
    const indices: number[] = [];
    for (const expr of set) {
      const key = textKey(expr);
      let index = indexOf.get(key);
      if (index === undefined) {
        index = plain.length;
        indexOf.set(key, index);
        plain.push(expr);
      }
      if (!indices.includes(index)) indices.push(index);
    }
    return indices;
  });
  const seen = new Set<string>();
  const sets = distinctSets
    ? allSets.filter((set) => {
        const key = [...set].sort((a, b) => a - b).join(',');
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      })
    : allSets;
  const rewritten: IToken[] = tokens.slice(0, plain.length > 0 ? by + 1 : by - 1);
  plain.forEach((expr, i) => {
    if (i > 0) rewritten.push(comma(expr[0]!));
    rewritten.push(...expr);
  });
  rewritten.push(...tokens.slice(end));
  return { tokens: rewritten, sets };
}

/** Whether the query calls GROUPING(…) at its own level (a subquery's call is its own). */
function callsGrouping(tokens: readonly IToken[], close: Int32Array): boolean {
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (isWordText(tokens[i], 'grouping') && isType(tokens[i + 1], LParen)) return true;
    const c = close[i]!;
    if (c > i && isWordText(tokens[i + 1], 'select')) i = c;
  }
  return false;
}

/** The comma-separated ranges [lo, hi) of tokens[from, to) at their own level. */
function splitTopLevel(
  tokens: readonly IToken[],
  from: number,
  to: number,
  close: Int32Array,
): [number, number][] {
  const ranges: [number, number][] = [];
  let start = from;
  for (let i = from; i < to; i++) {
    const c = close[i]!;
    if (c > i) i = c;
    else if (isType(tokens[i], Comma)) {
      if (i === start) throw syntaxErrorAt(tokens[i]!);
      ranges.push([start, i]);
      start = i + 1;
    }
  }
  if (start >= to) throw syntaxErrorAt(tokens[Math.min(to, tokens.length - 1)]!);
  ranges.push([start, to]);
  return ranges;
}

function isConstruct(tokens: readonly IToken[], lo: number, hi: number, close: Int32Array): boolean {
  if ((isWordText(tokens[lo], 'rollup') || isWordText(tokens[lo], 'cube')) && close[lo + 1] === hi - 1) {
    return true;
  }
  if (isWordText(tokens[lo], 'grouping') && isWordText(tokens[lo + 1], 'sets')) return true;
  return isType(tokens[lo], LParen) && close[lo] === lo + 1 && hi === lo + 2;
}

class SetReader {
  constructor(
    private readonly tokens: readonly IToken[],
    private readonly close: Int32Array,
  ) {}

  /** `left × right`: every set of `left` joined with every set of `right`, bounded. */
  cross(left: Sets, right: Sets, at: IToken): Sets {
    this.bound(left.length * right.length, at);
    return left.flatMap((l) => right.map((r) => [...l, ...r]));
  }

  private bound(count: number, at: IToken): void {
    if (count > MAX_GROUPING_SETS) {
      throw new SluiceError(
        'TOO_MANY_ITEMS',
        `a GROUP BY can expand to at most ${MAX_GROUPING_SETS} grouping sets`,
        {
          position: posOf(at),
          detail: `these grouping sets are ${count > 1e6 ? 'more than a million' : count}`,
          hint: 'each grouping set is computed on its own; list the sets you read with GROUPING SETS',
        },
      );
    }
  }

  /**
   * The sets one GROUP BY element (`top`) or one element inside GROUPING SETS stands for: an
   * expression is one set of one; `()` the empty set; `(a, b)` one set of both (inside a construct).
   */
  element(lo: number, hi: number, top: boolean): Sets {
    const { tokens, close } = this;
    const first = tokens[lo]!;
    const rollup = isWordText(first, 'rollup');
    if ((rollup || isWordText(first, 'cube')) && close[lo + 1] === hi - 1) {
      const items = this.composites(lo + 2, hi - 1);
      if (rollup) return items.map((_, n) => items.slice(0, items.length - n).flat()).concat([[]]);
      this.bound(2 ** Math.min(items.length, 30), first);
      const sets: Sets = [];
      // PostgreSQL's order: the whole set first, each column dropped in turn, the empty set last.
      for (let mask = (1 << items.length) - 1; mask >= 0; mask--) {
        sets.push(items.filter((_, i) => (mask & (1 << (items.length - 1 - i))) !== 0).flat());
      }
      return sets;
    }
    if (isWordText(first, 'grouping') && isWordText(tokens[lo + 1], 'sets')) {
      const open = lo + 2;
      if (!isType(tokens[open], LParen) || close[open] !== hi - 1) {
        throw syntaxErrorAt(tokens[Math.min(open, hi - 1)]!);
      }
      if (open + 1 === hi - 1) throw syntaxErrorAt(tokens[hi - 1]!);
      const sets: Sets = [];
      for (const [a, b] of splitTopLevel(tokens, open + 1, hi - 1, close)) {
        const inner = this.element(a, b, false);
        this.bound(sets.length + inner.length, first);
        sets.push(...inner);
      }
      return sets;
    }
    if (isType(first, LParen) && close[lo] === hi - 1 && (!top || hi === lo + 2)) {
      return [this.composites(lo, hi)[0]!];
    }
    return [[this.range(lo, hi)]];
  }

  /** ROLLUP's and CUBE's items: an expression, or `(a, b)` taken as one (`()` is empty). */
  private composites(lo: number, hi: number): IToken[][][] {
    const { tokens, close } = this;
    if (lo === hi) throw syntaxErrorAt(tokens[hi]!);
    return splitTopLevel(tokens, lo, hi, close).map(([a, b]) => {
      if (isType(tokens[a], LParen) && close[a] === b - 1) {
        return b === a + 2
          ? []
          : splitTopLevel(tokens, a + 1, b - 1, close).map(([x, y]) => this.range(x, y));
      }
      return [this.range(a, b)];
    });
  }

  private range(lo: number, hi: number): IToken[] {
    return this.tokens.slice(lo, hi) as IToken[];
  }
}

/** An expression's identity as written: words folded to lowercase, quoted names kept. */
function textKey(tokens: readonly IToken[]): string {
  return tokens.map((t) => (t.tokenType === QuotedIdent ? t.image : t.image.toLowerCase())).join(' ');
}

function comma(at: IToken): IToken {
  return { ...at, tokenType: Comma, image: ',', tokenTypeIdx: Comma.tokenTypeIdx! };
}
