// Explicit collations as PostgreSQL derives them (parse_collate.c): `x COLLATE "C"` gives x an
// explicit collation, which a collatable result (text, varchar, char(n), their arrays) of an
// operator or function over it carries on; two different explicit collations meeting in one such
// node are "collation mismatch between explicit collations", even where the result has none
// (`s COLLATE "C" = v COLLATE "POSIX"`). All three collations Sluice accepts order alike, so this
// changes no value: it refuses, as PostgreSQL does, what it refuses. A CASE meets only its results'
// collations (its operand and WHEN values are compared apart, as in PostgreSQL).
import { SluiceError } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { SqlType } from '../common/types.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import { COLLATE_CALL, collationOf } from '../parser/expr-builder.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { bindsJournaled } from './journaled-binding.ts';

interface Explicit {
  readonly name: string;
  /** The COLLATE that set it, where PostgreSQL points at a mismatch. */
  readonly pos: Pos;
}

/** Each bound node's explicit collation, beside the tree. */
const explicit = new WeakMap<Expr, Explicit>();

function collatable(type: SqlType): boolean {
  return type.kind === 'text' || (type.kind === 'array' && collatable(type.element));
}

/** Records `e`'s explicit collation once bound (its children were bound first); refuses a mismatch. */
export function deriveCollation(e: Expr, bound: ScalarExpr): void {
  const named = e.kind === 'function' && e.name === COLLATE_CALL ? collationOf(e) : undefined;
  let found: Explicit | undefined = named === undefined ? undefined : { name: named, pos: e.pos };
  if (found === undefined) {
    const inputs =
      e.kind === 'case'
        ? [...e.whens.map((w) => w.then), ...(e.else === undefined ? [] : [e.else])]
        : exprChildren(e);
    for (const child of inputs) {
      const c = explicit.get(child);
      if (c === undefined) continue;
      if (found === undefined) found = c;
      else if (found.name !== c.name && !bindsJournaled()) {
        // Accepted before the check existed: a journaled statement still binds (journaled-binding.ts).
        throw new SluiceError(
          'TYPE_MISMATCH',
          `collation mismatch between explicit collations "${found.name}" and "${c.name}"`,
          { position: c.pos },
        );
      }
    }
  }
  if (found !== undefined && collatable(bound.type)) explicit.set(e, found);
}
