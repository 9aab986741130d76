// Builds Expr trees from a flat run of operands and operators with PostgreSQL's precedence. Both the
// chevrotain grammar and the node-sql-parser adapter emit such runs, so precedence lives only here.
import type { BinaryOp, Expr, Pos, TypeName } from './ast.ts';
import { SluiceError, notSupported } from '../common/errors.ts';

export type InfixOp =
  | BinaryOp
  | 'like'
  | 'not like'
  | 'ilike'
  | 'not ilike'
  | 'similar to'
  | 'not similar to'
  /** `x AT TIME ZONE zone`, built as PostgreSQL's timezone(zone, x). */
  | 'at time zone'
  /** `pattern ESCAPE e` after LIKE / ILIKE, built as PostgreSQL builds it: like_escape(pattern, e). */
  | 'escape';

export type PostfixOp =
  | {
      readonly kind: 'is';
      readonly value: 'null' | 'true' | 'false' | 'unknown';
      readonly negated: boolean;
      /** Position of the NULL/TRUE/FALSE word. */
      readonly valuePos: Pos;
    }
  | { readonly kind: 'in'; readonly list: readonly Expr[]; readonly negated: boolean }
  | { readonly kind: 'cast'; readonly type: TypeName }
  /** `x[i]` (the statement grammar's; the SELECT adapter builds the call itself). */
  | { readonly kind: 'subscript'; readonly index: Expr; readonly pos: Pos }
  /** `x COLLATE "C"` (a collation already checked): the binder checks that x's type has one. */
  | { readonly kind: 'collate'; readonly name: string; readonly pos: Pos };

/**
 * One element of an operator run. `start` of an operand is its first token including any
 * parentheses around it; a binary node's pos is the start of its left operand.
 */
export type Piece =
  | { readonly kind: 'operand'; readonly expr: Expr; readonly start: Pos }
  | { readonly kind: 'prefix'; readonly op: '-' | '+' | 'not'; readonly pos: Pos }
  | { readonly kind: 'infix'; readonly op: InfixOp }
  | { readonly kind: 'postfix'; readonly op: PostfixOp }
  /**
   * `[NOT] BETWEEN low AND`: the high bound is the operand run that follows, so that
   * `a BETWEEN 1 AND b::int` casts b, not the BETWEEN.
   */
  | { readonly kind: 'between'; readonly low: Expr; readonly negated: boolean; readonly symmetric?: true };

export interface Located {
  readonly expr: Expr;
  readonly start: Pos;
}

// PostgreSQL's operator precedence, lowest first (all binary operators associate to the left).
const infixPrecedence: Readonly<Record<InfixOp, number>> = {
  or: 1,
  and: 2,
  // PostgreSQL: IS [NOT] DISTINCT FROM binds as IS does (looser than = and tighter than NOT); its
  // right side takes comparisons (`a IS DISTINCT FROM b = c` is `a IS DISTINCT FROM (b = c)`).
  // PostgreSQL makes IS non-associative (`a IS DISTINCT FROM b IS NULL` is a syntax error there);
  // here it nests to the left, as every other operator does.
  'is distinct from': 4,
  'is not distinct from': 4,
  '=': 5,
  '<>': 5,
  '<': 5,
  '<=': 5,
  '>': 5,
  '>=': 5,
  like: 6,
  'not like': 6,
  ilike: 6,
  'not ilike': 6,
  'similar to': 6,
  'not similar to': 6,
  // PostgreSQL: ESCAPE binds just above LIKE, so `s LIKE p || q ESCAPE e` is s LIKE ((p || q) ESCAPE e);
  // its right side takes any other operator too (`ESCAPE e || f` escapes with e || f)
  escape: 7,
  // "any other operator" in PostgreSQL's table
  '||': 7,
  '~': 7,
  '~*': 7,
  '!~': 7,
  '!~*': 7,
  '->': 7,
  '->>': 7,
  '#>': 7,
  '#>>': 7,
  '#-': 7,
  '@>': 7,
  '<@': 7,
  '?': 7,
  '?|': 7,
  '?&': 7,
  '&&': 7,
  '+': 8,
  '-': 8,
  '*': 9,
  '/': 9,
  '%': 9,
  // PostgreSQL: ^ binds tighter than * / %, and (left-associative like every other) looser than AT
  '^': 10,
  // PostgreSQL: AT binds tighter than ^ and looser than unary minus and ::
  'at time zone': 11,
};
/** Whether `op` binds tighter than LIKE (it may stand in a LIKE's pattern before ESCAPE). */
export function bindsTighterThanLike(op: InfixOp): boolean {
  return infixPrecedence[op] > infixPrecedence.like;
}

