// Lowering LogicalPlan → DataflowPlan: chooses the MRM shape (a Map stage computing group keys and
// aggregate arguments, fused into the Reduce+Merge that consumes it), each aggregate's strategy, the
// view's output key and whether the output borrows its Reduce's state. Every such decision is in the
// plan, so EXPLAIN DATAFLOW, the fingerprint and the console show what runs.
// Stateful nodes get ids "<view>/<node kind><position>", stable across restarts.
import { ordersText } from './plan-orders-text.ts';
import { matchesLikeEndingInEscape } from './plan-like-patterns.ts';
import type { LogicalPlan } from '../planner/logical-plan.ts';
import type { ColumnMeta } from '../planner/catalog.ts';
import type { AggregateSpec, ColumnSpec, DataflowNode, DataflowPlan, WindowClose } from './dataflow-plan.ts';
import { printDataflow } from './dataflow-print.ts';
import { charKeys, planFingerprint } from './plan-fingerprint.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { SluiceError } from '../common/errors.ts';
import { lowerHopPanes } from './lower-hop-panes.ts';
import { narrowJoinOutputs } from './lower-join-columns.ts';
import { columnAppender } from './projection-columns.ts';

/** Where a projection passes every column of the input's unique key on unchanged; null if it does not. */
function projectionKeepsKey(exprs: readonly ScalarExpr[], key: readonly number[] | null): number[] | null {
  if (key === null || key.length === 0) return null;
  const at = key.map((k) => exprs.findIndex((e) => e.kind === 'col' && e.index === k));
  return at.every((i) => i >= 0) ? at : null;
}

/**
 * `outer` (plain columns only) applied after `inner`, as one projection; null when that would change
 * what is evaluated: an inner expression it drops might fail on a row (its error must still be
 * reported), one it repeats would be computed twice, and ones it reorders could fail in another order.
 */
function composeProjections(
  outer: readonly ScalarExpr[],
  inner: readonly ScalarExpr[] | null,
): ScalarExpr[] | null {
  if (inner === null) return null;
  const plain = (e: ScalarExpr): boolean => e.kind === 'col' || e.kind === 'const';
  const uses = new Array<number>(inner.length).fill(0);
  let last = -1;
  for (const e of outer) {
    if (e.kind !== 'col' || e.index >= inner.length) return null;
    uses[e.index] = (uses[e.index] as number) + 1;
    if (plain(inner[e.index] as ScalarExpr)) continue;
    if (e.index < last) return null;
    last = e.index;
  }
  if (inner.some((e, i) => !plain(e) && uses[i] !== 1)) return null;
  return outer.map((e) => inner[(e as Extract<ScalarExpr, { kind: 'col' }>).index] as ScalarExpr);
}

function specs(columns: readonly ColumnMeta[]): ColumnSpec[] {
  return columns.map((c) => ({ name: c.name, type: c.type }));
}

