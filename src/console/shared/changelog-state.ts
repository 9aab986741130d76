// The console's copy of a view: a snapshot plus the changelog applied message by message (API.md).
// Keyed views hold one row per key; views without a key hold a row → multiplicity map. apply()
// reports, per row identity, what changed in that message so the page can update cells in place.
// With a capacity, the copy is a window: it holds only the view's first rows in key order (at most
// `capacity`) and counts the rest, so a million-row view does not grow the page without a bound.

export type WireRow = Record<string, unknown>;

export interface WireChange {
  readonly op: '+I' | '-D' | '-U' | '+U';
  readonly row: WireRow;
  /** Multiplicity change k ≠ 1 for views without a unique key. */
  readonly n?: number;
}

export interface RowDelta {
  /** Stable identity: the key values (keyed view) or the whole row (multiset view). */
  readonly id: string;
  readonly kind: 'insert' | 'update' | 'delete';
  readonly before: WireRow | null;
  readonly after: WireRow | null;
  /** Columns whose value differs between before and after (all columns for an insert). */
  readonly changedColumns: readonly string[];
}

export interface LiveEntry {
  readonly id: string;
  readonly row: WireRow;
  /** Copies of the row (always 1 for a keyed view). */
  readonly count: number;
}

/** Orders scalar values the way a reader expects: numbers (and big integers sent as strings) numerically. */
export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  const na = toNumber(a);
  const nb = toNumber(b);
  if (na !== null && nb !== null) return na < nb ? -1 : na > nb ? 1 : 0;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/** A number for plotting and ordering: JSON numbers and integers sent as strings; else null. */
export function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && /^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(v.trim())) return Number(v);
  return null;
}

export class LiveRows {
  private readonly entries = new Map<string, { row: WireRow; count: number }>();
  /**
   * Set once rows were dropped to stay within the capacity: the entries are then exactly the
   * view's rows ordered at or before this one, and the rows after it are only counted.
   */
  private boundary: LiveEntry | null = null;
  /** Rows in the view, copies included (held or not). */
  private total = 0;
  /** Rows held, copies included: equal to `total` while nothing was dropped. */
  private heldCopies = 0;
  private readonly order: (a: LiveEntry, b: LiveEntry) => number;

  constructor(
    readonly columns: readonly string[],
    readonly key: readonly string[] | null,
    /** Most distinct rows held; past it the last half (in key order) is dropped and counted. */
    readonly capacity = Number.POSITIVE_INFINITY,
  ) {
    this.order = this.makeOrder();
  }

  /** Rows in the view (copies counted, as COUNT(*) would), whether held or not. */
  get size(): number {
    return this.total;
  }

  /** Distinct rows held in memory (at most `capacity`). */
  get held(): number {
    return this.entries.size;
  }

  /** Whether every row of the view is held (nothing was dropped, or the dropped ones are gone). */
  get complete(): boolean {
    return this.boundary === null;
  }

  /**
   * Whether the window shrank below `shown` rows while rows it dropped remain: only a fresh
   * snapshot can tell which rows come next, so the caller subscribes again.
   */
  needsRefill(shown: number): boolean {
    return this.boundary !== null && this.entries.size < Math.min(shown, this.total);
  }

  idOf(row: WireRow): string {
    const cols = this.key ?? this.columns;
    return JSON.stringify(cols.map((c) => row[c] ?? null));
  }

  clear(): void {
    this.entries.clear();
    this.boundary = null;
    this.total = 0;
    this.heldCopies = 0;
  }

  /** Adds snapshot rows (a view without a key may list a row several times). */
  load(rows: readonly WireRow[]): void {
    for (const row of rows) this.add(row, 1);
  }

  /** Applies one `changes` message; returns what happened to each row identity it touched. */
  apply(changes: readonly WireChange[]): RowDelta[] {
    const before = new Map<string, WireRow | null>();
    for (const change of changes) {
      const id = this.idOf(change.row);
      if (!before.has(id)) before.set(id, this.entries.get(id)?.row ?? null);
      const n = change.n ?? 1;
      if (change.op === '+I' || change.op === '+U') this.add(change.row, n);
      else this.remove(id, change.row, n);
    }
    const deltas: RowDelta[] = [];
    for (const [id, old] of before) {
      const now = this.entries.get(id)?.row ?? null;
      if (old === null && now === null) continue;
      const kind = old === null ? 'insert' : now === null ? 'delete' : 'update';
      const changedColumns =
        old === null || now === null
          ? [...this.columns]
          : this.columns.filter((c) => JSON.stringify(old[c]) !== JSON.stringify(now[c]));
      deltas.push({ id, kind, before: old, after: now, changedColumns });
    }
    return deltas;
  }

