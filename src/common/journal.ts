// The journal's contract: the resolved batch the engine hands over before an epoch takes effect,
// and the hook it calls. The engine calls it (src/exec), the durable journal implements it
// (src/storage/table-log.ts); it lives here so that neither imports the other.
import type { SourcePositions } from './changes.ts';
import type { Value } from './types.ts';

/** One resolved batch as the journal receives it: rows as value arrays in `columns` order. */
export interface JournalBatch {
  readonly epoch: number;
  readonly table: string;
  /** The table's column names, the order of every row's values. */
  readonly columns: readonly string[];
  readonly inserts: readonly (readonly Value[])[];
  /**
   * The inserts as `encodeInserts` wrote them, its pieces joined with ',' (a large request's,
   * written ahead of its epoch); when present, the journal need not read `inserts`.
   */
  readonly insertsText?: string;
  readonly deletes: readonly (readonly Value[])[];
  /**
   * Present only for a source batch (`applyChanges(source, ..., { fromSource: true, positions })`):
   * the connector's positions, which are the epoch's positions. The journal must store them and
   * hand them back on replay as `{ fromSource: true, positions }`; its return value is then unused.
   */
  readonly positions?: SourcePositions;
  /**
   * The epoch's logical clock (µs since the Unix epoch): replay hands it back as `clock`. The
   * engine always sets it; an entry journaled before the clock existed has none.
   */
  readonly clock?: number;
}

/**
 * Durability hooks (the server's log). Called after validation and before a change takes effect;
 * throwing cancels the change. Batches carry fully resolved row changes (PK-only deletes and PK
 * replacements resolved to full rows), so replaying them through
 * `applyChanges(table, { delete: deletes, insert: inserts }, { positions })` reproduces the epoch.
 */
/** A DDL statement as the journal records it. */
export interface JournalDdl {
  readonly epoch: number;
  readonly sql: string;
  /**
   * The binding rules it was accepted under (BINDING_RULES, src/planner/journaled-binding.ts), for
   * its replay; absent in an entry from before they were recorded.
   */
  readonly rules?: number;
}

export interface EngineJournal {
  /** Returns a table batch's positions (ignored for a source batch, which carries its own). */
  appendBatch(entry: JournalBatch): SourcePositions;
  /**
   * Some insert rows' values as the journal writes a batch's inserts, for `insertsText`: the text of
   * consecutive runs of a batch's rows joined with ',' must be that of all of them. Null when these
   * rows need the journal's other encoding. Optional: without it, nothing is written ahead.
   */
  encodeInserts?(rows: readonly (readonly Value[])[]): string | null;
  appendDdl(entry: JournalDdl): void;
  /**
   * A clock tick that is an epoch of its own (a temporal filter's bound was crossed, or a view with
   * one was created after the clock moved): replayed as `Engine.tick({ clock })`.
   */
  appendTick(entry: { epoch: number; clock: number }): void;
  /**
   * SET CLOCK moved a manual clock and no epoch was due (`epoch` is the current one): recorded so a
   * restart does not lose the setting — replayed as `Engine.restoreClockSetting(clock)`, no epoch.
   */
  appendClockSet?(entry: { epoch: number; clock: number }): void;
}
