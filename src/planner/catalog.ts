// The catalog: tables, sources, materialized views and sinks by name (one namespace), with their
// columns, keys and dependencies. Pure metadata; the runtime state of each object lives in src/exec.
// A source is a TableDef with `source` set: views read it exactly like a table.
import type { SelectStmt } from '../parser/ast.ts';
import type { ColumnInfo, SqlType, Value } from '../common/types.ts';
import { typeName } from '../common/types.ts';
import type { KafkaSinkOptions, KafkaSourceOptions } from './connector-options.ts';
import type { LogicalPlan } from './logical-plan.ts';
import type { FunctionDef, FunctionLookup } from './sql-functions.ts';

export interface ColumnMeta {
  readonly name: string;
  readonly type: SqlType;
  readonly nullable: boolean;
}

/** A column's DEFAULT: an expression typed and cast to the column's type at CREATE. */
export interface ColumnDefault {
  /** The expression as written (what the catalog shows). */
  readonly sql: string;
  /** Its value in the column's type; NULL is a value too (`DEFAULT NULL`). With `atClock`, its value at time 0. */
  readonly value: Value;
  /** For a default that reads the clock (`DEFAULT now()`): its value at an epoch's clock (µs). */
  readonly atClock?: (micros: number) => Value;
}

/** A UNIQUE constraint besides the primary key: no two live rows share non-NULL values of it. */
export interface UniqueConstraint {
  /** PostgreSQL's generated name: `<table>_<col>[_<col>...]_key`. */
  readonly name: string;
  /** Column indexes, in the order written. */
  readonly columns: readonly number[];
}

/**
 * A table's `WATERMARK FOR column AS column - INTERVAL '…'`: after each epoch the watermark is the
 * largest time inserted so far minus `delayMicros` (never lower than before); an inserted row whose
 * time is below the watermark at the start of its epoch is late (src/exec/table-watermark.ts).
 */
export interface WatermarkDef {
  /** Index of the time column (timestamp, timestamptz or date). */
  readonly column: number;
  /** The constant delay in µs (≥ 0). */
  readonly delayMicros: number;
  /** The expression as written (what the catalog shows). */
  readonly sql: string;
}

export interface TableDef {
  readonly kind: 'table';
  readonly name: string;
  readonly columns: readonly ColumnMeta[];
  /** Column indexes of the primary key, or null for a table without one (a multiset). */
  readonly primaryKey: readonly number[] | null;
  /** Per column, its DEFAULT or null (the column defaults to NULL); absent when no column has one. */
  readonly defaults?: readonly (ColumnDefault | null)[];
  /** UNIQUE constraints, in the order written; absent when there are none. */
  readonly unique?: readonly UniqueConstraint[];
  /** The watermark, when the table declares one. */
  readonly watermark?: WatermarkDef;
  readonly sql: string;
  /** Set for a source: its rows come only from this connector. */
  readonly source?: KafkaSourceOptions;
  /**
   * Set for a source's errors relation (`<source>_errors`, made with `on_error 'skip'`): the records
   * the source skipped, written only by its connector, dropped with the source.
   */
  readonly errorsOf?: string;
  /**
   * `CREATE TABLE ... APPEND ONLY`: rows are only ever inserted — a delete, an UPDATE or an insert
   * that would replace the row stored under its key is refused (APPEND_ONLY_TABLE).
   */
  readonly appendOnly?: true;
}

/**
 * Whether a stored relation only ever gains rows, so a view may forget what can never matter again
 * (src/planner/plan-insert-only.ts). A table declared APPEND ONLY (the engine refuses every other
 * write); a keyless `json` source, whose connector writes each message as an insert and never a
 * delete (a keyed source upserts: a message replaces the row under its key); a source's errors
 * relation, which its connector only appends skipped records to. The engine refuses a delete or a
 * replace reaching any of them (src/exec/engine-writes.ts), so this is a fact, not a hope.
 */
export function isAppendOnly(def: TableDef): boolean {
  if (def.appendOnly === true || def.errorsOf !== undefined) return true;
  return def.source !== undefined && def.source.format === 'json' && def.primaryKey === null;
}

export interface ViewDef {
  readonly kind: 'view';
  readonly name: string;
  readonly columns: readonly ColumnMeta[];
  /** Column indexes of a unique key of the view's rows; [] for a one-row view; null if none. */
  readonly key: readonly number[] | null;
  readonly sql: string;
  readonly query: SelectStmt;
  readonly plan: LogicalPlan;
  /** Names of the tables and views this view reads directly. */
  readonly dependsOn: readonly string[];
  /** The SQL functions its query inlined (DROP FUNCTION needs CASCADE to drop the view). */
  readonly functions?: readonly string[];
  /**
   * Its rows are only ever inserted (its plan is insert-only, plan-insert-only.ts, or it emits on
   * window close): a view reading it may treat it as an append-only input.
   */
  readonly insertOnly?: true;
}