const NOT_PRECEDENCE = 3;
const SIGN_PRECEDENCE = 12;
const COLLATE_PRECEDENCE = 12;

function postfixPrecedence(op: PostfixOp): number {
  switch (op.kind) {
    case 'is':
      return 4;
    case 'in':
      return 6;
    case 'cast':
      return 13;
    case 'subscript':
      return 14;
    case 'collate':
      // PostgreSQL: COLLATE binds tighter than AT and looser than unary minus and ::
      return COLLATE_PRECEDENCE;
  }
}

const BETWEEN_PRECEDENCE = 6;

/**
 * Assembles a well-formed run (prefix* operand ((infix | between) prefix* operand | postfix)*)
 * into a tree. Operator precedence parsing with explicit stacks (no recursion), so a run of any
 * length or shape — `NOT a = NOT b = …` nests as deep as it is long — cannot exhaust the stack;
 * the depth of the resulting tree is bounded later (src/parser/statement-limits.ts).
 */
export function buildExpr(pieces: readonly Piece[]): Located {
  const operands: Located[] = [];
  const pending: Pending[] = [];
  /** Applies pending operators whose right side ends before an operator of `precedence`. */
  const reduceBelow = (precedence: number): void => {
    for (let top = pending.at(-1); top !== undefined && precedence < top.min; top = pending.at(-1)) {
      pending.pop();
      apply(top, operands);
    }
  };
  let expectOperand = true;
  for (const piece of pieces) {
    switch (piece.kind) {
      case 'prefix':
        if (!expectOperand) throw malformed();
        pending.push({ kind: 'prefix', piece, min: piece.op === 'not' ? NOT_PRECEDENCE : SIGN_PRECEDENCE });
        break;
      case 'operand':
        if (!expectOperand) throw malformed();
        operands.push({ expr: piece.expr, start: piece.start });
        expectOperand = false;
        break;
      case 'infix': {
        if (expectOperand) throw malformed();
        const precedence = infixPrecedence[piece.op];
        reduceBelow(precedence);
        // All binary operators associate to the left: the right side takes only tighter ones.
        pending.push({
          kind: 'infix',
          op: piece.op,
          min: piece.op === 'escape' ? precedence : precedence + 1,
        });
        expectOperand = true;
        break;
      }
      case 'between':
        if (expectOperand) throw malformed();
        reduceBelow(BETWEEN_PRECEDENCE);
        // The upper bound takes only operators binding tighter than BETWEEN.
        pending.push({ kind: 'between', piece, min: BETWEEN_PRECEDENCE + 1 });
        expectOperand = true;
        break;
      case 'postfix': {
        if (expectOperand) throw malformed();
        reduceBelow(postfixPrecedence(piece.op));
        const operand = operands.pop()!;
        operands.push({ expr: makePostfix(piece.op, operand.expr, operand.start), start: operand.start });
        break;
      }
    }
  }
  if (expectOperand) throw malformed();
  reduceBelow(-1);
  const result = operands[0];
  if (result === undefined || operands.length !== 1) throw malformed();
  return result;
}

/** An operator waiting for its right side; `min` is the precedence an operator needs to join it. */
type Pending =
  | { readonly kind: 'prefix'; readonly piece: Extract<Piece, { kind: 'prefix' }>; readonly min: number }
  | { readonly kind: 'infix'; readonly op: InfixOp; readonly min: number }
  | { readonly kind: 'between'; readonly piece: Extract<Piece, { kind: 'between' }>; readonly min: number };

