// End-to-end: the console's SQL page in a real headless Chromium against the real server feeding the
// Double 11 demo: an SQL error with its position marked, highlighting as a user types, the statement
// history across a reload, and a huge text. Screenshots go to test-artifacts/console/. Every wait is
// on a condition with a bounded timeout. Without Chromium (a user's machine) the suite is skipped
// loudly; in CI (CI=true) a missing browser fails it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSuite, pasteSql, type BrowserDocument, type BrowserElement } from './browser.ts';
import { ARTIFACTS, demoBrowser } from './demo-browser.ts';

declare const document: BrowserDocument;
declare function getComputedStyle(element: BrowserElement): { readonly color: string };

browserSuite(
  'the console\u2019s SQL page in headless Chromium',
  'test/console/console-editor.test.ts',
  () => {
    const { open, pageErrors } = demoBrowser();

    test('an SQL error is shown with its position marked in the editor', async () => {
      const page = await open('#/sql');
      await pasteSql(page, 'SELECT seller_id,\n  amout\nFROM orders;');
      await page.getByRole('button', { name: 'Run' }).click();
      const error = page.locator('article.result.error');
      await error.waitFor();
      assert.equal(await error.getAttribute('data-code'), 'UNKNOWN_COLUMN');
      assert.match((await error.textContent()) ?? '', /column "amout"/);
      assert.match((await error.textContent()) ?? '', /line 2, column 3/);
      assert.equal(await page.locator('.cm-content [data-testid="error-mark"]').textContent(), 'amout');
      assert.equal(await page.locator('.cm-lineNumbers .cm-gutterElement.error-line').textContent(), '2');
      assert.equal(await page.locator('#sql-editor').getAttribute('aria-invalid'), 'true');
      await page.getByRole('button', { name: 'Go to error' }).click();
      const selected = await page.evaluate(() => document.getSelection()?.toString() ?? '');
      assert.equal(selected, 'amout');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'sql-editor');
      await page.screenshot({ path: `${ARTIFACTS}/sql-error.png` });
      // Editing clears the mark.
      await page.locator('#sql-editor').press('End');
      await page.keyboard.type(' ');
      await page.locator('[data-testid="error-mark"]').waitFor({ state: 'detached' });
      // A query after the fix shows its rows.
      await pasteSql(page, 'SELECT bucket, sellers FROM total_histogram WHERE sellers > 0;');
      await page.locator('#sql-editor').press('Control+Enter');
      await page.locator('article.result[data-statement="SELECT"] tbody tr').first().waitFor();
      assert.equal(await page.locator('article.result.error').count(), 0);
      await page.screenshot({ path: `${ARTIFACTS}/sql-select.png` });
      await page.close();
    });

    /** The editor's text, line by line (CodeMirror draws each line as a .cm-line). */
    const editorText = (page: Page): Promise<string> =>
      page.evaluate(() =>
        [...document.querySelectorAll('#sql-editor .cm-line')].map((l) => l.textContent ?? '').join('\n'),
      );

    test('typed SQL is highlighted token by token, and Ctrl+Enter runs it', async () => {
      const page = await open('#/sql');
      await page.locator('.cm-editor #sql-editor').click();
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Delete');
      // Typed key by key, as a user does (not set programmatically).
      await page.keyboard.type(
        "SELECT seller_id, 'x' AS tag, 42 AS answer FROM seller_totals LIMIT 3 -- three sellers",
      );
      const tokens = async (cls: string): Promise<string[]> =>
        page.locator(`#sql-editor .${cls}`).allTextContents();
      assert.deepEqual(await tokens('tok-keyword'), ['SELECT', 'AS', 'AS', 'FROM', 'LIMIT']);
      assert.deepEqual(await tokens('tok-string'), ["'x'"]);
      assert.deepEqual(await tokens('tok-number'), ['42', '3']);
      assert.deepEqual(await tokens('tok-comment'), ['-- three sellers']);
      // The console's own colours apply (a keyword is not drawn in the text colour).
      const colours = await page.evaluate(() => {
        const keyword = document.querySelector('#sql-editor .tok-keyword');
        const line = document.querySelector('#sql-editor .cm-line');
        return keyword === null || line === null
          ? []
          : [getComputedStyle(keyword).color, getComputedStyle(line).color];
      });
      assert.equal(colours.length, 2);
      assert.notEqual(colours[0], colours[1], 'keywords have a colour of their own');
      await page.screenshot({ path: `${ARTIFACTS}/sql-highlight.png` });
      await page.keyboard.press('Control+Enter');
      const result = page.locator('article.result[data-statement="SELECT"]');
      await result.locator('tbody tr').first().waitFor();
      assert.equal(await result.locator('tbody tr').count(), 3);
      const cells = await result.locator('tbody tr').first().locator('td').allTextContents();
      assert.match(cells[0] ?? '', /^\d+$/, 'a seller id');
      assert.deepEqual(cells.slice(1), ['x', '42']);
      assert.equal(
        await editorText(page),
        "SELECT seller_id, 'x' AS tag, 42 AS answer FROM seller_totals LIMIT 3 -- three sellers",
        'Ctrl+Enter inserted no line',
      );
      await page.close();
    });

    test('the statement history survives a reload and is walked with Ctrl+Up/Down', async () => {
      const page = await open('#/sql');
      const editor = page.locator('#sql-editor');
      const first = 'SELECT seller_id FROM seller_totals LIMIT 1;';
      const second = 'SHOW VIEWS;';
      await pasteSql(page, first);
      await editor.press('Control+Enter');
      await page.locator('article.result[data-statement="SELECT"]').waitFor();
      await pasteSql(page, second);
      await page.getByRole('button', { name: 'Run' }).click();
      await page.locator('article.result[data-statement="SHOW VIEWS"]').waitFor();
      await pasteSql(page, 'SELECT 1 -- a draft');
      await page.reload();
      await editor.waitFor();
      assert.equal(await editorText(page), 'SELECT 1 -- a draft', 'the draft is kept for the tab');
      assert.deepEqual(await page.locator('#sql-history option').allTextContents(), [second, first]);
      await editor.click();
      const steps: string[] = [];
      for (const key of [
        'Control+ArrowUp',
        'Control+ArrowUp',
        'Control+ArrowUp',
        'Control+ArrowDown',
        'Control+ArrowDown',
      ]) {
        await page.keyboard.press(key);
        steps.push(await editorText(page));
      }
      assert.deepEqual(steps, [second, first, first, second, 'SELECT 1 -- a draft']);
      // The list recalls one too; running a statement again moves it to the front, once.
      await page.locator('#sql-history').selectOption({ label: first });
      await page.getByRole('button', { name: 'Recall' }).click();
      assert.equal(await editorText(page), first);
      await page.keyboard.press('Control+Enter');
      await page.waitForFunction(
        (f) => document.querySelector('#sql-history option')?.textContent === f,
        first,
      );
      assert.deepEqual(await page.locator('#sql-history option').allTextContents(), [first, second]);
      await page.close();
    });

    test('a huge text runs but is kept neither in the history nor as the draft', async () => {
      const page = await open('#/sql');
      const long = `SELECT seller_id FROM seller_totals LIMIT 1 -- ${'x'.repeat(25_000)}`;
      await pasteSql(page, long);
      await page.keyboard.press('Control+Enter');
      await page.locator('article.result[data-statement="SELECT"] tbody tr').first().waitFor();
      // Too long for the history (20,000 characters an entry): run, not kept.
      assert.deepEqual(await page.locator('#sql-history option').allTextContents(), ['nothing run yet']);
      // Past 200,000 characters the draft is not written to sessionStorage on every key.
      await pasteSql(page, `-- ${'y'.repeat(250_000)}`);
      await page.reload();
      await page.locator('#sql-editor').waitFor();
      assert.match(await editorText(page), /^CREATE MATERIALIZED VIEW amount_bands/, 'the first example');
      await page.close();
    });

    test('no script errors on any page', () => {
      assert.deepEqual(pageErrors, []);
    });
  },
);
