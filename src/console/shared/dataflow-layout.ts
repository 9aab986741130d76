// Where the console draws each node of a dataflow: data flows top to bottom, the output at the
// bottom. A plan is a DAG whose Joins have two inputs (a tree of joins, self-joins reading one table
// through two Input nodes), so the layout is a layered tree drawing: a node's row is its longest
// path to the output (a source sits just above the node it feeds, not in a row of its own), leaves
// take columns left to right in input order (a Join's left input is drawn left of its right one),
// and every other node is centred over its inputs, then pushed right past any neighbour it would
// overlap. DOM-free, so it is unit-tested.

export interface LayoutInput {
  readonly id: number;
  /** Ids of the nodes feeding this one, in order ([left, right] for a Join). */
  readonly inputs: readonly number[];
  readonly height: number;
}

export interface LayoutOptions {
  readonly boxWidth: number;
  readonly gapX: number;
  readonly gapY: number;
  readonly margin: number;
}

export interface PlacedBox {
  readonly id: number;
  readonly x: number;
  readonly y: number;
  readonly height: number;
  /** 0 is the top row. */
  readonly row: number;
}

export interface LayoutEdge {
  readonly from: number;
  readonly to: number;
  /** Which input of a two-input node (a Join) the edge is; null for a single input. */
  readonly side: 'left' | 'right' | null;
  readonly x1: number;
  readonly y1: number;
  readonly x2: number;
  readonly y2: number;
}

export interface Layout {
  readonly boxes: ReadonlyMap<number, PlacedBox>;
  readonly edges: readonly LayoutEdge[];
  readonly width: number;
  readonly height: number;
}

export function layoutDataflow(
  nodes: readonly LayoutInput[],
  output: number,
  options: LayoutOptions,
): Layout {
  const { boxWidth, gapX, gapY, margin } = options;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const consumers = new Map<number, number[]>();
  for (const n of nodes)
    for (const i of n.inputs) {
      if (!byId.has(i)) continue;
      const users = consumers.get(i);
      if (users === undefined) consumers.set(i, [n.id]);
      else users.push(n.id);
    }

  // Longest path to a node nothing consumes (the output); a cycle (never in a plan) stops at 0.
  const depth = new Map<number, number>();
  const depthOf = (id: number): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    depth.set(id, 0);
    const users = consumers.get(id) ?? [];
    const d = users.length === 0 ? 0 : 1 + Math.max(...users.map(depthOf));
    depth.set(id, d);
    return d;
  };
  const maxDepth = Math.max(0, ...nodes.map((n) => depthOf(n.id)));

  // Columns: leaves in the order a walk from the output meets them (inputs in order), others at the
  // mean of their inputs. Nodes the output does not reach (never in a plan) are walked after it.
  const slot = new Map<number, number>();
  let nextLeaf = 0;
  const place = (id: number, path: Set<number>): number => {
    const known = slot.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id);
    const inputs = (n?.inputs ?? []).filter((i) => byId.has(i) && !path.has(i));
    path.add(id);
    const s =
      inputs.length === 0
        ? nextLeaf++
        : inputs.map((i) => place(i, path)).reduce((a, b) => a + b, 0) / inputs.length;
    path.delete(id);
    slot.set(id, s);
    return s;
  };
  const roots = [output, ...nodes.filter((n) => !consumers.has(n.id)).map((n) => n.id)];
  for (const r of roots) if (byId.has(r)) place(r, new Set());
  for (const n of nodes) if (!slot.has(n.id)) place(n.id, new Set());

  // Rows, top (the farthest from the output) first; within a row, no two boxes overlap.
  const rows: LayoutInput[][] = Array.from({ length: maxDepth + 1 }, () => []);
  for (const n of nodes) rows[maxDepth - (depth.get(n.id) ?? 0)]?.push(n);
  for (const row of rows) {
    row.sort((a, b) => (slot.get(a.id) ?? 0) - (slot.get(b.id) ?? 0) || a.id - b.id);
    for (let i = 1; i < row.length; i++) {
      const prev = slot.get((row[i - 1] as LayoutInput).id) ?? 0;
      const id = (row[i] as LayoutInput).id;
      if ((slot.get(id) ?? 0) < prev + 1) slot.set(id, prev + 1);
    }
  }
  const slots = [...slot.values()];
  const minSlot = Math.min(0, ...slots);
  const maxSlot = Math.max(0, ...slots) - minSlot;

  const boxes = new Map<number, PlacedBox>();
  let y = margin;
  rows.forEach((row, r) => {
    if (row.length === 0) return;
    for (const n of row) {
      const x = margin + ((slot.get(n.id) ?? 0) - minSlot) * (boxWidth + gapX);
      boxes.set(n.id, { id: n.id, x, y, height: n.height, row: r });
    }
    y += Math.max(...row.map((n) => n.height)) + gapY;
  });

  const edges: LayoutEdge[] = [];
  for (const n of nodes) {
    const to = boxes.get(n.id) as PlacedBox;
    n.inputs.forEach((input, i) => {
      const from = boxes.get(input);
      if (from === undefined) return;
      const two = n.inputs.length === 2;
      const side = two ? (i === 0 ? 'left' : 'right') : null;
      edges.push({
        from: input,
        to: n.id,
        side,
        x1: from.x + boxWidth / 2,
        y1: from.y + from.height,
        x2: to.x + boxWidth * (side === null ? 0.5 : side === 'left' ? 0.3 : 0.7),
        y2: to.y - 2,
      });
    });
  }
  return {
    boxes,
    edges,
    width: 2 * margin + maxSlot * (boxWidth + gapX) + boxWidth,
    height: y - gapY + margin,
  };
}
