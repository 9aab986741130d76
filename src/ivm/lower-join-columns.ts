// Lowering's last pass over joins: a join whose only consumer is a Reduce emits just the columns that
// Reduce's fused Map reads (a projection that picks them, fused into the join), and the Reduce reads
// them at their new positions — so each match builds a row of those few values, not the whole joined
// row (for GROUP BY a.category, SUM(b.amount) over bids ⋈ auctions: 2 values instead of 7).
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { columnsOf, remapColumns } from '../common/scalar-expr.ts';
import type { DataflowNode } from './dataflow-plan.ts';

type JoinNode = Extract<DataflowNode, { kind: 'join' }>;
type ReduceNode = Extract<DataflowNode, { kind: 'reduce' }>;

/** Narrows in place (`nodes` by position: node ids are unchanged) every join that qualifies. */
export function narrowJoinOutputs(nodes: DataflowNode[]): void {
  const consumers = new Map<number, number[]>();
  nodes.forEach((n, at) => {
    if (!('inputs' in n)) return;
    for (const i of n.inputs) {
      const list = consumers.get(i);
      if (list === undefined) consumers.set(i, [at]);
      else list.push(at);
    }
  });
  nodes.forEach((join, at) => {
    if (join.kind !== 'join' || (join.fused !== null && join.fused.project !== null)) return;
    const users = consumers.get(join.id);
    if (users === undefined || users.length !== 1) return;
    const reduce = nodes[users[0] as number] as DataflowNode;
    // A window-close Reduce or a HOP pane stage reads its input otherwise: left as they are.
    if (
      reduce.kind !== 'reduce' ||
      reduce.fused === null ||
      reduce.emitOnClose !== undefined ||
      reduce.closePanes !== undefined
    )
      return;
    const used = new Set<number>();
    if (reduce.fused.filter !== null) columnsOf(reduce.fused.filter, used);
    for (const e of reduce.fused.project) columnsOf(e, used);
    // Every column read (or none dropped): the join keeps its rows and only emits them by column.
    const picks =
      used.size < join.columns.length ? [...used].sort((a, b) => a - b) : join.columns.map((_, i) => i);
    const position = new Map(picks.map((c, i) => [c, i]));
    const to = (c: number): number => position.get(c) as number;
    const narrowed: JoinNode = {
      ...join,
      fused: {
        filter: join.fused?.filter ?? null,
        project:
          picks.length === join.columns.length
            ? null
            : picks.map((c): ScalarExpr => {
                const spec = join.columns[c] as (typeof join.columns)[number];
                return { kind: 'col', index: c, name: spec.name, type: spec.type };
              }),
        joined: join.fused?.joined ?? join.columns,
        byColumn: true,
      },
      columns: picks.map((c) => join.columns[c] as (typeof join.columns)[number]),
    };
    const reader: ReduceNode = {
      ...reduce,
      fused: {
        ...reduce.fused,
        filter: reduce.fused.filter === null ? null : remapColumns(reduce.fused.filter, to),
        project: reduce.fused.project.map((e) => remapColumns(e, to)),
      },
    };
    nodes[at] = narrowed;
    nodes[users[0] as number] = reader;
  });
}
