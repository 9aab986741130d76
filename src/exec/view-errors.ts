// A view's row-error multiset: the rows whose expressions failed, by error and key, with their
// weights (a retraction of the row retracts its error), the changes since the last take, and the
// checkpoint part that holds them. ViewRuntime is one object split by concern into a chain of
// classes, each extending the last: view-errors.ts, view-render.ts, view-runtime.ts.
import { SluiceError } from '../common/errors.ts';
import type { ColumnSpec, DataflowPlan } from '../ivm/dataflow-plan.ts';
import type { RowErrorSink } from '../ivm/operator.ts';
import type { Stateful } from '../ivm/state.ts';
import { encodeValues } from '../common/values.ts';
import type { Row, Value } from '../common/types.ts';
import type { ErrorChange, ViewRowError } from './api.ts';

interface ErrorEntry {
  code: string;
  message: string;
  row: Row;
  count: number;
  epoch: number;
}

function toRow(values: readonly Value[], columns: readonly ColumnSpec[]): Row {
  const out: Row = {};
  columns.forEach((c, i) => (out[c.name] = values[i] as Value));
  return out;
}

export abstract class ViewErrors implements RowErrorSink {
  abstract readonly plan: DataflowPlan;
  private readonly errors = new Map<string, ErrorEntry>();
  private readonly touchedErrors = new Map<string, { before: ErrorEntry | null }>();
  /** `touchedErrors` is not empty: read after every step, from this object rather than the Map's. */
  private errorsTouched = false;
  /** The epoch being stepped: the epoch a new error is reported in. */
  protected epoch = 0;

  report(error: unknown, row: readonly Value[], columns: readonly ColumnSpec[], weight: number): void {
    const code = error instanceof SluiceError ? error.code : 'INTERNAL_ERROR';
    const message = error instanceof Error ? error.message : String(error);
    // An operator may pass a longer row than `columns` (Reduce passes its old output row, whose key
    // columns come first): the error is the key's, so that its retraction, reported with the bare
    // key, finds it.
    const keyed = row.length === columns.length ? row : row.slice(0, columns.length);
    const key = `${code}\u0000${message}\u0000${encodeValues(keyed)}`;
    let entry = this.errors.get(key);
    if (!this.touchedErrors.has(key)) {
      this.touchedErrors.set(key, { before: entry === undefined ? null : { ...entry } });
      this.errorsTouched = true;
    }
    if (entry === undefined) {
      entry = { code, message, row: toRow(keyed, columns), count: 0, epoch: this.epoch };
      this.errors.set(key, entry);
    }
    entry.count += weight;
    if (entry.count === 0) this.errors.delete(key);
  }

  /** Whether errors appeared or were retracted since the last `takeErrorChanges`. */
  hasErrorChanges(): boolean {
    return this.errorsTouched;
  }

  /** Error appearances/retractions since the last call. */
  takeErrorChanges(): ErrorChange[] {
    if (!this.errorsTouched) return [];
    const out: ErrorChange[] = [];
    for (const [key, { before }] of this.touchedErrors) {
      const after = this.errors.get(key) ?? null;
      if (before !== null && (after === null || after.count !== before.count))
        out.push({ op: '-E', error: { ...before } });
      if (after !== null && (before === null || after.count !== before.count))
        out.push({ op: '+E', error: { ...after } });
    }
    this.touchedErrors.clear();
    this.errorsTouched = false;
    return out;
  }

  currentErrors(): ViewRowError[] {
    return [...this.errors.values()].map((e) => ({ ...e }));
  }

  /** Errors [from, to) in the order they appeared (a bounded read: walks, copies only the page). */
  errorsRange(from: number, to: number): ViewRowError[] {
    const out: ViewRowError[] = [];
    let i = 0;
    for (const e of this.errors.values()) {
      if (i >= to) break;
      if (i >= from) out.push({ ...e });
      i++;
    }
    return out;
  }

  private errorStateCache: Stateful | null = null;

  protected get errorState(): Stateful {
    this.errorStateCache ??= {
      stateId: `${this.plan.view}/errors`,
      trackChanges: () => {},
      takeStateDelta: () => ({
        replaceAll: true,
        upserts: [...this.errors].map(([k, e]) => [k, { ...e, key: k }] as const),
        deletes: [],
      }),
      loadState: (values) => {
        this.errors.clear();
        for (const v of values) {
          const { key, ...e } = v as ErrorEntry & { key: string };
          this.errors.set(key, e);
        }
      },
    };
    return this.errorStateCache;
  }

  errorCount(): number {
    return this.errors.size;
  }
}
