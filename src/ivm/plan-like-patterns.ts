// Whether a plan may match LIKE / ILIKE against a pattern ending in a lone escape character: a
// constant pattern that does, or any pattern computed per row. Such a pattern matched its escape
// as a literal backslash before; now it is PostgreSQL's error (or false, where PostgreSQL's matcher
// never reaches the escape), so the plan's checkpointed state is rebuilt once (plan-fingerprint.ts).
import { endsInLoneEscape } from '../common/like.ts';
import type { DataflowNode } from './dataflow-plan.ts';

function likeMayEndInEscape(value: unknown, seen: Set<object>): boolean {
  if (typeof value !== 'object' || value === null || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) return value.some((v) => likeMayEndInEscape(v, seen));
  const o = value as { kind?: unknown; fn?: unknown; args?: unknown };
  if (o.kind === 'call' && (o.fn === 'like' || o.fn === 'ilike') && Array.isArray(o.args)) {
    const pattern = o.args[1] as { kind?: unknown; value?: unknown } | undefined;
    if (pattern?.kind !== 'const') return true;
    if (typeof pattern.value === 'string' && endsInLoneEscape(pattern.value)) return true;
  }
  return Object.values(value).some((v) => likeMayEndInEscape(v, seen));
}

export function matchesLikeEndingInEscape(nodes: readonly DataflowNode[]): boolean {
  const seen = new Set<object>();
  return nodes.some((n) => likeMayEndInEscape(n, seen));
}
