// The live page of one view: its rows updating in place from the changelog, the current epoch and
// the source positions it covers, a live bar chart when the view is histogram-shaped, rolling plots
// of events/s and epoch latency, and the dataflow with live per-operator counts.
// A view holding row errors shows the server's VIEW_ERROR (code, message, the offending row) in
// place of its rows, checks once a second whether it still holds them, and subscribes afresh once
// they are retracted. An unknown view says so and stops every timer and socket of the page.
import { ApiError, errorText, getJson, type ApiErrorBody, type ViewJson } from './api.ts';
import { DataflowView, type DataflowJson } from './dataflow-view.ts';
import { formatBytes, formatCount, h, setText } from './dom.ts';
import { LiveTable } from './live-table.ts';
import { ChartPanel, LiveView, formatPositions } from './live-view.ts';
import { MetricsSampler } from './metrics-sampler.ts';
import type { Page } from './page.ts';
import { viewHref } from './page.ts';
import { RollingPlot } from './sparkline.ts';
import type { ConnectionState } from './subscription.ts';
import { ViewErrorWatch, errorParts } from './view-error-watch.ts';

const STATE_TEXT: Record<ConnectionState, string> = {
  connecting: 'connecting…',
  loading: 'loading snapshot…',
  live: 'live',
  reconnecting: 'reconnecting…',
  error: 'view error',
  closed: 'closed',
};

