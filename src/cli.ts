// The `sluice` command, a dispatcher: `sluice start` replays the data directory, then serves the
// HTTP/WebSocket API until SIGTERM/SIGINT (graceful: subscribers are told, the store is closed
// cleanly); `sluice sql` and `sluice subscribe` are clients of a running server (src/cli/).
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { SluiceError } from './common/errors.ts';
import { DEFAULTS, defaultSubscriberShare } from './server/defaults.ts';
import { MAX_WORKERS } from './exec/workers/partition-pool.ts';
import { isLoopbackAddress, parseAllowedHosts, parseAllowedOrigins } from './server/request-guard.ts';
import { parseConnectorHosts } from './source/kafka/connector-hosts.ts';
import type { AuthOptions } from './server/app.ts';
import { listenFailureMessage } from './cli/listen-error.ts';

const USAGE = `Usage: sluice start [options]             run the server
       sluice sql [options]               SQL shell against a running server (sluice sql --help)
       sluice subscribe <view> [options]  print a view's changes live (sluice subscribe --help)
       sluice token create|list|revoke    manage tokens of a running server (sluice token --help)

sluice start replays the data directory, then serves the API (see /docs).

Options of sluice start:
  --port <n>                 port to listen on (env PORT; default 8080; 0 = any free port)
  --host <addr>              address to bind (env SLUICE_HOST; default 127.0.0.1 — loopback only); any
                             other address turns authentication on (and needs --auth or a token first)
  --auth                     require a bearer token on every request (env SLUICE_AUTH=1); the first start
                             stores SLUICE_BOOTSTRAP_TOKEN as the operator token, or prints a new one once
  --tls-cert <file>          serve HTTPS and WSS with this certificate chain (PEM; with --tls-key)
  --tls-key <file>           the certificate's private key (PEM)
  --allowed-hosts <list>     more Host names the server answers to, comma-separated (name, name:port;
                             default: loopback names and the bound address; * = any, no DNS-rebinding check)
  --allowed-origins <list>   more origins (http[s]://host[:port]) whose pages may write and subscribe
                             (default: the server's own origins only)
  --connector-hosts <list>   hosts Kafka sources and sinks may connect to, comma-separated (host, host:port,
                             10.0.0.0/8; * = any); default: loopback and the brokers of the connectors at start
  --headers-timeout-ms <n>   a request's headers must arrive within this (default ${DEFAULTS.timeouts.headersMs})
  --request-timeout-ms <n>   a whole request, body included, must arrive within this (default ${DEFAULTS.timeouts.requestMs})
  --keep-alive-timeout-ms <n>  an idle keep-alive connection is closed after this (default ${DEFAULTS.timeouts.keepAliveMs})
  --data-dir <dir>           where the durable log and changelogs live (env SLUICE_DATA_DIR; default ./data)
  --body-limit <bytes>       largest request body (default ${DEFAULTS.bodyLimit})
  --retention-epochs <n>     keep changelogs of the last n epochs (default ${DEFAULTS.retention.epochs}; 0 = no limit)
  --retention-seconds <n>    keep changelogs younger than n seconds (default ${DEFAULTS.retention.ms / 1000}; 0 = no limit)
  --journal-retention-seconds <n>  delete journal table batches a checkpoint covers once older than n seconds
                             (env SLUICE_JOURNAL_RETENTION_SECONDS; default ${DEFAULTS.journalRetention.ms / 1000}, a week;
                             0 = keep all); past it a checkpoint that cannot be loaded refuses the start
  --heartbeat-ms <n>         progress message interval for idle subscribers (default ${DEFAULTS.heartbeatMs})
  --clock <real|manual>      where epochs read the logical clock NOW() of temporal filters: the machine's clock,
                             or a manual one moved only by SET CLOCK (tests, back-fills) (default real)
  --clock-tick-ms <n>        how often the clock ticks for views with temporal filters (default ${DEFAULTS.clockTickMs};
                             0 = no ticks: the clock moves with data only)
  --workers <n>              threads for the GROUP BYs that run in hash partitions (env SLUICE_WORKERS; default 1,
                             1..64; EXPLAIN DATAFLOW shows which do); results are the same for every value
  --subscriber-buffer <bytes>  slow-consumer bound per subscriber (default ${DEFAULTS.subscriberLimits.maxBufferedBytes})
  --subscriber-memory <bytes>  one budget for all tenants' subscribers' queued bytes and open snapshots; room is made
                             by closing the one furthest behind (SLOW_CONSUMER) (default ${DEFAULTS.subscriberMemory})
  --max-subscribers <n>      most subscribers at once, of all tenants (default ${DEFAULTS.maxSubscribers}; beyond: TOO_MANY_SUBSCRIBERS)
  --max-subscribers-per-tenant <n>  most subscribers of a tenant without a subscribers quota, while the server
                             serves more than one tenant (default half of --max-subscribers; beyond: QUOTA_EXCEEDED)
  --max-subscribers-per-view <n>  most subscribers of one view (default ${DEFAULTS.maxSubscribersPerView})
  --query-subscription-linger-ms <n>  a query's or table's subscription view (SUBSCRIBE) is dropped this long
                             after its last subscriber left (default ${DEFAULTS.querySubscriptions.lingerMs})
  --max-query-subscriptions <n>  most such views at once, of all tenants (default ${DEFAULTS.querySubscriptions.maxViews})
  --max-tenants <n>          most tenants at once, default included (default ${DEFAULTS.maxTenants})
  --max-tokens-per-tenant <n>  most live tokens of one tenant (env SLUICE_MAX_TOKENS_PER_TENANT;
                             default ${DEFAULTS.tokens.maxLivePerTenant}; beyond: QUOTA_EXCEEDED)
  --token-creates-per-minute <n>  most tokens one tenant's admins create a minute (env
                             SLUICE_TOKEN_CREATES_PER_MINUTE; default ${DEFAULTS.tokens.createsPerMinute}; beyond: RATE_LIMITED)
  --revoked-token-retention-seconds <n>  a revoked token is listed this long, then deleted (env
                             SLUICE_REVOKED_TOKEN_RETENTION_SECONDS; default ${DEFAULTS.tokens.revokedRetentionMs / 1000}, 30 days)
  --default-page-rows <n>    rows in a view page without limit= (default ${DEFAULTS.reads.defaultRows})
  --max-result-rows <n>      largest view page and ad-hoc SELECT result, in rows (default ${DEFAULTS.reads.maxRows})
  --max-dml-rows <n>         most rows one UPDATE or DELETE may change; past it EPOCH_TOO_LARGE (default ${DEFAULTS.maxDmlRows})
  --max-result-bytes <bytes> the same in bytes of JSON (default ${DEFAULTS.reads.maxBytes})
  --max-scan-rows <n>        rows a filtered view page examines at most (default ${DEFAULTS.reads.scanRows})
  --checkpoint-interval-ms <n>  checkpoint at least this often while writes arrive (default ${DEFAULTS.checkpoint.intervalMs};
                             0 = never: a restart then replays the whole journal)
  --checkpoint-epochs <n>    also checkpoint after this many epochs (default ${DEFAULTS.checkpoint.epochs})
  --checkpoint-slice-ms <n>  a checkpoint is written in slices of about n ms, epochs running between them
                             (default ${DEFAULTS.checkpoint.sliceMs}; 0 = yield after every few hundred entries)
  --idempotency-window-ms <n>  ingest Idempotency-Keys are remembered this long (default ${DEFAULTS.idempotency.windowMs})
  --idempotency-window-count <n>  and at most this many (default ${DEFAULTS.idempotency.maxKeys}; then the oldest go)
  --idempotency-window-bytes <bytes>  and in at most this much memory (default ${DEFAULTS.idempotency.maxBytes})
  --log-level <level>        fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL; default info)
  --demo                     create the Double 11 demo (orders, seller_totals, total_histogram) and feed it
  --demo-rate <n>            demo orders per second (default 50)
  -h, --help                 show this help
  -v, --version              show the version
`;

