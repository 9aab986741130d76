// The catalog: tables and materialized views by name, with their columns, keys and dependencies.
// Pure metadata; the runtime state of each object lives in src/exec.
import type { SelectStmt } from '../parser/ast.ts';
import type { ColumnInfo, SqlType } from '../types.ts';
import { typeName } from '../types.ts';
import type { LogicalPlan } from './logical-plan.ts';

export interface ColumnMeta {
  readonly name: string;
  readonly type: SqlType;
  readonly nullable: boolean;
}

export interface TableDef {
  readonly kind: 'table';
  readonly name: string;
  readonly columns: readonly ColumnMeta[];
  /** Column indexes of the primary key, or null for a table without one (a multiset). */
  readonly primaryKey: readonly number[] | null;
  readonly sql: string;
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
}

export type CatalogObject = TableDef | ViewDef;

export function columnInfos(columns: readonly ColumnMeta[]): ColumnInfo[] {
  return columns.map((c) => ({ name: c.name, type: typeName(c.type), nullable: c.nullable }));
}

export class Catalog {
  /** Creation order is kept: an object can only depend on objects created before it. */
  private readonly objects = new Map<string, CatalogObject>();

  get(name: string): CatalogObject | undefined {
    return this.objects.get(name);
  }

  has(name: string): boolean {
    return this.objects.has(name);
  }

  add(object: CatalogObject): void {
    this.objects.set(object.name, object);
  }

  remove(name: string): void {
    this.objects.delete(name);
  }

  tables(): TableDef[] {
    return [...this.objects.values()].filter((o): o is TableDef => o.kind === 'table');
  }

  views(): ViewDef[] {
    return [...this.objects.values()].filter((o): o is ViewDef => o.kind === 'view');
  }

  /** Views that read `name` directly. */
  dependents(name: string): ViewDef[] {
    return this.views().filter((v) => v.dependsOn.includes(name));
  }

  /** Every view that reads `name` directly or transitively, dependents before their dependents. */
  transitiveDependents(name: string): ViewDef[] {
    const out: ViewDef[] = [];
    const seen = new Set<string>();
    const visit = (n: string): void => {
      for (const v of this.dependents(n)) {
        if (seen.has(v.name)) continue;
        seen.add(v.name);
        out.push(v);
        visit(v.name);
      }
    };
    visit(name);
    const order = [...this.objects.keys()];
    return out.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  }
}