function apply(op: Pending, operands: Located[]): void {
  const right = operands.pop();
  if (right === undefined) throw malformed();
  if (op.kind === 'prefix') {
    const pos = op.piece.pos;
    operands.push({ expr: makeUnary(op.piece.op, right.expr, pos), start: pos });
    return;
  }
  const left = operands.pop();
  if (left === undefined) throw malformed();
  const expr: Expr =
    op.kind === 'infix'
      ? makeInfix(op.op, left.expr, right.expr, left.start)
      : {
          kind: 'between',
          operand: left.expr,
          low: op.piece.low,
          high: right.expr,
          negated: op.piece.negated,
          ...(op.piece.symmetric === true ? { symmetric: true } : {}),
          pos: left.start,
        };
  operands.push({ expr, start: left.start });
}

function malformed(): SluiceError {
  return new SluiceError('INTERNAL_ERROR', 'malformed operator run in the SQL parser');
}

/** Unary minus on a numeric literal folds into a negative literal, as PostgreSQL's parser does. */
export function makeUnary(op: '-' | '+' | 'not', operand: Expr, pos: Pos): Expr {
  if (op === '-' && operand.kind === 'literal') {
    const value = operand.value;
    if (operand.literalType === 'integer' && typeof value === 'bigint') {
      const negated = -value;
      const asNumber = Number(negated);
      return integerLiteral(Number.isSafeInteger(asNumber) ? asNumber : negated, pos);
    }
    if (
      (operand.literalType === 'integer' || operand.literalType === 'numeric') &&
      typeof value === 'number'
    ) {
      const negated: Expr = {
        kind: 'literal',
        value: value === 0 ? 0 : -value,
        literalType: operand.literalType,
        pos,
      };
      if (operand.text === undefined) return negated;
      const text = operand.text.startsWith('-') ? operand.text.slice(1) : `-${operand.text}`;
      return { ...negated, text };
    }
  }
  return { kind: 'unary', op, operand, pos };
}

function makeInfix(op: InfixOp, left: Expr, right: Expr, pos: Pos): Expr {
  switch (op) {
    case 'at time zone':
      return { kind: 'function', name: 'timezone', args: [right, left], distinct: false, star: false, pos };
    case 'escape':
      return {
        kind: 'function',
        name: 'like_escape',
        args: [left, right],
        distinct: false,
        star: false,
        pos,
      };
    case 'like':
    case 'not like':
    case 'ilike':
    case 'not ilike':
      return {
        kind: 'like',
        operand: left,
        pattern: right,
        negated: op.startsWith('not '),
        caseInsensitive: op.endsWith('ilike'),
        pos,
      };
    case 'similar to':
    case 'not similar to':
      return {
        kind: 'like',
        operand: left,
        pattern: right,
        negated: op.startsWith('not '),
        caseInsensitive: false,
        similar: true,
        pos,
      };
    default: {
      // `x = ANY (SELECT …)` is `x IN (SELECT …)` and `x <> ALL (SELECT …)` is `x NOT IN (SELECT …)`,
      // as the SQL standard defines IN, NULLs included: the predicate subquery the binder plans.
      const subquery =
        right.kind === 'function' && right.args.length === 1 && right.args[0]?.kind === 'subquery'
          ? right.args[0]
          : undefined;
      if (subquery !== undefined && op === '=' && right.kind === 'function' && right.name === ARRAY_ANY) {
        return { kind: 'inList', operand: left, list: [subquery], negated: false, pos };
      }
      if (subquery !== undefined && op === '<>' && right.kind === 'function' && right.name === ARRAY_ALL) {
        return { kind: 'inList', operand: left, list: [subquery], negated: true, pos };
      }
      const leftRow = rowEntries(left);
      const rightRow = rowEntries(right);
      if (leftRow !== undefined && rightRow !== undefined) return compareRows(op, leftRow, rightRow, pos);
      if (
        (leftRow !== undefined && right.kind === 'subquery') ||
        (rightRow !== undefined && left.kind === 'subquery')
      ) {
        throw notSupported('a row compared with a subquery', pos, 'write (a, b) IN (SELECT x, y …)');
      }
      return { kind: 'binary', op, left, right, pos };
    }
  }
}