export function viewPage(root: HTMLElement, name: string): Page {
  const stateBadge = h(
    'span',
    { class: 'badge state-connecting', 'data-testid': 'connection' },
    STATE_TEXT.connecting,
  );
  const epoch = h('strong', { 'data-testid': 'view-epoch' }, '…');
  const positions = h('span', { 'data-testid': 'positions' }, '—');
  const rowCount = h('strong', {}, '…');
  const stateSize = h('strong', {}, '…');
  const subscribers = h('strong', {}, '…');
  const errors = h('strong', {}, '…');
  const problem = h('p', { class: 'problem', role: 'alert' });
  problem.hidden = true;
  // The server's own error body, rendered once per distinct error (it is an alert).
  const viewError = h('section', {
    class: 'problem view-error',
    role: 'alert',
    'data-testid': 'view-error',
    'aria-labelledby': 'view-error-title',
  });
  viewError.hidden = true;
  let shownError = '';
  const showError = (title: string, body: ApiErrorBody, ...extra: HTMLElement[]): void => {
    const id = JSON.stringify([title, body]);
    viewError.hidden = false;
    if (id === shownError) return;
    shownError = id;
    viewError.setAttribute('data-code', body.code);
    viewError.replaceChildren(h('h2', { id: 'view-error-title' }, title), ...errorParts(body), ...extra);
  };
  const hideError = (): void => {
    viewError.hidden = true;
    shownError = '';
  };
  const withheld = h(
    'p',
    { class: 'table-note', 'data-testid': 'rows-withheld' },
    'Rows are withheld while the view holds row errors: they could be wrong.',
  );
  withheld.hidden = true;
  const sqlText = h('code', {});
  const dependsOn = h('span', {});

  const table = new LiveTable(`Rows of ${name}`);
  const chartSection = h('section', { class: 'card chart-card', 'aria-label': `Live chart of ${name}` });
  chartSection.hidden = true;
  const chart = new ChartPanel(name, (chartable) => {
    chartSection.hidden = !chartable;
  });
  chartSection.append(chart.element);
  const rate = new RollingPlot('Events', [
    { name: 'changes/s', className: 's1', format: (v) => formatCount(v) },
    { name: 'rows in/s', className: 's2', format: (v) => formatCount(v) },
  ]);
  const latency = new RollingPlot('Epoch latency', [
    { name: 'ms', className: 's3', format: (v) => v.toFixed(2) },
  ]);
  const dataflow = new DataflowView(viewHref);

  root.replaceChildren(
    h(
      'div',
      { class: 'view-head' },
      h('h1', {}, name, ' ', h('span', { class: 'kind' }, 'materialized view')),
      h(
        'dl',
        { class: 'facts' },
        h('div', {}, h('dt', {}, 'Changelog'), h('dd', {}, stateBadge)),
        h('div', {}, h('dt', {}, 'Epoch'), h('dd', {}, epoch)),
        h('div', { class: 'wide' }, h('dt', {}, 'Source positions'), h('dd', {}, positions)),
        h('div', {}, h('dt', {}, 'Rows'), h('dd', {}, rowCount)),
        h('div', {}, h('dt', {}, 'State'), h('dd', {}, stateSize)),
        h('div', {}, h('dt', {}, 'Subscribers'), h('dd', {}, subscribers)),
        h('div', {}, h('dt', {}, 'Row errors'), h('dd', {}, errors)),
      ),
      h(
        'details',
        { class: 'definition' },
        h('summary', {}, 'Definition ', dependsOn),
        h('pre', {}, sqlText),
      ),
    ),
    problem,
    viewError,
    h(
      'div',
      { class: 'grid top' },
      chartSection,
      h(
        'section',
        { class: 'card plots', 'aria-label': 'Events per second and epoch latency' },
        rate.element,
        latency.element,
      ),
    ),
    h(
      'div',
      { class: 'grid split' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'rows-title' },
        h('h2', { id: 'rows-title' }, 'Rows'),
        withheld,
        table.element,
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'dataflow-title' },
        h('h2', { id: 'dataflow-title' }, 'Dataflow'),
        dataflow.element,
      ),
    ),
  );

  let changesThisSecond = 0;
  const live = new LiveView(
    name,
    { table, chart },
    {
      epoch: (e, pos) => {
        setText(epoch, String(e));
        if (pos !== null) setText(positions, formatPositions(pos));
        // Rows as held by this page, so the count moves with the table (distinct rows).
        setText(rowCount, errorWatch.active ? '—' : formatCount(live.rows.size));
      },
      state: (state, detail, reason) => {
        stateBadge.className = `badge state-${state}`;
        setText(stateBadge, STATE_TEXT[state]);
        if (state === 'error') {
          enterError();
          return;
        }
        if (state === 'closed' && reason?.code === 'UNKNOWN_VIEW') {
          notFound(reason);
          return;
        }
        if (detail !== undefined && state === 'closed') {
          problem.hidden = false;
          setText(problem, detail);
        } else if (state === 'live') problem.hidden = true;
      },
      changes: (count) => {
        changesThisSecond += count;
      },
    },
  );
  const sampler = new MetricsSampler((r, fromHistory) => {
    // This page counts the view's changes itself, so its history has none (a gap in that line).
    rate.push([fromHistory ? null : changesThisSecond, r.rowsPerSecond]);
    if (!fromHistory) changesThisSecond = 0;
    latency.push([r.latencyMs]);
  });

  let stopped = false;
  let timer: number | undefined;
  let dataflowOk = true;

  // ---- row errors: the rows are refused (VIEW_ERROR) until the offending rows are retracted ----
  // The server's answer to a read (checked once a second) is what the page shows.
  const errorWatch = new ViewErrorWatch(name, {
    error: (body) => showError(`View "${name}" holds row errors`, body),
    cleared: () => {
      // Readable again: show the rows from a fresh snapshot.
      hideError();
      withheld.hidden = true;
      table.element.hidden = false;
      live.restart();
    },
    unknown: (body) => notFound(body),
  });
  function enterError(): void {
    if (!errorWatch.active) {
      table.element.hidden = true;
      withheld.hidden = false;
      chartSection.hidden = true;
      setText(rowCount, '—');
    }
    errorWatch.start();
  }

  // ---- an unknown view: say so once and stop asking ----
  function notFound(body: ApiErrorBody): void {
    if (stopped) return;
    stop();
    stateBadge.className = 'badge state-closed';
    setText(stateBadge, STATE_TEXT.closed);
    problem.hidden = true;
    for (const part of root.querySelectorAll<HTMLElement>('.grid')) part.hidden = true;
    showError(
      'No such view',
      body,
      h(
        'p',
        {},
        `There is no materialized view named "${name}". Create it in the `,
        h('a', { href: '#/sql' }, 'SQL editor'),
        ', then reload this page.',
      ),
    );
  }

  function stop(): void {
    stopped = true;
    window.clearTimeout(timer);
    sampler.stop();
    errorWatch.stop();
    live.close();
  }

  const refresh = async (): Promise<void> => {
    try {
      const info = await getJson<ViewJson>(`/v1/views/${encodeURIComponent(name)}`);
      if (stopped) return;
      setText(stateSize, formatBytes(info.stateBytes));
      setText(subscribers, String(info.subscribers ?? '—'));
      setText(errors, String(info.errors ?? 0));
      setText(sqlText, info.sql);
      setText(
        dependsOn,
        (info.dependsOn ?? []).length > 0 ? `(reads ${(info.dependsOn ?? []).join(', ')})` : '',
      );
      if (dataflowOk) {
        try {
          dataflow.update(await getJson<DataflowJson>(`/v1/views/${encodeURIComponent(name)}/dataflow`));
        } catch (error) {
          // A server without the dataflow endpoint still shows everything else.
          if (error instanceof ApiError && error.status === 404 && error.body.code === 'NOT_FOUND')
            dataflowOk = false;
        }
      }
    } catch (error) {
      if (stopped) return;
      if (error instanceof ApiError && error.body.code === 'UNKNOWN_VIEW') {
        notFound(error.body);
        return;
      }
      problem.hidden = false;
      setText(problem, `Cannot read view "${name}": ${errorText(error)}`);
    }
    if (!stopped) timer = window.setTimeout(() => void refresh(), 1000);
  };
  void refresh();

  return {
    title: name,
    close: stop,
  };
}