  /** Held rows ordered by the key (or by all columns). */
  sorted(): LiveEntry[] {
    const order = this.order;
    const out = [...this.entries].map(([id, e]) => ({ id, row: e.row, count: e.count }));
    out.sort(order);
    return out;
  }

  /**
   * The first `limit` rows of `sorted()`, without sorting them all: a page redraws what it shows
   * on every change, and sorting a million-row view each time held the page for seconds. One
   * comparison per row against the last kept one, plus a binary insertion for the few that beat
   * it: about n comparisons, where the sort made n·log n.
   */
  first(limit: number): LiveEntry[] {
    const order = this.order;
    const kept: LiveEntry[] = [];
    if (limit <= 0) return kept;
    for (const [id, e] of this.entries) {
      const entry = { id, row: e.row, count: e.count };
      const last = kept[kept.length - 1];
      if (kept.length === limit && last !== undefined && order(entry, last) >= 0) continue;
      let lo = 0;
      let hi = kept.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (order(entry, kept[mid] as LiveEntry) < 0) hi = mid;
        else lo = mid + 1;
      }
      kept.splice(lo, 0, entry);
      if (kept.length > limit) kept.pop();
    }
    return kept;
  }

  /**
   * Key order, then the identity: values that compare equal but differ ('1' and 1) still have one
   * place, so "at or before the boundary" means the same row on every check.
   */
  private makeOrder(): (a: LiveEntry, b: LiveEntry) => number {
    const cols = this.key ?? this.columns;
    return (a, b) => {
      for (const c of cols) {
        const d = compareValues(a.row[c], b.row[c]);
        if (d !== 0) return d;
      }
      return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    };
  }

  /** Whether a row not held is a row of the window (at or before the boundary) rather than past it. */
  private inWindow(id: string, row: WireRow): boolean {
    return this.boundary === null || this.order({ id, row, count: 1 }, this.boundary) <= 0;
  }

  /** Keeps the first half of the capacity; the rest is counted only. */
  private trim(): void {
    const kept = this.first(Math.max(1, Math.floor(this.capacity / 2)));
    const last = kept[kept.length - 1];
    if (last === undefined) return;
    this.entries.clear();
    this.heldCopies = 0;
    for (const e of kept) {
      this.entries.set(e.id, { row: e.row, count: e.count });
      this.heldCopies += e.count;
    }
    this.boundary = last;
  }

  get(id: string): LiveEntry | undefined {
    const e = this.entries.get(id);
    return e === undefined ? undefined : { id, row: e.row, count: e.count };
  }

  private add(row: WireRow, n: number): void {
    const id = this.idOf(row);
    const e = this.entries.get(id);
    this.total += n;
    if (e === undefined && !this.inWindow(id, row)) return;
    // A keyed view holds one row per key: an insert on a present key (out-of-order pair) replaces it.
    if (e === undefined || this.key !== null) {
      this.entries.set(id, { row, count: this.key === null ? (e?.count ?? 0) + n : 1 });
      this.heldCopies += e === undefined ? (this.key === null ? n : 1) : this.key === null ? n : 0;
    } else {
      e.count += n;
      this.heldCopies += n;
    }
    if (this.entries.size > this.capacity) this.trim();
  }

  private remove(id: string, row: WireRow, n: number): void {
    const e = this.entries.get(id);
    if (e === undefined) {
      // Not held: a row past the boundary leaves the count; one inside the window was never there.
      if (this.inWindow(id, row)) return;
      this.total = Math.max(this.heldCopies, this.total - n);
    } else {
      const removed = this.key !== null ? e.count : Math.min(n, e.count);
      if (this.key !== null || e.count <= n) this.entries.delete(id);
      else e.count -= n;
      this.heldCopies -= removed;
      this.total = Math.max(this.heldCopies, this.total - removed);
    }
    // Every dropped row is gone again: the copy is whole.
    if (this.boundary !== null && this.heldCopies === this.total) this.boundary = null;
  }
}