function makePostfix(op: PostfixOp, operand: Expr, pos: Pos): Expr {
  switch (op.kind) {
    case 'is': {
      const entries = op.value === 'null' ? rowEntries(operand) : undefined;
      if (entries !== undefined && entries.length > 0 && !entries.some(isRow)) {
        // PostgreSQL: `(a, b) IS NULL` when every entry is NULL, `IS NOT NULL` when none is (so a
        // row with some NULLs is neither)
        const tests = entries.map((entry): Expr => ({
          kind: 'isNull',
          operand: entry,
          negated: op.negated,
          pos,
        }));
        return balanced('and', tests, pos);
      }
      if (op.value === 'null') return { kind: 'isNull', operand, negated: op.negated, pos };
      if (op.value === 'unknown') return { kind: 'isNull', operand, negated: op.negated, unknown: true, pos };
      // x IS TRUE ≡ coalesce(x, false); x IS FALSE ≡ NOT coalesce(x, true); IS NOT negates both.
      const isTrue = op.value === 'true';
      const fallback: Expr = { kind: 'literal', value: !isTrue, literalType: 'boolean', pos: op.valuePos };
      const coalesce: Expr = {
        kind: 'function',
        name: 'coalesce',
        args: [operand, fallback],
        distinct: false,
        star: false,
        pos,
      };
      return isTrue !== op.negated ? coalesce : { kind: 'unary', op: 'not', operand: coalesce, pos };
    }
    case 'in': {
      // `(a, b) IN ((1, 2), (3, 4))` is the OR of the rows' equalities (PostgreSQL's definition, NULLs
      // included); a row IN a subquery stays an inList for the binder's semi-join.
      const entries = rowEntries(operand);
      const rows = op.list.map(rowEntries);
      if (entries === undefined || !rows.every((r) => r !== undefined)) {
        return { kind: 'inList', operand, list: op.list, negated: op.negated, pos };
      }
      const any = balanced(
        'or',
        rows.map((row) => compareRows('=', entries, row, pos)),
        pos,
      );
      return op.negated ? { kind: 'unary', op: 'not', operand: any, pos } : any;
    }
    case 'cast':
      return { kind: 'cast', operand, type: op.type, pos };
    case 'subscript':
      return functionCall(ARRAY_SUBSCRIPT, [operand, op.index], {}, op.pos);
    case 'collate': {
      const call = functionCall(COLLATE_CALL, [operand], {}, op.pos);
      collations.set(call, op.name);
      return call;
    }
  }
}

function integerLiteral(value: number | bigint, pos: Pos): Expr {
  return { kind: 'literal', value, literalType: 'integer', pos };
}

/** A numeric literal from its exact source text: digits only → integer (bigint when unsafe). */
export function numberLiteral(image: string, pos: Pos): Expr {
  if (/^\d+$/.test(image)) {
    const asNumber = Number(image);
    return integerLiteral(Number.isSafeInteger(asNumber) ? asNumber : BigInt(image), pos);
  }
  const value = Number(image);
  // Beyond a double either way (1e400, 1e-400): an error, never Infinity or a silent 0.
  if (!Number.isFinite(value) || (value === 0 && /[1-9]/.test(image.replace(/[eE].*$/, '')))) {
    throw new SluiceError('NUMERIC_OVERFLOW', `numeric literal "${image}" is out of range`, {
      position: pos,
    });
  }
  return { kind: 'literal', value, literalType: 'numeric', text: image, pos };
}

export function stringLiteral(value: string, pos: Pos): Expr {
  return { kind: 'literal', value, literalType: 'string', pos };
}

export function booleanLiteral(value: boolean, pos: Pos): Expr {
  return { kind: 'literal', value, literalType: 'boolean', pos };
}

export function nullLiteral(pos: Pos): Expr {
  return { kind: 'literal', value: null, literalType: 'null', pos };
}

/**
 * Names of the calls `ARRAY[a, b]` and `x[i]` parse to: brackets, so no unquoted identifier spells
 * them (a quoted "[subscript]"(a, 1) means a[1], which is harmless).
 */
export const ARRAY_CONSTRUCTOR = '[array]';
export const ARRAY_SUBSCRIPT = '[subscript]';
/** `x op ANY (a)` / `x op ALL (a)`: the right side of the comparison. */
export const ARRAY_ANY = '[any]';
/**
 * `(a, b)` and `ROW(a, b)`: a row constructor, which only a comparison with another row takes
 * (expanded here into its entries' comparisons); anywhere else the binder refuses it.
 */
