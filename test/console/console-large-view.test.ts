// A view far larger than the console shows: the live table and the bar chart draw their first rows
// in key order (500), found without sorting every row on each redraw. Before, a redraw sorted all of
// a view's rows and the chart drew one SVG bar per row: a 100k-row keyed view held 100k bars, and a
// million-row one held the page for seconds on every change. Counted, not timed: comparisons (key
// reads) for the selection, SVG bars and table rows in a real headless Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { LiveRows, type WireRow } from '../../src/console/shared/changelog-state.ts';
import { browserSuite, launchChromium, openPage, type BrowserDocument } from './browser.ts';
import { api, startConsoleServer, type ConsoleServer } from './harness.ts';

declare const document: BrowserDocument;

/** Rows whose key column counts its reads: every comparison reads it from both rows. */
function countedRows(keys: readonly (number | string | null)[]): { rows: WireRow[]; reads: () => number } {
  let reads = 0;
  const rows = keys.map((k, i) => {
    const row: WireRow = { v: i };
    Object.defineProperty(row, 'k', {
      enumerable: true,
      get: () => {
        reads++;
        return k;
      },
    });
    return row;
  });
  return { rows, reads: () => reads };
}

/** A deterministic shuffle (no Math.random: the same order every run). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  let seed = 12345;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe('LiveRows.first', () => {
  test('is sorted().slice(0, k): mixed values, NULLs, ties in a keyless view, k of 0 and past n', () => {
    const values = [3, '10', null, -0, 2.5, 'b', 'a', 3, null, '9007199254740993', 7, 7, 7];
    const keyless = new LiveRows(['k', 'v'], null);
    keyless.load(shuffled(values).map((k, i) => ({ k, v: i % 3 })));
    const keyed = new LiveRows(['k', 'v'], ['v']);
    keyed.load(values.map((k, i) => ({ k, v: i })));
    for (const rows of [keyless, keyed])
      for (const k of [0, 1, 4, values.length, values.length + 5])
        assert.deepEqual(rows.first(k), rows.sorted().slice(0, k), `k = ${k}`);
  });

  test('reads about one comparison per row, not n log n', () => {
    const n = 100_000;
    const { rows, reads } = countedRows(shuffled(Array.from({ length: n }, (_, i) => i)));
    const live = new LiveRows(['k', 'v'], ['k']);
    live.load(rows); // the row ids are read here, once per row
    const loaded = reads();
    const first = live.first(500);
    const used = reads() - loaded;
    assert.deepEqual(
      first.map((e) => e.row.k),
      Array.from({ length: 500 }, (_, i) => i),
    );
    // Each row against the last kept one (2 reads), plus binary insertions of the few that beat it;
    // the full sort read about 2·n·log2(n) = 3.3 M.
    assert.ok(used < 4 * n, `first(500) of ${n} rows read the key ${used} times`);
  });
});

browserSuite('a large view in the console', 'test/console/console-large-view.test.ts', () => {
  let server: ConsoleServer;
  let browser: Browser;
  const errors: string[] = [];
  const ROWS = 20_000;

  before(async () => {
    server = await startConsoleServer();
    browser = await launchChromium();
    const created = await api(server.base, 'POST', '/v1/sql', {
      sql:
        'CREATE TABLE wide (id BIGINT NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (id)); ' +
        'CREATE MATERIALIZED VIEW big_view AS SELECT id, amount FROM wide WHERE amount >= 0',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const rows = Array.from({ length: ROWS }, (_, i) => ({ id: i, amount: i % 97 }));
    const ingested = await api(server.base, 'POST', '/v1/tables/wide/rows?wait=true', rows);
    assert.equal(ingested.status, 200, JSON.stringify(ingested.body));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('the chart and the table draw the first 500 rows and say so', { timeout: 120_000 }, async () => {
    const page = await openPage(browser, server.base, '#/views/big_view', errors, 60_000);
    await page.waitForFunction(
      (total) =>
        Array.from(document.querySelectorAll('.table-note')).some((e) =>
          (e.textContent ?? '').includes(`of ${total} rows`),
        ),
      ROWS,
      { polling: 200 },
    );
    // A change redraws both; what they draw stays bounded.
    await api(server.base, 'POST', '/v1/tables/wide/rows?wait=true', [{ id: 3, amount: 5000 }]);
    await page.waitForFunction(
      () => document.querySelectorAll('svg rect.bar[data-value="5000"]').length === 1,
      undefined,
      {
        polling: 200,
      },
    );
    const drawn = await page.evaluate(() => ({
      bars: document.querySelectorAll('svg rect.bar').length,
      rows: document.querySelectorAll('table.live tbody tr').length,
      caption: Array.from(document.querySelectorAll('figcaption, .chart-caption, caption')).map(
        (e) => e.textContent,
      ),
    }));
    assert.equal(drawn.bars, 500, JSON.stringify(drawn));
    assert.equal(drawn.rows, 500);
    assert.ok(
      drawn.caption.some((c) => (c ?? '').includes(`the first 500 of ${ROWS} rows`)),
      JSON.stringify(drawn.caption),
    );
    assert.deepEqual(errors, []);
    await page.close();
  });
});
