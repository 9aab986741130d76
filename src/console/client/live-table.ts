// The live table of a view: rows kept in key order and updated in place as changelog messages
// arrive — only the cells that changed are rewritten, and they flash briefly. Rendering is batched
// to one pass per animation frame however fast messages arrive.
import { LiveRows, type RowDelta } from '../shared/changelog-state.ts';
import { isNumericType as isNumeric } from '../shared/chart-pick.ts';
import type { ColumnInfo } from './api.ts';
import { flash, formatValue, h, setText } from './dom.ts';

/** Rows the table draws: the first ones in key order. */
export const MAX_ROWS = 500;

export class LiveTable {
  readonly element: HTMLElement;
  private readonly table: HTMLTableElement;
  private readonly tbody: HTMLTableSectionElement;
  private readonly note: HTMLElement;
  private rows: LiveRows = new LiveRows([], null);
  private columns: readonly ColumnInfo[] = [];
  private readonly trs = new Map<string, HTMLTableRowElement>();
  private readonly dirty = new Map<string, Set<string>>();
  private frame = 0;
  private full = true;

  constructor(caption: string) {
    this.tbody = h('tbody');
    this.table = h('table', { class: 'data live' }, h('caption', { class: 'visually-hidden' }, caption));
    this.note = h('p', { class: 'table-note', 'aria-live': 'off' });
    this.element = h(
      'div',
      { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': caption },
      this.table,
    );
    this.element.append(this.note);
  }

  get state(): LiveRows {
    return this.rows;
  }

  /** Starts over (a new snapshot) showing `rows`, which the caller fills and changes. */
  reset(columns: readonly ColumnInfo[], rows: LiveRows): void {
    const key = rows.key;
    this.columns = columns;
    this.rows = rows;
    this.trs.clear();
    this.dirty.clear();
    const keySet = new Set(key ?? []);
    const head = h(
      'tr',
      {},
      ...columns.map((c) =>
        h(
          'th',
          { scope: 'col', class: isNumeric(c.type) ? 'num' : '' },
          c.name,
          keySet.has(c.name) ? h('span', { class: 'key-badge', title: 'key column' }, 'key') : null,
          h('span', { class: 'col-type' }, c.type),
        ),
      ),
      key === null ? h('th', { scope: 'col', class: 'num' }, 'copies') : null,
    );
    this.tbody.replaceChildren();
    this.table.replaceChildren(this.table.caption ?? '', h('thead', {}, head), this.tbody);
    this.full = true;
    this.schedule();
  }

  /** Rows were loaded in bulk (snapshot): redraw everything without flashing. */
  loaded(): void {
    this.full = true;
    this.schedule();
  }

  /** Records what a changes message did; cells are rewritten on the next frame. */
  applied(deltas: readonly RowDelta[]): void {
    for (const d of deltas) {
      const set = this.dirty.get(d.id) ?? new Set<string>();
      for (const c of d.changedColumns) set.add(c);
      if (d.kind === 'insert') set.add('*new');
      this.dirty.set(d.id, set);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private render(): void {
    const total = this.rows.size;
    const shown = this.rows.first(MAX_ROWS);
    const keep = new Set(shown.map((e) => e.id));
    for (const [id, tr] of this.trs) {
      if (!keep.has(id)) {
        tr.remove();
        this.trs.delete(id);
      }
    }
    let prev: HTMLTableRowElement | null = null;
    for (const entry of shown) {
      let tr = this.trs.get(entry.id);
      const changed = this.dirty.get(entry.id);
      if (tr === undefined) {
        tr = h('tr', { 'data-id': entry.id });
        for (const c of this.columns)
          tr.append(h('td', { 'data-col': c.name, class: isNumeric(c.type) ? 'num' : '' }));
        if (this.rows.key === null) tr.append(h('td', { 'data-col': '*count', class: 'num' }));
        this.trs.set(entry.id, tr);
        this.fill(tr, entry.row, entry.count);
        if (changed !== undefined && !this.full) flash(tr);
      } else if (changed !== undefined || this.full) {
        this.fill(tr, entry.row, entry.count, this.full ? undefined : changed);
      }
      const expected: ChildNode | null = prev === null ? this.tbody.firstChild : prev.nextSibling;
      if (expected !== tr) this.tbody.insertBefore(tr, expected);
      prev = tr;
    }
    this.dirty.clear();
    this.full = false;
    // How many rows the page holds, for anyone checking that it stays bounded.
    this.note.dataset.heldRows = String(this.rows.held);
    setText(
      this.note,
      total > MAX_ROWS
        ? `showing the first ${MAX_ROWS} of ${total} rows`
        : `${total} row${total === 1 ? '' : 's'}`,
    );
  }

  private fill(
    tr: HTMLTableRowElement,
    row: Record<string, unknown>,
    count: number,
    changed?: Set<string>,
  ): void {
    const cells = tr.children;
    this.columns.forEach((c, i) => {
      const td = cells[i];
      if (td === undefined) return;
      const text = formatValue(row[c.name]);
      if (td.textContent !== text) {
        td.textContent = text;
        td.classList.toggle('null', row[c.name] === null);
        if (changed !== undefined && changed.has(c.name)) flash(td);
      }
    });
    if (this.rows.key === null) {
      const td = cells[this.columns.length];
      if (td !== undefined && td.textContent !== String(count)) {
        td.textContent = String(count);
        if (changed !== undefined) flash(td);
      }
    }
  }
}
