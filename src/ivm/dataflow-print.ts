// EXPLAIN DATAFLOW's text of a DataflowPlan (dataflow-plan.ts): one line per node, what it runs and
// what state it keeps; its hash is the plan's fingerprint, which checkpoints record.
import { typeName } from '../common/types.ts';
import { printScalar, type ScalarExpr } from '../common/scalar-expr.ts';
import { printTopN } from '../common/top-n.ts';
import { printWindow } from '../common/window.ts';
import { expandMaxRows, printExpand } from '../common/expand.ts';
import { printTemporalBound } from '../common/temporal-bound.ts';
import { formatInterval, Interval } from '../common/time/interval.ts';
import type {
  AggregateSpec,
  ColumnSpec,
  DataflowNode,
  DataflowPlan,
  PaneClose,
  SemiJoinMode,
  WindowClose,
} from './dataflow-plan.ts';

/** What a row of each semi-join mode needs to pass. */
const SEMI_JOIN_RULES: Readonly<Record<SemiJoinMode, string>> = {
  exists: 'EXISTS: a left row passes once while its key has a match',
  notExists: 'NOT EXISTS: a left row passes while its key has no match',
  in: 'IN: a left row passes once while its non-NULL value has a match',
  notIn:
    'NOT IN: a left row passes while its subquery rows are none, or hold no NULL and not its value (a NULL value: only while none)',
};

function cols(columns: readonly ColumnSpec[]): string {
  return columns.map((c) => `${c.name}:${typeName(c.type)}`).join(', ');
}

function printAgg(a: AggregateSpec): string {
  const arg = a.argColumn === null ? '*' : `${a.distinct ? 'distinct ' : ''}#${a.argColumn}`;
  const fn = a.fn === 'count_star' ? 'count' : a.fn;
  const state =
    a.orderBy !== undefined
      ? '(value, order keys)→count per group in order, result rebuilt per changed group'
      : a.fn === 'string_agg' || a.fn === 'jsonb_agg' || a.fn === 'jsonb_object_agg' || a.fn === 'array_agg'
        ? 'value→count per group, result rebuilt per changed group'
        : a.strategy === 'extreme'
          ? 'one value per group, insert-only input'
          : a.strategy === 'multiset'
            ? 'value→count per group'
            : a.fn.startsWith('var_') || a.fn.startsWith('stddev_')
              ? 'exact Σx, Σx² per group'
              : 'O(1) per group';
  const delimiter = a.delimiter === undefined ? '' : `, ${JSON.stringify(a.delimiter)}`;
  const order =
    a.orderBy === undefined
      ? ''
      : ` order by ${a.orderBy.map((o) => `#${o.index} ${o.desc ? 'desc' : 'asc'} nulls ${o.nullsFirst ? 'first' : 'last'}`).join(', ')}`;
  return `${fn}(${arg}${delimiter}${order}) [${a.strategy}: ${state}]`;
}

/** A row's output multiplicity from its counts on the left (a) and on the right (b). */
const SET_RULES: Readonly<Record<string, string>> = {
  union: 'once if a + b > 0',
  intersect: 'once if a > 0 and b > 0',
  'intersect all': 'min(a, b) times',
  except: 'once if a > 0 and b = 0',
  'except all': 'max(a − b, 0) times',
};

/**
 * A semi-join's key pairs as EXPLAIN prints them: `#1:auction = right.#0` (the right input's first
 * columns), or `= right.#0:id` where the key is the right input's own columns (`rightKey`).
 */
export function semiJoinOn(n: Extract<DataflowNode, { kind: 'semijoin' }>): string[] {
  return n.leftKey.map((k, i) => {
    const right = n.rightKey?.[i];
    return `${printScalar(k)} = right.${right === undefined ? `#${i}` : printScalar(right)}`;
  });
}

