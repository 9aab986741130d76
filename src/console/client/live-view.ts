// One live view on the page: its changelog subscription feeding a LiveRows copy, and the widgets
// drawn from it (live table, bar chart), the epoch and its source positions, and the change rate.
import { LiveRows, toNumber, type RowDelta } from '../shared/changelog-state.ts';
import { pickChart, type ChartSpec } from '../shared/chart-pick.ts';
import type { ColumnInfo } from './api.ts';
import { BarChart, type Bar } from './bar-chart.ts';
import { formatValue, h, setText } from './dom.ts';
import { MAX_ROWS, type LiveTable } from './live-table.ts';
import {
  ViewSubscription,
  type ChangesMessage,
  type ConnectionState,
  type StopReason,
} from './subscription.ts';

export interface LiveViewHooks {
  epoch?(epoch: number, positions: Readonly<Record<string, unknown>> | null): void;
  state?(state: ConnectionState, detail?: string, reason?: StopReason): void;
  changes?(count: number, message: ChangesMessage): void;
  schema?(columns: readonly ColumnInfo[], key: readonly string[] | null, chart: ChartSpec | null): void;
}

/**
 * Distinct rows a page holds of one view: the first ones in key order, four times what the table
 * shows, so deletes among them rarely empty the window. Before, the page held every row: a
 * million-row view grew the tab without a bound. The rest are counted, not held.
 */
export const HELD_ROWS = 2000;

export class LiveView {
  rows = new LiveRows([], null);
  columns: readonly ColumnInfo[] = [];
  chartSpec: ChartSpec | null = null;
  private readonly sub: ViewSubscription;

  constructor(
    readonly view: string,
    private readonly parts: { table?: LiveTable; chart?: ChartPanel },
    private readonly hooks: LiveViewHooks = {},
  ) {
    this.sub = new ViewSubscription(view, {
      reset: (columns, key, epoch) => {
        this.columns = columns;
        this.rows = new LiveRows(
          columns.map((c) => c.name),
          key,
          HELD_ROWS,
        );
        this.chartSpec = pickChart(columns, key);
        this.parts.table?.reset(columns, this.rows);
        this.parts.chart?.reset(this.chartSpec, this.rows);
        this.hooks.schema?.(columns, key, this.chartSpec);
        this.hooks.epoch?.(epoch, null);
      },
      snapshotRows: (rows) => {
        this.rows.load(rows);
      },
      snapshotEnd: (epoch) => {
        this.parts.table?.loaded();
        this.parts.chart?.changed([]);
        this.hooks.epoch?.(epoch, null);
      },
      changes: (message) => {
        const deltas = this.rows.apply(message.changes);
        this.parts.table?.applied(deltas);
        this.parts.chart?.changed(deltas);
        this.hooks.changes?.(message.changes.length, message);
        this.hooks.epoch?.(message.epoch, message.positions);
        // Deletes emptied the held window while dropped rows remain: which rows come next is only
        // known to the server, so read the view again from a fresh snapshot.
        if (this.rows.needsRefill(Math.max(MAX_ROWS, MAX_BARS))) this.sub.restart();
      },
      progress: (epoch) => this.hooks.epoch?.(epoch, null),
      state: (state, detail, reason) => this.hooks.state?.(state, detail, reason),
    });
  }

  /** Subscribes again from a fresh snapshot (the view's row errors were retracted). */
  restart(): void {
    this.sub.restart();
  }

  close(): void {
    this.sub.close();
  }
}

/**
 * Bars drawn at most: one SVG element each, and a million-row view drew a million (a page held
 * for seconds per change, and unreadable); past it the chart shows the first rows in key order.
 */
const MAX_BARS = 500;

/** The bar chart of a chartable view, with a choice of value column when there are several. */
export class ChartPanel {
  readonly element: HTMLElement;
  private readonly chart: BarChart;
  private readonly caption: HTMLElement;
  private readonly picker: HTMLElement;
  private spec: ChartSpec | null = null;
  private valueColumn = '';
  private rows: LiveRows | null = null;
  private frame = 0;

