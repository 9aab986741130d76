// The home page: the "big screen" — a live chart of the most histogram-like view moving as data
// arrives, the rolling input rate and epoch latency — and the catalog (tables, views, sources,
// sinks) with their status, refreshed in place. Two epochs are shown, each labelled: the server's
// (the header, from /readyz) and the one the featured chart has applied (its changelog), which
// trails the server's by at most a progress interval. The catalog repeats none: every view reflects
// every committed epoch, so a per-view epoch column was the server's, read at another moment.
// When the featured view holds row errors the chart is withheld and the server's VIEW_ERROR shown
// in its place; once the rows are retracted the chart subscribes again by itself (as the view page).
import { pickChart } from '../shared/chart-pick.ts';
import {
  errorText,
  getCatalog,
  type ApiErrorBody,
  type Catalog,
  type ConnectorJson,
  type ViewJson,
} from './api.ts';
import { formatBytes, formatCount, formatValue, h, setText } from './dom.ts';
import { KeyedTable } from './keyed-table.ts';
import { ChartPanel, LiveView, formatPositions } from './live-view.ts';
import { MetricsSampler } from './metrics-sampler.ts';
import type { Page } from './page.ts';
import { viewHref } from './page.ts';
import { RollingPlot } from './sparkline.ts';
import { ViewErrorWatch, errorParts } from './view-error-watch.ts';

/** The view to feature: chartable, histogram-like names first, then views over views. */
export function featuredView(views: readonly ViewJson[]): ViewJson | null {
  const chartable = views.filter((v) => pickChart(v.columns, v.key) !== null);
  const score = (v: ViewJson): number =>
    (/hist|bucket|band|bin|tier/i.test(v.name) ? 4 : 0) +
    (/bucket|band|bin|tier|range/i.test(v.key?.[0] ?? '') ? 2 : 0) +
    ((v.dependsOn?.length ?? 0) > 0 && v.sql.length > 0 ? 1 : 0);
  return chartable.sort((a, b) => score(b) - score(a))[0] ?? null;
}

function connectorCell(c: ConnectorJson, field: string): string {
  const v = c[field];
  return v === undefined ? '—' : formatValue(v);
}