function fail(message: string): never {
  process.stderr.write(`sluice: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function clockMode(raw: string | undefined): 'real' | 'manual' {
  if (raw === undefined || raw === 'real') return 'real';
  if (raw === 'manual') return 'manual';
  fail(`--clock must be real or manual, not "${raw}"`);
}

function intOption(name: string, raw: string | undefined, fallback: number, min = 0): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) fail(`--${name} must be a non-negative integer, not "${raw}"`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) fail(`--${name} must be an integer ≥ ${min}, not "${raw}"`);
  return n;
}

/** `--workers` / SLUICE_WORKERS: 1..MAX_WORKERS threads for partitioned Reduces. */
function workersOption(raw: string | undefined): number {
  const n = intOption('workers', raw, 1, 1);
  if (n > MAX_WORKERS) fail(`--workers must be an integer from 1 to ${MAX_WORKERS}, not "${raw ?? ''}"`);
  return n;
}

/** `--host`: an IP address or a host name; empty or malformed is a usage error (never "every interface"). */
function hostOption(raw: string): string {
  const host = raw.trim().replace(/^\[(.*)\]$/, '$1');
  const name =
    /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
  if (host === '' || (isIP(host) === 0 && !name.test(host))) {
    fail(`--host must be an IP address or a host name, not "${raw}" (use 0.0.0.0 to bind every interface)`);
  }
  return host;
}

/** A comma-separated list option; absent or empty: none. */
function listOption(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? 'unknown';
}

async function main(argv: string[]): Promise<void> {
  // The clients parse their own options; loaded only when asked for.
  if (argv[0] === 'sql') {
    const { sqlMain } = await import('./cli/sql-shell.ts');
    process.exitCode = await sqlMain(argv.slice(1));
    return;
  }
  if (argv[0] === 'token') {
    const { tokenMain } = await import('./cli/token.ts');
    process.exitCode = await tokenMain(argv.slice(1));
    return;
  }
  if (argv[0] === 'subscribe') {
    const { subscribeMain } = await import('./cli/subscribe.ts');
    process.exitCode = await subscribeMain(argv.slice(1));
    return;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        auth: { type: 'boolean' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'allowed-hosts': { type: 'string' },
        'allowed-origins': { type: 'string' },
        'connector-hosts': { type: 'string' },
        'headers-timeout-ms': { type: 'string' },
        'request-timeout-ms': { type: 'string' },
        'keep-alive-timeout-ms': { type: 'string' },
        'data-dir': { type: 'string' },
        'body-limit': { type: 'string' },
        'retention-epochs': { type: 'string' },
        'retention-seconds': { type: 'string' },
        'journal-retention-seconds': { type: 'string' },
        'heartbeat-ms': { type: 'string' },
        clock: { type: 'string' },
        'clock-tick-ms': { type: 'string' },
        workers: { type: 'string' },
        'subscriber-buffer': { type: 'string' },
        'subscriber-memory': { type: 'string' },
        'max-subscribers': { type: 'string' },
        'max-subscribers-per-view': { type: 'string' },
        'max-subscribers-per-tenant': { type: 'string' },
        'query-subscription-linger-ms': { type: 'string' },
        'max-query-subscriptions': { type: 'string' },
        'max-tenants': { type: 'string' },
        'max-tokens-per-tenant': { type: 'string' },
        'token-creates-per-minute': { type: 'string' },
        'revoked-token-retention-seconds': { type: 'string' },
        'default-page-rows': { type: 'string' },
        'max-result-rows': { type: 'string' },
        'max-dml-rows': { type: 'string' },
        'max-result-bytes': { type: 'string' },
        'max-scan-rows': { type: 'string' },
        'checkpoint-interval-ms': { type: 'string' },
        'checkpoint-epochs': { type: 'string' },
        'checkpoint-slice-ms': { type: 'string' },
        'idempotency-window-ms': { type: 'string' },
        'idempotency-window-count': { type: 'string' },
        'idempotency-window-bytes': { type: 'string' },
        'log-level': { type: 'string' },
        demo: { type: 'boolean' },
        'demo-rate': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(USAGE);
    return;
  }
  if (values.version === true) {
    process.stdout.write(`sluice ${version()}\n`);
    return;
  }
  const command = positionals[0];
  if (command !== 'start') fail(command === undefined ? 'missing command' : `unknown command "${command}"`);
  if (positionals.length > 1) fail(`unexpected argument "${positionals[1] ?? ''}"`);

  const port = intOption('port', values.port ?? process.env.PORT, 8080);
  if (port > 65535) fail(`--port must be at most 65535, not ${port}`);
  const host = hostOption(values.host ?? (process.env.SLUICE_HOST || undefined) ?? '127.0.0.1');
  const headersTimeoutMs = intOption(
    'headers-timeout-ms',
    values['headers-timeout-ms'],
    DEFAULTS.timeouts.headersMs,
    1,
  );
  const requestTimeoutMs = intOption(
    'request-timeout-ms',
    values['request-timeout-ms'],
    DEFAULTS.timeouts.requestMs,
    1,
  );
  if (headersTimeoutMs > requestTimeoutMs)
    fail(
      `--headers-timeout-ms (${headersTimeoutMs}) must not exceed --request-timeout-ms (${requestTimeoutMs})`,
    );
  const keepAliveTimeoutMs = intOption(
    'keep-alive-timeout-ms',
    values['keep-alive-timeout-ms'],
    DEFAULTS.timeouts.keepAliveMs,
    1,
  );
  const allowedHosts = listOption(values['allowed-hosts']);
  const allowedOrigins = listOption(values['allowed-origins']);
  // Checked here too, so a typo is a usage error rather than a failed start.
  try {
    parseAllowedHosts(allowedHosts);
  } catch (error) {
    fail(`--allowed-hosts: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    parseAllowedOrigins(allowedOrigins);
  } catch (error) {
    fail(`--allowed-origins: ${error instanceof Error ? error.message : String(error)}`);
  }
  const connectorHosts =
    values['connector-hosts'] === undefined ? null : listOption(values['connector-hosts']);
  try {
    parseConnectorHosts(connectorHosts ?? []);
  } catch (error) {
    fail(`--connector-hosts: ${error instanceof Error ? error.message : String(error)}`);
  }
  const dataDir = resolve(values['data-dir'] ?? process.env.SLUICE_DATA_DIR ?? './data');
  const level = values['log-level'] ?? process.env.LOG_LEVEL ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level))
    fail(`unknown log level "${level}"`);
  const retentionEpochs = intOption(
    'retention-epochs',
    values['retention-epochs'],
    DEFAULTS.retention.epochs,
  );
  const retentionSeconds = intOption(
    'retention-seconds',
    values['retention-seconds'],
    DEFAULTS.retention.ms / 1000,
  );
  const journalRetentionSeconds = intOption(
    'journal-retention-seconds',
    values['journal-retention-seconds'] ?? process.env.SLUICE_JOURNAL_RETENTION_SECONDS,
    DEFAULTS.journalRetention.ms / 1000,
  );
  const checkpointIntervalMs = intOption(
    'checkpoint-interval-ms',
    values['checkpoint-interval-ms'],
    DEFAULTS.checkpoint.intervalMs,
  );
  const checkpointEpochs = intOption(
    'checkpoint-epochs',
    values['checkpoint-epochs'],
    DEFAULTS.checkpoint.epochs,
    1,
  );
  const checkpointSliceMs = intOption(
    'checkpoint-slice-ms',
    values['checkpoint-slice-ms'],
    DEFAULTS.checkpoint.sliceMs,
  );
  const maxResultRows = intOption('max-result-rows', values['max-result-rows'], DEFAULTS.reads.maxRows, 1);
  const maxResultBytes = intOption(
    'max-result-bytes',
    values['max-result-bytes'],
    DEFAULTS.reads.maxBytes,
    1024,
  );
  const defaultPageRows = intOption(
    'default-page-rows',
    values['default-page-rows'],
    Math.min(DEFAULTS.reads.defaultRows, maxResultRows),
    1,
  );
  if (defaultPageRows > maxResultRows)
    fail(`--default-page-rows (${defaultPageRows}) must be at most --max-result-rows (${maxResultRows})`);
  const maxSubscribers = intOption('max-subscribers', values['max-subscribers'], DEFAULTS.maxSubscribers, 1);
  const auth: AuthOptions = {
    ...(await authSettings(host, values.auth === true, dataDir)),
    ...tokenLimitSettings(values),
  };
  const tls = tlsSettings(values['tls-cert'], values['tls-key']);
  // Tokens are never logged; the header is redacted should a request ever be logged whole.
  const logger = pino({
    level,
    base: { service: 'sluice' },
    redact: ['req.headers.authorization', 'headers.authorization', 'request.headers.authorization'],
  });
  // Loaded only now, so --help and argument errors answer at once.
  const { buildApp } = await import('./server/app.ts');
  const { startDemo } = await import('./server/demo.ts');

  let app;
  try {
    app = await buildApp({
      dataDir,
      logger,
      processMetrics: true,
      auth,
      ...(tls !== undefined ? { tls } : {}),
      admission: { allowedHosts, allowedOrigins },
      connectorHosts,
      timeouts: { headersMs: headersTimeoutMs, requestMs: requestTimeoutMs, keepAliveMs: keepAliveTimeoutMs },
      bodyLimit: intOption('body-limit', values['body-limit'], DEFAULTS.bodyLimit, 1),
      retention: {
        epochs: retentionEpochs === 0 ? null : retentionEpochs,
        ms: retentionSeconds === 0 ? null : retentionSeconds * 1000,
      },
      journalRetention: {
        ms: journalRetentionSeconds === 0 ? null : journalRetentionSeconds * 1000,
      },
      heartbeatMs: intOption('heartbeat-ms', values['heartbeat-ms'], DEFAULTS.heartbeatMs, 10),
      clock: {
        mode: clockMode(values.clock),
        tickMs: intOption('clock-tick-ms', values['clock-tick-ms'], DEFAULTS.clockTickMs),
      },
      workers: workersOption(values.workers ?? process.env.SLUICE_WORKERS),
      checkpoint:
        checkpointIntervalMs === 0
          ? false
          : { intervalMs: checkpointIntervalMs, epochs: checkpointEpochs, sliceMs: checkpointSliceMs },
      subscriberLimits: {
        maxBufferedBytes: intOption(
          'subscriber-buffer',
          values['subscriber-buffer'],
          DEFAULTS.subscriberLimits.maxBufferedBytes,
          1024,
        ),
      },
      subscriberMemory: intOption(
        'subscriber-memory',
        values['subscriber-memory'],
        DEFAULTS.subscriberMemory,
        64 * 1024,
      ),
      maxSubscribers,
      maxSubscribersPerTenant: intOption(
        'max-subscribers-per-tenant',
        values['max-subscribers-per-tenant'],
        defaultSubscriberShare(maxSubscribers),
        1,
      ),
      maxTenants: intOption('max-tenants', values['max-tenants'], DEFAULTS.maxTenants, 1),
      maxSubscribersPerView: intOption(
        'max-subscribers-per-view',
        values['max-subscribers-per-view'],
        DEFAULTS.maxSubscribersPerView,
        1,
      ),
      querySubscriptions: {
        lingerMs: intOption(
          'query-subscription-linger-ms',
          values['query-subscription-linger-ms'],
          DEFAULTS.querySubscriptions.lingerMs,
        ),
        maxViews: intOption(
          'max-query-subscriptions',
          values['max-query-subscriptions'],
          DEFAULTS.querySubscriptions.maxViews,
          1,
        ),
      },
      reads: {
        defaultRows: defaultPageRows,
        maxRows: maxResultRows,
        maxBytes: maxResultBytes,
        scanRows: intOption('max-scan-rows', values['max-scan-rows'], DEFAULTS.reads.scanRows, 1),
      },
      selectLimits: { maxRows: maxResultRows, maxBytes: maxResultBytes },
      maxDmlRows: intOption('max-dml-rows', values['max-dml-rows'], DEFAULTS.maxDmlRows, 1),
      idempotency: {
        windowMs: intOption(
          'idempotency-window-ms',
          values['idempotency-window-ms'],
          DEFAULTS.idempotency.windowMs,
        ),
        maxKeys: intOption(
          'idempotency-window-count',
          values['idempotency-window-count'],
          DEFAULTS.idempotency.maxKeys,
          1,
        ),
        maxBytes: intOption(
          'idempotency-window-bytes',
          values['idempotency-window-bytes'],
          DEFAULTS.idempotency.maxBytes,
          1024,
        ),
      },
    });
  } catch (error) {
    logger.fatal({ err: error }, 'cannot start');
    process.stderr.write(`sluice: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    if (error instanceof SluiceError) {
      if (error.detail !== undefined) process.stderr.write(`sluice: detail: ${error.detail}\n`);
      if (error.hint !== undefined) process.stderr.write(`sluice: hint: ${error.hint}\n`);
    }
    process.exit(1);
  }

  // Shown this once, on the terminal only (never through the logger): only its hash is stored. Before
  // listening, so that a failed listen does not lose the one chance to see it.
  const generated = app.sluiceAuth.generatedToken;
  if (generated !== null)
    process.stdout.write(`sluice: operator token, shown only now — store it safely:\nsluice: ${generated}\n`);

  const stopDemo =
    values.demo === true
      ? startDemo(app.sluice, { rate: intOption('demo-rate', values['demo-rate'], 50, 1), logger })
      : () => undefined;

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      process.stderr.write(`sluice: ${signal} again, exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stopDemo();
    app
      .close()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    await app.listen({ port, host });
  } catch (error) {
    process.stderr.write(listenFailureMessage(error, host, port));
    await app.close();
    process.exit(1);
  }
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const scheme = tls !== undefined ? 'https' : 'http';
  process.stdout.write(
    `sluice ${version()} listening on ${scheme}://${shownHost}:${boundPort} (data: ${dataDir}, epoch ${app.sluice.committedEpoch})\n` +
      (auth.enabled
        ? 'sluice: authentication on: every request needs a bearer token (docs/security.md)\n'
        : 'sluice: running without authentication, loopback clients only (--auth turns it on)\n') +
      `sluice: API docs at ${scheme}://${shownHost}:${boundPort}/docs\n`,
  );
}

