// Which journal entries make the live catalog: for every object in it, the DDL entry that created
// it (for a function, also each CREATE OR REPLACE since). Replaying just those entries, in journal
// order and at their own offsets, rebuilds the catalog that replaying every DDL statement ever run
// builds: an object's dependencies are live whenever it is (DROP cascades to dependents, a function
// is not replaced under a view that inlined it), and the survivors are created in the same order.
// Recovery from a checkpoint uses it (catalog-snapshot-store.ts) instead of the whole DDL history.

interface Named {
  readonly name: string;
  readonly sql: string;
}

/** The engine's catalog as `Engine.catalogDefinitions` lists it. */
export interface CatalogListing {
  readonly views: readonly Named[];
  readonly sinks: readonly Named[];
  readonly relations: readonly Named[];
  readonly functions: readonly Named[];
}

interface Incarnation {
  sql: string;
  /** Journal offsets of the entries that made it as it is now, ascending. */
  readonly offsets: number[];
}

export class CatalogIncarnations {
  private readonly byKey = new Map<string, Incarnation>();

  /**
   * Matches the tracked objects to `catalog` after the DDL entry at `offset` ran (called once per
   * DDL entry, before the next entry: every object new or changed since the last call is its).
   * Returns whether anything changed.
   */
  sync(catalog: CatalogListing, offset: number): boolean {
    const live = new Map<string, string>();
    // Relations, views and sinks share one namespace; functions have their own.
    for (const o of catalog.relations) live.set(`o:${o.name}`, o.sql);
    for (const o of catalog.views) live.set(`o:${o.name}`, o.sql);
    for (const o of catalog.sinks) live.set(`o:${o.name}`, o.sql);
    for (const f of catalog.functions) live.set(`f:${f.name}`, f.sql);
    let changed = false;
    for (const key of this.byKey.keys()) {
      if (live.has(key)) continue;
      this.byKey.delete(key);
      changed = true;
    }
    for (const [key, sql] of live) {
      const known = this.byKey.get(key);
      if (known !== undefined && known.sql === sql) continue;
      changed = true;
      if (known !== undefined && key.startsWith('f:')) {
        // CREATE OR REPLACE FUNCTION: the functions inlining it were re-checked over the new body
        // by that entry, so it is replayed after the ones before it, not instead of them.
        known.sql = sql;
        known.offsets.push(offset);
      } else {
        this.byKey.set(key, { sql, offsets: [offset] });
      }
    }
    return changed;
  }

  /** The entries to replay, in journal order. */
  offsets(): number[] {
    const all = new Set<number>();
    for (const inc of this.byKey.values()) for (const o of inc.offsets) all.add(o);
    return [...all].sort((a, b) => a - b);
  }

  clear(): void {
    this.byKey.clear();
  }
}
