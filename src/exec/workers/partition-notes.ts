// What EXPLAIN DATAFLOW adds under a plan when the engine runs more than one worker: for each Reduce,
// whether it runs in hash partitions on the worker threads or on the main thread, and why. The plan
// itself (and so its fingerprint and checkpoint entries) does not depend on the worker count.
import type { DataflowNode, DataflowPlan } from '../../ivm/dataflow-plan.ts';
import { foldOf, partitioningOf } from './partition-eligibility.ts';

export function partitionNotes(plan: DataflowPlan, workers: number): string[] {
  if (workers <= 1) return [];
  const byId = new Map<number, DataflowNode>(plan.nodes.map((n) => [n.id, n]));
  const lines: string[] = [];
  for (const node of plan.nodes) {
    if (node.kind !== 'reduce') continue;
    const input = byId.get(node.inputs[0]);
    const p = partitioningOf(node, input?.columns ?? []);
    // A COUNT(*) Reduce over a view whose changes a partitioned Reduce makes reads their folds.
    const folds =
      !p.partitioned && input?.kind === 'input' && foldOf(node) !== null
        ? `; COUNT(*) only: when ${input.source} is a partitioned Reduce's output, its partitions fold their changes by this group key`
        : '';
    lines.push(
      p.partitioned
        ? `  n${node.id} runs in ${workers} hash partitions of its group key, one per worker thread`
        : `  n${node.id} runs on the main thread (not partitioned: ${p.reason})${folds}`,
    );
  }
  return lines.length === 0 ? [] : [`Workers: ${workers}`, ...lines];
}
