// Window table functions in FROM, read from our tokens before node-sql-parser sees the SELECT (it
// knows no table functions): RisingWave's `TUMBLE(t, ts, size [, offset])` / `HOP(t, ts, slide,
// size [, offset])` and Flink's `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))`. The call becomes one
// placeholder name in the SELECT handed on; the adapter turns it back into a `windowTvf` FROM item.
// SESSION takes Flink's `PARTITION BY` after its relation; CUMULATE is refused here with its position.
import type { IToken } from 'chevrotain';
import type { Expr, Pos, SelectStmt, SubqueryRef, TableRef, WindowTvfRef } from '../ast.ts';
import { notSupported, parseError } from '../../common/errors.ts';
import type { UnnestCall } from './unnest-syntax.ts';
import type { TemporalTableCall } from './temporal-join-syntax.ts';
import {
  Comma,
  Dot,
  Ident,
  identName,
  isType,
  isWordText,
  LParen,
  posOf,
  syntaxErrorAt,
  Table,
} from '../lexer.ts';

/** A window table function as parsed, before the alias that may follow it. */
export type WindowCall = Omit<WindowTvfRef, 'alias'>;

/**
 * A FROM item that stands as one placeholder name: a window table function, unnest, or a table
 * read `FOR SYSTEM_TIME AS OF PROCTIME()`.
 */
export type FromCall = WindowCall | UnnestCall | TemporalTableCall;

export interface WindowCallReader {
  readonly tokens: readonly IToken[];
  /** The `)` closing the `(` at an index, or -1. */
  readonly closeOf: (open: number) => number;
  /** Parses the query in [lo, hi). */
  readonly query: (lo: number, hi: number) => SelectStmt;
  /** Parses each token range as one expression. */
  readonly expressions: (ranges: readonly (readonly [number, number])[]) => Expr[];
}

const FUNCTIONS = ['tumble', 'hop', 'session'] as const;
const REFUSED = ['cumulate'];

const RISINGWAVE_FORM =
  "write TUMBLE(t, ts, INTERVAL '10' SECOND), HOP(t, ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) or SESSION(t, ts, INTERVAL '5' MINUTE)";

/**
 * Whether a FROM item starting at `p` is a window table function call: `TUMBLE (`, `HOP (`,
 * `SESSION (`, `CUMULATE (` or Flink's `TABLE (`.
 */
export function startsWindowCall(tokens: readonly IToken[], p: number): boolean {
  const token = tokens[p];
  if (tokens[p + 1]?.tokenType !== LParen) return false;
  if (isType(token, Table)) return true;
  return [...FUNCTIONS, ...REFUSED].some((w) => isWordText(token, w));
}

/** Reads the call starting at `p` (see `startsWindowCall`); returns it and the index of its last `)`. */
export function readWindowCall(r: WindowCallReader, p: number): { call: WindowCall; end: number } {
  const { tokens } = r;
  const outer = r.closeOf(p + 1);
  if (outer < 0) throw syntaxErrorAt(tokens[tokens.length - 1]!);
  if (isType(tokens[p], Table)) {
    // Flink: TABLE(<window function>(TABLE t, DESCRIPTOR(ts), ...)).
    const fn = p + 2;
    const close = r.closeOf(fn + 1);
    if (tokens[fn + 1]?.tokenType !== LParen || close < 0 || close + 1 !== outer) {
      throw notSupported(
        'TABLE(...) in FROM other than a window function',
        posOf(tokens[p]!),
        RISINGWAVE_FORM,
      );
    }
    return { call: readCall(r, fn, close, true), end: outer };
  }
  return { call: readCall(r, p, outer, false), end: outer };
}

function readCall(r: WindowCallReader, p: number, close: number, flink: boolean): WindowCall {
  const { tokens } = r;
  const nameToken = tokens[p]!;
  const pos = posOf(nameToken);
  const name = nameToken.image.toLowerCase();
  const fn = FUNCTIONS.find((f) => f === name);
  if (fn === undefined || !isType(nameToken, Ident)) {
    const what = name === 'cumulate' ? 'CUMULATE window' : `table function ${name}() in FROM`;
    throw notSupported(what, pos, RISINGWAVE_FORM);
  }
  const args = splitArgs(r, p + 2, close);
  if (args.length < 2) {
    throw parseError(`${fn.toUpperCase()} takes a relation, a time column and interval arguments`, pos);
  }
  const [lo, hi] = args[0]!;
  const partition = partitionClause(r, lo, hi);
  if (partition !== null && fn !== 'session') {
    throw notSupported(`PARTITION BY in ${fn.toUpperCase()}`, posOf(r.tokens[partition.at]!));
  }
  const source = readSource(r, [lo, partition?.at ?? hi], flink);
  const timeColumn = readTimeColumn(r, args[1]!, flink);
  const exprs = r.expressions(args.slice(2));
  return {
    kind: 'windowTvf',
    fn,
    source,
    ...(partition !== null ? { partitionBy: partition.columns } : {}),
    timeColumn,
    args: exprs,
    pos,
  };
}