  constructor(
    private readonly view: string,
    private readonly onChartable?: (chartable: boolean) => void,
  ) {
    this.chart = new BarChart(
      (bars) => this.describe(bars),
      (bar) => `${this.spec?.keyColumn ?? 'key'} ${bar.label}: ${this.valueColumn} ${formatValue(bar.value)}`,
    );
    this.caption = h('span', { class: 'chart-caption' });
    this.picker = h('span', { class: 'chart-picker' });
    this.element = h(
      'figure',
      { class: 'chart-panel' },
      h('figcaption', {}, this.caption, this.picker),
      this.chart.svg,
    );
    new ResizeObserver(() => this.changed([])).observe(this.chart.svg);
  }

  reset(spec: ChartSpec | null, rows: LiveRows): void {
    this.spec = spec;
    this.rows = rows;
    this.onChartable?.(spec !== null);
    if (spec === null) return;
    if (!spec.valueColumns.includes(this.valueColumn)) this.valueColumn = spec.valueColumns[0] ?? '';
    this.picker.replaceChildren();
    if (spec.valueColumns.length > 1) {
      const id = `chart-value-${this.view}`;
      const select = h(
        'select',
        { id },
        ...spec.valueColumns.map((c) => h('option', { value: c, selected: c === this.valueColumn }, c)),
      );
      select.addEventListener('change', () => {
        this.valueColumn = select.value;
        this.changed([]);
      });
      this.picker.append(h('label', { for: id }, 'value '), select);
    }
    this.changed([]);
  }

  changed(_deltas: readonly RowDelta[]): void {
    if (this.frame !== 0 || this.spec === null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private draw(): void {
    const spec = this.spec;
    if (spec === null || this.rows === null) return;
    const total = this.rows.size;
    setText(
      this.caption,
      `${this.valueColumn} by ${spec.keyColumn}` +
        (total > MAX_BARS ? ` (the first ${MAX_BARS} of ${total} rows)` : ''),
    );
    const bars: Bar[] = this.rows.first(MAX_BARS).map((e) => ({
      id: e.id,
      label: formatValue(e.row[spec.keyColumn]),
      value: toNumber(e.row[this.valueColumn]) ?? 0,
    }));
    this.chart.update(withGaps(bars));
  }

  private describe(bars: readonly Bar[]): string {
    if (bars.length === 0) return `${this.view}: no rows yet`;
    const top = bars.reduce((a, b) => (b.value > a.value ? b : a));
    return `Bar chart of ${this.view}: ${this.valueColumn} by ${this.spec?.keyColumn ?? ''}, ${bars.length} bars; largest ${top.label} with ${formatValue(top.value)}`;
  }
}

/**
 * Integer buckets with empty ones in between (no row: no seller in that range) keep their place on
 * the axis, so a histogram reads as one; sparse or non-integer keys are drawn side by side.
 */
export function withGaps(bars: readonly Bar[]): Bar[] {
  const keys = bars.map((b) => Number(b.label));
  if (bars.length < 2 || !keys.every((k) => Number.isInteger(k))) return [...bars];
  const lo = keys[0] as number;
  const hi = keys[keys.length - 1] as number;
  const span = hi - lo + 1;
  if (span > Math.max(240, bars.length * 3)) return [...bars];
  const byKey = new Map(bars.map((b, i) => [keys[i] as number, b]));
  const out: Bar[] = [];
  for (let k = lo; k <= hi; k++)
    out.push(byKey.get(k) ?? { id: `gap:${k}`, label: String(k), value: 0, gap: true });
  return out;
}

/** "orders @ 1204" — an epoch's source positions, readable. */
export function formatPositions(positions: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(positions).map(([source, pos]) => {
    if (pos !== null && typeof pos === 'object') {
      const inner = Object.entries(pos as Record<string, unknown>)
        .map(([k, v]) => `${k} ${formatValue(v)}`)
        .join(', ');
      return `${source}: ${inner}`;
    }
    return `${source}: ${formatValue(pos)}`;
  });
  return parts.length === 0 ? 'none' : parts.join(' · ');
}
