// The engine's table stores by name, with what an epoch asks of all of them kept beside the Map as
// tables come and go: which ones hold a watermark (each epoch starts theirs), and whether any of them
// reads the epoch's clock. Without them a one-row epoch walked the Map's iterator for nothing.
import type { TableStore } from './table-store.ts';

export class TableStores extends Map<string, TableStore> {
  /** The stores with a watermark, in creation order (null: rebuilt at the next read). */
  private watermarked: TableStore[] | null = null;
  /** Whether some table reads the epoch's clock: a `DEFAULT now()` column or a watermark. */
  private clockReaders: boolean | null = null;

  override set(name: string, store: TableStore): this {
    this.watermarked = null;
    this.clockReaders = null;
    return super.set(name, store);
  }

  override delete(name: string): boolean {
    this.watermarked = null;
    this.clockReaders = null;
    return super.delete(name);
  }

  override clear(): void {
    this.watermarked = null;
    this.clockReaders = null;
    super.clear();
  }

  /** The stores whose table declares a watermark. */
  withWatermarks(): readonly TableStore[] {
    this.watermarked ??= [...this.values()].filter((t) => t.watermark !== null);
    return this.watermarked;
  }

  /** Whether an epoch's batch into some table reads the clock (a clock default, or a watermark). */
  readClock(): boolean {
    this.clockReaders ??= [...this.values()].some(
      (t) => t.watermark !== null || (t.def.defaults ?? []).some((d) => d?.atClock !== undefined),
    );
    return this.clockReaders;
  }
}
