// Binding of the bytea and uuid functions and of bytea || bytea: length/octet_length, md5, encode,
// decode on bytea (text overloads stay in bind-functions.ts), and gen_random_uuid, which is never
// folded into a constant: each row gets its own (views refuse it, see refuseNowInView).
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T } from '../common/types.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import { call, coerce, isStringLiteral } from './bind-coerce.ts';

const isBytea = (a: ScalarExpr | undefined): boolean => a?.type.kind === 'bytea';
/** A string literal or NULL: PostgreSQL's unknown-type literal, which takes the other side's type. */
const isLiteral = (a: ScalarExpr | undefined): boolean =>
  a !== undefined && (a.type.kind === 'unknown' || isStringLiteral(a));
const textual = (a: ScalarExpr | undefined): boolean =>
  a !== undefined && (a.type.kind === 'text' || isLiteral(a));

/** A bytea or uuid function call, or undefined when the name or argument types are not one. */
export function bindBinaryFunction(
  e: Extract<Expr, { kind: 'function' }>,
  args: readonly ScalarExpr[],
): ScalarExpr | undefined {
  const [a0, a1] = args;
  const n = args.length;
  switch (e.name) {
    case 'gen_random_uuid':
      return n === 0 ? { kind: 'call', fn: 'gen_random_uuid', args: [], type: T.uuid } : undefined;
    case 'length':
    case 'octet_length':
      if (n !== 1) return undefined;
      if (isBytea(a0)) return call('bytea_length', [a0 as ScalarExpr], T.int32);
      if (e.name === 'octet_length' && textual(a0))
        // a char(n) counts its padding, as PostgreSQL's octet_length(bpchar): not cast to text
        return call(
          'octet_length_text',
          [
            (a0 as ScalarExpr).type.kind === 'text'
              ? (a0 as ScalarExpr)
              : coerce(a0 as ScalarExpr, T.text, e.pos),
          ],
          T.int32,
        );
      return undefined;
    case 'md5':
      return n === 1 && isBytea(a0) ? call('bytea_md5', [a0 as ScalarExpr], T.text) : undefined;
    case 'encode':
      if (n !== 2 || !(isBytea(a0) || isLiteral(a0)) || !textual(a1)) return undefined;
      return call(
        'bytea_encode',
        [coerce(a0 as ScalarExpr, T.bytea, e.pos), coerce(a1 as ScalarExpr, T.text, e.pos)],
        T.text,
      );
    case 'decode':
      if (n !== 2 || !textual(a0) || !textual(a1)) return undefined;
      return call(
        'bytea_decode',
        [coerce(a0 as ScalarExpr, T.text, e.pos), coerce(a1 as ScalarExpr, T.text, e.pos)],
        T.bytea,
      );
    default:
      return undefined;
  }
}

/** bytea || bytea (a string literal on either side is read as bytea, as PostgreSQL resolves it). */
export function bindByteaConcat(left: ScalarExpr, right: ScalarExpr, pos: Pos): ScalarExpr | undefined {
  if (!(isBytea(left) && (isBytea(right) || isLiteral(right))) && !(isBytea(right) && isLiteral(left)))
    return undefined;
  return call('bytea_concat', [coerce(left, T.bytea, pos), coerce(right, T.bytea, pos)], T.bytea);
}