export const ROW_CONSTRUCTOR = '[row]';
export const ARRAY_ALL = '[all]';
/** `x COLLATE "C"`: x itself once the binder has checked that its type is collatable. */
export const COLLATE_CALL = '[collate]';

/** The collation each COLLATE_CALL names, beside the tree (its shape stays a one-argument call). */
const collations = new WeakMap<Expr, string>();

/** The collation `x COLLATE name` names (the binder checks that two explicit ones agree). */
export function collationOf(e: Expr): string | undefined {
  return collations.get(e);
}

export function functionCall(
  name: string,
  args: readonly Expr[],
  options: { readonly distinct?: boolean; readonly star?: boolean },
  pos: Pos,
): Expr {
  return {
    kind: 'function',
    name,
    args,
    distinct: options.distinct ?? false,
    star: options.star ?? false,
    pos,
  };
}

/** The entries of a row constructor `(a, b, …)` or `ROW(…)`; undefined when `e` is none. */
export function rowEntries(e: Expr): readonly Expr[] | undefined {
  return isRow(e) && e.kind === 'function' ? e.args : undefined;
}

/** Whether `e` is a row constructor (`ROW` is a name PostgreSQL reserves: no function has it). */
export function isRow(e: Expr): boolean {
  return (
    e.kind === 'function' &&
    (e.name === ROW_CONSTRUCTOR || e.name === 'row') &&
    !e.distinct &&
    !e.star &&
    e.over === undefined &&
    e.filter === undefined &&
    e.argNames === undefined
  );
}

const ROW_OPERATORS = new Set<InfixOp>([
  '=',
  '<>',
  '<',
  '<=',
  '>',
  '>=',
  'is distinct from',
  'is not distinct from',
]);

/**
 * A comparison of two rows as PostgreSQL 15 defines it, in terms of its entries' comparisons: `=` is
 * the AND of the pairs' `=`, `<>` the OR of their `<>` (so `(1, NULL) = (1, 2)` is NULL and
 * `(1, NULL) = (2, 3)` false); IS [NOT] DISTINCT FROM the OR (AND) of the pairs'. `<`, `<=`, `>`, `>=`
 * are lexicographic, decided by the first pair not equal, NULL when that pair holds a NULL:
 * `a1 < b1 OR (a1 = b1 AND (…(an < bn)))` is exactly that in three-valued logic (a pair that is
 * equal passes to the rest; a NULL pair makes both arms NULL or false, so the whole NULL).
 */
function compareRows(op: InfixOp, a: readonly Expr[], b: readonly Expr[], pos: Pos): Expr {
  if (!ROW_OPERATORS.has(op)) {
    throw notSupported(`operator ${op} on rows`, pos);
  }
  if (a.length !== b.length || a.length === 0) {
    throw new SluiceError('SYNTAX_ERROR', 'unequal number of entries in row expressions', { position: pos });
  }
  const pair = (pairOp: BinaryOp, i: number): Expr => ({
    kind: 'binary',
    op: pairOp,
    left: a[i]!,
    right: b[i]!,
    pos: a[i]!.pos,
  });
  const pairs = (pairOp: BinaryOp): Expr[] => a.map((_, i) => pair(pairOp, i));
  switch (op) {
    case '=':
    case 'is not distinct from':
      return balanced('and', pairs(op), pos);
    case '<>':
    case 'is distinct from':
      return balanced('or', pairs(op), pos);
    default: {
      const strict: BinaryOp = op === '<' || op === '<=' ? '<' : '>';
      let rest = pair(op as BinaryOp, a.length - 1);
      for (let i = a.length - 2; i >= 0; i--) {
        const tie: Expr = { kind: 'binary', op: 'and', left: pair('=', i), right: rest, pos };
        rest = { kind: 'binary', op: 'or', left: pair(strict, i), right: tie, pos };
      }
      return rest;
    }
  }
}

/** `parts` joined by AND or OR as a balanced tree: a long IN list of rows stays shallow. */
function balanced(op: 'and' | 'or', parts: readonly Expr[], pos: Pos): Expr {
  if (parts.length === 1) return parts[0]!;
  const mid = parts.length >> 1;
  return {
    kind: 'binary',
    op,
    left: balanced(op, parts.slice(0, mid), pos),
    right: balanced(op, parts.slice(mid), pos),
    pos,
  };
}
