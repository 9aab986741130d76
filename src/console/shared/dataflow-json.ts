// The JSON of GET /v1/views/{name}/dataflow, shared by the route that builds it from the view's
// DataflowPlan (src/console/dataflow-route.ts) and the console page that draws it. Expressions are
// printed as EXPLAIN DATAFLOW prints them (`#1:amount`: column 1 of the node's input, named amount).

export interface NodeCounts {
  readonly rowsIn: number;
  readonly rowsOut: number;
  readonly stateBytes: number;
}

export interface AggregateJson {
  /** e.g. `sum(#2:amount)`, `count(*)`, `count(distinct #1:seller_id)`: over the Reduce's input row. */
  readonly text: string;
  /** invertible: O(1) state per group; multiset: value → count per group; extreme: one value per group. */
  readonly strategy: 'invertible' | 'multiset' | 'extreme';
}

/** The Map stage lowering folded into a Reduce: evaluated per input row, no projected rows built. */
export interface FusedMapJson {
  readonly filter: string | null;
  /** The group key expressions, over the Reduce's input. */
  readonly keys: readonly string[];
  /** The aggregate arguments, over the Reduce's input. */
  readonly arguments: readonly string[];
}

interface NodeBase {
  readonly id: number;
  /** The operator as EXPLAIN prints it: "Input", "Map", "Reduce+Merge", "Join", … */
  readonly title: string;
  /** Ids of the nodes feeding this one; a Join's are [left, right]. */
  readonly inputs: readonly number[];
  /** Output column names. */
  readonly columns: readonly string[];
  /** Holds state of its own (a sharing Output does not: see sharesStateWith). */
  readonly stateful: boolean;
  /** Stable state id of the state the node holds, null if it holds none. */
  readonly state: string | null;
  /** Cumulative counts since the view was created (or the server started); null if not tracked. */
  readonly stats: NodeCounts | null;
}

export type DataflowNodeJson =
  | (NodeBase & { readonly kind: 'input'; readonly source: string; readonly sourceKind: 'table' | 'view' })
  | (NodeBase & { readonly kind: 'values' })
  | (NodeBase & {
      readonly kind: 'map';
      readonly filter: string | null;
      readonly project: readonly string[] | null;
    })
  | (NodeBase & {
      readonly kind: 'reduce';
      /** Group key column names; empty: one group. */
      readonly key: readonly string[];
      readonly aggregates: readonly AggregateJson[];
      readonly fused: FusedMapJson | null;
    })
  | (NodeBase & { readonly kind: 'distinct' })
  | (NodeBase & { readonly kind: 'union' })
  | (NodeBase & {
      readonly kind: 'setop';
      /** e.g. `intersect all`. */
      readonly op: string;
    })
  /** `text`: the ranking, partition, order and kept range, as EXPLAIN DATAFLOW prints them. */
  | (NodeBase & { readonly kind: 'topn'; readonly text: string })
  /** `text`: the generator (HOP's windows), as EXPLAIN DATAFLOW prints it. */
  | (NodeBase & { readonly kind: 'flatmap'; readonly text: string })
  /** `text`: the partition, order and functions, as EXPLAIN DATAFLOW prints them. */
  | (NodeBase & { readonly kind: 'window'; readonly text: string })
  /** `text`: the bounds, as EXPLAIN DATAFLOW prints them. */
  | (NodeBase & { readonly kind: 'temporalFilter'; readonly text: string })
  /** `text`: the join kind, key and residual of a temporal (lookup) join. */
  | (NodeBase & { readonly kind: 'temporalJoin'; readonly text: string })
  | (NodeBase & {
      readonly kind: 'semijoin';
      /** `exists`, `not exists`, `in` or `not in`. */
      readonly mode: string;
      /** Key pairs as EXPLAIN prints them: `#0:id = right.#0` (each side over its own input). */
      readonly on: readonly string[];
    })
  | (NodeBase & {
      readonly kind: 'join';
      readonly joinKind: 'inner' | 'left' | 'right' | 'full';
      /** Equi-key pairs, as EXPLAIN prints them: `#0:id = right.#1:order_id` (each side over its own
       * input). Empty: no equi key, a cross product. */
      readonly on: readonly string[];
      /** The rest of the condition, over the left columns followed by the right ones. */
      readonly residual: string | null;
      /** The Map stage over the join, run inside it on each row it emits; null: none. */
      readonly fused: { readonly filter: string | null; readonly project: readonly string[] | null } | null;
    })
  | (NodeBase & {
      readonly kind: 'output';
      /** Unique key column names; null: a multiset. */
      readonly key: readonly string[] | null;
      /** The Reduce whose groups are the view's rows: the Output reads its state, holding no copy. */
      readonly sharesStateWith: number | null;
    });

export interface DataflowJson {
  readonly view: string;
  /** The epoch the counts reflect. */
  readonly epoch: number;
  /** Hash of the printed plan (checkpoints record it). */
  readonly fingerprint: string;
  readonly output: number;
  /** Inputs first (a node's inputs come before it), the output last. */
  readonly nodes: readonly DataflowNodeJson[];
  /** The view's EXPLAIN DATAFLOW print, for display. */
  readonly text: string;
}
