// A table's watermark and its late rows. The watermark is derived from the journaled epochs only —
// after each epoch, max(previous watermark, largest inserted time − delay); for a Kafka source, the
// least over its active partitions (partition-watermarks.ts) — so replaying the journal from a
// checkpoint (which stores it with the table) reproduces it exactly, and the same rows are late.
import { notSupported, SluiceError } from '../common/errors.ts';
import { fixedDelayMicros } from '../common/time/fixed-delay.ts';
import { Interval } from '../common/time/interval.ts';
import { instantMicros } from '../common/time/instant-micros.ts';
import { compileScalar } from '../common/scalar-expr.ts';
import type { Value } from '../common/types.ts';
import { typeName } from '../common/types.ts';
import type { StateDelta, Stateful } from '../ivm/state.ts';
import type { Expr, WatermarkClause } from '../parser/ast.ts';
import { bindExpr } from '../planner/bind-expr.ts';
import type { ColumnMeta, WatermarkDef } from '../planner/catalog.ts';
import { PartitionWatermarks, partitionSteps } from './partition-watermarks.ts';

/**
 * `WATERMARK FOR ts AS ts [- INTERVAL '…']`, checked against the table's columns: the column is a
 * date or time column, the expression that column or it minus a constant interval of days and time.
 */
export function watermarkDef(clause: WatermarkClause, columns: readonly ColumnMeta[]): WatermarkDef {
  const column = columns.findIndex((c) => c.name === clause.column);
  if (column < 0) {
    throw new SluiceError('UNKNOWN_COLUMN', `column "${clause.column}" named in watermark does not exist`, {
      position: clause.columnPos,
    });
  }
  const type = (columns[column] as ColumnMeta).type;
  if (type.kind !== 'timestamp' && type.kind !== 'timestamptz' && type.kind !== 'date') {
    throw new SluiceError(
      'TYPE_MISMATCH',
      `watermark column "${clause.column}" must be of type timestamp, timestamp with time zone or date, not ${typeName(type)}`,
      { position: clause.columnPos },
    );
  }
  const isColumn = (e: Expr): boolean =>
    e.kind === 'column' && e.table === undefined && e.name === clause.column;
  const e = clause.expr;
  let delayMicros = 0;
  if (!isColumn(e)) {
    if (e.kind !== 'binary' || e.op !== '-' || !isColumn(e.left)) {
      throw notSupported(
        'a watermark expression other than the column minus a constant interval',
        e.pos,
        `write WATERMARK FOR ${clause.column} AS ${clause.column} - INTERVAL '5' SECOND`,
      );
    }
    delayMicros = intervalDelay(e.right);
  }
  return { column, delayMicros, sql: clause.text };
}

/** A constant interval of days and time, in µs, not negative. */
function intervalDelay(e: Expr): number {
  const bound = bindExpr(e, {
    scope: null,
    aggregateContext: 'watermark expressions',
    intercept: (x) => {
      if (x.kind === 'column' || x.kind === 'function') {
        throw notSupported('a watermark delay that is not a constant interval', x.pos);
      }
      return undefined;
    },
  });
  const value = bound.type.kind === 'interval' ? compileScalar(bound)([]) : null;
  if (!(value instanceof Interval)) {
    throw notSupported('a watermark delay that is not a constant interval', e.pos);
  }
  return fixedDelayMicros(value, 'a watermark delay', e.pos);
}

/** What `admit` lets through: the batch without its late inserts. */
export interface AdmittedBatch {
  readonly deletes: readonly (readonly Value[])[];
  readonly inserts: readonly (readonly Value[])[];
  readonly insertColumns?: readonly Value[][];
}

/** The time of a stored date, timestamp or timestamptz in µs; null for NULL. */
function timeOf(v: Value | undefined): number | null {
  return typeof v === 'string' ? instantMicros(v) : null;
}

/** One table's watermark (µs) and late-row count, checkpointed with the table. */
export class TableWatermark implements Stateful {
  readonly stateId: string;
  private mark: number | null = null;
  private late = 0;
  private changed = true;
  /** A Kafka source's per-partition watermarks (null for a table). */
  private readonly partitions: PartitionWatermarks | null;

  /** `idleMicros`: a source's idle timeout (its partitions then count separately); null for a table. */
  constructor(
    table: string,
    readonly def: WatermarkDef,
    idleMicros: number | null = null,
  ) {
    this.stateId = `watermark:${table}`;
    this.partitions = idleMicros === null ? null : new PartitionWatermarks(def.delayMicros, idleMicros);
  }

  /**
   * At the start of an epoch at `clock`: partitions idle by now no longer hold the watermark back.
   * True when it moved.
   */
  startEpoch(clock: number): boolean {
    if (this.partitions === null || this.partitions.size === 0) return false;
    return this.raise(this.partitions.value(clock));
  }

