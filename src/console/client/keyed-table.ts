// A table whose rows are identified by name and updated in place on every refresh, so polling the
// catalog never rebuilds the DOM under the reader (focus and selection survive).
import { h, setText } from './dom.ts';

export interface ColumnDef<T> {
  readonly header: string;
  readonly numeric?: boolean;
  /** Long text that may wrap. */
  readonly wrap?: boolean;
  readonly cell: (row: T) => string | { readonly text: string; readonly href: string };
}

export class KeyedTable<T> {
  readonly element: HTMLElement;
  private readonly tbody: HTMLTableSectionElement;
  private readonly empty: HTMLElement;
  private readonly trs = new Map<string, HTMLTableRowElement>();

  constructor(
    caption: string,
    private readonly columns: readonly ColumnDef<T>[],
    private readonly idOf: (row: T) => string,
    emptyText: string,
  ) {
    this.tbody = h('tbody');
    const table = h(
      'table',
      { class: 'data' },
      h('caption', { class: 'visually-hidden' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...columns.map((c) => h('th', { scope: 'col', class: c.numeric === true ? 'num' : '' }, c.header)),
        ),
      ),
      this.tbody,
    );
    this.empty = h('p', { class: 'empty-note' }, emptyText);
    this.element = h('div', { class: 'table-scroll' }, table, this.empty);
  }

  update(rows: readonly T[]): void {
    this.empty.hidden = rows.length > 0;
    const seen = new Set<string>();
    let prev: HTMLTableRowElement | null = null;
    for (const row of rows) {
      const id = this.idOf(row);
      seen.add(id);
      let tr = this.trs.get(id);
      if (tr === undefined) {
        tr = h(
          'tr',
          { 'data-name': id },
          ...this.columns.map((c) =>
            h('td', { class: c.numeric === true ? 'num' : c.wrap === true ? 'wrap' : '' }),
          ),
        );
        this.trs.set(id, tr);
      }
      this.columns.forEach((c, i) => {
        const td = tr.children[i];
        if (td === undefined) return;
        const value = c.cell(row);
        if (typeof value === 'string') {
          setText(td, value);
          return;
        }
        const a = td.firstElementChild;
        if (a instanceof HTMLAnchorElement && a.getAttribute('href') === value.href) setText(a, value.text);
        else td.replaceChildren(h('a', { href: value.href }, value.text));
      });
      const expected: ChildNode | null = prev === null ? this.tbody.firstChild : prev.nextSibling;
      if (expected !== tr) this.tbody.insertBefore(tr, expected);
      prev = tr;
    }
    for (const [id, tr] of this.trs) {
      if (!seen.has(id)) {
        tr.remove();
        this.trs.delete(id);
      }
    }
  }
}
