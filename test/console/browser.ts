// Real headless Chromium for the console suites: where it is, the loud skip on a user's machine
// without it (under CI=true a missing browser fails instead), and one launch with the flags that
// keep it quiet and offline.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';

// The paste runs in the browser; this project's tsconfig has no DOM types, so what it touches is
// declared here (module-local, not global).
declare class DataTransfer {
  setData(type: string, data: string): void;
}
declare class ClipboardEvent {
  constructor(type: string, init: { clipboardData: DataTransfer; bubbles: boolean; cancelable: boolean });
}
interface PasteTarget {
  dispatchEvent(event: ClipboardEvent): boolean;
}

/**
 * The little of the DOM the suites' page.evaluate/waitForFunction bodies touch (they run in the
 * browser; this project's tsconfig has no DOM types). A suite declares `document` with it, locally.
 */
export interface BrowserElement {
  readonly id: string;
  readonly textContent: string | null;
  readonly outerHTML: string;
  readonly value: string;
  readonly selectionStart: number;
  readonly selectionEnd: number;
  getAttribute(name: string): string | null;
}
export interface BrowserDocument {
  querySelector(selector: string): BrowserElement | null;
  querySelectorAll(selector: string): ArrayLike<BrowserElement> & Iterable<BrowserElement>;
  readonly activeElement: BrowserElement | null;
  getSelection(): { toString(): string } | null;
}

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';

/**
 * `describe(name, body)` where there is a Chromium (or CI requires one). Elsewhere a banner on
 * stderr says which suite (`file`) did not run and how to run it, and one visibly skipped test
 * stands for the suite in the runner's summary.
 */
export function browserSuite(name: string, file: string, body: () => void): void {
  if (haveBrowser || inCi) {
    describe(name, body);
    return;
  }
  const line = '#'.repeat(78);
  process.stderr.write(
    `\n${line}\n# BROWSER SUITE SKIPPED: no Chromium at ${CHROMIUM}.\n` +
      `# ${file} did not run.\n` +
      "# Install Debian's chromium (apt-get install -y chromium) or set SLUICE_CHROMIUM to a\n" +
      '# Chromium binary to run it. CI (CI=true) fails instead of skipping.\n' +
      `${line}\n\n`,
  );
  test(
    name,
    { skip: `BROWSER SUITE SKIPPED: no Chromium at ${CHROMIUM} (install chromium or set SLUICE_CHROMIUM)` },
    () => undefined,
  );
}

/** Headless Chromium; under CI=true without one, a failure saying what .ci/run must install. */
export async function launchChromium(): Promise<Browser> {
  assert.ok(
    haveBrowser,
    `CI=true but there is no Chromium at ${CHROMIUM}: .ci/run must install it (apt-get install -y chromium)`,
  );
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A new page at `base/hash`, 1440×900, with every wait bounded by `timeout`; its script errors go
 * to `errors` (a suite's last test asserts there were none).
 */
export async function openPage(
  browser: Browser,
  base: string,
  hash: string,
  errors: string[],
  timeout: number,
): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (error) => errors.push(`${hash}: ${error.message}`));
  page.on('console', (message) => {
    // A rejected statement (400) or a read of a missing view (404) is logged by the browser as a
    // failed resource; the pages show those errors themselves.
    if (message.type() === 'error' && !/status of 40[04]/.test(message.text()))
      errors.push(`${hash}: ${message.text()}`);
  });
  await page.goto(`${base}/${hash}`);
  return page;
}

/**
 * Replaces the SQL editor's text as a user pasting it does (select all, paste), so it goes
 * through the editor's own input handling. (Playwright's fill() would have the browser's
 * contenteditable editing insert the line breaks itself, which CodeMirror then undoes.)
 */
export async function pasteSql(page: Page, sql: string): Promise<void> {
  const editor = page.locator('#sql-editor');
  await editor.click();
  await page.keyboard.press('Control+A');
  await editor.evaluate((el, value) => {
    const data = new DataTransfer();
    data.setData('text/plain', value);
    (el as unknown as PasteTarget).dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }),
    );
  }, sql);
}
