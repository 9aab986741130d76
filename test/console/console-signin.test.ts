// The console against a server with authentication, in real headless Chromium: the sign-in screen
// refuses a wrong token, accepts a reader's, keeps it in sessionStorage only, sends it as the header
// and as the WebSocket's first message (never in a URL), follows a live view, and signs out. Skipped
// loudly without Chromium, like console-browser.test.ts (CI fails instead).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { buildApp, type FastifyInstance } from '../../src/server/app.ts';
import { browserSuite, launchChromium } from './browser.ts';

declare const sessionStorage: { getItem(key: string): string | null };

const OPERATOR = `sluice_0123456789abcdef_${'o'.repeat(40)}`;

async function api(
  base: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

browserSuite('console sign-in in headless Chromium', 'test/console/console-signin.test.ts', () => {
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;

  before(async () => {
    app = await buildApp({
      dataDir: null,
      heartbeatMs: 500,
      auth: { enabled: true, bootstrapToken: OPERATOR, kdf: { N: 1024, r: 8, p: 1 } },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (address === null || typeof address !== 'object') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
    await api(base, 'POST', '/v1/sql', OPERATOR, {
      sql: 'CREATE TABLE orders (id INT PRIMARY KEY, seller INT NOT NULL); CREATE MATERIALIZED VIEW per_seller AS SELECT seller, COUNT(*) AS orders FROM orders GROUP BY seller',
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  test('sign in with a token, follow a live view over an authenticated WebSocket, sign out', async () => {
    const reader = (await api(base, 'POST', '/v1/tenants/default/tokens', OPERATOR, { role: 'reader' }))
      .token as string;
    const page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    page.on('websocket', (ws) => urls.push(ws.url()));
    const authHeaders: string[] = [];
    page.on('request', (r) => {
      const h = r.headers().authorization;
      if (h !== undefined) authHeaders.push(h);
    });

    await page.goto(`${base}/#/views/per_seller`);
    await page.locator('h1#sign-in-title').waitFor();
    assert.equal(await page.locator('#sign-out').isVisible(), false);

    await page.locator('#sign-in-token').fill('sluice_ffffffffffffffff_' + 'n'.repeat(43));
    await page.locator('#sign-in-submit').click();
    await page.locator('#sign-in-status', { hasText: 'not accepted' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('sluice.token')), null);

    await page.locator('#sign-in-token').fill(reader);
    await page.locator('#sign-in-submit').click();
    await page.locator('[data-testid="connection"].state-live').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('sluice.token')), reader);
    assert.ok(authHeaders.includes(`Bearer ${reader}`), 'API requests carry the token as a header');
    await page.locator('#nav-views a', { hasText: 'per_seller' }).waitFor();
    assert.ok(await page.locator('#sign-out').isVisible());

    // Rows ingested now reach the page over the WebSocket that authenticated by its first message.
    await api(base, 'POST', '/v1/tables/orders/rows', OPERATOR, [
      { id: 1, seller: 7 },
      { id: 2, seller: 7 },
    ]);
    await page.locator('table.live tr[data-id="[7]"] td[data-col="orders"]', { hasText: '2' }).waitFor();
    assert.ok(
      urls.some((u) => u.startsWith('ws://')),
      'a WebSocket was opened',
    );
    assert.deepEqual(
      // The secret is base64url, so it may hold '_' itself: everything after the id's underscore.
      urls.filter((u) => u.includes(reader) || u.includes(reader.split('_').slice(2).join('_'))),
      [],
    );

    await page.locator('#sign-out').click();
    await page.locator('h1#sign-in-title').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('sluice.token')), null);
    // The shell carries no data for a signed-out reader.
    const shell = await (await fetch(`${base}/`)).text();
    assert.ok(!shell.includes('per_seller'));
    await page.close();
  });
});
