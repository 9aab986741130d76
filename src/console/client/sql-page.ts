// The SQL page: statements run through POST /v1/sql; each result shown as a table, a plan or a
// one-line outcome; an error shown with its code, hint and position, which is marked in the editor.
// Every executed text joins the history (localStorage, bounded: shared/sql-history.ts), recalled
// with Ctrl/Cmd+Up and Down in the editor or picked from the history list.
import { runSql, type ApiErrorBody, type StatementResultJson } from './api.ts';
import { formatValue, h } from './dom.ts';
import { isNumericType } from '../shared/chart-pick.ts';
import type { Page } from './page.ts';
import { viewHref } from './page.ts';
import { SqlEditor, offsetOf } from './sql-editor.ts';
import { DEMO_SQL } from '../shared/demo-sql.ts';
import { HistoryWalk, StatementHistory, type HistoryStorage } from '../shared/sql-history.ts';

const STORAGE_KEY = 'sluice.console.sql';
const MAX_ROWS = 1000;

/** localStorage, or none where the browser refuses it (a sandboxed frame, storage disabled). */
function browserStorage(): HistoryStorage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** The largest draft kept for the tab: writing megabytes to sessionStorage on every key would stall. */
const MAX_DRAFT_CHARS = 200_000;

/** Keeps the text being edited for this tab (a reload shows it again), when it is not huge. */
function saveDraft(sql: string): void {
  try {
    if (sql.length <= MAX_DRAFT_CHARS) sessionStorage.setItem(STORAGE_KEY, sql);
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage full or disabled: the draft is simply not kept.
  }
}

