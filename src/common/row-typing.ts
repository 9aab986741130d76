// How a source validates and types its decoded rows itself: the engine makes it from the source's
// definition (Engine.sourceRowTyping), a connector's decoder uses it (src/source), so a row is
// checked once, where it is read, and the engine takes the typed values as they are.
import type { Value } from './types.ts';

export interface RowTyping {
  /** The row as the source stores it (validated, typed); throws a SluiceError naming what is wrong. */
  readonly typed: (row: Record<string, unknown>) => readonly Value[];
  /**
   * `typed`'s fast path over a row's raw values by column position (undefined: absent), for a reader
   * that finds them without a row object; null when the row needs `typed` (which names the problem).
   * Absent: every row takes `typed`.
   */
  readonly typedValues?: ((values: readonly unknown[]) => readonly Value[] | null) | undefined;
  /** The column names `typedValues` reads, in its positions' order (used only if they are the source's). */
  readonly valueColumns?: readonly string[] | undefined;
  /** A source with a WATERMARK: a typed row's event time in µs (null: none); null for other sources. */
  readonly eventTime: ((row: readonly Value[]) => number | null) | null;
}
