// An ad-hoc SELECT, computed once over its inputs' rows captured at one epoch, in slices that can stop
// at a deadline and resume (the server yields to other requests and epochs between them). A plan
// without state (filters and projections) streams: LIMIT without ORDER BY stops as soon as it has
// its rows, ORDER BY ... LIMIT k keeps only the best k (a bounded heap), and a result past the
// limits fails as soon as it is known to (RESULT_TOO_LARGE). Plans with aggregates or DISTINCT run
// the view operators over the slices, then order and cut their (bounded) output the same way.
import { SluiceError, knownErrorCode } from '../common/errors.ts';
import type { DataflowNode, DataflowPlan } from '../ivm/dataflow-plan.ts';
import type { RowErrorSink } from '../ivm/operator.ts';
import { MapOp } from '../ivm/ops/map-op.ts';
import type { RowCapture } from '../ivm/row-capture.ts';
import { compareRows } from '../common/top-n.ts';
import { compareRowsByUnits } from '../common/top-n-units.ts';
import { holdsSurrogate } from '../common/text-order.ts';
import type { ZBatch } from '../ivm/zset.ts';
import type { BoundQuery } from '../planner/bind-select.ts';
import { columnInfos, type ColumnMeta } from '../planner/catalog.ts';
import type { Row, Value } from '../common/types.ts';
import type { StatementResult } from './api.ts';
import { columnOverheads, resultTooLarge, rowJsonBytes, type ResultLimits } from './result-size.ts';
import { VALUES_INPUT, ViewRuntime, type NodeStats } from './view-runtime.ts';
import { bigintAsText } from '../common/values.ts';

/** Input rows per slice between deadline checks. */
const SLICE_ROWS = 4096;

/**
 * Rows the joins of one ad-hoc SELECT may produce before it fails with RESULT_TOO_LARGE: a join is
 * computed in one step per slice, so this also bounds how long one slice can hold the event loop.
 */
export const SELECT_JOIN_ROWS = 1_000_000;

const UNLIMITED: ResultLimits = { maxRows: Infinity, maxBytes: Infinity };

const HINT =
  'add a LIMIT (or a narrower WHERE), or create a materialized view and read it by pages (GET /v1/views/{name}/rows)';

interface Ranked {
  readonly row: readonly Value[];
  /** Arrival order: identical rows keep it, as a stable sort of all rows would. */
  readonly seq: number;
}

export class SelectJob {
  private readonly maps: MapOp[] | null;
  private readonly runtime: ViewRuntime | null;
  private readonly sources: { readonly name: string; readonly rows: RowCapture }[];
  private source = 0;
  private at = 0;
  private done = false;
  private readonly skip: number;
  private readonly want: number;
  /**
   * The ORDER BY: text by code unit (`<`, cheaper) until a row holding a surrogate arrives, then by
   * code point. The two orders agree on text without surrogates, so the heap built before stays one.
   */
  private compare: ((a: readonly Value[], b: readonly Value[]) => number) | null;
  private readonly codePointCompare: ((a: readonly Value[], b: readonly Value[]) => number) | null;
  private readonly overheads: number[];
  // Streaming state: rows in arrival order (no ORDER BY), or the best `want` rows so far (a heap).
  private skipped = 0;
  private out: (readonly Value[])[] = [];
  private outBytes = 0;
  private heap: Ranked[] = [];
  private seq = 0;
  private firstError: { error: unknown; row: Row } | null = null;
  private rows: Row[] | null = null;
  /** The result's rows as values in column order (INSERT … SELECT reads them so). */
  private values: (readonly Value[])[] | null = null;
  private stepped = false;
  /** Input rows read so far (tests count work with it). */
  rowsRead = 0;
  /** Steps that emitted deferred operator output after the input (tests count work with it). */
  drainSteps = 0;

  constructor(
    private readonly bound: BoundQuery,
    plan: DataflowPlan,
    inputs: ReadonlyMap<string, RowCapture>,
    readonly epoch: number,
    private readonly limits: ResultLimits = UNLIMITED,
  ) {
    this.sources = [...inputs].map(([name, rows]) => ({ name, rows }));
    this.skip = bound.offset ?? 0;
    this.want = bound.limit === undefined ? Infinity : this.skip + bound.limit;
    // Peers by the whole row, as a view's Top-N and ROW_NUMBER order them (common/top-n.ts): the same
    // query ad hoc and as a view picks the same rows among ties, whatever order they arrived in.
    this.codePointCompare = bound.orderBy.length > 0 ? compareRows(bound.orderBy) : null;
    this.compare = bound.orderBy.length > 0 ? compareRowsByUnits(bound.orderBy) : null;
    this.overheads = columnOverheads(bound.columns.map((c) => c.name));
    this.maps = statelessChain(plan);
    this.runtime =
      this.maps === null
        ? new ViewRuntime(plan, { remaining: SELECT_JOIN_ROWS, limit: SELECT_JOIN_ROWS })
        : null;
    // Its output is read once, at the end: the operators emit once too, not per slice.
    this.runtime?.deferOutputs();
    // LIMIT 0 evaluates nothing (as PostgreSQL's executor, which never pulls a row).
    if (this.want === 0) this.done = true;
  }