export function lowerToDataflow(
  view: string,
  plan: LogicalPlan,
  key: readonly number[] | null,
  windowClose: WindowClose | null = null,
  keyOf: (plan: LogicalPlan) => readonly number[] | null = () => null,
  /** Whether a plan never retracts (src/planner/plan-insert-only.ts); none is assumed to by default. */
  insertOnlyOf: (plan: LogicalPlan) => boolean = () => false,
): DataflowPlan {
  const nodes: DataflowNode[] = [];
  const add = <N extends DataflowNode>(make: (id: number) => N): N => {
    const node = make(nodes.length);
    nodes.push(node);
    return node;
  };
  // A plan object reached twice (a WITH query referenced several times) is lowered once: one
  // sub-plan feeding several consumers, never fused into one of them.
  const shared = sharedPlans(plan);
  const lowered = new Map<LogicalPlan, DataflowNode>();
  const fusable = (node: DataflowNode): boolean => nodes[nodes.length - 1] === node && !sharedNodes.has(node);
  const sharedNodes = new Set<DataflowNode>();
  const lower = (p: LogicalPlan): DataflowNode => {
    const done = lowered.get(p);
    if (done !== undefined) return done;
    const node = lowerNode(p);
    if (shared.has(p)) {
      lowered.set(p, node);
      sharedNodes.add(node);
    }
    return node;
  };
  const lowerNode = (p: LogicalPlan): DataflowNode => {
    switch (p.kind) {
      case 'scan':
        return add((id) => ({
          id,
          kind: 'input',
          source: p.source,
          sourceKind: p.sourceKind,
          columns: specs(p.columns),
        }));
      case 'values':
        return add((id) => ({ id, kind: 'values', columns: [] }));
      case 'filter': {
        const input = lower(p.input);
        // A filter over a join runs inside it, on each row it emits.
        if (input.kind === 'join' && input.fused === null && fusable(input)) {
          nodes.pop();
          return add((id) => ({
            ...input,
            id,
            fused: { filter: p.predicate, project: null, joined: input.columns },
            columns: specs(p.columns),
          }));
        }
        return add((id) => ({
          id,
          kind: 'map',
          inputs: [input.id],
          filter: p.predicate,
          project: null,
          columns: specs(p.columns),
        }));
      }
      case 'project': {
        const input = lower(p.input);
        // A projection over a join (and its filter) runs inside it: rows are built projected.
        if (
          input.kind === 'join' &&
          (input.fused === null || input.fused.project === null) &&
          fusable(input)
        ) {
          nodes.pop();
          return add((id) => ({
            ...input,
            id,
            fused: {
              filter: input.fused?.filter ?? null,
              project: p.exprs,
              joined: input.fused?.joined ?? input.columns,
            },
            columns: specs(p.columns),
          }));
        }
        const kept = projectionKeepsKey(p.exprs, keyOf(p.input));
        const keepsKey = kept !== null ? { keepsKey: kept } : {};
        // A column selection over a projecting Map (the rank column a Top-N leaves, dropped): one
        // Map, one row built per change instead of two.
        const composed =
          input.kind === 'map' && fusable(input) ? composeProjections(p.exprs, input.project) : null;
        if (input.kind === 'map' && composed !== null) {
          nodes.pop();
          return add((id) => ({
            id,
            kind: 'map',
            inputs: input.inputs,
            filter: input.filter,
            project: composed,
            columns: specs(p.columns),
            ...(input.keepsKey !== undefined ? keepsKey : {}),
          }));
        }
        // Fuse with a preceding filter-only Map: one pass per row.
        if (input.kind === 'map' && input.project === null && fusable(input)) {
          nodes.pop();
          return add((id) => ({
            id,
            kind: 'map',
            inputs: input.inputs,
            filter: input.filter,
            project: p.exprs,
            columns: specs(p.columns),
            ...keepsKey,
          }));
        }
        return add((id) => ({
          id,
          kind: 'map',
          inputs: [input.id],
          filter: null,
          project: p.exprs,
          columns: specs(p.columns),
          ...keepsKey,
        }));
      }
      case 'aggregate': {
        // The view's aggregate (bind-window-close.ts found its window_end key).
        const closes = windowClose !== null && (p === plan || (plan.kind === 'project' && plan.input === p));
        // HOP's windows over shared panes (lower-hop-panes.ts).
        const panes = lowerHopPanes(
          p,
          { view, lower, add, isShared: (q) => shared.has(q) },
          closes ? windowClose : null,
        );
        if (panes !== null) return panes;
        let input = lower(p.input);
        // Map stage: [group keys..., aggregate arguments...] so Reduce reads plain columns.
        const project: ScalarExpr[] = [...p.groupKeys];
        const column = columnAppender(project);
        const aggregates: AggregateSpec[] = p.aggregates.map((a) => {
          const argColumn = a.arg === undefined ? null : column(a.arg);
          const orderBy = a.orderBy?.map((o) => ({
            index: column(o.expr),
            desc: o.desc,
            nullsFirst: o.nullsFirst,
          }));
          const multiset =
            a.fn === 'min' ||
            a.fn === 'max' ||
            a.fn === 'string_agg' ||
            a.fn === 'jsonb_agg' ||
            a.fn === 'jsonb_object_agg' ||
            a.fn === 'array_agg' ||
            a.distinct;
          // MIN/MAX of an input that never retracts: only the extreme can ever be the answer.
          const extreme =
            (a.fn === 'min' || a.fn === 'max') && orderBy === undefined && insertOnlyOf(p.input);
          return {
            fn: a.fn,
            ...(a.delimiter !== undefined ? { delimiter: a.delimiter } : {}),
            ...(orderBy !== undefined ? { orderBy } : {}),
            distinct: a.distinct,
            argColumn,
            argType: a.arg?.type ?? null,
            outputType: a.column.type,
            strategy: extreme ? 'extreme' : multiset ? 'multiset' : 'invertible',
          };
        });
        const mapColumns: ColumnSpec[] = project.map((e, i) => ({
          name: i < p.groupKeys.length ? (p.columns[i]?.name ?? `key${i}`) : `arg${i - p.groupKeys.length}`,
          type: e.type,
        }));
        // The Map stage [group keys..., arguments...] is fused into the Reduce (with a filter-only
        // Map before it): the Reduce computes them per input row, so no projected rows are built.
        let filter: ScalarExpr | null = null;
        if (input.kind === 'map' && input.project === null && fusable(input)) {
          nodes.pop();
          filter = input.filter;
          const mapInput = input.inputs[0];
          input = nodes.find((n) => n.id === mapInput) as DataflowNode;
        }
        const from = input.id;
        const onClose = closes && windowClose !== null;
        // A generated kernel (ops/reduce-kernel.ts) runs the fused Map stage and the fold into the
        // partials; ORDER BY arguments (values with their sort keys) and window-close Reduces (no
        // group state) stay interpreted.
        const generated = !onClose && aggregates.every((a) => a.orderBy === undefined);
        return add((id) => ({
          id,
          kind: 'reduce',
          inputs: [from],
          fused: { filter, project, columns: mapColumns },
          keyCount: p.groupKeys.length,
          aggregates,
          columns: specs(p.columns),
          stateId: `${view}/reduce${id}`,
          ...(generated ? { kernel: 'generated' as const } : {}),
          ...(onClose ? { emitOnClose: windowClose } : {}),
        }));
      }
      case 'join': {
        const left = lower(p.left);
        const right = lower(p.right);
        if (p.temporal === true) {
          if (p.joinKind !== 'inner' && p.joinKind !== 'left') {
            throw new SluiceError('INTERNAL_ERROR', `a temporal ${p.joinKind} join reached lowering`);
          }
          const joinKind = p.joinKind;
          return add((id) => ({
            id,
            kind: 'temporalJoin',
            inputs: [left.id, right.id],
            joinKind,
            leftKey: p.leftKeys,
            rightKey: p.rightKeys,
            residual: p.residual,
            columns: specs(p.columns),
            stateId: `${view}/temporaljoin${id}`,
          }));
        }
        return add((id) => ({
          id,
          kind: 'join',
          inputs: [left.id, right.id],
          joinKind: p.joinKind,
          leftKey: p.leftKeys,
          rightKey: p.rightKeys,
          residual: p.residual,
          columns: specs(p.columns),
          stateId: `${view}/join${id}`,
          shared: joinSides(p, [left, right], keyOf),
          fused: null,
        }));
      }
      case 'union': {
        const inputs = p.inputs.map((i) => lower(i).id);
        return add((id) => ({ id, kind: 'union', inputs, columns: specs(p.columns) }));
      }
      case 'setOp': {
        const left = lower(p.left);
        const right = lower(p.right);
        return add((id) => ({
          id,
          kind: 'setop',
          op: p.op,
          all: p.all,
          inputs: [left.id, right.id],
          columns: specs(p.columns),
          stateId: `${view}/setop${id}`,
        }));
      }
      case 'semiJoin': {
        const left = lower(p.input);
        let right = lower(p.subquery);
        // The subquery's column selection (`SELECT a.id FROM …`) fused into the semi-join's right
        // key: it reads the key columns from the relation's rows (or its filter's, which passes them
        // unchanged), so no projected row is built per change. Plain columns only: an expression
        // could fail on a row, and its error belongs to the Map that reports it.
        let rightKey: Extract<ScalarExpr, { kind: 'col' }>[] | null = null;
        if (
          right.kind === 'map' &&
          right.project !== null &&
          right.project.length === p.keys.length &&
          p.keys.length > 0 &&
          right.project.every((e) => e.kind === 'col') &&
          fusable(right)
        ) {
          const map = right;
          nodes.pop();
          rightKey = map.project as Extract<ScalarExpr, { kind: 'col' }>[];
          const from = nodes.find((n) => n.id === map.inputs[0]) as DataflowNode;
          right =
            map.filter === null
              ? from
              : add((id) => ({
                  id,
                  kind: 'map',
                  inputs: map.inputs,
                  filter: map.filter,
                  project: null,
                  columns: from.columns,
                }));
        }
        const rightId = right.id;
        const rightTable = rightKey === null ? null : semiJoinTable(p, right, rightKey, keyOf);
        return add((id) => ({
          id,
          kind: 'semijoin',
          inputs: [left.id, rightId],
          mode: p.mode,
          leftKey: p.keys,
          ...(rightKey !== null ? { rightKey } : {}),
          ...(rightTable !== null ? { rightTable } : {}),
          correlated: p.correlated,
          columns: specs(p.columns),
          stateId: `${view}/semijoin${id}`,
        }));
      }

      case 'topN': {
        const input = lower(p.input);
        const key = keyOf(p.input);
        return add((id) => ({
          id,
          kind: 'topn',
          inputs: [input.id],
          partitionBy: p.partitionBy,
          orderBy: p.orderBy,
          rank: p.rank,
          emitRank: p.emitRank,
          from: p.from,
          to: p.to,
          columns: specs(p.columns),
          stateId: `${view}/topn${id}`,
          ...(key !== null && key.length > 0 ? { distinctRows: true as const } : {}),
          ...(key !== null && key.length === 1 ? { keyColumn: key[0] as number } : {}),
          ...(insertOnlyOf(p.input) ? { insertOnly: true as const } : {}),
        }));
      }
      case 'window': {
        const input = lower(p.input);
        return add((id) => ({
          id,
          kind: 'window',
          inputs: [input.id],
          partitionBy: p.partitionBy,
          orderBy: p.orderBy,
          functions: p.functions,
          columns: specs(p.columns),
          stateId: `${view}/window${id}`,
        }));
      }
      case 'expand': {
        const input = lower(p.input);
        return add((id) => ({
          id,
          kind: 'flatmap',
          inputs: [input.id],
          generator: p.generator,
          columns: specs(p.columns),
        }));
      }
      case 'temporalFilter': {
        const input = lower(p.input);
        return add((id) => ({
          id,
          kind: 'temporalFilter',
          inputs: [input.id],
          bounds: p.bounds,
          columns: specs(p.columns),
          stateId: `${view}/temporal${id}`,
        }));
      }
      case 'distinct': {
        const input = lower(p.input);
        return add((id) => ({
          id,
          kind: 'distinct',
          inputs: [input.id],
          columns: specs(p.columns),
          stateId: `${view}/distinct${id}`,
        }));
      }
    }
  };
  const top = lower(plan);
  // A Reduce whose groups are the view's keys, in order, already holds one row per key.
  // (A window-close Reduce keeps no groups: its output keeps its own rows.)
  const shares =
    top.kind === 'reduce' &&
    top.emitOnClose === undefined &&
    key !== null &&
    key.length === top.keyCount &&
    key.every((k, i) => k === i);
  const output = add((id) => ({
    id,
    kind: 'output',
    inputs: [top.id],
    key,
    sharesStateOf: shares ? top.id : null,
    columns: specs(plan.columns),
    stateId: `${view}/output`,
  }));
  narrowJoinOutputs(nodes);
  const draft: DataflowPlan = { view, nodes, output: output.id, fingerprint: '' };
  // The print without execution details (a Reduce's generated kernel): they change no state.
  const printed = printDataflow(draft, { kernels: false });
  const floatGroupKeys = nodes.some(
    (n) => n.kind === 'reduce' && n.columns.slice(0, n.keyCount).some((c) => c.type.kind === 'float'),
  );
  return {
    ...draft,
    fingerprint: planFingerprint(printed, {
      floatGroupKeys,
      ordersText: ordersText(nodes),
      likeEndingInEscape: matchesLikeEndingInEscape(nodes),
      charKeys: charKeys(nodes),
    }),
  };
}