/**
 * Whether authentication is on, and the bootstrap token: on with --auth or SLUICE_AUTH=1, and always
 * on a non-loopback address — where starting is refused if it would leave no way in that anyone
 * asked for (no live token yet, no SLUICE_BOOTSTRAP_TOKEN, no --auth to print one).
 */
async function authSettings(host: string, flag: boolean, dataDir: string): Promise<AuthOptions> {
  // Loaded only now (it opens SQLite), so --help and argument errors answer at once.
  const { TokenStore, tokenId } = await import('./storage/token-store.ts');
  const env = (process.env.SLUICE_AUTH ?? '').trim().toLowerCase();
  if (env !== '' && !['0', '1', 'true', 'false'].includes(env))
    fail(`SLUICE_AUTH must be 1 or 0, not "${process.env.SLUICE_AUTH ?? ''}"`);
  const asked = flag || env === '1' || env === 'true';
  const bootstrap = process.env.SLUICE_BOOTSTRAP_TOKEN?.trim() || undefined;
  if (bootstrap !== undefined && tokenId(bootstrap) === null)
    fail(
      'SLUICE_BOOTSTRAP_TOKEN is not a Sluice token: expected sluice_<16 hex digits>_<at least 32 of A-Z a-z 0-9 _ ->, ' +
        'e.g. sluice_$(openssl rand -hex 8)_$(openssl rand -hex 32)',
    );
  const loopback = isIP(host) !== 0 ? isLoopbackAddress(host) : /^(.*\.)?localhost\.?$/i.test(host);
  if (loopback) return { enabled: asked, ...(bootstrap !== undefined ? { bootstrapToken: bootstrap } : {}) };
  if (env === '0' || env === 'false')
    fail(`--host ${host} is not a loopback address, so authentication cannot be off (SLUICE_AUTH=${env})`);
  if (!asked && bootstrap === undefined && !hasLiveToken(() => new TokenStore(dataDir)))
    fail(
      `--host ${host} is not a loopback address, so every request will need a token, and there is none yet: ` +
        'start with --auth (a first operator token is printed once) or set SLUICE_BOOTSTRAP_TOKEN',
    );
  return { enabled: true, ...(bootstrap !== undefined ? { bootstrapToken: bootstrap } : {}) };
}

