// The DataflowPlan: how a view is maintained incrementally, as plain JSON. Lowering makes every
// decision (which nodes hold state, each aggregate's strategy, the output key); rendering only
// instantiates operators. State ids derive from the view name and the node's place in the plan.
// Its text (EXPLAIN DATAFLOW, the fingerprint) is dataflow-print.ts.
import type { SqlType } from '../common/types.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { RankKind, SortKey } from '../common/top-n.ts';
import type { WindowFn } from '../common/window.ts';
import type { AggregateFn } from '../common/aggregate-fn.ts';
import type { ExpandGenerator } from '../common/expand.ts';
import type { TemporalBound } from '../common/temporal-bound.ts';

/**
 * invertible: O(1) state per group (counts, sums); multiset: a value → count multiset per group;
 * extreme: MIN/MAX over an insert-only input, the extreme value alone (ops/extreme-aggregate.ts).
 */
export type AggregateStrategy = 'invertible' | 'multiset' | 'extreme';

export interface AggregateSpec {
  readonly fn: AggregateFn;
  readonly distinct: boolean;
  /** Input column holding the argument; null for COUNT(*). */
  readonly argColumn: number | null;
  readonly argType: SqlType | null;
  readonly outputType: SqlType;
  /** STRING_AGG: the delimiter (a constant). */
  readonly delimiter?: string;
  /**
   * `agg(x ORDER BY …)`: the order keys, as columns of the Reduce's Map stage (ops/ordered-aggregate.ts:
   * a multiset of (value, keys) per group kept in this order).
   */
  readonly orderBy?: readonly SortKey[];
  /** How the aggregate keeps its state (see AggregateStrategy). */
  readonly strategy: AggregateStrategy;
}

export type JoinKind = 'inner' | 'left' | 'right' | 'full';

export type SetOpKind = 'union' | 'intersect' | 'except';

/** Which predicate a semi-join computes (see the `semijoin` node). */
export type SemiJoinMode = 'exists' | 'notExists' | 'in' | 'notIn';

/** Which watermark closes which group key (a window_end) of an EMIT ON WINDOW CLOSE Reduce. */
export interface WindowClose {
  readonly table: string;
  readonly keyIndex: number;
  /** µs a window stays open after the watermark reaches its end (ALLOWED LATENESS; absent: 0). */
  readonly allowedLateness?: number;
}

export interface PaneClose {
  readonly table: string;
  readonly keyIndex: number;
  readonly slideMicros: number;
  readonly sizeMicros: number;
  /** The windows' ALLOWED LATENESS (µs; absent: 0): a pane outlives its last window's end by it. */
  readonly allowedLateness?: number;
}

export interface ColumnSpec {
  readonly name: string;
  readonly type: SqlType;
}