function planInputs(p: LogicalPlan): readonly LogicalPlan[] {
  switch (p.kind) {
    case 'scan':
    case 'values':
      return [];
    case 'filter':
    case 'temporalFilter':
    case 'project':
    case 'aggregate':
    case 'distinct':
    case 'topN':
    case 'window':
    case 'expand':
      return [p.input];
    case 'join':
    case 'setOp':
      return [p.left, p.right];
    case 'semiJoin':
      return [p.input, p.subquery];
    case 'union':
      return p.inputs;
  }
}

/** The plan objects reached more than once from the root (iteratively: plans can be deep). */
function sharedPlans(root: LogicalPlan): Set<LogicalPlan> {
  const seen = new Set<LogicalPlan>();
  const shared = new Set<LogicalPlan>();
  const stack = [root];
  for (let p = stack.pop(); p !== undefined; p = stack.pop()) {
    if (seen.has(p)) {
      shared.add(p);
      continue;
    }
    seen.add(p);
    stack.push(...planInputs(p));
  }
  return shared;
}

/**
 * What a join's sides read besides arrangements of their own: a keyed table's rows (`tableSide`),
 * with (an inner join) a shared arrangement on the other side; else a shared arrangement.
 */
function joinSides(
  join: Extract<LogicalPlan, { kind: 'join' }>,
  inputs: readonly [DataflowNode, DataflowNode],
  keyOf: (plan: LogicalPlan) => readonly number[] | null,
): { side: 0 | 1; arrangement: string; table?: true; other?: string } | null {
  const table = tableSide(join, keyOf);
  if (table === null) return sharedSide(join, inputs);
  const other = sharedSide(join, inputs, table.side === 0 ? 1 : 0);
  if (other === null) return table;
  if (join.joinKind === 'inner') return { ...table, other: other.arrangement };
  // An outer join arranges its other side itself (both sides at the new state would need each
  // side's old state to pad by): where that side could be shared instead, sharing it (as without
  // the table) holds less per view — unless the shared side would be the table's own.
  const shared = sharedSide(join, inputs);
  return shared !== null && shared.side === table.side ? table : shared;
}