function hasLiveToken(open: () => { hasLiveToken(): boolean; close(): void }): boolean {
  let store: { hasLiveToken(): boolean; close(): void } | null = null;
  try {
    store = open();
    return store.hasLiveToken();
  } catch {
    return false; // the server's own start reports a data directory it cannot open
  } finally {
    store?.close();
  }
}

/**
 * The token limits (src/server/token-limits.ts), from their flags or environment variables: checked
 * here, so a typo is a usage error rather than a server started with the default.
 */
function tokenLimitSettings(
  values: Record<string, string | boolean | undefined>,
): Pick<AuthOptions, 'maxTokensPerTenant' | 'tokenCreatesPerMinute' | 'revokedTokenRetentionMs'> {
  const raw = (flag: string, env: string): string | undefined => {
    const value = values[flag];
    return typeof value === 'string' ? value : process.env[env]?.trim() || undefined;
  };
  const retentionSeconds = intOption(
    'revoked-token-retention-seconds',
    raw('revoked-token-retention-seconds', 'SLUICE_REVOKED_TOKEN_RETENTION_SECONDS'),
    DEFAULTS.tokens.revokedRetentionMs / 1000,
  );
  return {
    maxTokensPerTenant: intOption(
      'max-tokens-per-tenant',
      raw('max-tokens-per-tenant', 'SLUICE_MAX_TOKENS_PER_TENANT'),
      DEFAULTS.tokens.maxLivePerTenant,
      1,
    ),
    tokenCreatesPerMinute: intOption(
      'token-creates-per-minute',
      raw('token-creates-per-minute', 'SLUICE_TOKEN_CREATES_PER_MINUTE'),
      DEFAULTS.tokens.createsPerMinute,
      1,
    ),
    revokedTokenRetentionMs: retentionSeconds * 1000,
  };
}

/** `--tls-cert` and `--tls-key`: both or neither, readable PEM files. */
function tlsSettings(
  cert: string | undefined,
  key: string | undefined,
): { cert: Buffer; key: Buffer } | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) fail('--tls-cert and --tls-key go together');
  const read = (flag: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (error) {
      fail(`cannot read ${flag} ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  return { cert: read('--tls-cert', cert), key: read('--tls-key', key) };
}

await main(process.argv.slice(2));
