// The engine's table stores by name, with the ones that hold a watermark kept beside the Map as tables
// come and go (each epoch starts theirs), and a call to the owner on every change, so that what the
// engine derives from the set of tables (whether an epoch reads the clock) is recomputed only then.
// Without them a one-row epoch walked the Map's iterator for nothing.
import type { TableStore } from './table-store.ts';

export class TableStores extends Map<string, TableStore> {
  /** The stores with a watermark, in creation order (null: rebuilt at the next read). */
  private watermarked: TableStore[] | null = null;
  /** Told of every change of the set (a table created, dropped, replaced at a load). */
  private readonly changed: () => void;

  constructor(changed: () => void = () => undefined) {
    super();
    this.changed = changed;
  }

  override set(name: string, store: TableStore): this {
    this.watermarked = null;
    this.changed();
    return super.set(name, store);
  }

  override delete(name: string): boolean {
    this.watermarked = null;
    this.changed();
    return super.delete(name);
  }

  override clear(): void {
    this.watermarked = null;
    this.changed();
    super.clear();
  }

  /** The stores whose table declares a watermark. */
  withWatermarks(): readonly TableStore[] {
    this.watermarked ??= [...this.values()].filter((t) => t.watermark !== null);
    return this.watermarked;
  }

  /** Whether an epoch's batch into some table reads the clock (a clock default, or a watermark). */
  readClock(): boolean {
    return [...this.values()].some(
      (t) => t.watermark !== null || (t.def.defaults ?? []).some((d) => d?.atClock !== undefined),
    );
  }
}
