// The console's client for the Sluice HTTP API (API.md): JSON in, JSON out, errors as values. On a
// server with authentication every request carries the token the reader signed in with (kept in this
// tab's sessionStorage only); a 401 answer sends the reader back to the sign-in screen.

const TOKEN_KEY = 'sluice.token';

/** The token this tab signed in with, or null. */
export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** Signs in (a token) or out (null) for this tab. */
export function storeToken(token: string | null): void {
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // storage refused (private mode quotas): the token then lasts as long as nothing reloads
  }
}

function authHeaders(): Record<string, string> {
  const token = storedToken();
  return token === null ? {} : { authorization: `Bearer ${token}` };
}

let unauthenticated: () => void = () => undefined;

/** What to do when the server answers 401 (main.ts shows the sign-in screen). */
export function onUnauthenticated(handler: () => void): void {
  unauthenticated = handler;
}

/** Tells the console that the server refused its token (or wants one). */
export function signInNeeded(): void {
  unauthenticated();
}

function checkAuth(res: Response): void {
  if (res.status === 401) unauthenticated();
}

export interface ColumnInfo {
  readonly name: string;
  readonly type: string;
  readonly nullable?: boolean;
}

export interface ApiErrorBody {
  readonly code: string;
  readonly message: string;
  readonly detail?: string;
  readonly hint?: string;
  readonly position?: { readonly line: number; readonly column: number };
}

export interface TableJson {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  readonly key: readonly string[] | null;
  readonly rowCount: number;
  readonly dependents?: readonly string[];
}

export interface ViewJson {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  readonly key: readonly string[] | null;
  readonly sql: string;
  readonly epoch: number;
  readonly rowCount: number;
  readonly stateBytes: number;
  readonly dependsOn?: readonly string[];
  readonly subscribers?: number;
  readonly errors?: number;
}

/** Sources and sinks: named connectors with whatever status fields the server reports. */
export type ConnectorJson = { readonly name: string } & Readonly<Record<string, unknown>>;

export interface StatementResultJson {
  readonly statement: string;
  readonly object?: string;
  readonly columns?: readonly ColumnInfo[];
  readonly rows?: readonly Record<string, unknown>[];
  readonly rowCount?: number;
  readonly epoch?: number;
  readonly plan?: string;
}

export interface SqlOutcome {
  readonly results: readonly StatementResultJson[];
  readonly error?: ApiErrorBody;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(path, {
    headers: { accept: 'application/json', ...authHeaders() },
    ...(signal ? { signal } : {}),
  });
  checkAuth(res);
  const body = (await res.json()) as T & { error?: ApiErrorBody };
  if (!res.ok) {
    throw new ApiError(res.status, body.error ?? { code: `HTTP_${res.status}`, message: res.statusText });
  }
  return body;
}

export async function getText(path: string, signal?: AbortSignal): Promise<string> {
  const res = await fetch(path, { headers: authHeaders(), ...(signal ? { signal } : {}) });
  checkAuth(res);
  if (!res.ok) throw new ApiError(res.status, { code: `HTTP_${res.status}`, message: res.statusText });
  return res.text();
}

export async function runSql(sql: string): Promise<SqlOutcome> {
  const res = await fetch('/v1/sql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeaders() },
    body: JSON.stringify({ sql }),
  });
  checkAuth(res);
  const body = (await res.json()) as { results?: StatementResultJson[]; error?: ApiErrorBody };
  if (body.error !== undefined) return { results: body.results ?? [], error: body.error };
  if (!res.ok) return { results: [], error: { code: `HTTP_${res.status}`, message: res.statusText } };
  return { results: body.results ?? [] };
}

export interface Catalog {
  readonly tables: readonly TableJson[];
  readonly views: readonly ViewJson[];
  readonly sources: readonly ConnectorJson[];
  readonly sinks: readonly ConnectorJson[];
}

export async function getCatalog(signal?: AbortSignal): Promise<Catalog> {
  const optional = <T>(p: Promise<T>, fallback: T): Promise<T> => p.catch(() => fallback);
  const [tables, views, sources, sinks] = await Promise.all([
    getJson<{ tables: TableJson[] }>('/v1/tables', signal),
    getJson<{ views: ViewJson[] }>('/v1/views', signal),
    optional(getJson<{ sources: ConnectorJson[] }>('/v1/sources', signal), { sources: [] }),
    optional(getJson<{ sinks: ConnectorJson[] }>('/v1/sinks', signal), { sinks: [] }),
  ]);
  return { tables: tables.tables, views: views.views, sources: sources.sources, sinks: sinks.sinks };
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.body.code}: ${error.body.message}`;
  return error instanceof Error ? error.message : String(error);
}