/**
 * `PARTITION BY k` or `PARTITION BY (k1, k2)` ending the relation argument in [lo, hi) (at its top
 * level), or null: its start and the column names.
 */
function partitionClause(
  r: WindowCallReader,
  lo: number,
  hi: number,
): { at: number; columns: { name: string; pos: Pos }[] } | null {
  const { tokens } = r;
  let at = -1;
  for (let i = lo; i < hi; i++) {
    const t = tokens[i]!;
    if (t.tokenType === LParen) {
      const close = r.closeOf(i);
      if (close > i) i = close;
    } else if (isWordText(t, 'partition') && isWordText(tokens[i + 1], 'by')) {
      at = i;
      break;
    }
  }
  if (at < 0) return null;
  let p = at + 2;
  let end = hi;
  if (tokens[p]?.tokenType === LParen) {
    end = r.closeOf(p);
    if (end + 1 !== hi) throw syntaxErrorAt(tokens[end + 1] ?? tokens[p]!);
    p++;
  }
  const columns: { name: string; pos: Pos }[] = [];
  for (;;) {
    const column = tokens[p];
    if (p >= end || !isType(column, Ident)) throw syntaxErrorAt(column ?? tokens[hi]!);
    columns.push({ name: identName(column!), pos: posOf(column!) });
    p++;
    if (p === end) break;
    if (tokens[p]?.tokenType !== Comma) throw syntaxErrorAt(tokens[p]!);
    p++;
  }
  return { at, columns };
}

/** The top-level comma-separated token ranges in [lo, hi). */
function splitArgs(r: WindowCallReader, lo: number, hi: number): [number, number][] {
  const ranges: [number, number][] = [];
  let start = lo;
  for (let i = lo; i < hi; i++) {
    const t = r.tokens[i]!;
    if (t.tokenType === LParen) {
      const close = r.closeOf(i);
      if (close > i) i = close;
    } else if (t.tokenType === Comma) {
      if (i === start) throw syntaxErrorAt(t);
      ranges.push([start, i]);
      start = i + 1;
    }
  }
  if (start >= hi) throw syntaxErrorAt(r.tokens[hi]!);
  ranges.push([start, hi]);
  return ranges;
}

/** The relation argument: a table or view name (Flink: `TABLE name`), or a query in parentheses. */
function readSource(r: WindowCallReader, [lo, hi]: [number, number], flink: boolean): TableRef | SubqueryRef {
  const { tokens } = r;
  let p = lo;
  if (isType(tokens[p], Table)) p++;
  else if (flink) throw syntaxErrorAt(tokens[p]!);
  const first = tokens[p]!;
  if (first.tokenType === LParen && !flink) {
    const close = r.closeOf(p);
    if (close + 1 !== hi) throw syntaxErrorAt(tokens[close + 1] ?? first);
    return { kind: 'subquery', query: r.query(p + 1, close), pos: posOf(first) };
  }
  if (!isType(first, Ident)) throw syntaxErrorAt(first);
  if (tokens[p + 1]?.tokenType === Dot && p + 1 < hi)
    throw notSupported('schema-qualified name', posOf(first));
  if (p + 1 !== hi) throw syntaxErrorAt(tokens[p + 1]!);
  return { kind: 'table', name: identName(first), pos: posOf(first) };
}

/** The time column argument: a column name (Flink: `DESCRIPTOR(name)`). */
function readTimeColumn(
  r: WindowCallReader,
  [lo, hi]: [number, number],
  flink: boolean,
): { name: string; pos: Pos } {
  const { tokens } = r;
  let p = lo;
  let end = hi;
  if (isWordText(tokens[p], 'descriptor') && tokens[p + 1]?.tokenType === LParen) {
    const close = r.closeOf(p + 1);
    if (close + 1 !== hi) throw syntaxErrorAt(tokens[close + 1] ?? tokens[p]!);
    p += 2;
    end = close;
  } else if (flink) throw syntaxErrorAt(tokens[p]!);
  const column = tokens[p]!;
  if (!isType(column, Ident)) throw syntaxErrorAt(column);
  if (p + 1 !== end) {
    const next = tokens[p + 1]!;
    if (next.tokenType === Dot) {
      throw notSupported(
        'a qualified time column',
        posOf(column),
        'name the time column alone: TUMBLE(t, ts, ...)',
      );
    }
    throw syntaxErrorAt(next);
  }
  return { name: identName(column), pos: posOf(column) };
}
