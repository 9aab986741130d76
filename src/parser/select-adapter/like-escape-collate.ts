// Two PostgreSQL forms node-sql-parser does not read, hidden from it (adapter-tokens.ts) and built
// from our tokens: `s LIKE p ESCAPE 'c'`, which becomes s LIKE like_escape(p, 'c') as PostgreSQL
// builds it, and `x COLLATE name`, accepted for the collations whose order Sluice's text order is.
import type { IToken } from 'chevrotain';
import { notSupported, SluiceError } from '../../common/errors.ts';
import {
  bindsTighterThanLike,
  nullLiteral,
  stringLiteral,
  type InfixOp,
  type Piece,
} from '../expr-builder.ts';
import { identName, isType, isWordText, posOf, StringLit, stringValue, syntaxErrorAt } from '../lexer.ts';

/** The operators an ESCAPE clause may follow. */
const LIKE_OPS: ReadonlySet<InfixOp> = new Set([
  'like',
  'not like',
  'ilike',
  'not ilike',
  'similar to',
  'not similar to',
]);

/** Whether the token after ESCAPE is a string literal or NULL (the clause hidden from the library). */
export function isLiteralEscape(value: IToken | undefined): boolean {
  return isType(value, StringLit) || isWordText(value, 'null');
}

/**
 * The pieces `ESCAPE value` (at `word`, a string literal or NULL) adds to an operator run (see
 * escapeInfix).
 */
export function escapePieces(pieces: readonly Piece[], word: IToken, value: IToken): Piece[] {
  const escape = isType(value, StringLit)
    ? stringLiteral(stringValue(value), posOf(value))
    : nullLiteral(posOf(value));
  return [escapeInfix(pieces, word), { kind: 'operand', expr: escape, start: posOf(value) }];
}

/**
 * The ESCAPE operator (at `word`) of an operator run, its operand to follow — any expression, as in
 * PostgreSQL (`ESCAPE e`, `ESCAPE coalesce(e, '#')`): the pattern is what follows the run's last
 * LIKE, and may hold only operators binding tighter than LIKE and no ESCAPE of its own (else it is
 * a syntax error at ESCAPE, as in PostgreSQL).
 */
export function escapeInfix(pieces: readonly Piece[], word: IToken): Piece {
  const at = pieces.findLastIndex((p) => p.kind === 'infix' && LIKE_OPS.has(p.op));
  const like = pieces[at];
  const pattern = pieces.slice(at + 1);
  const patternOnly = (p: Piece): boolean =>
    p.kind !== 'infix' || (p.op !== 'escape' && bindsTighterThanLike(p.op));
  if (like?.kind !== 'infix' || !pattern.every(patternOnly)) {
    throw syntaxErrorAt(word);
  }
  if (like.op.includes('similar')) throw notSupported('SIMILAR TO ... ESCAPE', posOf(word));
  return { kind: 'infix', op: 'escape' };
}

/**
 * The collations whose order is the one Sluice compares text in (code point order, the C
 * collation): `COLLATE` with one of them changes nothing; any other is refused, named.
 */
const CODE_POINT_COLLATIONS = new Set(['C', 'POSIX', 'default']);

/** The collation `name` names, if it is one of Sluice's order (else NOT_SUPPORTED at the name). */
export function checkCollation(name: IToken): string {
  const collation = identName(name);
  if (CODE_POINT_COLLATIONS.has(collation)) return collation;
  throw new SluiceError('NOT_SUPPORTED', `collation "${collation}" is not supported`, {
    position: posOf(name),
    hint: 'text compares by code point, the order of COLLATE "C" (also "POSIX" and "default")',
  });
}
