// GET /v1/views/{name}/dataflow: a view's DataflowPlan (the JSON lowering made, which the runtime
// instantiates) as the console's graph, with live per-operator counts. Read-only; one synchronous
// block, so plan, counts and epoch belong to the same epoch.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConsoleRuntime } from './console-runtime.ts';
import type { NodeStats } from '../exec/view-runtime.ts';
import type { AggregateJson, DataflowJson, DataflowNodeJson, NodeCounts } from './shared/dataflow-json.ts';
import { printScalar } from '../common/scalar-expr.ts';
import { printTopN } from '../common/top-n.ts';
import { printWindow } from '../common/window.ts';
import { printExpand } from '../common/expand.ts';
import { printTemporalBound } from '../common/temporal-bound.ts';
import type { DataflowNode, DataflowPlan } from '../ivm/dataflow-plan.ts';
import { semiJoinOn } from '../ivm/dataflow-print.ts';

const TITLES: Record<DataflowNode['kind'], string> = {
  input: 'Input',
  values: 'Values',
  map: 'Map',
  flatmap: 'FlatMap',
  reduce: 'Reduce+Merge',
  distinct: 'Distinct',
  join: 'Join',
  union: 'Union all',
  setop: 'Set operation',
  semijoin: 'Semi-join',
  topn: 'Top-N',
  window: 'Window',
  temporalFilter: 'Temporal filter',
  temporalJoin: 'Temporal join',
  output: 'Output',
};

function nodeJson(
  n: DataflowNode,
  byId: ReadonlyMap<number, DataflowNode>,
  stats: NodeCounts | null,
): DataflowNodeJson {
  const base = {
    id: n.id,
    title: TITLES[n.kind],
    inputs: n.kind === 'input' || n.kind === 'values' ? [] : [...n.inputs],
    columns: n.columns.map((c) => c.name),
    stats,
  };
  switch (n.kind) {
    case 'input':
      return {
        ...base,
        kind: 'input',
        source: n.source,
        sourceKind: n.sourceKind,
        stateful: false,
        state: null,
      };
    case 'values':
      return { ...base, kind: 'values', stateful: false, state: null };
    case 'map':
      return {
        ...base,
        kind: 'map',
        filter: n.filter === null ? null : printScalar(n.filter),
        project: n.project === null ? null : n.project.map(printScalar),
        stateful: false,
        state: null,
      };
    case 'reduce': {
      // Aggregate arguments over the Reduce's input row: the fused Map's expression, or the column.
      const inputColumns = byId.get(n.inputs[0])?.columns ?? [];
      const argument = (column: number): string => {
        const fused = n.fused?.project[column];
        if (fused !== undefined) return printScalar(fused);
        return `#${column}:${inputColumns[column]?.name ?? '?'}`;
      };
      const aggregates = n.aggregates.map((a): AggregateJson => ({
        text: `${a.fn === 'count_star' ? 'count' : a.fn}(${a.argColumn === null ? '*' : `${a.distinct ? 'distinct ' : ''}${argument(a.argColumn)}`})`,
        strategy: a.strategy,
      }));
      return {
        ...base,
        kind: 'reduce',
        key: n.columns.slice(0, n.keyCount).map((c) => c.name),
        aggregates,
        fused:
          n.fused === null
            ? null
            : {
                filter: n.fused.filter === null ? null : printScalar(n.fused.filter),
                keys: n.fused.project.slice(0, n.keyCount).map(printScalar),
                arguments: n.fused.project.slice(n.keyCount).map(printScalar),
              },
        stateful: true,
        state: n.stateId,
      };
    }
    case 'distinct':
      return { ...base, kind: 'distinct', stateful: true, state: n.stateId };
    case 'union':
      return { ...base, kind: 'union', stateful: false, state: null };
    case 'setop':
      return {
        ...base,
        kind: 'setop',
        op: `${n.op}${n.all ? ' all' : ''}`,
        stateful: true,
        state: n.stateId,
      };
    case 'semijoin':
      return {
        ...base,
        kind: 'semijoin',
        mode: { exists: 'exists', notExists: 'not exists', in: 'in', notIn: 'not in' }[n.mode],
        on: semiJoinOn(n),
        stateful: true,
        state: n.stateId,
      };

    case 'flatmap':
      return { ...base, kind: 'flatmap', text: printExpand(n.generator), stateful: false, state: null };
    case 'topn':
      return {
        ...base,
        kind: 'topn',
        text: printTopN(n, byId.get(n.inputs[0])?.columns ?? []),
        stateful: true,
        state: n.stateId,
      };
    case 'temporalFilter':
      return {
        ...base,
        kind: 'temporalFilter',
        text: n.bounds.map(printTemporalBound).join(' AND '),
        stateful: true,
        state: n.stateId,
      };
    case 'window':
      return {
        ...base,
        kind: 'window',
        text: printWindow(n, byId.get(n.inputs[0])?.columns ?? []),
        stateful: true,
        state: n.stateId,
      };
    case 'join':
      return {
        ...base,
        kind: 'join',
        joinKind: n.joinKind,
        on: n.leftKey.map((k, i) => {
          const right = n.rightKey[i];
          return `${printScalar(k)} = right.${right === undefined ? '?' : printScalar(right)}`;
        }),
        residual: n.residual === null ? null : printScalar(n.residual),
        fused:
          n.fused === null
            ? null
            : {
                filter: n.fused.filter === null ? null : printScalar(n.fused.filter),
                project: n.fused.project === null ? null : n.fused.project.map(printScalar),
              },
        stateful: true,
        state: n.stateId,
      };
    case 'temporalJoin': {
      const on = n.leftKey.map((k, i) => {
        const right = n.rightKey[i];
        return `${printScalar(k)} = right.${right === undefined ? '?' : printScalar(right)}`;
      });
      const residual = n.residual === null ? '' : `; residual ${printScalar(n.residual)}`;
      return {
        ...base,
        kind: 'temporalJoin',
        text: `${n.joinKind} join, right as of each left row's arrival; on ${on.join(', ')}${residual}`,
        stateful: true,
        state: n.stateId,
      };
    }
    case 'output': {
      const shares = n.sharesStateOf;
      return {
        ...base,
        kind: 'output',
        key: n.key === null ? null : n.key.map((k) => n.columns[k]?.name ?? `#${k}`),
        sharesStateWith: shares,
        stateful: shares === null,
        state: shares === null ? n.stateId : null,
      };
    }
  }
}