/** Deterministic print, outermost node first, for EXPLAIN DATAFLOW and golden tests. */
export function printDataflow(
  plan: DataflowPlan,
  options: { readonly kernels: boolean } = { kernels: true },
): string {
  const byId = new Map(plan.nodes.map((n) => [n.id, n]));
  const lines: string[] = [`Dataflow for ${plan.view} (fingerprint ${plan.fingerprint})`];
  const printed = new Set<number>();
  const visit = (id: number, depth: number): void => {
    const n = byId.get(id);
    if (n === undefined) return;
    const pad = '  '.repeat(depth + 1);
    // A node feeding several consumers (a WITH query read twice) runs once: printed once.
    if (printed.has(id)) {
      lines.push(`${pad}n${id} (the same node as above: computed once, read again here)`);
      return;
    }
    printed.add(id);
    switch (n.kind) {
      case 'input':
        lines.push(`${pad}n${n.id} Input ${n.sourceKind} ${n.source} [${cols(n.columns)}]`);
        return;
      case 'values':
        lines.push(`${pad}n${n.id} Values (one row)`);
        return;
      case 'map': {
        const parts: string[] = [];
        if (n.filter !== null) parts.push(`filter ${printScalar(n.filter)}`);
        if (n.project !== null) parts.push(`project [${n.project.map(printScalar).join(', ')}]`);
        if (n.keepsKey !== undefined) parts.push('keeps the key');
        lines.push(`${pad}n${n.id} Map (stateless) ${parts.join('; ')} → [${cols(n.columns)}]`);
        visit(n.inputs[0], depth + 1);
        return;
      }
      case 'reduce': {
        const by = n.columns
          .slice(0, n.keyCount)
          .map((c, i) => `#${i}:${c.name}`)
          .join(', ');
        const fused: string[] = [];
        if (n.fused !== null) {
          if (n.fused.filter !== null) fused.push(`filter ${printScalar(n.fused.filter)}`);
          const keys = n.fused.project.slice(0, n.keyCount);
          if (keys.length > 0) fused.push(`keys [${keys.map(printScalar).join(', ')}]`);
          const args = n.fused.project.slice(n.keyCount);
          if (args.length > 0) fused.push(`arguments [${args.map(printScalar).join(', ')}]`);
        }
        const map =
          n.fused === null
            ? ''
            : ` (fused Map, no projected rows${fused.length > 0 ? `: ${fused.join('; ')}` : ''})`;
        const close =
          n.emitOnClose === undefined
            ? ''
            : `WindowClose (rows [keys, arguments] held by #${n.emitOnClose.keyIndex}:${n.columns[n.emitOnClose.keyIndex]?.name ?? '?'}, ` +
              `reduced once when the watermark of "${n.emitOnClose.table}" reaches it${latenessText(n.emitOnClose)}) `;
        const panes =
          n.closePanes === undefined
            ? ''
            : `PaneClose (a group dropped when the watermark of "${n.closePanes.table}" reaches ` +
              `#${n.closePanes.keyIndex}:${n.columns[n.closePanes.keyIndex]?.name ?? '?'} + ${n.closePanes.sizeMicros / 1e6} s, the end of its last window${latenessText(n.closePanes)}) `;
        const kernel = options.kernels && n.kernel === 'generated' ? ' generated kernel' : '';
        lines.push(
          `${pad}n${n.id} ${close}${panes}Reduce+Merge key [${by}] ` +
            `aggregates [${n.aggregates.map(printAgg).join(', ')}]${map}${kernel} state ${n.stateId} → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        return;
      }
      case 'temporalFilter':
        lines.push(
          `${pad}n${n.id} TemporalFilter ${n.bounds.map(printTemporalBound).join(' AND ')} state ${n.stateId} (rows waiting to enter or leave, by clock) → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        return;
      case 'distinct':
        lines.push(`${pad}n${n.id} Distinct state ${n.stateId} (row → count)`);
        visit(n.inputs[0], depth + 1);
        return;
      case 'join': {
        const on = n.leftKey.map(
          (k, i) => `${printScalar(k)} = right.${printScalar(n.rightKey[i] as ScalarExpr)}`,
        );
        const how =
          n.leftKey.length === 0
            ? 'no equi key: every left row meets every right row (cost |left| × |right|)'
            : `key [${on.join(', ')}]`;
        const residual = n.residual === null ? '' : `; residual ${printScalar(n.residual)}`;
        const arranged =
          n.shared === null
            ? 'both inputs arranged by key'
            : n.shared.table === true
              ? `${n.shared.side === 0 ? 'left' : 'right'} input reads the table's own rows by primary key ${n.shared.arrangement}, the other ${n.shared.other === undefined ? 'arranged by key' : `probes the shared arrangement ${n.shared.other}`}`
              : `${n.shared.side === 0 ? 'left' : 'right'} input probes the shared arrangement ${n.shared.arrangement}, the other arranged by key`;
        const fused: string[] = [];
        if (n.fused?.filter != null) fused.push(`filter ${printScalar(n.fused.filter)}`);
        if (n.fused?.project != null) fused.push(`project [${n.fused.project.map(printScalar).join(', ')}]`);
        const map =
          (fused.length === 0 ? '' : ` (fused Map, applied as rows are emitted: ${fused.join('; ')})`) +
          (n.fused?.byColumn === true ? ' (rows emitted by column)' : '');
        lines.push(
          `${pad}n${n.id} Join ${n.joinKind} ${how}${residual}${map} state ${n.stateId} (${arranged}) → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        visit(n.inputs[1], depth + 1);
        return;
      }
      case 'temporalJoin': {
        const on = n.leftKey.map(
          (k, i) => `${printScalar(k)} = right.${printScalar(n.rightKey[i] as ScalarExpr)}`,
        );
        const residual = n.residual === null ? '' : `; residual ${printScalar(n.residual)}`;
        lines.push(
          `${pad}n${n.id} TemporalJoin ${n.joinKind} key [${on.join(', ')}]${residual} (each left row meets the right rows present when it arrives; right changes emit nothing) ` +
            `state ${n.stateId} (right input arranged by key; each left row with the right rows it met) → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        visit(n.inputs[1], depth + 1);
        return;
      }
      case 'flatmap':
        lines.push(
          `${pad}n${n.id} FlatMap (stateless, at most ${expandMaxRows(n.generator)} rows per input row) ${printExpand(n.generator)} → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        return;
      case 'union':
        lines.push(
          `${pad}n${n.id} Union all of ${n.inputs.length} inputs (stateless) → [${cols(n.columns)}]`,
        );
        for (const input of n.inputs) visit(input, depth + 1);
        return;
      case 'setop': {
        const rule = SET_RULES[`${n.op}${n.all ? ' all' : ''}`] ?? '';
        lines.push(
          `${pad}n${n.id} ${n.op[0]!.toUpperCase()}${n.op.slice(1)}${n.all ? ' all' : ''} (${rule}) state ${n.stateId} (row → left count, right count) → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        visit(n.inputs[1], depth + 1);
        return;
      }
      case 'semijoin': {
        const on = semiJoinOn(n);
        const how = on.length === 0 ? 'no key (the whole subquery)' : `key [${on.join(', ')}]`;
        const counts =
          n.mode === 'notIn'
            ? 'right match counts per key, row and NULL counts per group'
            : n.rightTable !== undefined
              ? `right matches read from the table's own rows by primary key ${n.rightTable}`
              : 'right match counts per key';
        lines.push(
          `${pad}n${n.id} SemiJoin ${SEMI_JOIN_RULES[n.mode]}; ${how} state ${n.stateId} (left rows arranged by key; ${counts}) → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        visit(n.inputs[1], depth + 1);
        return;
      }

      case 'topn': {
        const input = byId.get(n.inputs[0]);
        lines.push(
          `${pad}n${n.id} TopN ${printTopN(n, input?.columns ?? [])} state ${n.stateId} (${topNState(n)}${n.distinctRows === true ? '; rows distinct by the input key' : ''}) → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        return;
      }
      case 'window': {
        const input = byId.get(n.inputs[0]);
        lines.push(
          `${pad}n${n.id} Window ${printWindow(n, input?.columns ?? [])} state ${n.stateId} (partition → every row, in order, with its values) → [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        return;
      }
      case 'output':
        lines.push(
          `${pad}n${n.id} Output ${plan.view} key ${n.key === null ? 'none (multiset)' : `[${n.key.map((k) => n.columns[k]?.name ?? `#${k}`).join(', ')}]`} state ${n.sharesStateOf === null ? n.stateId : `of n${n.sharesStateOf} (rows read from its groups, not copied)`} [${cols(n.columns)}]`,
        );
        visit(n.inputs[0], depth + 1);
        return;
    }
  };
  visit(plan.output, 0);
  return lines.join('\n');
}

/** How EXPLAIN DATAFLOW (and so the plan fingerprint) shows a window's allowed lateness, if any. */
function latenessText(close: WindowClose | PaneClose): string {
  const micros = close.allowedLateness ?? 0;
  return micros > 0 ? ` plus ${formatInterval(Interval.of(0, 0, micros))} allowed lateness` : '';
}

/** What a TopN holds per partition, as EXPLAIN DATAFLOW says it. */
function topNState(n: Extract<DataflowNode, { kind: 'topn' }>): string {
  if (n.insertOnly !== true) return 'partition → every row, in order';
  return n.to === null
    ? 'partition → every row, in order: insert-only input, unbounded rank'
    : 'partition → its top rows only: insert-only input';
}