function loadDraft(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** One line of a statement for the history list. */
function summary(sql: string): string {
  const line = sql.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

export const EXAMPLES: readonly { readonly label: string; readonly sql: string }[] = [
  {
    label: 'Orders per amount band (a view over the demo table)',
    sql: `CREATE MATERIALIZED VIEW amount_bands AS
  SELECT FLOOR(amount / 10) AS band, COUNT(*) AS orders, SUM(amount) AS revenue
  FROM orders
  GROUP BY FLOOR(amount / 10);`,
  },
  {
    label: 'Double 11: seller totals and their histogram',
    sql: DEMO_SQL,
  },
  {
    label: 'EXPLAIN DATAFLOW of a query',
    sql: `EXPLAIN DATAFLOW
  SELECT seller_id, SUM(amount) AS total, MAX(amount) AS biggest
  FROM orders GROUP BY seller_id;`,
  },
  { label: 'Top sellers right now', sql: 'SELECT * FROM seller_totals WHERE total > 1000;' },
  { label: 'The catalog', sql: 'SHOW TABLES;\nSHOW VIEWS;' },
];

function resultTable(result: StatementResultJson): HTMLElement | null {
  if (result.columns === undefined || result.rows === undefined) return null;
  const cols = result.columns;
  const rows = result.rows.slice(0, MAX_ROWS);
  const table = h(
    'table',
    { class: 'data' },
    h('caption', { class: 'visually-hidden' }, `${result.statement} result`),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...cols.map((c) =>
          h(
            'th',
            { scope: 'col', class: isNumericType(c.type) ? 'num' : '' },
            c.name,
            h('span', { class: 'col-type' }, c.type),
          ),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      ...rows.map((r) =>
        h(
          'tr',
          {},
          ...cols.map((c) =>
            h(
              'td',
              { class: `${isNumericType(c.type) ? 'num' : ''}${r[c.name] === null ? ' null' : ''}` },
              formatValue(r[c.name]),
            ),
          ),
        ),
      ),
    ),
  );
  const note =
    result.rows.length > MAX_ROWS
      ? `showing ${MAX_ROWS} of ${result.rows.length} rows`
      : `${result.rows.length} row${result.rows.length === 1 ? '' : 's'}`;
  return h(
    'div',
    { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': `${result.statement} result` },
    table,
    h('p', { class: 'table-note' }, note),
  );
}

function resultCard(result: StatementResultJson, index: number): HTMLElement {
  const title = h(
    'h3',
    {},
    `${index + 1}. ${result.statement}`,
    result.object !== undefined ? h('code', {}, ` ${result.object}`) : null,
  );
  const meta: (string | Node)[] = [];
  if (result.epoch !== undefined) meta.push(`epoch ${result.epoch}`);
  if (result.rowCount !== undefined)
    meta.push(`${result.rowCount} row${result.rowCount === 1 ? '' : 's'} affected`);
  const body: (Node | null)[] = [];
  if (result.plan !== undefined) body.push(h('pre', { class: 'plan-text' }, result.plan));
  else body.push(resultTable(result));
  const isView =
    /MATERIALIZED VIEW/.test(result.statement) &&
    !/DROP/.test(result.statement) &&
    result.object !== undefined;
  return h(
    'article',
    { class: 'result', 'data-statement': result.statement },
    h(
      'div',
      { class: 'result-head' },
      title,
      meta.length > 0 ? h('span', { class: 'meta' }, meta.join(' · ')) : null,
    ),
    ...body,
    isView
      ? h(
          'p',
          {},
          h(
            'a',
            { class: 'button-link', href: viewHref(result.object ?? '') },
            `Open live view of ${result.object ?? ''} →`,
          ),
        )
      : null,
  );
}

function errorCard(error: ApiErrorBody, sql: string, goTo: () => void): HTMLElement {
  const parts: (Node | null)[] = [
    h('h3', {}, 'Error ', h('code', { class: 'error-code' }, error.code)),
    h('p', { class: 'error-message' }, error.message),
  ];
  if (error.position !== undefined) {
    const { line, column } = error.position;
    const lineText = sql.split('\n')[line - 1] ?? '';
    const prefix = `LINE ${line}: `;
    const caretAt = offsetOf(sql, line, column) - offsetOf(sql, line, 1);
    parts.push(
      h(
        'p',
        { class: 'error-position' },
        `at line ${line}, column ${column} `,
        h('button', { type: 'button', class: 'secondary', onclick: goTo }, 'Go to error'),
      ),
      h(
        'pre',
        { class: 'error-snippet', 'aria-hidden': 'true' },
        `${prefix}${lineText}\n${' '.repeat(prefix.length + caretAt)}^`,
      ),
    );
  }
  if (error.detail !== undefined)
    parts.push(h('p', { class: 'error-detail' }, h('strong', {}, 'Detail: '), error.detail));
  if (error.hint !== undefined)
    parts.push(h('p', { class: 'error-hint' }, h('strong', {}, 'Hint: '), error.hint));
  return h('article', { class: 'result error', role: 'alert', 'data-code': error.code }, ...parts);
}

export function sqlPage(root: HTMLElement, initialSql?: string): Page {
  const history = new StatementHistory(browserStorage());
  const walk = new HistoryWalk(history);
  const editor = new SqlEditor({
    id: 'sql-editor',
    labelledBy: 'sql-editor-label',
    describedBy: 'sql-help',
    run: () => void execute(),
    recall: (direction) => {
      const text = direction === 'older' ? walk.older(editor.value) : walk.newer();
      if (text === null) return false;
      editor.value = text;
      return true;
    },
    changed: (typed) => {
      if (typed) walk.reset();
      saveDraft(editor.value);
    },
  });
  editor.value = initialSql ?? loadDraft() ?? EXAMPLES[0]?.sql ?? '';
  const output = h('section', { class: 'sql-output', 'aria-label': 'Results', 'aria-live': 'polite' });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Run');
  const status = h('span', { class: 'run-status', role: 'status' });
  const examples = h(
    'select',
    { id: 'sql-example' },
    ...EXAMPLES.map((e, i) => h('option', { value: String(i) }, e.label)),
  );
  const load = h('button', { type: 'button', class: 'secondary' }, 'Load example');
  load.addEventListener('click', () => {
    const e = EXAMPLES[Number(examples.value)];
    if (e === undefined) return;
    walk.reset();
    editor.value = e.sql;
    editor.focus();
  });
  const historyList = h('select', { id: 'sql-history' });
  const recall = h('button', { type: 'button', class: 'secondary' }, 'Recall');
  const showHistory = (): void => {
    const entries = history.entries();
    historyList.replaceChildren(
      ...(entries.length === 0
        ? [h('option', { value: '' }, 'nothing run yet')]
        : entries.map((e, i) => h('option', { value: String(i), title: e }, summary(e)))),
    );
    historyList.disabled = entries.length === 0;
    recall.disabled = entries.length === 0;
  };
  showHistory();
  recall.addEventListener('click', () => {
    const e = history.entries()[Number(historyList.value)];
    if (e === undefined) return;
    walk.reset();
    editor.value = e;
    editor.focus();
  });

  let busy = false;
  const execute = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    run.disabled = true;
    status.textContent = 'running…';
    const sql = editor.value;
    saveDraft(sql);
    history.add(sql);
    walk.reset();
    showHistory();
    const started = performance.now();
    try {
      const outcome = await runSql(sql);
      const ms = Math.round(performance.now() - started);
      const cards: HTMLElement[] = outcome.results.map(resultCard);
      if (outcome.error !== undefined) {
        const position = outcome.error.position;
        editor.setMark(position ?? null);
        cards.push(errorCard(outcome.error, sql, () => editor.focusMark()));
        status.textContent = `failed after ${outcome.results.length} statement${outcome.results.length === 1 ? '' : 's'} (${ms} ms)`;
      } else {
        editor.setMark(null);
        status.textContent = `${outcome.results.length} statement${outcome.results.length === 1 ? '' : 's'} ok (${ms} ms)`;
      }
      output.replaceChildren(...cards);
    } catch (error) {
      output.replaceChildren(
        errorCard(
          { code: 'NETWORK', message: error instanceof Error ? error.message : String(error) },
          sql,
          () => undefined,
        ),
      );
      status.textContent = 'failed';
    } finally {
      busy = false;
      run.disabled = false;
    }
  };

  const form = h(
    'form',
    { class: 'sql-form', 'aria-labelledby': 'sql-title' },
    h('div', { id: 'sql-editor-label', class: 'editor-label' }, 'Statements'),
    editor.element,
    h(
      'div',
      { class: 'toolbar' },
      run,
      h(
        'span',
        { id: 'sql-help', class: 'help' },
        h('kbd', {}, 'Ctrl'),
        '+',
        h('kbd', {}, 'Enter'),
        ' runs · ',
        h('kbd', {}, 'Ctrl'),
        '+',
        h('kbd', {}, '↑'),
        '/',
        h('kbd', {}, '↓'),
        ' earlier statements · separate statements with ',
        h('code', {}, ';'),
      ),
      status,
    ),
    h(
      'div',
      { class: 'toolbar' },
      h('label', { for: 'sql-history' }, 'History'),
      historyList,
      recall,
      h('span', { class: 'spacer' }),
      h('label', { for: 'sql-example' }, 'Examples'),
      examples,
      load,
    ),
  );

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void execute();
  });

  root.replaceChildren(
    h('h1', { id: 'sql-title' }, 'SQL'),
    h(
      'p',
      { class: 'lede' },
      'Run statements against the server: CREATE MATERIALIZED VIEW, SELECT, EXPLAIN DATAFLOW, INSERT … Every view you create is maintained incrementally and can be watched live.',
    ),
    h('section', { class: 'card' }, form),
    output,
  );
  return { title: 'SQL', close: () => undefined };
}
