// The CLI's side of the HTTP API: it imports nothing of the engine, it is a client like any other. Answers
// are checked for the shape the contract promises before they are used, so a proxy's HTML page or a
// truncated body becomes a clear error rather than a crash.

export interface ApiColumn {
  readonly name: string;
  readonly type: string;
  readonly nullable?: boolean;
}

export interface StatementResult {
  readonly statement: string;
  readonly object?: string;
  readonly columns?: readonly ApiColumn[];
  readonly rows?: readonly Readonly<Record<string, unknown>>[];
  readonly epoch?: number;
  readonly rowCount?: number;
}

export interface ApiError {
  readonly code: string;
  readonly message: string;
  readonly detail?: string;
  readonly hint?: string;
  readonly position?: { readonly line: number; readonly column: number };
}

export type SqlAnswer =
  | { readonly ok: true; readonly results: readonly StatementResult[] }
  | { readonly ok: false; readonly results: readonly StatementResult[]; readonly error: ApiError };

/** A name as SQL reads it: unquoted it folds to lower case, "quoted" it keeps its case. */
export function objectName(raw: string): string {
  const quoted = /^"((?:[^"]|"")*)"$/.exec(raw.trim());
  return quoted !== null ? (quoted[1] ?? '').replace(/""/g, '"') : raw.trim().toLowerCase();
}

/**
 * The largest answer body read. The server's own result limit (`--max-result-bytes`, default
 * 8 MiB) keeps real answers far below it; past it the client stops reading rather than buffer
 * whatever a broken or hostile server keeps sending.
 */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/** The server could not be reached, or did not answer as the API does. */
export class ClientError extends Error {}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function asError(x: unknown, status: number): ApiError {
  if (isRecord(x) && typeof x.code === 'string' && typeof x.message === 'string') {
    const p = x.position;
    return {
      code: x.code,
      message: x.message,
      ...(typeof x.detail === 'string' ? { detail: x.detail } : {}),
      ...(typeof x.hint === 'string' ? { hint: x.hint } : {}),
      ...(isRecord(p) && typeof p.line === 'number' && typeof p.column === 'number'
        ? { position: { line: p.line, column: p.column } }
        : {}),
    };
  }
  return { code: `HTTP_${status}`, message: `the server answered ${status} without an error body` };
}

/**
 * The results shaped as the API's; a field of another type is left out (an epoch or row count that
 * is not a number would otherwise be printed as whatever text the server sent).
 */
function asResults(x: unknown): StatementResult[] {
  if (!Array.isArray(x)) return [];
  return x.flatMap((r: unknown): StatementResult[] => {
    if (!isRecord(r) || typeof r.statement !== 'string') return [];
    if (r.columns !== undefined && !Array.isArray(r.columns)) return [];
    if (r.rows !== undefined && !Array.isArray(r.rows)) return [];
    const rows = Array.isArray(r.rows) ? r.rows.filter(isRecord) : undefined;
    return [
      {
        statement: r.statement,
        ...(typeof r.object === 'string' ? { object: r.object } : {}),
        ...(Array.isArray(r.columns) ? { columns: r.columns as ApiColumn[] } : {}),
        ...(rows !== undefined ? { rows } : {}),
        ...(typeof r.epoch === 'number' ? { epoch: r.epoch } : {}),
        ...(typeof r.rowCount === 'number' ? { rowCount: r.rowCount } : {}),
      },
    ];
  });
}

function reason(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? cause.message : error.message;
  }
  return String(error);
}

/**
 * `--timeout <seconds>` (env SLUICE_TIMEOUT) as milliseconds: null when not given or 0 (no limit).
 * Throws a ClientError naming the flag for anything but a non-negative number of seconds.
 */
export function timeoutOption(raw: string | undefined): number | null {
  const text = (raw ?? process.env.SLUICE_TIMEOUT ?? '').trim();
  if (text === '') return null;
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(seconds) || seconds * 1000 > 2_147_483_647)
    throw new ClientError(`--timeout must be a number of seconds (0 = no limit), not "${text}"`);
  return seconds === 0 ? null : Math.max(1, Math.round(seconds * 1000));
}

/** What a CLI user told `UNAUTHENTICATED` without a token is to do. */
export const NO_TOKEN_HINT =
  'the server requires a token: pass --token <token> or set SLUICE_TOKEN (docs/cli.md, docs/security.md)';

export class ApiClient {
  readonly base: string;
  /** A bearer token sent with every request (`--token`, env SLUICE_TOKEN); null: none. */
  readonly token: string | null;

  /** The largest answer body this client reads (`MAX_RESPONSE_BYTES` unless given). */
  readonly maxResponseBytes: number;

  /** How long one request may take, answer body included (`--timeout`); null: as long as it takes. */
  readonly timeoutMs: number | null;