  /**
   * Evaluates until `deadline` (performance.now() ms; Infinity: to the end, in one go) and returns
   * whether the result is ready. Throws the first row error, or RESULT_TOO_LARGE.
   */
  work(deadline: number): boolean {
    if (this.rows !== null) return true;
    const sliceRows = deadline === Infinity ? Number.MAX_SAFE_INTEGER : SLICE_ROWS;
    while (!this.done && this.source < this.sources.length) {
      const { name, rows } = this.sources[this.source] as { name: string; rows: RowCapture };
      if (this.at >= rows.length) {
        this.source += 1;
        this.at = 0;
        continue;
      }
      const end = Math.min(rows.length, this.at + sliceRows);
      const batch = rows.slice(this.at, end);
      this.rowsRead += end - this.at;
      this.at = end;
      if (this.maps !== null) this.stream(batch);
      else this.step(name, batch);
      if (!this.done && performance.now() >= deadline) return false;
    }
    if (this.runtime !== null) {
      // Operators step at least once: a global aggregate over no rows still has its row.
      if (!this.stepped) {
        this.step(this.sources[0]?.name ?? VALUES_INPUT, { rows: [], weights: [], consolidated: true });
      }
      // The deferred output, a bounded part per step.
      while (!this.drain()) if (performance.now() >= deadline) return false;
    }
    this.finish();
    return true;
  }

  /** Rows in and out of each operator so far (empty for a stateless plan): tests count work with it. */
  nodeStats(): readonly NodeStats[] {
    return this.runtime === null ? [] : [...this.runtime.stats.values()];
  }

  /** The finished result's rows in column order, with its columns' types (INSERT … SELECT). */
  rowValues(): { readonly columns: readonly ColumnMeta[]; readonly rows: readonly (readonly Value[])[] } {
    if (this.values === null)
      throw new SluiceError('INTERNAL_ERROR', 'SELECT result read before it was ready');
    return { columns: this.bound.columns, rows: this.values };
  }

  result(): StatementResult {
    if (this.rows === null) throw new SluiceError('INTERNAL_ERROR', 'SELECT result read before it was ready');
    return {
      statement: 'SELECT',
      columns: columnInfos(this.bound.columns),
      rows: this.rows,
      epoch: this.epoch,
    };
  }

  /** A stateless plan: the slice goes through the filters and projections, rows are taken as they come. */
  private stream(batch: ZBatch): void {
    let b = batch;
    const sink = this.errorSink();
    for (const op of this.maps as MapOp[]) b = op.step([b], sink);
    this.throwFirstError();
    for (let i = 0; i < b.rows.length && !this.done; i++) {
      const row = b.rows[i] as readonly Value[];
      for (let n = b.weights[i] as number; n > 0 && !this.done; n--) this.take(row);
    }
  }

  /** A stateful plan: the slice is one more step of the operators (their output is read at the end). */
  private step(name: string, batch: ZBatch): void {
    const runtime = this.runtime as ViewRuntime;
    this.stepped = true;
    // An ad-hoc query reads the clock as a constant (NOW() is bound to one): no temporal filter.
    runtime.step(new Map([[name, batch]]), this.epoch, 0);
    this.throwRuntimeError();
  }

  /** One drain step of the deferred operators (view-runtime.ts); true when all is emitted. */
  private drain(): boolean {
    const runtime = this.runtime as ViewRuntime;
    const done = runtime.drainStep(this.epoch);
    this.drainSteps += done ? 0 : 1;
    this.throwRuntimeError();
    return done;
  }

  private throwRuntimeError(): void {
    const runtime = this.runtime as ViewRuntime;
    if (runtime.errorCount() > 0) {
      const first = runtime.currentErrors()[0];
      if (first !== undefined) throw rowError(first.code, first.message, first.row);
    }
  }

  private take(row: readonly Value[]): void {
    if (this.compare === null) {
      if (this.skipped < this.skip) {
        this.skipped += 1;
        return;
      }
      this.out.push(row);
      this.outBytes += rowJsonBytes(row, this.overheads);
      if (this.out.length > this.limits.maxRows || this.outBytes > this.limits.maxBytes) {
        throw resultTooLarge('the SELECT result', this.limits, HINT);
      }
      if (this.skip + this.out.length >= this.want) this.done = true;
      return;
    }
    if (this.compare !== this.codePointCompare && rowHoldsSurrogate(row))
      this.compare = this.codePointCompare;
    const seq = this.seq++;
    if (this.want === Infinity) {
      this.heap.push({ row, seq });
      if (this.heap.length > this.skip + this.limits.maxRows) {
        throw resultTooLarge('the SELECT result', this.limits, HINT);
      }
      return;
    }
    // A full heap keeps its rows unless this one sorts before its worst (a later identical row loses).
    const worst = this.heap[0];
    const compare = this.compare as (a: readonly Value[], b: readonly Value[]) => number;
    if (this.heap.length >= this.want && worst !== undefined && compare(row, worst.row) >= 0) return;
    pushBounded(this.heap, { row, seq }, this.want, this.rankCompare);
  }

