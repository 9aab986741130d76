// GET /v1/views/{name}/dataflow: a view's DataflowPlan as a graph (read from its EXPLAIN DATAFLOW
// print) with live per-operator counts, for the console's dataflow drawing. Read-only; one
// synchronous block, so plan, counts and epoch belong to the same epoch.
import type { FastifyInstance } from 'fastify';
import type { SluiceRuntime } from '../server/runtime.ts';
import type { DataflowJson, DataflowNodeJson } from './shared/dataflow-json.ts';
import { parseDataflowText } from './shared/dataflow-text.ts';

export function dataflowOf(runtime: SluiceRuntime, view: string): DataflowJson {
  const text = runtime.engine.explainView(view);
  const stats = new Map(runtime.engine.viewNodeStats(view).map((s) => [s.id, s]));
  const graph = parseDataflowText(text);
  // Fusion and state sharing are decided by lowering and recorded in the plan: read, not re-derived.
  const plan = new Map(runtime.engine.viewPlan(view).nodes.map((n) => [n.id, n]));
  const nodes = graph.nodes.map((n): DataflowNodeJson => {
    const s = stats.get(n.id);
    const planned = plan.get(n.id);
    const fusedInto = null;
    const sharesStateWith = planned?.kind === 'output' ? planned.sharesStateOf : null;
    return {
      ...n,
      stats: s === undefined ? null : { rowsIn: s.rowsIn, rowsOut: s.rowsOut, stateBytes: s.stateBytes },
      fusedInto,
      sharesStateWith,
    };
  });
  return {
    view: graph.view || view,
    epoch: runtime.committedEpoch,
    fingerprint: graph.fingerprint,
    output: graph.output,
    nodes,
    text,
  };
}

const counts = {
  type: ['object', 'null'],
  properties: {
    rowsIn: { type: 'integer', description: 'Delta rows received from inputs' },
    rowsOut: { type: 'integer', description: 'Delta rows emitted' },
    stateBytes: { type: 'integer', description: 'Approximate operator state size' },
  },
} as const;

export const dataflowRouteSchema = {
  tags: ['views'],
  summary: "A view's dataflow (MRM operators, keys, aggregate strategies) with live per-operator counts",
  description:
    "The graph is read from the view's EXPLAIN DATAFLOW print (also returned as `text`). Counts are cumulative since the view was created or the server started.",
  params: {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string', description: 'Materialized view name' } },
  },
  response: {
    200: {
      type: 'object',
      required: ['view', 'epoch', 'nodes', 'text'],
      properties: {
        view: { type: 'string' },
        epoch: { type: 'integer', description: 'The epoch the counts reflect' },
        fingerprint: { type: ['string', 'null'], description: 'Hash of the printed plan' },
        output: { type: ['integer', 'null'], description: 'Id of the output node' },
        text: { type: 'string', description: 'EXPLAIN DATAFLOW of the view' },
        nodes: {
          type: 'array',
          description: 'Inputs first, the output last',
          items: {
            type: 'object',
            required: ['id', 'kind', 'title', 'inputs', 'stateful', 'text'],
            properties: {
              id: { type: 'integer' },
              kind: { type: 'string', description: 'input | values | map | reduce | distinct | output' },
              title: { type: 'string', description: 'The operator as printed, e.g. "Reduce+Merge"' },
              inputs: {
                type: 'array',
                items: { type: 'integer' },
                description: 'Ids of the nodes feeding this one',
              },
              source: { type: 'string', description: 'Input nodes: the table or view read' },
              sourceKind: { type: 'string', description: 'Input nodes: "table" or "view"' },
              key: {
                type: 'array',
                items: { type: 'string' },
                description: 'Group key (Reduce) or unique key (Output)',
              },
              aggregates: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    text: { type: 'string' },
                    strategy: {
                      type: ['string', 'null'],
                      description: 'invertible (O(1) state per group) or multiset (value → count per group)',
                    },
                  },
                },
              },
              filter: { type: 'string' },
              project: { type: 'array', items: { type: 'string' } },
              state: { type: 'string', description: 'Stable state id of a stateful node' },
              columns: { type: 'array', items: { type: 'string' } },
              stateful: { type: 'boolean' },
              text: { type: 'string', description: 'The printed line' },
              stats: counts,
              sharesStateWith: {
                type: ['integer', 'null'],
                description: 'The Reduce whose state this Output reads (no copy of its own), if any',
              },
              fusedInto: {
                type: ['integer', 'null'],
                description: 'The Reduce this Map runs inside, if fused',
              },
            },
          },
        },
      },
    },
  },
} as const;

export function registerDataflowRoute(app: FastifyInstance, runtime: () => SluiceRuntime): void {
  app.get<{ Params: { name: string } }>(
    '/v1/views/:name/dataflow',
    { schema: dataflowRouteSchema },
    async (request) => dataflowOf(runtime(), request.params.name),
  );
}
