// The JSON of GET /v1/views/{name}/dataflow, shared by the route that builds it and the console
// page that draws it.
import type { GraphNode } from './dataflow-text.ts';

export interface NodeCounts {
  readonly rowsIn: number;
  readonly rowsOut: number;
  readonly stateBytes: number;
}

export type DataflowNodeJson = GraphNode & {
  /** Cumulative counts since the view was created (or the server started); null if not tracked. */
  readonly stats: NodeCounts | null;
  /** A projection the runtime runs inside the Reduce it feeds (its own counts stay at zero). */
  readonly fusedInto: number | null;
  /** An Output keyed like the Reduce feeding it reads that Reduce's state instead of a copy. */
  readonly sharesStateWith: number | null;
};

export interface DataflowJson {
  readonly view: string;
  readonly epoch: number;
  readonly fingerprint: string | null;
  readonly output: number | null;
  readonly nodes: readonly DataflowNodeJson[];
  /** The EXPLAIN DATAFLOW text the graph was read from. */
  readonly text: string;
}
