// Whether a plan orders text anywhere: a comparison (<, <=, >, >=, BETWEEN, an array's or a quantified
// comparison), GREATEST/LEAST, MIN/MAX or an aggregate's ORDER BY, a Top-N's or a window's ORDER BY
// over a text value. Text's order changed from UTF-16 code units to code points, so such a plan's
// checkpointed state is rebuilt once (plan-fingerprint.ts); a plan that only tests text for equality,
// or orders numbers beside a text column, keeps its fingerprint and its state.
import type { SqlType } from '../common/types.ts';
import type { ColumnSpec, DataflowNode } from './dataflow-plan.ts';

const ORDERING_FNS = /^(?:lt|le|gt|ge|greatest|least|array_any|array_all)$/;

function isText(type: SqlType | null | undefined): boolean {
  if (type === null || type === undefined) return false;
  return type.kind === 'text' || (type.kind === 'array' && isText(type.element));
}

/** A scalar call somewhere in `value` (a node's fields, walked) that orders text. */
function callOrdersText(value: unknown, seen: Set<object>): boolean {
  if (typeof value !== 'object' || value === null || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) return value.some((v) => callOrdersText(v, seen));
  const o = value as { kind?: unknown; fn?: unknown; args?: unknown };
  if (o.kind === 'call' && typeof o.fn === 'string' && Array.isArray(o.args) && ORDERING_FNS.test(o.fn)) {
    if ((o.args as { type?: SqlType }[]).some((a) => isText(a.type))) return true;
  }
  return Object.values(value).some((v) => callOrdersText(v, seen));
}

export function ordersText(nodes: readonly DataflowNode[]): boolean {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const inputColumns = (n: DataflowNode): readonly ColumnSpec[] => {
    const first = n.kind === 'input' || n.kind === 'values' ? undefined : n.inputs[0];
    return first === undefined ? [] : (byId.get(first)?.columns ?? []);
  };
  const seen = new Set<object>();
  for (const n of nodes) {
    if (n.kind === 'topn' || n.kind === 'window') {
      const columns = inputColumns(n);
      if (n.orderBy.some((k) => isText(columns[k.index]?.type))) return true;
    }
    if (n.kind === 'reduce') {
      const columns = n.fused?.columns ?? inputColumns(n);
      for (const a of n.aggregates) {
        if ((a.fn === 'min' || a.fn === 'max') && isText(a.argType)) return true;
        if (a.orderBy?.some((k) => isText(columns[k.index]?.type)) === true) return true;
      }
    }
    if (callOrdersText(n, seen)) return true;
  }
  return false;
}