/**
 * The side of a join that can read a keyed table's own rows (join-table-side.ts): a scan of the
 * table joined on exactly its one-column primary key, of integer or text type on both sides (whose
 * join keys are the table's keys: see `tableKey` there), the right one first. Not for an outer join
 * with a residual (its arranged rows carry per-join match counts).
 */
function tableSide(
  join: Extract<LogicalPlan, { kind: 'join' }>,
  keyOf: (plan: LogicalPlan) => readonly number[] | null,
): { side: 0 | 1; arrangement: string; table: true } | null {
  if (join.residual !== null && join.joinKind !== 'inner') return null;
  for (const side of [1, 0] as const) {
    const input = side === 0 ? join.left : join.right;
    const keys = side === 0 ? join.leftKeys : join.rightKeys;
    const others = side === 0 ? join.rightKeys : join.leftKeys;
    if (input.kind !== 'scan' || input.sourceKind !== 'table' || keys.length !== 1) continue;
    const pk = keyOf(input);
    const key = keys[0] as ScalarExpr;
    if (pk === null || pk.length !== 1 || key.kind !== 'col' || key.index !== pk[0]) continue;
    if (!tableKeyTypes(key.type, (others[0] as ScalarExpr).type)) continue;
    return { side, arrangement: `${input.source}(${key.index})`, table: true };
  }
  return null;
}