export function overviewPage(root: HTMLElement): Page {
  const featuredHolder = h('section', { class: 'card featured', 'aria-labelledby': 'featured-title' });
  const plots = {
    rate: new RollingPlot('Throughput', [
      { name: 'rows in/s', className: 's1', format: (v) => formatCount(v) },
      { name: 'epochs/s', className: 's2', format: (v) => formatCount(v) },
    ]),
    latency: new RollingPlot('Epoch latency', [{ name: 'ms', className: 's3', format: (v) => v.toFixed(2) }]),
  };
  const tables = new KeyedTable<Catalog['tables'][number]>(
    'Tables',
    [
      { header: 'Table', cell: (t) => t.name },
      { header: 'Columns', wrap: true, cell: (t) => t.columns.map((c) => `${c.name} ${c.type}`).join(', ') },
      { header: 'Key', cell: (t) => t.key?.join(', ') ?? '—' },
      { header: 'Rows', numeric: true, cell: (t) => formatCount(t.rowCount) },
      { header: 'Read by', cell: (t) => (t.dependents ?? []).join(', ') || '—' },
    ],
    (t) => t.name,
    'No tables yet. Create one in the SQL editor: CREATE TABLE orders (…)',
  );
  const views = new KeyedTable<ViewJson>(
    'Materialized views',
    [
      { header: 'View', cell: (v) => ({ text: v.name, href: viewHref(v.name) }) },
      { header: 'Key', cell: (v) => (v.key === null ? 'none' : v.key.join(', ') || '(one row)') },
      { header: 'Rows', numeric: true, cell: (v) => formatCount(v.rowCount) },
      { header: 'State', numeric: true, cell: (v) => formatBytes(v.stateBytes) },
      { header: 'Subscribers', numeric: true, cell: (v) => String(v.subscribers ?? 0) },
      { header: 'Errors', numeric: true, cell: (v) => String(v.errors ?? 0) },
      { header: 'Reads', cell: (v) => (v.dependsOn ?? []).join(', ') || '—' },
    ],
    (v) => v.name,
    'No materialized views yet. Create one in the SQL editor, or start the server with --demo.',
  );
  // State with the reason when it is not running (retrying, failed): never a silent stop.
  const stateCell = (c: ConnectorJson): string => {
    const error = c.error as { message?: string } | null | undefined;
    const state = connectorCell(c, 'state');
    return error?.message !== undefined ? `${state}: ${error.message}` : state;
  };
  const totalLag = (c: ConnectorJson): string => {
    const parts = (c.partitions ?? []) as { lag: number | null }[];
    return parts.length === 0 ? '—' : formatCount(parts.reduce((n, p) => n + (p.lag ?? 0), 0));
  };
  const sourceColumns = [
    { header: 'Source', cell: (c: ConnectorJson) => c.name },
    { header: 'Topic', cell: (c: ConnectorJson) => connectorCell(c, 'topic') },
    { header: 'State', wrap: true, cell: stateCell },
    { header: 'Records', numeric: true, cell: (c: ConnectorJson) => connectorCell(c, 'recordsIn') },
    {
      header: 'Records/s',
      numeric: true,
      cell: (c: ConnectorJson) => formatCount(Number(c.recordsPerSecond ?? 0)),
    },
    { header: 'Lag', numeric: true, cell: totalLag },
    { header: 'Skipped', numeric: true, cell: (c: ConnectorJson) => connectorCell(c, 'skipped') },
  ];
  const sinkColumns = [
    { header: 'Sink', cell: (c: ConnectorJson) => c.name },
    { header: 'View', cell: (c: ConnectorJson) => connectorCell(c, 'view') },
    { header: 'Topic', cell: (c: ConnectorJson) => connectorCell(c, 'topic') },
    { header: 'State', wrap: true, cell: stateCell },
    { header: 'Written epoch', numeric: true, cell: (c: ConnectorJson) => connectorCell(c, 'epoch') },
    { header: 'Lag (epochs)', numeric: true, cell: (c: ConnectorJson) => connectorCell(c, 'lagEpochs') },
  ];
  const sources = new KeyedTable<ConnectorJson>(
    'Sources',
    sourceColumns,
    (c) => c.name,
    'No sources. CREATE SOURCE … FROM KAFKA … adds one.',
  );
  const sinks = new KeyedTable<ConnectorJson>(
    'Sinks',
    sinkColumns,
    (c) => c.name,
    'No sinks. CREATE SINK … FROM view INTO KAFKA … adds one.',
  );
  const problem = h('p', { class: 'problem', role: 'status' });
  problem.hidden = true;

  root.replaceChildren(
    h('h1', { class: 'visually-hidden' }, 'Overview'),
    h(
      'div',
      { class: 'grid top' },
      featuredHolder,
      h(
        'section',
        { class: 'card plots', 'aria-label': 'Server throughput and latency' },
        plots.rate.element,
        plots.latency.element,
      ),
    ),
    problem,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'views-title' },
      h('h2', { id: 'views-title' }, 'Materialized views'),
      views.element,
    ),
    h(
      'div',
      { class: 'grid two' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'tables-title' },
        h('h2', { id: 'tables-title' }, 'Tables'),
        tables.element,
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'connectors-title' },
        h('h2', { id: 'connectors-title' }, 'Sources and sinks'),
        h('h3', {}, 'Sources'),
        sources.element,
        h('h3', {}, 'Sinks'),
        sinks.element,
      ),
    ),
  );

  let live: LiveView | null = null;
  let watch: ViewErrorWatch | null = null;
  const feature = (v: ViewJson | null): void => {
    if (live !== null && live.view === v?.name) return;
    live?.close();
    watch?.stop();
    live = null;
    watch = null;
    if (v === null) {
      featuredHolder.replaceChildren(
        h('h2', { id: 'featured-title' }, 'Nothing to chart yet'),
        h(
          'p',
          {},
          'A view with a numeric key and a numeric value (a histogram) appears here as a live bar chart. ',
          'Start the server with ',
          h('code', {}, 'sluice start --demo'),
          ' or create one in the ',
          h('a', { href: '#/sql' }, 'SQL editor'),
          '.',
        ),
      );
      return;
    }
    const epoch = h('span', { class: 'epoch', 'data-testid': 'featured-epoch' }, '…');
    const positions = h('span', { class: 'positions' });
    const chart = new ChartPanel(v.name);
    // The view's row errors, shown in place of the chart (which could be wrong) while it holds them.
    const problemBox = h('div', {
      class: 'problem view-error',
      role: 'alert',
      'data-testid': 'featured-error',
    });
    problemBox.hidden = true;
    let shown = '';
    const showProblem = (body: ApiErrorBody): void => {
      chart.element.hidden = true;
      problemBox.hidden = false;
      const id = JSON.stringify(body);
      if (id === shown) return;
      shown = id;
      problemBox.setAttribute('data-code', body.code);
      problemBox.replaceChildren(
        h('h3', {}, `View "${v.name}" holds row errors: its chart is withheld`),
        ...errorParts(body),
      );
    };
    featuredHolder.replaceChildren(
      h(
        'div',
        { class: 'card-head' },
        h('h2', { id: 'featured-title' }, 'Live: ', h('a', { href: viewHref(v.name) }, v.name)),
        h(
          'p',
          { class: 'meta' },
          h(
            'span',
            { 'data-epoch': 'chart', title: 'The epoch whose changes the chart has applied' },
            'chart as of epoch ',
            epoch,
          ),
          ' · ',
          positions,
        ),
      ),
      problemBox,
      chart.element,
    );
    const view = new LiveView(
      v.name,
      { chart },
      {
        epoch: (e, pos) => {
          setText(epoch, String(e));
          if (pos !== null) setText(positions, formatPositions(pos));
        },
        state: (state, _detail, reason) => {
          if (state !== 'error') return;
          // Until the server answers the first check, show what the changelog said.
          if (problemBox.hidden && reason !== undefined) showProblem(reason);
          errorWatch.start();
        },
      },
    );
    const errorWatch = new ViewErrorWatch(v.name, {
      error: showProblem,
      cleared: () => {
        problemBox.hidden = true;
        shown = '';
        chart.element.hidden = false;
        view.restart();
      },
      // Dropped: the next catalog refresh features another view.
      unknown: showProblem,
    });
    live = view;
    watch = errorWatch;
  };

  let stopped = false;
  let timer: number | undefined;
  const refresh = async (): Promise<void> => {
    try {
      const catalog = await getCatalog();
      if (stopped) return;
      problem.hidden = true;
      tables.update(catalog.tables);
      views.update(catalog.views);
      sources.update(catalog.sources);
      sinks.update(catalog.sinks);
      feature(featuredView(catalog.views));
    } catch (error) {
      problem.hidden = false;
      setText(problem, `Cannot read the catalog: ${errorText(error)}`);
    }
    if (!stopped) timer = window.setTimeout(() => void refresh(), 2000);
  };
  void refresh();
  const sampler = new MetricsSampler((r) => {
    plots.rate.push([r.rowsPerSecond, r.epochsPerSecond]);
    plots.latency.push([r.latencyMs]);
  });

  return {
    title: 'Overview',
    close: () => {
      stopped = true;
      window.clearTimeout(timer);
      sampler.stop();
      live?.close();
      watch?.stop();
    },
  };
}