  private readonly rankCompare = (a: Ranked, b: Ranked): number =>
    (this.compare as (a: readonly Value[], b: readonly Value[]) => number)(a.row, b.row) || a.seq - b.seq;

  private finish(): void {
    let values: (readonly Value[])[];
    if (this.maps === null) {
      // The operators' output, ordered and cut like a stream of it.
      const output = (this.runtime as ViewRuntime).output;
      this.out = [];
      this.outBytes = 0;
      this.skipped = 0;
      this.done = this.want === 0;
      for (const [row, n] of output.entries()) {
        for (let i = 0; i < n && !this.done; i++) this.take(row);
        if (this.done) break;
      }
    }
    if (this.compare === null) values = this.out;
    else {
      const sorted = this.heap.sort(this.rankCompare);
      values = sorted.slice(this.skip, this.want === Infinity ? undefined : this.want).map((r) => r.row);
      let bytes = 0;
      for (const v of values) bytes += rowJsonBytes(v, this.overheads);
      if (values.length > this.limits.maxRows || bytes > this.limits.maxBytes) {
        throw resultTooLarge('the SELECT result', this.limits, HINT);
      }
    }
    this.heap = [];
    this.out = [];
    const columns = this.bound.columns;
    this.values = values;
    this.rows = values.map((v) => toRow(v, columns));
  }

  private errorSink(): RowErrorSink {
    return {
      report: (error, row, columns) => {
        if (this.firstError !== null) return;
        const r: Row = {};
        columns.forEach((c, i) => (r[c.name] = row[i] as Value));
        this.firstError = { error, row: r };
      },
    };
  }

  private throwFirstError(): void {
    const first = this.firstError;
    if (first === null) return;
    const e = first.error;
    const code = e instanceof SluiceError ? e.code : 'INTERNAL_ERROR';
    throw rowError(code, e instanceof Error ? e.message : String(e), first.row);
  }
}

function rowError(code: string, message: string, row: Row): SluiceError {
  return new SluiceError(knownErrorCode(code), message, {
    detail: `in row ${JSON.stringify(row, bigintAsText)}`,
  });
}

/** The Map nodes from input to output when the plan holds no state (one input), else null. */
function statelessChain(plan: DataflowPlan): MapOp[] | null {
  const byId = new Map<number, DataflowNode>(plan.nodes.map((n) => [n.id, n]));
  const maps: MapOp[] = [];
  let node = byId.get(plan.output);
  if (node === undefined || node.kind !== 'output') return null;
  node = byId.get(node.inputs[0]);
  const chain: DataflowNode[] = [];
  while (node !== undefined && node.kind === 'map') {
    chain.push(node);
    node = byId.get(node.inputs[0]);
  }
  if (node === undefined || (node.kind !== 'input' && node.kind !== 'values')) return null;
  if (plan.nodes.length !== chain.length + 2) return null;
  for (const m of chain.reverse()) {
    if (m.kind !== 'map') return null;
    const input = byId.get(m.inputs[0]) as DataflowNode;
    maps.push(new MapOp(m.id, m.filter, m.project, input.columns));
  }
  return maps;
}

/** Whether a text value of the row holds a surrogate (a character above U+FFFF). */
function rowHoldsSurrogate(row: readonly Value[]): boolean {
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (typeof v === 'string' && holdsSurrogate(v)) return true;
  }
  return false;
}

/** Keeps the `k` smallest items in a max-heap (the largest kept at the root). */
function pushBounded<T>(heap: T[], item: T, k: number, cmp: (a: T, b: T) => number): void {
  if (heap.length < k) {
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (cmp(heap[parent] as T, heap[i] as T) >= 0) break;
      [heap[parent], heap[i]] = [heap[i] as T, heap[parent] as T];
      i = parent;
    }
    return;
  }
  if (cmp(item, heap[0] as T) >= 0) return;
  heap[0] = item;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let largest = i;
    if (l < heap.length && cmp(heap[l] as T, heap[largest] as T) > 0) largest = l;
    if (r < heap.length && cmp(heap[r] as T, heap[largest] as T) > 0) largest = r;
    if (largest === i) return;
    [heap[largest], heap[i]] = [heap[i] as T, heap[largest] as T];
    i = largest;
  }
}

function toRow(values: readonly Value[], columns: readonly ColumnMeta[]): Row {
  const out: Row = {};
  columns.forEach((c, i) => (out[c.name] = values[i] as Value));
  return out;
}