/** A sink: writes one materialized view's changelog to an external system. Holds no state. */
export interface SinkDef {
  readonly kind: 'sink';
  readonly name: string;
  /** The materialized view it writes. */
  readonly view: string;
  readonly options: KafkaSinkOptions;
  readonly sql: string;
}

export type CatalogObject = TableDef | ViewDef | SinkDef;

/** The object kind as named in messages: table, source, materialized view or sink. */
export function kindLabel(object: CatalogObject): string {
  if (object.kind === 'table') return object.source !== undefined ? 'source' : 'table';
  return object.kind === 'view' ? 'materialized view' : 'sink';
}

export function columnInfos(columns: readonly ColumnMeta[]): ColumnInfo[] {
  return columns.map((c) => ({ name: c.name, type: typeName(c.type), nullable: c.nullable }));
}

/** A table column as the API shows it: with `default`, the DEFAULT expression as written. */
export type TableColumnInfo = ColumnInfo & { readonly default?: string };

export function tableColumnInfos(def: TableDef): TableColumnInfo[] {
  return columnInfos(def.columns).map((info, i) => {
    const d = def.defaults?.[i];
    return d === undefined || d === null ? info : { ...info, default: d.sql };
  });
}

export class Catalog implements FunctionLookup {
  /** Creation order is kept: an object can only depend on objects created before it. */
  private readonly objects = new Map<string, CatalogObject>();
  /** SQL functions: a namespace of their own, as in PostgreSQL. */
  private readonly functionDefs = new Map<string, FunctionDef>();
  /** The views reading each relation directly, in creation order (kept with every add/remove). */
  private readonly readers = new Map<string, ViewDef[]>();

  get(name: string): CatalogObject | undefined {
    return this.objects.get(name);
  }

  has(name: string): boolean {
    return this.objects.has(name);
  }

  add(object: CatalogObject): void {
    this.objects.set(object.name, object);
    if (object.kind !== 'view') return;
    for (const input of object.dependsOn) {
      const list = this.readers.get(input);
      if (list === undefined) this.readers.set(input, [object]);
      else list.push(object);
    }
  }

  remove(name: string): void {
    const object = this.objects.get(name);
    this.objects.delete(name);
    if (object?.kind !== 'view') return;
    for (const input of object.dependsOn) {
      const list = this.readers.get(input)?.filter((v) => v !== object) ?? [];
      if (list.length > 0) this.readers.set(input, list);
      else this.readers.delete(input);
    }
  }

  getFunction(name: string): FunctionDef | undefined {
    return this.functionDefs.get(name);
  }

  /** Adds or replaces a function (CREATE OR REPLACE keeps its place in the list). */
  setFunction(def: FunctionDef): void {
    this.functionDefs.set(def.name, def);
  }

  removeFunction(name: string): void {
    this.functionDefs.delete(name);
  }

  functions(): FunctionDef[] {
    return [...this.functionDefs.values()];
  }

  /** The views and functions that inline `name` (directly or through another function). */
  functionDependents(name: string): { views: ViewDef[]; functions: FunctionDef[] } {
    return {
      views: this.views().filter((v) => v.functions?.includes(name) === true),
      functions: this.functions().filter((f) => f.uses.includes(name)),
    };
  }

  /** Tables and sources: the relations that store rows (and checkpoint them). */
  storedRelations(): TableDef[] {
    return [...this.objects.values()].filter((o): o is TableDef => o.kind === 'table');
  }

  tables(): TableDef[] {
    return this.storedRelations().filter((t) => t.source === undefined);
  }

  sources(): TableDef[] {
    return this.storedRelations().filter((t) => t.source !== undefined);
  }

  sinks(): SinkDef[] {
    return [...this.objects.values()].filter((o): o is SinkDef => o.kind === 'sink');
  }

  views(): ViewDef[] {
    return [...this.objects.values()].filter((o): o is ViewDef => o.kind === 'view');
  }

  /** Views that read `name` directly, in creation order. */
  dependents(name: string): ViewDef[] {
    return [...(this.readers.get(name) ?? [])];
  }

  /** Sinks that write `name` or any view reading it (directly or transitively). */
  dependentSinks(name: string): SinkDef[] {
    const upstream = new Set([name, ...this.transitiveDependents(name).map((v) => v.name)]);
    return this.sinks().filter((s) => upstream.has(s.view));
  }

  /** Every view that reads `name` directly or transitively, dependents before their dependents. */
  transitiveDependents(name: string): ViewDef[] {
    const out: ViewDef[] = [];
    const seen = new Set<string>();
    const pending = [name];
    for (let n = pending.pop(); n !== undefined; n = pending.pop()) {
      for (const v of this.readers.get(n) ?? []) {
        if (seen.has(v.name)) continue;
        seen.add(v.name);
        out.push(v);
        pending.push(v.name);
      }
    }
    // Creation order: a view is always created after everything it reads.
    const order = new Map<string, number>();
    for (const key of this.objects.keys()) order.set(key, order.size);
    return out.sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
  }
}
