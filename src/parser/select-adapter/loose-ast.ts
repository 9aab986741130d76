// node-sql-parser's loose AST, narrowed: the node shape and the readers the converter uses, and the
// two places where node-sql-parser's tree must be reshaped before it is read (call arguments, casts).

export type Node = { readonly [key: string]: unknown };

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
export function child(node: Node, key: string): Node | undefined {
  const value = node[key];
  return isNode(value) ? value : undefined;
}
export function list(node: Node | undefined, key: string): readonly unknown[] {
  const value = node?.[key];
  return Array.isArray(value) ? value : [];
}
export function text(node: Node | undefined, key: string): string | undefined {
  const value = node?.[key];
  return typeof value === 'string' ? value : undefined;
}
export function present(node: Node, key: string): boolean {
  const value = node[key];
  return value !== undefined && value !== null;
}

/**
 * A call's argument list. node-sql-parser reads `f(a, b OR c)` as the single argument
 * `OR([a, b], c)`: an array hidden at the far left of an AND/OR chain holds the preceding
 * arguments. Splice them back out (the chain is re-associated later anyway).
 */
export function callArguments(args: Node | undefined): unknown[] {
  const value = args?.['value'];
  return spliceArguments(Array.isArray(value) ? value : value === undefined ? [] : [value]);
}
export function spliceArguments(items: readonly unknown[]): unknown[] {
  return items.flatMap((item) => {
    const chain: Node[] = [];
    let leftmost: unknown = item;
    while (isNode(leftmost) && leftmost['type'] === 'binary_expr' && leftmost['parentheses'] !== true) {
      chain.push(leftmost);
      leftmost = leftmost['left'];
    }
    if (!Array.isArray(leftmost) || chain.length === 0) return [item];
    const leading = spliceArguments(leftmost);
    let rebuilt: unknown = leading.pop();
    for (let i = chain.length - 1; i >= 0; i--) rebuilt = { ...chain[i], left: rebuilt };
    return [...leading, rebuilt];
  });
}

/**
 * For some items (`x LIKE y::t`, `CAST(…)::t`, `(…)::t || z`) node-sql-parser makes the select
 * item itself the cast node, with the rest of the item as a `tail` operator and operand.
 */
export function castItem(column: Node): Node {
  const cast: Node = { ...column, tail: null, as: null };
  const tail = child(column, 'tail');
  if (tail === undefined) return cast;
  return { type: 'binary_expr', operator: tail['operator'], left: cast, right: tail['expr'] };
}
