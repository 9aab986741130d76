// Structural equality of expression trees, in time linear in their size: equal trees get equal
// numbers. The binder matches select-list and HAVING expressions against GROUP BY keys with it,
// over the AST (astLabel, positions ignored) and over bound expressions (scalarLabel).
import type { Expr } from '../parser/ast.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { printScalar } from '../common/scalar-expr.ts';
import { typeName } from '../common/types.ts';

/**
 * Numbers trees so that equal trees get equal numbers: a node's id interns its own label with its
 * children's ids. Each node is numbered once (iteratively), so comparing many trees, or a tree with
 * each of its subtrees, costs their total size.
 */
export class TreeIds<N extends object> {
  private readonly ids = new WeakMap<N, number>();
  private readonly interned = new Map<string, number>();

  constructor(
    private readonly label: (node: N) => string,
    private readonly children: (node: N) => readonly N[],
  ) {}

  of(root: N): number {
    const stack: { node: N; expanded: boolean }[] = [{ node: root, expanded: false }];
    for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
      if (this.ids.has(top.node)) {
        stack.pop();
      } else if (!top.expanded) {
        top.expanded = true;
        for (const c of this.children(top.node))
          if (!this.ids.has(c)) stack.push({ node: c, expanded: false });
      } else {
        stack.pop();
        const key = `${this.label(top.node)}(${this.children(top.node)
          .map((c) => this.ids.get(c))
          .join(',')})`;
        let id = this.interned.get(key);
        if (id === undefined) {
          id = this.interned.size;
          this.interned.set(key, id);
        }
        this.ids.set(top.node, id);
      }
    }
    return this.ids.get(root) as number;
  }
}

/** What distinguishes an AST node from others with the same children (everything but `pos`). */
export function astLabel(e: Expr): string {
  switch (e.kind) {
    case 'literal':
      return `lit:${e.literalType}:${typeof e.value === 'bigint' ? `${e.value}n` : JSON.stringify(e.value)}`;
    case 'column':
      return `col:${JSON.stringify([e.table ?? null, e.name])}`;
    case 'unary':
    case 'binary':
      return `${e.kind}:${e.op}`;
    case 'isNull':
    case 'between':
      return `${e.kind}:${e.negated}`;
    case 'inList':
      return `in:${e.negated}:${e.list.length}`;
    case 'subquery':
    case 'exists':
      // Two subqueries are one only if they are one node of the text (its position says which).
      return `${e.kind}:${e.pos.line}:${e.pos.column}`;
    case 'like':
      return `like:${e.negated}:${e.caseInsensitive}`;
    case 'case':
      return `case:${e.operand !== undefined}:${e.whens.length}:${e.else !== undefined}`;
    case 'cast':
      return `cast:${JSON.stringify(e.type.name)}:${e.type.params.join(',')}`;
    case 'function':
      return `fn:${JSON.stringify(e.name)}:${e.distinct}:${e.star}:${e.args.length}:${e.filter !== undefined}`;
  }
}

/** What printScalar shows of a bound node apart from its children: equal ids ⇔ equal prints. */
export function scalarLabel(e: ScalarExpr): string {
  switch (e.kind) {
    case 'const':
      return `const:${printScalar(e)}`;
    case 'col':
      return `#${e.index}:${e.name}`;
    case 'call':
      return `call:${e.fn}`;
    case 'and':
    case 'or':
    case 'coalesce':
      return e.kind;
    case 'case':
      return `case:${e.whens.length}:${e.else !== null}`;
    case 'in':
      return `in:${e.negated}:${e.list.length}`;
    case 'cast':
      return `cast:${typeName(e.type)}`;
  }
}
