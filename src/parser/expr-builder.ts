// Builds Expr trees from a flat run of operands and operators with PostgreSQL's precedence. Both the
// chevrotain grammar and the node-sql-parser adapter emit such runs, so precedence lives only here.
import type { BinaryOp, Expr, Pos, TypeName } from './ast.ts';
import { SluiceError } from '../common/errors.ts';

export type InfixOp =
  | BinaryOp
  | 'like'
  | 'not like'
  | 'ilike'
  | 'not ilike'
  | 'similar to'
  | 'not similar to'
  /** `x AT TIME ZONE zone`, built as PostgreSQL's timezone(zone, x). */
  | 'at time zone';

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
  | { readonly kind: 'subscript'; readonly index: Expr; readonly pos: Pos };

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
const NOT_PRECEDENCE = 3;
const SIGN_PRECEDENCE = 12;

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
        pending.push({ kind: 'infix', op: piece.op, min: precedence + 1 });
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
      return { kind: 'binary', op, left, right, pos };
    }
  }
}

function makePostfix(op: PostfixOp, operand: Expr, pos: Pos): Expr {
  switch (op.kind) {
    case 'is': {
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
    case 'in':
      return { kind: 'inList', operand, list: op.list, negated: op.negated, pos };
    case 'cast':
      return { kind: 'cast', operand, type: op.type, pos };
    case 'subscript':
      return functionCall(ARRAY_SUBSCRIPT, [operand, op.index], {}, op.pos);
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
export const ARRAY_ALL = '[all]';

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
