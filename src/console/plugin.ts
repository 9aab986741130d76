// The web console: registerConsole(app) serves the single-page console at `/` and its dataflow
// endpoint. The browser code (src/console/client, TypeScript) is bundled in-process by esbuild on
// the first request and kept in memory: no build step, no network, no files written. Given the
// server's metrics text, it also keeps the last minutes of what the console plots
// (GET /console/metrics-history), so a fresh page starts with history.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SluiceRuntime } from '../server/runtime.ts';
import { registerDataflowRoute } from './dataflow-route.ts';
import { HISTORY_INTERVAL_MS, MetricsHistory, sampleMetrics } from './metrics-history.ts';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const CLIENT_ENTRY = here('./client/main.ts');
const ASSETS = {
  html: here('./assets/index.html'),
  css: here('./assets/console.css'),
  icon: here('./assets/favicon.svg'),
};

// The console loads only its own files and talks only to this server. The page itself also
// admits <style> elements carrying its one-response nonce: the editor (CodeMirror) mounts its
// base styles that way (EditorView.cspNonce, read from the script element's nonce).
const csp = (styleNonce?: string): string =>
  `default-src 'self'; script-src 'self'; style-src 'self'${styleNonce !== undefined ? ` 'nonce-${styleNonce}'` : ''}; ` +
  "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const NONCE_PLACEHOLDER = 'nonce="sluice-nonce"';

let bundle: Promise<string> | null = null;

/** The client bundle, built once per process (a failed build is retried on the next request). */
export function clientBundle(): Promise<string> {
  if (bundle === null) {
    const building = (async () => {
      const { build } = await import('esbuild');
      const result = await build({
        entryPoints: [CLIENT_ENTRY],
        bundle: true,
        format: 'esm',
        target: 'es2022',
        platform: 'browser',
        write: false,
        legalComments: 'none',
        logLevel: 'silent',
      });
      const file = result.outputFiles[0];
      if (file === undefined) throw new Error('esbuild produced no output for the console');
      return file.text;
    })();
    building.catch(() => {
      bundle = null;
    });
    bundle = building;
  }
  return bundle;
}

function send(reply: FastifyReply, type: string, body: string, policy: string = csp()): FastifyReply {
  return reply
    .type(type)
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', policy)
    .serializer((x) => String(x))
    .send(body);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Without JavaScript the page still lists the views, linking to their rows and changelogs. */
function noscriptViews(runtime: SluiceRuntime): string {
  const views = runtime.viewNames();
  if (views.length === 0) return '<p>No materialized views yet.</p>';
  const items = views.map((v) => {
    const name = encodeURIComponent(v);
    return `<li><code>${escapeHtml(v)}</code>: <a href="/v1/views/${name}">definition</a>, <a href="/v1/views/${name}/rows">rows</a>, <a href="/v1/views/${name}/changes?snapshot=true">changelog (NDJSON)</a></li>`;
  });
  return `<p>Views at epoch ${runtime.committedEpoch}:</p><ul>${items.join('')}</ul>`;
}

export interface ConsoleOptions {
  /** The server's Prometheus text (what GET /metrics serves), sampled for the plots' history. */
  readonly metricsText?: () => Promise<string>;
}

export function registerConsole(app: FastifyInstance, options: ConsoleOptions = {}): void {
  const runtime = (): SluiceRuntime => {
    const r = (app as FastifyInstance & { sluice?: SluiceRuntime }).sluice;
    if (r === undefined) throw new Error('registerConsole needs the app built by buildApp (app.sluice)');
    return r;
  };
  const hide = { schema: { hide: true } };
  app.get('/', hide, async (_req, reply) => {
    const html = await readFile(ASSETS.html, 'utf8');
    const nonce = randomBytes(16).toString('base64');
    return send(
      reply,
      'text/html; charset=utf-8',
      html
        .replace(NONCE_PLACEHOLDER, `nonce="${nonce}"`)
        .replace('<!--sluice:views-->', noscriptViews(runtime())),
      csp(nonce),
    );
  });
  app.get('/console/console.css', hide, async (_req, reply) =>
    send(reply, 'text/css; charset=utf-8', await readFile(ASSETS.css, 'utf8')),
  );
  app.get('/console/favicon.svg', hide, async (_req, reply) =>
    send(reply, 'image/svg+xml', await readFile(ASSETS.icon, 'utf8')),
  );
  app.get('/console/console.js', hide, async (_req, reply) =>
    send(reply, 'text/javascript; charset=utf-8', await clientBundle()),
  );
  const history = new MetricsHistory();
  if (options.metricsText !== undefined) {
    const stop = sampleMetrics(history, options.metricsText);
    app.addHook('onClose', async () => stop());
  }
  app.get('/console/metrics-history', hide, async (_req, reply) =>
    reply
      .header('cache-control', 'no-store')
      .send({ intervalMs: HISTORY_INTERVAL_MS, readings: history.readings() }),
  );
  registerDataflowRoute(app, runtime);
}
