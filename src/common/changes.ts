// What changed, as plain data: a view's signed row changes and row errors in one epoch, and the
// source positions an epoch covers. Produced by the engine, stored by src/storage, sent by src/sink.
import type { Row } from './types.ts';

export type ChangeOp = '+I' | '-D' | '-U' | '+U';

export interface Change {
  readonly op: ChangeOp;
  readonly row: Row;
  /** Multiplicity when a row of a view without a unique key changes by k ≠ 1. */
  readonly n?: number;
}

/** Where an epoch's input came from: per source name, the positions it covers. */
export type SourcePositions = Record<string, unknown>;

/** A row-level runtime error held by a view (division by zero, failed cast, overflow). */
export interface ViewRowError {
  readonly code: string;
  readonly message: string;
  /** The input row (of the view's direct input) that caused it, or the group key for aggregates. */
  readonly row: Row;
  /** The epoch in which the error first appeared. */
  readonly epoch: number;
  /** How many input rows currently cause this error. */
  readonly count: number;
}

export interface ErrorChange {
  readonly op: '+E' | '-E';
  readonly error: ViewRowError;
}

/** Everything that changed in one view in one epoch, consolidated. */
export interface ViewChangeSet {
  readonly view: string;
  readonly epoch: number;
  readonly positions: SourcePositions;
  /**
   * The epoch's logical clock, as a timestamptz text (`2024-01-01 10:00:00+00`). Set by the server
   * on the changelog it stores and sends (not by an engine listener's change set); absent in an
   * entry stored before it was recorded.
   */
  readonly clock?: string;
  /**
   * The watermark after this epoch of each table or source with a WATERMARK the view reads (directly
   * or through other views), in its time column's type; null before its first row. Absent when the
   * view reads none.
   */
  readonly watermarks?: Readonly<Record<string, string | null>>;
  readonly changes: readonly Change[];
  /** Row errors appearing (+E) or retracted (-E) in this epoch; absent when none. */
  readonly errors?: readonly ErrorChange[];
}
