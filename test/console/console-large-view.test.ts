// A view far larger than the console shows: the live table and the bar chart draw their first rows
// in key order (500), found without sorting every row on each redraw. Before, a redraw sorted all of
// a view's rows and the chart drew one SVG bar per row: a 100k-row keyed view held 100k bars, and a
// million-row one held the page for seconds on every change. Counted, not timed: comparisons (key
// reads) for the selection, SVG bars and table rows in a real headless Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { LiveRows, type WireChange, type WireRow } from '../../src/console/shared/changelog-state.ts';
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
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
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

describe('LiveRows with a capacity', () => {
  /** The reference: every row held, then the first k in order. */
  function reference(ops: readonly WireChange[][], key: readonly string[] | null): LiveRows {
    const all = new LiveRows(['k', 'v'], key);
    for (const message of ops) all.apply(message);
    return all;
  }

  test('holds at most its capacity, counts the rest, and shows what the whole copy would', () => {
    const n = 10_000;
    const live = new LiveRows(['k', 'v'], ['k'], 100);
    live.load(shuffled(Array.from({ length: n }, (_, i) => ({ k: i, v: i % 7 }))));
    assert.ok(live.held <= 100, `held ${live.held}`);
    assert.equal(live.size, n);
    assert.equal(live.complete, false);
    assert.deepEqual(
      live.first(20).map((e) => e.row.k),
      Array.from({ length: 20 }, (_, i) => i),
    );
    // Inserts before the window's end are held; past it only counted; deletes of either count.
    live.apply([
      { op: '+I', row: { k: -1, v: 0 } },
      { op: '+I', row: { k: n + 5, v: 0 } },
      { op: '-D', row: { k: 9000, v: 9000 % 7 } },
      { op: '-U', row: { k: 3, v: 3 } },
      { op: '+U', row: { k: 3, v: 99 } },
    ]);
    assert.equal(live.size, n + 1);
    assert.deepEqual(
      live.first(5).map((e) => [e.row.k, e.row.v]),
      [
        [-1, 0],
        [0, 0],
        [1, 1],
        [2, 2],
        [3, 99],
      ],
    );
    assert.ok(live.held <= 100);
    assert.equal(live.needsRefill(20), false);
  });

  test('asks for a refill once deletes empty the shown window while dropped rows remain', () => {
    const live = new LiveRows(['k', 'v'], ['k'], 100);
    live.load(Array.from({ length: 1000 }, (_, i) => ({ k: i, v: 0 })));
    let deleted = 0;
    while (!live.needsRefill(20)) live.apply([{ op: '-D', row: { k: deleted++, v: 0 } }]);
    assert.equal(live.held, 19);
    assert.equal(live.size, 1000 - deleted);
  });

  test('becomes whole again when the dropped rows are deleted; copies counted in a keyless view', () => {
    const live = new LiveRows(['k', 'v'], null, 4);
    live.load([0, 1, 2, 3, 4, 5, 5].map((k) => ({ k, v: 0 })));
    assert.equal(live.size, 7);
    assert.equal(live.complete, false);
    live.apply([
      { op: '-D', row: { k: 5, v: 0 }, n: 2 },
      { op: '-D', row: { k: 4, v: 0 } },
      { op: '-D', row: { k: 3, v: 0 } },
      { op: '-D', row: { k: 2, v: 0 } },
      { op: '-D', row: { k: 7, v: 0 } }, // never a row: changes nothing
    ]);
    assert.equal(live.size, 2);
    assert.equal(live.complete, true);
    live.apply([{ op: '+I', row: { k: 9, v: 0 }, n: 3 }]);
    assert.deepEqual(
      live.sorted().map((e) => [e.row.k, e.count]),
      [
        [0, 1],
        [1, 1],
        [9, 3],
      ],
    );
  });

  test('random changes: the window always equals the first rows of the whole copy', () => {
    let seed = 7;
    const next = (m: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed % m;
    };
    for (const key of [['k'], null] as const) {
      const live = new LiveRows(['k', 'v'], key, 16);
      const present = new Map<number, number>();
      const ops: WireChange[][] = [];
      for (let round = 0; round < 400; round++) {
        const message: WireChange[] = [];
        for (let i = 0; i < 5; i++) {
          const k = next(60);
          const v = key === null ? 0 : k % 3;
          const copies = present.get(k) ?? 0;
          if (copies > 0 && next(2) === 0) {
            message.push({ op: '-D', row: { k, v } });
            present.set(k, copies - 1);
          } else if (key === null || copies === 0) {
            message.push({ op: '+I', row: { k, v } });
            present.set(k, copies + 1);
          }
        }
        ops.push(message);
        live.apply(message);
        const whole = reference(ops, key);
        assert.equal(live.size, key === null ? sum(present) : whole.size, `round ${round}`);
        assert.ok(live.held <= 16);
        if (live.needsRefill(4)) {
          live.clear();
          live.load(whole.sorted().flatMap((e) => Array.from({ length: e.count }, () => e.row)));
        }
        assert.deepEqual(live.first(4), whole.first(4), `round ${round}`);
      }
    }
  });
});

/** The held-row count the table publishes: present (the base had none) and within the window. */
function assertBounded(held: number): void {
  assert.ok(held >= 500 && held <= 2000, `held ${held}`);
}

function sum(counts: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const c of counts.values()) total += c;
  return total;
}

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

  test(
    'the page holds a bounded window of rows and reads the view again when deletes empty it',
    {
      timeout: 120_000,
    },
    async () => {
      const page = await openPage(browser, server.base, '#/views/big_view', errors, 60_000);
      const held = (): Promise<number> =>
        page.evaluate(() =>
          Number(document.querySelector('table.live ~ .table-note')?.getAttribute('data-held-rows')),
        );
      await page.waitForFunction(
        (total) =>
          (document.querySelector('table.live ~ .table-note')?.textContent ?? '').includes(
            `of ${total} rows`,
          ),
        ROWS,
        { polling: 200 },
      );
      // Before, every row of the view was held (20,000 here, a million for a million-row view).
      assertBounded(await held());
      // Moving the first 1,600 rows out of the view leaves fewer held than the table shows: the page
      // reads the view again and shows the next ones.
      const gone = Array.from({ length: 1600 }, (_, id) => ({ id, amount: -1 }));
      const moved = await api(server.base, 'POST', '/v1/tables/wide/rows?wait=true', gone);
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      await page.waitForFunction(
        (total) =>
          (document.querySelector('table.live ~ .table-note')?.textContent ?? '').includes(
            `of ${total} rows`,
          ) && document.querySelector('table.live tbody tr td')?.textContent === '1600',
        ROWS - 1600,
        { polling: 200 },
      );
      assert.equal(await page.evaluate(() => document.querySelectorAll('table.live tbody tr').length), 500);
      assertBounded(await held());
      assert.deepEqual(errors, []);
      await page.close();
    },
  );
});