  /** The earliest clock after `clock` at which idleness alone raises the watermark (Infinity: never). */
  nextChangeAt(clock: number): number {
    return this.partitions === null ? Infinity : this.partitions.nextChangeAt(this.mark, clock);
  }

  private raise(next: number | null): boolean {
    if (next === null || (this.mark !== null && next <= this.mark)) return false;
    this.mark = next;
    this.changed = true;
    return true;
  }

  /** The watermark in µs; null until a row with a time was inserted. */
  get value(): number | null {
    return this.mark;
  }

  /** Inserted rows dropped as late since the table was created. */
  get lateRows(): number {
    return this.late;
  }

  /**
   * Drops the batch's late inserts and advances the watermark. An insert is late when its time is
   * below the watermark at the start of the epoch and it replaces no row: a retraction or an update
   * always applies (with a primary key, an insert whose key the batch deletes is an update; without
   * one, UPDATE deletes as many rows as it inserts, so that many inserts are updates).
   */
  admit<B extends AdmittedBatch>(
    batch: B,
    keyOf: ((row: readonly Value[]) => Value) | null,
    positions?: unknown,
    clock = 0,
  ): AdmittedBatch | B {
    const start = this.mark;
    const col = this.def.column;
    let max: number | null = null;
    const note = (t: number | null): void => {
      if (t !== null && (max === null || t > max)) max = t;
    };
    let out: AdmittedBatch | B = batch;
    const columns = batch.insertColumns;
    if (columns !== undefined) {
      const times = columns[col] as Value[];
      let keep: number[] | null = null;
      for (let i = 0; i < times.length; i++) {
        const t = timeOf(times[i]);
        if (start !== null && t !== null && t < start) {
          keep ??= Array.from({ length: i }, (_, j) => j);
          this.late++;
          continue;
        }
        keep?.push(i);
        note(t);
      }
      if (keep !== null) {
        const kept = keep;
        const filtered = columns.map((c) => kept.map((i) => c[i] as Value));
        out = { deletes: batch.deletes, inserts: transpose(filtered), insertColumns: filtered };
      }
    } else {
      const updatedKeys =
        keyOf !== null && batch.deletes.length > 0 ? new Set(batch.deletes.map(keyOf)) : null;
      let updates = keyOf === null ? batch.deletes.length : 0;
      let kept: (readonly Value[])[] | null = null;
      batch.inserts.forEach((row, i) => {
        const t = timeOf(row[col]);
        const update =
          updatedKeys !== null
            ? updatedKeys.has((keyOf as (r: readonly Value[]) => Value)(row))
            : updates > 0;
        if (keyOf === null && updates > 0) updates--;
        if (!update && start !== null && t !== null && t < start) {
          kept ??= batch.inserts.slice(0, i);
          this.late++;
          return;
        }
        kept?.push(row);
        note(t);
      });
      if (kept !== null) out = { deletes: batch.deletes, inserts: kept };
    }
    if (out !== batch) this.changed = true;
    // A source's partitions carry their own largest times (every record read, late or replaced).
    const steps = this.partitions === null ? null : partitionSteps(positions);
    if (steps !== null && this.partitions !== null) {
      this.partitions.observe(steps, clock);
      this.changed = true;
      this.raise(this.partitions.value(clock));
    } else if (max !== null) this.raise((max as number) - this.def.delayMicros);
    return out;
  }

  trackChanges(): void {
    // One entry, written whenever it changed: nothing to remember per key.
  }

  takeStateDelta(full: boolean): StateDelta {
    if (!full && !this.changed) return { replaceAll: false, upserts: [], deletes: [] };
    this.changed = false;
    const entry =
      this.partitions === null
        ? { mark: this.mark, late: this.late }
        : { mark: this.mark, late: this.late, parts: this.partitions.entries() };
    return { replaceAll: true, upserts: [['watermark', entry]], deletes: [] };
  }

  loadState(values: Iterable<unknown>): void {
    this.mark = null;
    this.late = 0;
    this.partitions?.load([]);
    for (const v of values) {
      const entry = v as { mark: number | null; late: number; parts?: [string, number | null, number][] };
      this.mark = entry.mark;
      this.late = entry.late;
      if (entry.parts !== undefined) this.partitions?.load(entry.parts);
    }
    this.changed = false;
  }
}

function transpose(columns: readonly Value[][]): Value[][] {
  const n = (columns[0] as Value[]).length;
  const rows: Value[][] = [];
  for (let i = 0; i < n; i++) rows.push(columns.map((c) => c[i] as Value));
  return rows;
}
