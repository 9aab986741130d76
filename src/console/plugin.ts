// The web console: registerConsole(app) serves the single-page console at `/` and its dataflow
// endpoint. The browser code (src/console/client, TypeScript) is bundled and minified in-process by
// esbuild on the first request and kept in memory, with one gzip copy for the browsers that accept
// it: no build step, no network, no files written. Given the
// server's metrics text, it also keeps the last minutes of what the console plots
// (GET /console/metrics-history), so a fresh page starts with history.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyRequest, FastifyReply } from 'fastify';
import type { ConsoleRuntime } from './console-runtime.ts';
import { registerDataflowRoute } from './dataflow-route.ts';
import { HISTORY_INTERVAL_MS, MetricsHistory, sampleMetrics } from './metrics-history.ts';

const gzipAsync = promisify(gzip);
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

export interface ClientBundle {
  readonly text: string;
  /** The same, gzip-compressed once, for clients that accept it (browsers do). */
  readonly gzip: Buffer;
}

let bundle: Promise<ClientBundle> | null = null;

/**
 * The client bundle, built once per process (a failed build is retried on the next request).
 * Minified, since the editor (CodeMirror) is most of it; compressed off the event loop.
 */
export function clientBundle(): Promise<ClientBundle> {
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
        minify: true,
        legalComments: 'none',
        logLevel: 'silent',
      });
      const file = result.outputFiles[0];
      if (file === undefined) throw new Error('esbuild produced no output for the console');
      return { text: file.text, gzip: await gzipAsync(file.contents) };
    })();
    building.catch(() => {
      bundle = null;
    });
    bundle = building;
  }
  return bundle;
}

function send(
  reply: FastifyReply,
  type: string,
  body: string | Buffer,
  policy: string = csp(),
): FastifyReply {
  return (
    reply
      .type(type)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', policy)
      // Strings go through this serializer; a Buffer (the gzip bundle) is sent as it is.
      .serializer((x) => String(x))
      .send(body)
  );
}

/** Whether an Accept-Encoding header admits gzip: listed (or `*` when gzip is not) with q > 0. */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  const q = new Map<string, number>();
  for (const part of value.split(',')) {
    const [name = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const weight = params.find((p) => p.startsWith('q='));
    if (name !== '') q.set(name, weight === undefined ? 1 : Number(weight.slice(2)));
  }
  return (q.get('gzip') ?? q.get('*') ?? 0) > 0;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Without JavaScript the page still lists the views, linking to their rows and changelogs. */
function noscriptViews(runtime: ConsoleRuntime): string {
  const views = runtime.viewNames();
  if (views.length === 0) return '<p>No materialized views yet.</p>';
  const items = views.map((v) => {
    const name = encodeURIComponent(v);
    return `<li><code>${escapeHtml(v)}</code>: <a href="/v1/views/${name}">definition</a>, <a href="/v1/views/${name}/rows">rows</a>, <a href="/v1/views/${name}/changes?snapshot=true">changelog (NDJSON)</a></li>`;
  });
  return `<p>Views at epoch ${runtime.committedEpoch}:</p><ul>${items.join('')}</ul>`;
}

export interface ConsoleOptions {
  /** A tenant's Prometheus text (what GET /metrics serves it), sampled for the plots' history. */
  readonly metricsText?: (tenant: string) => Promise<string>;
  /** The runtime of the tenant a request acts for. */
  readonly runtimeOf: (request: FastifyRequest) => ConsoleRuntime;
  /** The runtime whose views the page lists without JavaScript (the default tenant's). */
  readonly pageRuntime: ConsoleRuntime;
  /** The tenant a request acts for (default: "default"). */
  readonly tenantOf?: (request: FastifyRequest) => string;
  /**
   * Whether the server requires tokens: the page itself is open (it is the sign-in screen), so it
   * then names no views in its no-JavaScript fallback.
   */
  readonly authentication?: boolean;
}

export function registerConsole(app: FastifyInstance, options: ConsoleOptions): void {
  const hide = { schema: { hide: true } };
  app.get('/', hide, async (_req, reply) => {
    const html = await readFile(ASSETS.html, 'utf8');
    const nonce = randomBytes(16).toString('base64');
    return send(
      reply,
      'text/html; charset=utf-8',
      html
        .replace(NONCE_PLACEHOLDER, `nonce="${nonce}"`)
        .replace(
          '<!--sluice:views-->',
          options.authentication === true
            ? '<p>This server requires a token: sign in with JavaScript on, or use the API.</p>'
            : noscriptViews(options.pageRuntime),
        ),
      csp(nonce),
    );
  });
  app.get('/console/console.css', hide, async (_req, reply) =>
    send(reply, 'text/css; charset=utf-8', await readFile(ASSETS.css, 'utf8')),
  );
  app.get('/console/favicon.svg', hide, async (_req, reply) =>
    send(reply, 'image/svg+xml', await readFile(ASSETS.icon, 'utf8')),
  );
  app.get('/console/console.js', hide, async (req, reply) => {
    const js = await clientBundle();
    reply.header('vary', 'accept-encoding');
    if (!acceptsGzip(req.headers['accept-encoding']))
      return send(reply, 'text/javascript; charset=utf-8', js.text);
    reply.header('content-encoding', 'gzip');
    return send(reply, 'text/javascript; charset=utf-8', js.gzip);
  });
  // One history per tenant, sampled from its own metrics from the first time its console asks.
  const histories = new Map<string, { history: MetricsHistory; stop: () => void }>();
  const metricsText = options.metricsText;
  const historyOf = (tenant: string): MetricsHistory => {
    let entry = histories.get(tenant);
    if (entry === undefined) {
      const history = new MetricsHistory();
      const stop =
        metricsText === undefined ? () => undefined : sampleMetrics(history, () => metricsText(tenant));
      histories.set(tenant, (entry = { history, stop }));
    }
    return entry.history;
  };
  // The default tenant's plots start with the server, as they always did.
  if (metricsText !== undefined) historyOf('default');
  app.addHook('onClose', async () => {
    for (const entry of histories.values()) entry.stop();
  });
  const tenantOf = options.tenantOf ?? (() => 'default');
  app.get('/console/metrics-history', hide, async (req, reply) =>
    reply
      .header('cache-control', 'no-store')
      .send({ intervalMs: HISTORY_INTERVAL_MS, readings: historyOf(tenantOf(req)).readings() }),
  );
  registerDataflowRoute(app, options.runtimeOf);
}