/** The console's graph of a plan: its nodes as lowered, in plan order (inputs first). */
export function dataflowJson(
  plan: DataflowPlan,
  stats: readonly NodeStats[],
  text: string,
  epoch: number,
): DataflowJson {
  const byId = new Map(plan.nodes.map((n) => [n.id, n]));
  const counts = new Map(stats.map((s) => [s.id, s]));
  return {
    view: plan.view,
    epoch,
    fingerprint: plan.fingerprint,
    output: plan.output,
    nodes: plan.nodes.map((n) => {
      const s = counts.get(n.id);
      return nodeJson(
        n,
        byId,
        s === undefined ? null : { rowsIn: s.rowsIn, rowsOut: s.rowsOut, stateBytes: s.stateBytes },
      );
    }),
    text,
  };
}

export function dataflowOf(runtime: ConsoleRuntime, view: string): DataflowJson {
  const engine = runtime.engine;
  return dataflowJson(
    engine.viewPlan(view),
    engine.viewNodeStats(view),
    engine.explainView(view),
    runtime.committedEpoch,
  );
}

const counts = {
  type: ['object', 'null'],
  description: 'Cumulative counts since the view was created or the server started; null if not tracked',
  properties: {
    rowsIn: { type: 'integer', description: 'Delta rows received from inputs' },
    rowsOut: { type: 'integer', description: 'Delta rows emitted' },
    stateBytes: { type: 'integer', description: 'Approximate operator state size' },
  },
} as const;

const strings = { type: 'array', items: { type: 'string' } } as const;

