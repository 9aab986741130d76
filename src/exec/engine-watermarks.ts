// Watermark reads over the engine's state: each watermarked table's watermark, those a view reads
// (what its changelog messages and reads carry), EMIT ON WINDOW CLOSE progress and late-row counts.
import type { TableDef, ViewDef } from '../planner/catalog.ts';
import type { CheckpointedState } from './engine-checkpoints.ts';
import type { ViewRuntime } from './view-runtime.ts';
import {
  watermarkedInputs,
  watermarkText,
  windowEndColumn,
  type ClosingView,
} from './watermark-statements.ts';

export class EngineWatermarks {
  /** Per view, the watermarked tables it reads (fixed for the view's life: its inputs outlive it). */
  private readonly watermarkInputs = new WeakMap<ViewDef, readonly TableDef[]>();

  constructor(private readonly state: CheckpointedState) {}

  /**
   * The current watermark of every table or source with a WATERMARK, by name, as reads show it
   * (what the server records per epoch, so a past epoch's reads carry that epoch's watermarks).
   */
  tableWatermarks(): Record<string, string | null> {
    const out: Record<string, string | null> = {};
    for (const [name, store] of this.state.tables) {
      const def = this.state.catalog.get(name);
      if (store.watermark === null || def?.kind !== 'table') continue;
      out[name] = watermarkText(def, store.watermark.value);
    }
    return out;
  }

  /**
   * The current watermark of each table or source with a WATERMARK that view `name` reads (directly
   * or through views); null when it reads none. What its changelog messages and reads carry.
   */
  viewWatermarks(name: string): Record<string, string | null> | null {
    const def = this.state.catalog.get(name);
    if (def?.kind !== 'view') return null;
    let inputs = this.watermarkInputs.get(def);
    if (inputs === undefined) {
      inputs = watermarkedInputs(this.state.catalog, def);
      this.watermarkInputs.set(def, inputs);
    }
    if (inputs.length === 0) return null;
    const out: Record<string, string | null> = {};
    for (const t of inputs)
      out[t.name] = watermarkText(t, this.state.tables.get(t.name)?.watermark?.value ?? null);
    return out;
  }

  /** EMIT ON WINDOW CLOSE views: how far their windows closed and the changes to closed ones not applied. */
  closingViews(): ClosingView[] {
    return this.state.views.closingViews().flatMap((v) => {
      const def = this.state.catalog.get(v.name) as ViewDef;
      const nodes = (this.state.views.get(v.name) as ViewRuntime).plan.nodes;
      return v.ops.map((op) => {
        const node = nodes.find((n) => n.id === op.nodeId);
        const keyIndex = node?.kind === 'reduce' ? node.emitOnClose?.keyIndex : undefined;
        return {
          name: v.name,
          column: keyIndex === undefined ? 'window_end' : windowEndColumn(def, keyIndex),
          closedThrough: op.closedThrough,
          zoned: op.zoned,
          ignored: op.ignoredChanges,
          allowedLateness: op.allowedLateness,
        };
      });
    });
  }

  /** Per table or source with a watermark, the inserted rows it dropped as late (for metrics). */
  lateRows(): { table: string; lateRows: number }[] {
    const out: { table: string; lateRows: number }[] = [];
    for (const [table, store] of this.state.tables)
      if (store.watermark !== null) out.push({ table, lateRows: store.watermark.lateRows });
    return out;
  }
}