  constructor(
    url: string,
    token: string | null = null,
    maxResponseBytes = MAX_RESPONSE_BYTES,
    timeoutMs: number | null = null,
  ) {
    this.maxResponseBytes = maxResponseBytes;
    this.timeoutMs = timeoutMs;
    this.token = token === null || token.trim() === '' ? null : token.trim();
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ClientError(`--url must be an http:// or https:// URL, not "${url}"`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new ClientError(`--url must be an http:// or https:// URL, not "${url}"`);
    this.base = parsed.href.replace(/\/+$/, '');
  }

  /** The Authorization header, when there is a token (never put in a URL or printed). */
  authHeaders(): Record<string, string> {
    return this.token === null ? {} : { authorization: `Bearer ${this.token}` };
  }

  /** The WebSocket URL of a path (`ws://` for `http://`, `wss://` for `https://`). */
  wsUrl(path: string): string {
    return this.base.replace(/^http/, 'ws') + path;
  }

  private async call(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body: unknown,
    cancel?: AbortSignal,
  ): Promise<{ status: number; json: unknown }> {
    const timeout = this.timeoutMs === null ? undefined : AbortSignal.timeout(this.timeoutMs);
    const signal =
      timeout === undefined ? cancel : cancel === undefined ? timeout : AbortSignal.any([cancel, timeout]);
    try {
      return await this.exchange(method, path, body, signal);
    } catch (error) {
      if (timeout?.aborted === true && cancel?.aborted !== true) {
        throw new ClientError(
          `the server at ${this.base} did not answer within ${(this.timeoutMs ?? 0) / 1000} s (--timeout)`,
        );
      }
      throw error;
    }
  }

  private async exchange(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; json: unknown }> {
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        ...(body === undefined
          ? { headers: this.authHeaders() }
          : {
              body: JSON.stringify(body),
              headers: { 'content-type': 'application/json', ...this.authHeaders() },
            }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (signal?.aborted === true) throw new ClientError('cancelled');
      throw new ClientError(`cannot reach the server at ${this.base}: ${reason(error)}`);
    }
    const text = await this.bodyText(res, signal);
    try {
      return { status: res.status, json: JSON.parse(text) as unknown };
    } catch {
      throw new ClientError(`the server at ${this.base} answered ${res.status} with a body that is not JSON`);
    }
  }

  /** The answer's body as text, read chunk by chunk and abandoned past `maxResponseBytes`. */
  private async bodyText(res: Response, signal?: AbortSignal): Promise<string> {
    const tooLarge = (): ClientError =>
      new ClientError(
        `the server at ${this.base} sent an answer larger than ${this.maxResponseBytes} bytes, the most this client reads`,
      );
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > this.maxResponseBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    if (res.body === null) return '';
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    let text = '';
    let bytes = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        if (bytes > this.maxResponseBytes) {
          await reader.cancel().catch(() => undefined);
          throw tooLarge();
        }
        text += decoder.decode(value, { stream: true });
      }
    } catch (error) {
      if (error instanceof ClientError) throw error;
      if (signal?.aborted === true) throw new ClientError('cancelled');
      throw new ClientError(`the answer from the server at ${this.base} broke off: ${reason(error)}`);
    }
    return text + decoder.decode();
  }

  /** POST /v1/sql: the results of the statements that ran and, if one failed, its error. */
  async sql(script: string, signal?: AbortSignal): Promise<SqlAnswer> {
    const { status, json } = await this.call('POST', '/v1/sql', { sql: script }, signal);
    const results = asResults(isRecord(json) ? json.results : undefined);
    if (status === 200) return { ok: true, results };
    return {
      ok: false,
      results,
      error: this.withCliHint(asError(isRecord(json) ? json.error : undefined, status)),
    };
  }

  /** GET a JSON document; a 4xx/5xx answer is returned as its error. */
  async get(
    path: string,
  ): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; error: ApiError }> {
    return this.send('GET', path);
  }

  /** Any JSON request; a 2xx answer's body, or a 4xx/5xx answer as its error. */
  async send(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; error: ApiError }> {
    const { status, json } = await this.call(method, path, body);
    if (status >= 200 && status < 300 && isRecord(json)) return { ok: true, body: json };
    return { ok: false, error: this.withCliHint(asError(isRecord(json) ? json.error : undefined, status)) };
  }

  /**
   * The server's hint for a request without a token speaks of the HTTP header; someone at the
   * command line who gave no token needs the command's own way to give one instead.
   */
  private withCliHint(error: ApiError): ApiError {
    if (error.code !== 'UNAUTHENTICATED' || this.token !== null) return error;
    return { ...error, hint: NO_TOKEN_HINT };
  }
}
