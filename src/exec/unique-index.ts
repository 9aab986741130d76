// One UNIQUE constraint's index over a table's live rows: value of the constraint's columns → how
// many live rows hold it (at most one while the constraint holds). A row with NULL in any of the
// columns is not indexed: NULLs never conflict, as in PostgreSQL. The table store keeps it on every
// applied batch, so checking a batch costs the batch's size, never a scan of the table.
import { SluiceError } from '../common/errors.ts';
import type { UniqueConstraint } from '../planner/catalog.ts';
import type { Value } from '../common/types.ts';
import { encodeValues, formatValue, singleKey } from '../common/values.ts';

export class UniqueIndex {
  private readonly counts = new Map<Value, number>();
  private readonly single: number | null;

  constructor(
    readonly constraint: UniqueConstraint,
    private readonly columnNames: readonly string[],
  ) {
    this.single = constraint.columns.length === 1 ? (constraint.columns[0] as number) : null;
  }

  /** The row's value of the constraint's columns as a map key, or null when one of them is NULL. */
  private keyOf(row: readonly Value[]): Value {
    if (this.single !== null) {
      const v = row[this.single] as Value;
      return v === null ? null : singleKey(v);
    }
    for (const c of this.constraint.columns) if (row[c] === null) return null;
    return encodeValues(row, this.constraint.columns);
  }

  add(row: readonly Value[]): void {
    const k = this.keyOf(row);
    if (k !== null) this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
  }

  remove(row: readonly Value[]): void {
    const k = this.keyOf(row);
    if (k === null) return;
    const n = (this.counts.get(k) ?? 0) - 1;
    if (n > 0) this.counts.set(k, n);
    else this.counts.delete(k);
  }

  clear(): void {
    this.counts.clear();
  }

  get size(): number {
    return this.counts.size;
  }

  /**
   * Throws UNIQUE_VIOLATION when the live rows after this batch — its deletes applied first, then
   * its inserts — would hold two rows with one non-NULL value of the constraint. Changes nothing.
   */
  check(
    tableName: string,
    deletes: readonly (readonly Value[])[],
    inserts: readonly (readonly Value[])[],
  ): void {
    if (inserts.length === 0) return;
    const removed = new Map<Value, number>();
    for (const row of deletes) {
      const k = this.keyOf(row);
      if (k !== null) removed.set(k, (removed.get(k) ?? 0) + 1);
    }
    const added = new Set<Value>();
    for (const row of inserts) {
      const k = this.keyOf(row);
      if (k === null) continue;
      const live = (this.counts.get(k) ?? 0) - (removed.get(k) ?? 0);
      if (live > 0 || added.has(k)) throw this.violation(tableName, row);
      added.add(k);
    }
  }

  private violation(tableName: string, row: readonly Value[]): SluiceError {
    const names = this.constraint.columns.map((c) => this.columnNames[c] ?? '?');
    const values = this.constraint.columns.map((c) => formatValue(row[c] as Value));
    return new SluiceError(
      'UNIQUE_VIOLATION',
      `duplicate key value violates unique constraint "${this.constraint.name}"`,
      {
        // PostgreSQL's detail, word for word.
        detail: `Key (${names.join(', ')})=(${values.join(', ')}) already exists.`,
        hint: `in table "${tableName}"`,
      },
    );
  }
}