export const dataflowRouteSchema = {
  tags: ['views'],
  summary:
    "A view's dataflow (MRM operators, joins, keys, aggregate strategies) with live per-operator counts",
  description:
    "The graph is the view's DataflowPlan as lowered (what the runtime instantiates); `text` is its EXPLAIN DATAFLOW print. Expressions are printed as EXPLAIN prints them (`#1:amount`: column 1 of the node's input, named amount). Counts are cumulative since the view was created or the server started.",
  params: {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string', description: 'Materialized view name' } },
  },
  response: {
    200: {
      type: 'object',
      required: ['view', 'epoch', 'fingerprint', 'output', 'nodes', 'text'],
      properties: {
        view: { type: 'string' },
        epoch: { type: 'integer', description: 'The epoch the counts reflect' },
        fingerprint: { type: 'string', description: 'Hash of the printed plan' },
        output: { type: 'integer', description: 'Id of the output node' },
        text: { type: 'string', description: 'EXPLAIN DATAFLOW of the view' },
        nodes: {
          type: 'array',
          description: "Inputs first (a node's inputs come before it), the output last",
          items: {
            type: 'object',
            required: ['id', 'kind', 'title', 'inputs', 'columns', 'stateful', 'state', 'stats'],
            properties: {
              id: { type: 'integer' },
              kind: {
                type: 'string',
                enum: [
                  'input',
                  'values',
                  'map',
                  'reduce',
                  'distinct',
                  'join',
                  'union',
                  'setop',
                  'semijoin',
                  'topn',
                  'window',
                  'output',
                ],
              },
              title: { type: 'string', description: 'The operator as printed, e.g. "Reduce+Merge"' },
              inputs: {
                type: 'array',
                items: { type: 'integer' },
                description: 'Ids of the nodes feeding this one; a Join has two: [left, right]',
              },
              columns: { ...strings, description: 'Output column names' },
              stateful: { type: 'boolean', description: 'Holds state of its own' },
              state: { type: ['string', 'null'], description: 'Stable state id of the state it holds' },
              stats: counts,
              source: { type: 'string', description: 'Input: the table or view read' },
              sourceKind: { type: 'string', enum: ['table', 'view'], description: 'Input' },
              filter: { type: ['string', 'null'], description: 'Map: the row filter' },
              text: { type: 'string', description: 'Top-N: ranking, partition, order and kept range' },
              project: { type: ['array', 'null'], items: { type: 'string' }, description: 'Map' },
              key: {
                type: ['array', 'null'],
                items: { type: 'string' },
                description:
                  'Reduce: group key names (empty: one group). Output: unique key (null: multiset)',
              },
              aggregates: {
                type: 'array',
                description: 'Reduce',
                items: {
                  type: 'object',
                  required: ['text', 'strategy'],
                  properties: {
                    text: { type: 'string', description: 'e.g. sum(#2:amount), over the input row' },
                    strategy: {
                      type: 'string',
                      enum: ['invertible', 'multiset', 'extreme'],
                      description:
                        'invertible (O(1) state per group), multiset (value → count per group) or extreme (MIN/MAX over an insert-only input: one value per group)',
                    },
                  },
                },
              },
              fused: {
                type: ['object', 'null'],
                description:
                  'The Map stage lowering folded into the node. Reduce: run per input row, no projected rows (filter, keys, arguments). Join: run on each row it emits, so a projection that picks columns builds no joined row (filter, project)',
                required: ['filter'],
                properties: {
                  filter: { type: ['string', 'null'] },
                  keys: { ...strings, description: 'Reduce: group key expressions over the input row' },
                  arguments: { ...strings, description: 'Reduce: aggregate arguments over the input row' },
                  project: {
                    type: ['array', 'null'],
                    items: { type: 'string' },
                    description: 'Join: the projection over the joined row (left columns, then right)',
                  },
                },
              },
              joinKind: { type: 'string', enum: ['inner', 'left', 'right', 'full'], description: 'Join' },
              op: { type: 'string', description: 'Set operation, e.g. "intersect all"' },
              mode: { type: 'string', description: 'Semi-join: "exists", "not exists", "in" or "not in"' },
              on: {
                ...strings,
                description:
                  'Join: equi-key pairs as EXPLAIN prints them ("#2:customer_id = right.#0:id", each side over its own input); empty: a cross product. Semi-join: its key pairs ("#1:auction = right.#0")',
              },
              residual: {
                type: ['string', 'null'],
                description: 'Join: the rest of the condition, over left then right columns',
              },
              sharesStateWith: {
                type: ['integer', 'null'],
                description: 'Output: the Reduce whose state it reads (no copy of its own), if any',
              },
            },
          },
        },
      },
    },
  },
} as const;

export function registerDataflowRoute(
  app: FastifyInstance,
  runtime: (request: FastifyRequest) => ConsoleRuntime,
): void {
  app.get<{ Params: { name: string } }>(
    '/v1/views/:name/dataflow',
    { schema: dataflowRouteSchema },
    async (request) => dataflowOf(runtime(request), request.params.name),
  );
}
