// A console browser suite's fixture: the real server feeding the Double 11 demo and one headless
// Chromium, started before the suite's tests and closed after them; the pages it opens record their
// script errors for the suite's last test.
import { mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openPage } from './browser.ts';
import { startConsoleServer, type ConsoleServer } from './harness.ts';

export const ARTIFACTS = 'test-artifacts/console';
export const WAIT = 20_000;

export interface DemoBrowser {
  /** The demo server's address (valid once the suite's tests run). */
  readonly base: string;
  /** A new page at `base/hash` (another server's `base` if given). */
  open(hash: string, base?: string): Promise<Page>;
  /** Script errors of every page opened. */
  readonly pageErrors: string[];
}

/** Registers the fixture's before/after hooks in the calling suite. */
export function demoBrowser(): DemoBrowser {
  let server: ConsoleServer | undefined;
  let browser: Browser | undefined;
  const pageErrors: string[] = [];

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startConsoleServer({ demoRate: 40 });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const started = (): { server: ConsoleServer; browser: Browser } => {
    if (server === undefined || browser === undefined) throw new Error('the console suite has not started');
    return { server, browser };
  };
  return {
    get base() {
      return started().server.base;
    },
    open: (hash, base) => {
      const s = started();
      return openPage(s.browser, base ?? s.server.base, hash, pageErrors, WAIT);
    },
    pageErrors,
  };
}