export type DataflowNode =
  | {
      readonly id: number;
      readonly kind: 'input';
      readonly source: string;
      readonly sourceKind: 'table' | 'view';
      readonly columns: readonly ColumnSpec[];
    }
  /** One empty row, for SELECT without FROM (ad-hoc queries only). */
  | { readonly id: number; readonly kind: 'values'; readonly columns: readonly ColumnSpec[] }
  /** Map stage: per-row filter and projection, stateless. */
  | {
      readonly id: number;
      readonly kind: 'map';
      readonly inputs: readonly [number];
      readonly filter: ScalarExpr | null;
      readonly project: readonly ScalarExpr[] | null;
      readonly columns: readonly ColumnSpec[];
      /**
       * The projection keeps the input's unique key (as plain columns), at these output positions: a
       * consolidated batch where no key is both deleted and inserted then projects to distinct rows,
       * still consolidated.
       */
      readonly keepsKey?: readonly number[];
    }
  /**
   * Reduce + Merge over rows whose first `keyCount` columns are the group key and the rest the
   * aggregate arguments. `fused`: lowering folded the Map stage that computes those columns into
   * this node (the Reduce evaluates it per input row and builds no projected rows); `inputs` is then
   * the Map's input, and `fused.columns` what the Map would have produced.
   */
  | {
      readonly id: number;
      readonly kind: 'reduce';
      readonly inputs: readonly [number];
      readonly fused: {
        readonly filter: ScalarExpr | null;
        readonly project: readonly ScalarExpr[];
        readonly columns: readonly ColumnSpec[];
      } | null;
      readonly keyCount: number;
      readonly aggregates: readonly AggregateSpec[];
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
      /**
       * 'generated': the fused Map stage and the fold into the partials run as code generated for this
       * node (ops/reduce-kernel.ts) rather than interpreted; results are the same either way, so the
       * plan's fingerprint leaves it out. Absent: interpreted (ORDER BY arguments, window close, HOP panes).
       */
      readonly kernel?: 'generated';
      /**
       * EMIT ON WINDOW CLOSE: input rows (as [keys..., arguments...]) are held by their window end (group key `keyIndex`) and
       * reduced once, when `table`'s watermark reaches it (ops/window-close-op.ts); no group state.
       */
      readonly emitOnClose?: WindowClose;
      /**
       * HOP's panes under EMIT ON WINDOW CLOSE (lower-hop-panes.ts): group key `keyIndex` is a pane's
       * start; once `table`'s watermark reaches start + `sizeMicros` (its last window's end) the group
       * is dropped, and a change to a pane whose windows all closed is not applied (ops/pane-close-op.ts).
       */
      readonly closePanes?: PaneClose;
    }
  | {
      readonly id: number;
      readonly kind: 'distinct';
      readonly inputs: readonly [number];
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
    }
  /**
   * Binary join by the delta rule: each input arranged by its key (`leftKey` over the left input's
   * columns, `rightKey` over the right's); no key at all is a cross product. `residual` is the rest
   * of the join condition, over the left columns followed by the right ones (the output row).
   */
  | {
      readonly id: number;
      readonly kind: 'join';
      readonly inputs: readonly [number, number];
      readonly joinKind: JoinKind;
      readonly leftKey: readonly ScalarExpr[];
      readonly rightKey: readonly ScalarExpr[];
      readonly residual: ScalarExpr | null;
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
      /**
       * A side that reads a relation directly, keyed by its columns, probes the arrangement of that
       * relation by that key which every view shares (`arrangement` names it), instead of one of
       * its own; null when neither side qualifies (a side computed before the join, an expression
       * key, or an outer join whose residual needs per-row match counts). With `table`, the side is
       * a keyed table joined on exactly its primary key: the join reads the table's own rows
       * (join-table-side.ts), arranged by nobody; in an inner join the other side may then probe a
       * shared arrangement too (`other` names it): both sides are at the epoch's new state.
       */
      readonly shared: {
        readonly side: 0 | 1;
        readonly arrangement: string;
        readonly table?: true;
        readonly other?: string;
      } | null;
      /**
       * The Map stage over the join, fused into it: each joined (or padded) row, laid out as
       * `joined` (left columns, then right), is filtered and projected as it is emitted, so no
       * joined row is built for a projection that only picks columns; `columns` are the projected
       * ones. null: the join emits its joined rows (`columns`).
       */
      readonly fused: {
        readonly filter: ScalarExpr | null;
        readonly project: readonly ScalarExpr[] | null;
        readonly joined: readonly ColumnSpec[];
        /**
         * The rows go out column by column (a batch of value arrays, no array per row; a step of a
         * few input rows still emits rows): set when the only consumer is a Reduce, which reads its
         * input by column (lower-join-columns.ts).
         */
        readonly byColumn?: true;
      } | null;
    }
  /**
   * A processing-time temporal join (`JOIN r FOR SYSTEM_TIME AS OF PROCTIME()`,
   * ops/temporal-join-op.ts): the right input arranged by `rightKey`; each left row, as it arrives,
   * is joined with the right rows then present (after the epoch's right changes) and kept with the
   * rows it met, so its retraction retracts exactly what it produced; right changes emit nothing.
   * `residual` is over the joined row (left columns, then right), as for Join.
   */
  | {
      readonly id: number;
      readonly kind: 'temporalJoin';
      readonly inputs: readonly [number, number];
      readonly joinKind: 'inner' | 'left';
      readonly leftKey: readonly ScalarExpr[];
      readonly rightKey: readonly ScalarExpr[];
      readonly residual: ScalarExpr | null;
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
    }
  /**
   * FlatMap (src/ivm/ops/flat-map-op.ts): each input row with its weight, once per tuple its
   * generator yields, the tuple appended (HOP's windows). Stateless: a retraction yields the same
   * tuples, so it retracts exactly the rows its insertion produced.
   */
  | {
      readonly id: number;
      readonly kind: 'flatmap';
      readonly inputs: readonly [number];
      readonly generator: ExpandGenerator;
      readonly columns: readonly ColumnSpec[];
    }
  /**
   * A temporal filter: an input row passes while the epoch's clock is inside every bound (an
   * interval [enter, leave) per row); rows waiting to enter or to leave are kept by row, indexed by
   * the clock value at which they next change, so a tick touches only the rows whose bound it crosses.
   */
  | {
      readonly id: number;
      readonly kind: 'temporalFilter';
      readonly inputs: readonly [number];
      readonly bounds: readonly TemporalBound[];
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
    }
  /** UNION ALL: the inputs' deltas concatenated (and consolidated), stateless. */
  | {
      readonly id: number;
      readonly kind: 'union';
      readonly inputs: readonly number[];
      readonly columns: readonly ColumnSpec[];
    }
  /**
   * UNION / INTERSECT / EXCEPT [ALL] of two inputs: counts each distinct row on each side (row →
   * [left count, right count]) and emits the change of the row's output multiplicity only.
   */
  | {
      readonly id: number;
      readonly kind: 'setop';
      readonly op: SetOpKind;
      readonly all: boolean;
      readonly inputs: readonly [number, number];
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
    }
  /**
   * A predicate subquery (`[NOT] IN`, `[NOT] EXISTS`): passes left rows, each once, by their key's
   * matches in the right input, whose first columns are the key (`leftKey` over the left row: the
   * `correlated` correlation keys, then for IN the operand) — or, with `rightKey`, whose key is those
   * plain columns of it (the subquery's column selection fused in: the right input is then the
   * relation itself, or its filter, and no projected row is built). Left rows are arranged by key;
   * the right side is kept as a match count per key (and for NOT IN per correlation group: its row
   * count and its NULL count), never as rows.
   */
  | {
      readonly id: number;
      readonly kind: 'semijoin';
      readonly inputs: readonly [number, number];
      readonly mode: SemiJoinMode;
      readonly leftKey: readonly ScalarExpr[];
      /** The right input's key columns, one per `leftKey` entry; absent: its first columns. */
      readonly rightKey?: readonly Extract<ScalarExpr, { kind: 'col' }>[];
      /**
       * The right input is a keyed table selected by its one-column primary key (`table(column)`):
       * a key's match count is whether the table holds it, read from the table's own rows, so no
       * count is kept.
       */
      readonly rightTable?: string;
      readonly correlated: number;
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
    }
  /**
   * Top-N per partition (src/ivm/ops/topn-op.ts): every input row kept once, in its partition's
   * rows in ORDER BY order; emits the change of the rows whose rank r has from < r ≤ to (and, with
   * `emitRank`, the rank as a last column). Holds every row of a partition, since a retraction
   * inside the top brings in the next row — unless `insertOnly`.
   */
  | {
      readonly id: number;
      readonly kind: 'topn';
      readonly inputs: readonly [number];
      readonly partitionBy: readonly number[];
      readonly orderBy: readonly SortKey[];
      readonly rank: RankKind;
      readonly emitRank: boolean;
      readonly from: number;
      readonly to: number | null;
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
      /**
       * The input has a unique key, so it never holds one row twice: an insert needs no look for a
       * copy of itself (a row past the top goes straight to its partition's unordered tail).
       */
      readonly distinctRows?: true;
      /**
       * With `distinctRows`, the input's key when it is one column: the operator notes where each
       * row sits in its partition's unordered tail by this value, so a delete finds it without a
       * scan. Not printed: "rows distinct by the input key" says it (and the fingerprint is unchanged).
       */
      readonly keyColumn?: number;
      /**
       * The input never retracts (src/planner/plan-insert-only.ts): a partition keeps only the rows
       * that can still rank inside the kept range (with `to` set); a retraction is an internal error.
       */
      readonly insertOnly?: true;
    }
  /**
   * Window functions (src/ivm/ops/window-op.ts): every input row arranged by partition and kept in
   * order with its window values; a change recomputes and re-emits only the rows whose values it
   * can change (from the change on for ranks and running frames, n rows for LAG/LEAD/ROWS n).
   */
  | {
      readonly id: number;
      readonly kind: 'window';
      readonly inputs: readonly [number];
      readonly partitionBy: readonly number[];
      readonly orderBy: readonly SortKey[];
      readonly functions: readonly WindowFn[];
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
    }
  /**
   * Integrates the view's deltas into its arrangement (the view state) and emits its changelog.
   * `sharesStateOf`: the Reduce feeding it, whose groups are the view's keys in order: the output
   * reads that state instead of holding a copy of every row.
   */
  | {
      readonly id: number;
      readonly kind: 'output';
      readonly inputs: readonly [number];
      readonly key: readonly number[] | null;
      readonly sharesStateOf: number | null;
      readonly columns: readonly ColumnSpec[];
      readonly stateId: string;
    };

export interface DataflowPlan {
  readonly view: string;
  /** Topologically ordered: a node's inputs come before it. */
  readonly nodes: readonly DataflowNode[];
  readonly output: number;
  /** Hash of the printed plan; checkpoints record it. */
  readonly fingerprint: string;
}