/**
 * A semi-join's match counts read from a keyed table's own rows (`rightTable`: `table(column)`):
 * the subquery scans the table selecting exactly its one-column primary key, typed as `tableSide`
 * asks, and not NOT IN (whose groups count rows and NULLs). A key is then held at most once.
 */
function semiJoinTable(
  p: Extract<LogicalPlan, { kind: 'semiJoin' }>,
  right: DataflowNode,
  rightKey: readonly Extract<ScalarExpr, { kind: 'col' }>[],
  keyOf: (plan: LogicalPlan) => readonly number[] | null,
): string | null {
  if (p.mode === 'notIn' || right.kind !== 'input' || rightKey.length !== 1 || p.keys.length !== 1)
    return null;
  const scan = p.subquery.kind === 'project' ? p.subquery.input : p.subquery;
  if (scan.kind !== 'scan' || scan.sourceKind !== 'table' || scan.source !== right.source) return null;
  const pk = keyOf(scan);
  const key = rightKey[0] as Extract<ScalarExpr, { kind: 'col' }>;
  if (pk === null || pk.length !== 1 || key.index !== pk[0]) return null;
  return tableKeyTypes(key.type, (p.keys[0] as ScalarExpr).type) ? `${scan.source}(${key.index})` : null;
}

/** Join keys of these types are a table's keys (join-table-side.ts `tableKey`): integers, or plain text. */
function tableKeyTypes(key: ScalarExpr['type'], other: ScalarExpr['type']): boolean {
  const plainText = (t: ScalarExpr['type']): boolean => t.kind === 'text' && t.fixed !== true;
  return (key.kind === 'int' && other.kind === 'int') || (plainText(key) && plainText(other));
}

/**
 * The side of a join that can probe a shared arrangement: one read straight from a relation whose
 * key is plain columns of it (such a key never fails to evaluate, so every view arranges exactly
 * the same rows), the left one first. Not for an outer join with a residual, whose arranged rows
 * carry per-join match counts.
 */
function sharedSide(
  join: {
    readonly joinKind: string;
    readonly leftKeys: readonly ScalarExpr[];
    readonly rightKeys: readonly ScalarExpr[];
    readonly residual: ScalarExpr | null;
  },
  inputs: readonly [DataflowNode, DataflowNode],
  only: 0 | 1 | null = null,
): { side: 0 | 1; arrangement: string } | null {
  if (join.residual !== null && join.joinKind !== 'inner' && join.joinKind !== 'cross') return null;
  for (const side of only === null ? ([0, 1] as const) : [only]) {
    const input = inputs[side];
    const keys = side === 0 ? join.leftKeys : join.rightKeys;
    if (input.kind !== 'input' || keys.length === 0) continue;
    if (!keys.every((k) => k.kind === 'col')) continue;
    const columns = keys.map((k) => (k as Extract<ScalarExpr, { kind: 'col' }>).index);
    return { side, arrangement: `${input.source}(${columns.join(',')})` };
  }
  return null;
}
