// The checkpoint delta every arrangement mode shares, written once: with tracking on, every change
// marks its entry; `takeDelta` exports the marked entries (everything the first time, after a
// `clear`, or when asked) — copies, or for a full export entries built as the writer reads them
// from a snapshot of references, since a checkpoint is written in slices while later epochs change
// the arrangement; `load` (in each mode) takes back what `takeDelta` wrote.
import type { StateDelta } from './state.ts';

export type Upserts = (readonly [string, unknown])[];

/** The checkpoint delta every arrangement mode shares: change tracking, export, reload. */
export abstract class ArrangementDelta {
  protected tracking = false;
  /** Whether the checkpoint store holds this arrangement's entries (else the next delta replaces all). */
  private exported = false;

  /** Starts (or stops) marking changed entries; off by default so in-memory use pays nothing. */
  trackChanges(on: boolean): void {
    this.tracking = on;
    if (!on) this.forgetChanges();
  }

  /**
   * The entries changed since the last call — all of them if `full`, if never exported, or after a
   * `clear` — then forgets the changes.
   */
  takeDelta(full: boolean): StateDelta {
    const replaceAll = full || !this.exported;
    this.exported = true;
    let upserts: readonly (readonly [string, unknown])[];
    const deletes: string[] = [];
    if (replaceAll) upserts = this.allEntries();
    else upserts = this.changedEntries(deletes);
    this.forgetChanges();
    return { replaceAll, upserts, deletes };
  }

  /** Every entry, for a delta that replaces all (a mode may build them lazily). */
  protected allEntries(): readonly (readonly [string, unknown])[] {
    const upserts: Upserts = [];
    this.exportAll(upserts);
    return upserts;
  }

  /** The changed entries, their deletes pushed to `deletes` (a mode may build the entries lazily). */
  protected changedEntries(deletes: string[]): readonly (readonly [string, unknown])[] {
    const changed: Upserts = [];
    this.exportChanged(changed, deletes);
    return changed;
  }

  /** After a load: the contents are what the checkpoint store holds, not changes to write back. */
  protected markLoaded(): void {
    this.forgetChanges();
    this.exported = true;
  }

  /** After a clear: what the store held no longer applies. */
  protected markCleared(): void {
    this.forgetChanges();
    this.exported = false;
  }

  protected abstract exportAll(upserts: Upserts): void;
  protected abstract exportChanged(upserts: Upserts, deletes: string[]): void;
  protected abstract forgetChanges(): void;
}
