// End-to-end: the console in a real headless Chromium against the real server feeding the Double 11
// demo. Creates a view through the editor, watches its live table and chart follow rows ingested
// through the API (inserts and a retraction), checks the dataflow graph, row errors and the
// keyboard paths, and saves screenshots to test-artifacts/console/. Every wait is on a condition with a
// bounded timeout. Without Chromium (a user's machine) the suite is skipped loudly; in CI
// (CI=true) a missing browser fails it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSuite, pasteSql, type BrowserDocument } from './browser.ts';
import { api, startConsoleServer } from './harness.ts';
import { ARTIFACTS, WAIT, demoBrowser } from './demo-browser.ts';

declare const document: BrowserDocument;

browserSuite('web console in headless Chromium', 'test/console/console-browser.test.ts', () => {
  const demo = demoBrowser();
  const { open, pageErrors } = demo;

  const text = async (page: Page, selector: string): Promise<string> =>
    (await page.locator(selector).first().textContent()) ?? '';

  test('the overview shows the catalog and the Double 11 histogram moving', async () => {
    const page = await open('');
    await page.locator('table.data tr[data-name="orders"]').waitFor();
    await page.locator('table.data tr[data-name="seller_totals"]').waitFor();
    await page.locator('table.data tr[data-name="total_histogram"]').waitFor();
    assert.match(await text(page, '#featured-title'), /total_histogram/);
    await page.waitForFunction(() => document.querySelectorAll('.featured rect.bar').length >= 3);
    // The chart follows the demo's orders: the epoch it shows advances and the bars change.
    const epoch0 = Number(await text(page, '[data-testid="featured-epoch"]'));
    const bars0 = await page.evaluate(() =>
      [...document.querySelectorAll('.featured rect.bar')].map((r) => r.getAttribute('data-value')).join(','),
    );
    await page.waitForFunction(
      ([e, b]) =>
        Number(document.querySelector('[data-testid="featured-epoch"]')?.textContent) > Number(e) &&
        [...document.querySelectorAll('.featured rect.bar')]
          .map((r) => r.getAttribute('data-value'))
          .join(',') !== b,
      [String(epoch0), bars0] as const,
    );
    assert.match(await text(page, '.featured .meta'), /orders/, 'the epoch shows its source positions');
    // The rolling plots fill in from /metrics (a few samples, one a second).
    await page.waitForFunction(
      () => (document.querySelector('.rolling .line.s1')?.getAttribute('d') ?? '').split('L').length >= 4,
    );
    await page.screenshot({ path: `${ARTIFACTS}/overview.png` });
    await page.close();
  });

  test('a view created in the editor updates live as rows are ingested through the API', async () => {
    const page = await open('#/sql');
    // Only big orders (≥ 1000) count: the demo's orders (1–60) never reach this view.
    const editor = page.locator('#sql-editor');
    await pasteSql(
      page,
      'CREATE MATERIALIZED VIEW big_orders AS\n  SELECT FLOOR(amount / 100) AS band, COUNT(*) AS orders, SUM(amount) AS revenue\n  FROM orders WHERE amount >= 1000\n  GROUP BY FLOOR(amount / 100);',
    );
    await editor.press('Control+Enter');
    await page.locator('article.result[data-statement="CREATE MATERIALIZED VIEW"]').waitFor();
    await page.screenshot({ path: `${ARTIFACTS}/sql-create-view.png` });
    await page.getByRole('link', { name: 'Open live view of big_orders →' }).click();
    await page.locator('[data-testid="connection"].state-live').waitFor();
    assert.equal(await page.locator('table.live tbody tr').count(), 0);

    const first = await api(demo.base, 'POST', '/v1/tables/orders/rows', [
      { order_id: 9_000_000_000_001, seller_id: 7, amount: 1000 },
      { order_id: 9_000_000_000_002, seller_id: 8, amount: 1250 },
    ]);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const row10 = page.locator('table.live tr[data-id="[10]"]');
    await row10.waitFor();
    await page.locator('table.live tr[data-id="[12]"]').waitFor();
    assert.equal(await row10.locator('td[data-col="orders"]').textContent(), '1');
    await page.locator('.chart-panel rect.bar[data-key="10"][data-value="1"]').waitFor();
    await page.locator('.chart-panel rect.bar[data-key="12"][data-value="1"]').waitFor();
    const epoch = Number(await text(page, '[data-testid="view-epoch"]'));
    assert.ok(
      epoch >= Number(first.body.epoch),
      `shown epoch ${epoch} ≥ ingest epoch ${String(first.body.epoch)}`,
    );

    // An update in place: the cell changes, is flagged as changed, and the bar grows.
    const cell = row10.locator('td[data-col="orders"]');
    const second = await api(demo.base, 'POST', '/v1/tables/orders/rows', [
      { order_id: 9_000_000_000_003, seller_id: 7, amount: 1010 },
    ]);
    assert.equal(second.status, 200);
    await page.waitForFunction(
      () =>
        document.querySelector('table.live tr[data-id="[10]"] td[data-col="orders"]')?.textContent === '2',
    );
    assert.ok(Number(await cell.getAttribute('data-flashes')) >= 1, 'the changed cell was highlighted');
    assert.equal(await row10.locator('td[data-col="revenue"]').textContent(), '2010');
    assert.equal(
      await page.locator('table.live tr[data-id="[10]"]').count(),
      1,
      'updated in place, not appended',
    );
    await page.locator('.chart-panel rect.bar[data-key="10"][data-value="2"]').waitFor();
    assert.match(await text(page, '[data-testid="positions"]'), /orders/);
    await page.screenshot({ path: `${ARTIFACTS}/view-live-new.png` });

    // A retraction: deleting the only order of band 12 removes its row and its bar.
    const third = await api(demo.base, 'POST', '/v1/tables/orders/rows', {
      delete: [{ order_id: 9_000_000_000_002 }],
    });
    assert.equal(third.status, 200);
    await page.locator('table.live tr[data-id="[12]"]').waitFor({ state: 'detached' });
    await page.locator('.chart-panel rect.bar[data-key="12"]').waitFor({ state: 'detached' });
    assert.equal(await page.locator('table.live tbody tr').count(), 1);
    await page.close();
  });

  test('the dataflow of the nested view is drawn with live per-operator counts', async () => {
    const page = await open('#/views/total_histogram');
    await page.locator('[data-testid="connection"].state-live').waitFor();
    const reduce = page.locator('g.df-node[data-kind="reduce"]');
    await reduce.waitFor();
    assert.match((await reduce.textContent()) ?? '', /count\(\*\) · invertible/);
    assert.match((await reduce.textContent()) ?? '', /key bucket/);
    assert.match(
      (await page.locator('g.df-node[data-kind="input"]').textContent()) ?? '',
      /view seller_totals/,
    );
    // The Map stage computing the bucket runs inside the Reduce (lowering fused it): drawn in the
    // Reduce's box, with no node of its own.
    const fused = reduce.locator('g.df-fused');
    assert.match((await fused.textContent()) ?? '', /fused Map/);
    assert.match((await fused.textContent()) ?? '', /keys floor\(cast\(div\(#1:total, 10\)/);
    assert.equal(await page.locator('g.df-node[data-kind="map"]').count(), 0);
    // The Output reads the Reduce's groups: it says where its state is.
    const output = page.locator('g.df-node[data-kind="output"]');
    await output.waitFor();
    const reduceId = await reduce.getAttribute('data-node');
    assert.equal(await output.getAttribute('data-inputs'), reduceId);
    await page.waitForFunction(
      (id) =>
        (document.querySelector('g.df-node[data-kind="output"] [data-counts]')?.textContent ?? '').endsWith(
          `state in n${id}`,
        ),
      reduceId,
    );
    const counts = 'g.df-node[data-kind="reduce"] [data-counts]';
    await page.waitForFunction((sel) => /in \d/.test(document.querySelector(sel)?.textContent ?? ''), counts);
    const before = await text(page, counts);
    await page.waitForFunction(
      ([sel, b]) => (document.querySelector(sel as string)?.textContent ?? '') !== b,
      [counts, before] as const,
    );
    // The live table and chart of the demo histogram are there too.
    await page.waitForFunction(() => document.querySelectorAll('table.live tbody tr').length >= 3);
    await page.waitForFunction(() => document.querySelectorAll('.chart-panel rect.bar').length >= 3);
    await page.screenshot({ path: `${ARTIFACTS}/view-histogram-dataflow.png`, fullPage: true });
    await page.close();
  });

  test('a join view draws each Join with two labelled inputs, and a self-join two Inputs of one table', async () => {
    const sellers = Array.from({ length: 20 }, (_, i) => `(${i + 1}, ${i % 3})`).join(', ');
    const setup = await api(demo.base, 'POST', '/v1/sql', {
      sql: `CREATE TABLE sellers (seller_id INTEGER PRIMARY KEY, region_id INTEGER);
          CREATE TABLE regions (region_id INTEGER PRIMARY KEY, name TEXT);
          INSERT INTO sellers VALUES ${sellers};
          INSERT INTO regions VALUES (0, 'north'), (1, 'south'), (2, 'west');
          CREATE MATERIALIZED VIEW region_revenue AS SELECT r.name, SUM(o.amount) AS revenue
            FROM orders o JOIN sellers s ON o.seller_id = s.seller_id JOIN regions r ON s.region_id = r.region_id
            GROUP BY r.name;
          CREATE MATERIALIZED VIEW same_region AS SELECT a.seller_id AS first, b.seller_id AS second
            FROM sellers a JOIN sellers b ON a.region_id = b.region_id AND a.seller_id < b.seller_id;`,
    });
    assert.equal(setup.status, 200, JSON.stringify(setup.body));

    const page = await open('#/views/region_revenue');
    await page.locator('[data-testid="connection"].state-live').waitFor();
    const joins = page.locator('g.df-node[data-kind="join"]');
    await joins.first().waitFor();
    assert.equal(await joins.count(), 2, 'orders ⋈ sellers, then ⋈ regions');
    // Each Join has two inputs, drawn as two arrows labelled left and right, the left input's box
    // left of the right one's.
    const box = async (id: string): Promise<{ x: number; y: number; width: number; height: number }> => {
      const b = await page.locator(`g.df-node[data-node="${id}"] rect.box`).boundingBox();
      assert.ok(b !== null, `n${id} is drawn`);
      return b;
    };
    for (let j = 0; j < 2; j++) {
      const join = joins.nth(j);
      const id = (await join.getAttribute('data-node')) ?? '';
      const inputs = ((await join.getAttribute('data-inputs')) ?? '').split(' ');
      assert.equal(inputs.length, 2, `n${id} has two inputs`);
      const [left, right] = inputs as [string, string];
      assert.equal(
        await page.locator(`path.edge[data-to="${id}"][data-side="left"][data-from="${left}"]`).count(),
        1,
      );
      assert.equal(
        await page.locator(`path.edge[data-to="${id}"][data-side="right"][data-from="${right}"]`).count(),
        1,
      );
      assert.deepEqual(await page.locator(`text[data-side-label="${id}"]`).allTextContents(), [
        'left',
        'right',
      ]);
      const [l, r, me] = [await box(left), await box(right), await box(id)];
      assert.ok(l.x + l.width <= r.x, `n${id}: left input drawn left of the right one`);
      assert.ok(l.y + l.height < me.y && r.y + r.height < me.y, `n${id}: inputs drawn above it`);
      assert.match((await join.textContent()) ?? '', /inner join/);
      assert.match((await join.textContent()) ?? '', /on #\d+:\w+ = right\.#0:\w+/);
    }
    const first = joins.first();
    const firstLeft = ((await first.getAttribute('data-inputs')) ?? '').split(' ')[0];
    assert.match(await text(page, `g.df-node[data-node="${firstLeft}"]`), /table orders/);
    // The Reduce above the joins computes its keys and arguments in its fused Map stage.
    assert.match(await text(page, 'g.df-node[data-kind="reduce"] g.df-fused'), /arguments #\d+:amount/);
    // The demo's orders flow through both Joins: their counts move.
    const counts = `g.df-node[data-node="${await first.getAttribute('data-node')}"] [data-counts]`;
    await page.waitForFunction(
      (sel) => /in [1-9]/.test(document.querySelector(sel)?.textContent ?? ''),
      counts,
    );
    const before = await text(page, counts);
    assert.match(before, /state \d/);
    await page.waitForFunction(
      ([sel, b]) => (document.querySelector(sel as string)?.textContent ?? '') !== b,
      [counts, before] as const,
    );
    await page.screenshot({ path: `${ARTIFACTS}/view-join-dataflow.png`, fullPage: true });
    await page.close();

    const self = await open('#/views/same_region');
    const join = self.locator('g.df-node[data-kind="join"]');
    await join.waitFor();
    assert.equal(await self.locator('g.df-node[data-kind="input"]').count(), 2);
    for (const input of await self.locator('g.df-node[data-kind="input"]').all())
      assert.match((await input.textContent()) ?? '', /table sellers/);
    assert.equal(((await join.getAttribute('data-inputs')) ?? '').split(' ').length, 2);
    assert.match((await join.textContent()) ?? '', /residual lt\(#0:seller_id, #2:seller_id\)/);
    await self.locator('table.live tbody tr').first().waitFor();
    await self.screenshot({ path: `${ARTIFACTS}/view-self-join-dataflow.png`, fullPage: true });
    await self.close();
  });

  test('the featured chart shows its view\u2019s row error and recovers by itself when it is retracted', async () => {
    // A server of its own, where this view is the only one (so it is the one featured).
    const own = await startConsoleServer();
    try {
      const setup = await api(own.base, 'POST', '/v1/sql', {
        sql: `CREATE TABLE readings (bucket INT NOT NULL, a INT NOT NULL, b INT NOT NULL);
            CREATE MATERIALIZED VIEW ratio_histogram AS
              SELECT bucket, SUM(a / b) AS total FROM readings GROUP BY bucket;
            INSERT INTO readings VALUES (1, 6, 3), (2, 8, 2);`,
      });
      assert.equal(setup.status, 200, JSON.stringify(setup.body));
      const page = await open('', own.base);
      assert.match(await text(page, '#featured-title'), /ratio_histogram/);
      await page.locator('.featured rect.bar[data-key="1"][data-value="2"]').waitFor();
      await page.locator('.featured rect.bar[data-key="2"][data-value="4"]').waitFor();
      const problem = page.locator('[data-testid="featured-error"]');
      assert.equal(await problem.isVisible(), false);

      const bad = await api(own.base, 'POST', '/v1/tables/readings/rows?wait=true', [
        { bucket: 1, a: 1, b: 0 },
      ]);
      assert.equal(bad.status, 200, JSON.stringify(bad.body));
      await problem.waitFor();
      await page.waitForFunction(() =>
        /"b":0/.test(document.querySelector('[data-testid="featured-error"]')?.textContent ?? ''),
      );
      assert.equal(await problem.getAttribute('data-code'), 'VIEW_ERROR');
      assert.match((await problem.textContent()) ?? '', /division by zero/);
      assert.equal(await page.locator('.featured .chart-panel').isVisible(), false, 'no possibly wrong bars');
      await page.screenshot({ path: `${ARTIFACTS}/overview-featured-error.png` });

      const fix = await api(own.base, 'POST', '/v1/tables/readings/rows?wait=true', {
        delete: [{ bucket: 1, a: 1, b: 0 }],
      });
      assert.equal(fix.status, 200, JSON.stringify(fix.body));
      await problem.waitFor({ state: 'hidden' });
      await page.locator('.featured rect.bar[data-key="1"][data-value="2"]').waitFor();
      // Live again, not a frozen picture: a new row's bar appears.
      const more = await api(own.base, 'POST', '/v1/tables/readings/rows', [{ bucket: 3, a: 10, b: 1 }]);
      assert.equal(more.status, 200, JSON.stringify(more.body));
      await page.locator('.featured rect.bar[data-key="3"][data-value="10"]').waitFor();
      await page.close();
    } finally {
      await own.close();
    }
  });

  test('keyboard and labels: skip link, navigation, every control has a name', async () => {
    const page = await open('');
    await page.locator('table.data tr[data-name="total_histogram"]').waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
    // Reach the SQL page from the header with the keyboard alone.
    await page.locator('header nav a[href="#/sql"]').focus();
    await page.keyboard.press('Enter');
    await page.locator('#sql-editor').waitFor();
    assert.equal(
      await page.evaluate(() => document.activeElement?.textContent),
      'SQL',
      'focus moves to the new page heading',
    );
    assert.equal(await page.locator('header nav a[href="#/sql"]').getAttribute('aria-current'), 'page');
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea, button')]
        .filter((el) => {
          const labelled = el.id !== '' && document.querySelector(`label[for="${el.id}"]`) !== null;
          return !labelled && !el.getAttribute('aria-label') && (el.textContent ?? '').trim() === '';
        })
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    assert.deepEqual(unnamed, []);
    await page.close();
  });

  test('a view holding a row error shows VIEW_ERROR with its row, and recovers when it is retracted', async () => {
    const setup = await api(demo.base, 'POST', '/v1/sql', {
      sql: 'CREATE TABLE ratios_in (a INT, b INT); CREATE MATERIALIZED VIEW ratios AS SELECT a / b AS q FROM ratios_in; INSERT INTO ratios_in VALUES (6, 3);',
    });
    assert.equal(setup.status, 200, JSON.stringify(setup.body));
    // One page follows the view before the error appears (a live subscriber receives it as +E)…
    const watching = await open('#/views/ratios');
    await watching.locator('[data-testid="connection"].state-live').waitFor();
    await watching.locator('table.live tbody tr').first().waitFor();
    const bad = await api(demo.base, 'POST', '/v1/tables/ratios_in/rows?wait=true', [{ a: 1, b: 0 }]);
    assert.equal(bad.status, 200, JSON.stringify(bad.body));
    // …and one opens it while it is in error (the server refuses the snapshot with VIEW_ERROR).
    const opened = await open('#/views/ratios');
    for (const page of [watching, opened]) {
      const error = page.locator('[data-testid="view-error"]');
      await error.waitFor();
      assert.equal(await error.getAttribute('data-code'), 'VIEW_ERROR');
      const shown = (await error.textContent()) ?? '';
      assert.match(shown, /VIEW_ERROR/);
      assert.match(shown, /division by zero/);
      assert.match(shown, /"b":0/, 'the offending row is shown');
      await page.locator('[data-testid="connection"].state-error').waitFor();
      assert.equal(await text(page, '[data-testid="connection"]'), 'view error');
      assert.equal(await page.locator('table.live').isVisible(), false, 'no possibly wrong rows are shown');
    }
    await opened.screenshot({ path: `${ARTIFACTS}/view-error.png` });
    // Deleting the offending row retracts the error: both pages show the rows again, no reload.
    const fix = await api(demo.base, 'POST', '/v1/tables/ratios_in/rows?wait=true', {
      delete: [{ a: 1, b: 0 }],
    });
    assert.equal(fix.status, 200, JSON.stringify(fix.body));
    for (const page of [watching, opened]) {
      await page.locator('[data-testid="view-error"]').waitFor({ state: 'hidden' });
      await page.locator('[data-testid="connection"].state-live').waitFor();
      await page.locator('table.live td[data-col="q"]').first().waitFor();
      assert.equal(await page.locator('table.live tbody tr').count(), 1);
      assert.equal(await text(page, 'table.live td[data-col="q"]'), '2');
      await page.close();
    }
  });

  test('an unknown view says so and stops asking; a reload shows it once it exists', async () => {
    const page = await open('#/views/nope');
    const asked: string[] = [];
    let readyChecks = 0;
    let onReadyCheck = (): void => undefined;
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/v1/views/nope') || url.pathname === '/metrics') asked.push(url.pathname);
      if (url.pathname === '/readyz') {
        readyChecks += 1;
        onReadyCheck();
      }
    });
    const error = page.locator('[data-testid="view-error"]');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'UNKNOWN_VIEW');
    assert.match((await error.textContent()) ?? '', /no such view/i);
    assert.match((await error.textContent()) ?? '', /"nope"/);
    await page.locator('[data-testid="connection"].state-closed').waitFor();
    // The page has stopped: while the header checks the server twice more (every 2 s), the page
    // asks nothing more about the view and samples no metrics for it (it polled both every 1 s).
    const settled = asked.length;
    const target = readyChecks + 2;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the header stopped checking the server')), WAIT);
      onReadyCheck = () => {
        if (readyChecks < target) return;
        clearTimeout(timer);
        resolve();
      };
    });
    assert.deepEqual(asked.slice(settled), [], 'no requests for the unknown view after it was reported');
    // Once the view exists, a reload shows it.
    const created = await api(demo.base, 'POST', '/v1/sql', {
      sql: 'CREATE MATERIALIZED VIEW nope AS SELECT seller_id, COUNT(*) AS n FROM orders GROUP BY seller_id;',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    await page.reload();
    await page.locator('[data-testid="connection"].state-live').waitFor();
    assert.equal(await page.locator('[data-testid="view-error"]').isVisible(), false);
    await page.locator('table.live tbody tr').first().waitFor();
    await page.close();
  });

  test('the overview labels the one server epoch, and the chart says which epoch it shows', async () => {
    const page = await open('');
    await page.locator('table.data tr[data-name="total_histogram"]').waitFor();
    await page.waitForFunction(
      () => Number(document.querySelector('[data-testid="featured-epoch"]')?.textContent) > 0,
    );
    assert.match(await text(page, 'header .server'), /server epoch \d+/);
    assert.match(await text(page, '.featured .meta'), /^chart as of epoch \d+/);
    // The views table repeats no epoch of its own: every view reflects every committed epoch.
    const headers = await page.evaluate(() =>
      [...document.querySelectorAll('section[aria-labelledby="views-title"] th')].map((th) => th.textContent),
    );
    assert.ok(!headers.includes('Epoch'), `views table headers: ${headers.join(', ')}`);
    // Epoch numbers appear only where labelled: the header and the chart.
    const epochs = await page.evaluate(() =>
      [...document.querySelectorAll('[data-epoch]')].map((e) => e.getAttribute('data-epoch')),
    );
    assert.deepEqual(epochs.sort(), ['chart', 'server']);
    await page.close();
  });

  test("a fresh page draws its plots from the server's recent history at once", async () => {
    // The server has sampled its metrics once a second since it started (several seconds ago, for
    // the tests before this one): the first drawing of a plot already has many points.
    const page = await open('');
    const line = '.rolling .line.s1';
    await page.waitForFunction(
      (sel) => /^M/.test(document.querySelector(sel)?.getAttribute('d') ?? ''),
      line,
    );
    const points = ((await page.locator(line).first().getAttribute('d')) ?? '').split('L').length;
    assert.ok(points >= 5, `the first drawing has ${points} points`);
    await page.close();
  });

  test('no script errors on any page', () => {
    assert.deepEqual(pageErrors, []);
  });
});
