// Helpers of the authentication suites: HTTP calls with a bearer token, and a server with
// authentication on whose bootstrap operator token the test knows.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startServer, waitUntil, type Message, type TestServer } from './helpers.ts';
import type { AppOptions } from '../../src/server/app.ts';

/** A cheap scrypt for tests that create many tokens (the default cost is tested on its own). */
export const TEST_KDF = { N: 1024, r: 8, p: 1 } as const;

export const OPERATOR_TOKEN = `sluice_00112233445566aa_${'t'.repeat(40)}`;

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown> & {
    error?: { code: string; message: string; position?: { line: number; column: number }; detail?: string };
  };
  readonly text: string;
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; authorization?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined && options.token !== null)
    headers.authorization = `Bearer ${options.token}`;
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  const init: RequestInit = { method, headers };
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let body: Answer['body'] = {};
  try {
    body = JSON.parse(text) as Answer['body'];
  } catch {
    // metrics, html
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** A server with authentication on (in memory unless dataDir is given) and the operator token. */
export async function startAuthServer(options: Partial<AppOptions> = {}): Promise<TestServer> {
  return startServer({
    ...options,
    auth: { enabled: true, bootstrapToken: OPERATOR_TOKEN, kdf: TEST_KDF, ...options.auth },
  });
}

/** Creates a token of `role` in the default tenant with `asToken`. */
export async function createToken(
  base: string,
  asToken: string,
  role: string,
): Promise<{ id: string; token: string }> {
  const r = await call(base, 'POST', '/v1/tenants/default/tokens', { token: asToken, body: { role } });
  if (r.status !== 201) throw new Error(`token create failed (${r.status}): ${r.text}`);
  return { id: r.body.id as string, token: r.body.token as string };
}

/** Creates tenant `name` with the operator token and returns a new admin token of it. */
export async function tenantAdmin(base: string, name: string): Promise<string> {
  const created = await call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name } });
  if (created.status !== 201) throw new Error(`tenant create failed (${created.status}): ${created.text}`);
  const r = await call(base, 'POST', `/v1/tenants/${name}/tokens`, {
    token: OPERATOR_TOKEN,
    body: { role: 'admin' },
  });
  if (r.status !== 201) throw new Error(`token create failed (${r.status}): ${r.text}`);
  return r.body.token as string;
}

/** A WebSocket client that records messages and the close code, with request headers of its own. */
export class WsClient {
  readonly messages: Message[] = [];
  closeCode: number | null = null;
  readonly socket: WebSocket;
  private readonly opened: Promise<void>;

  constructor(url: string, options: { headers?: Record<string, string>; ca?: string } = {}) {
    this.socket = new WebSocket(url, {
      ...(options.headers !== undefined ? { headers: options.headers } : {}),
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    });
    this.opened = new Promise((resolve, reject) => {
      this.socket.once('open', () => resolve());
      this.socket.once('error', reject);
    });
    this.opened.catch(() => undefined);
    this.socket.on('message', (data) => this.messages.push(JSON.parse(String(data)) as Message));
    this.socket.on('close', (code) => (this.closeCode = code));
  }

  open(): Promise<void> {
    return this.opened;
  }

  async waitFor(predicate: (m: Message) => boolean, what = 'message'): Promise<Message> {
    let found: Message | undefined;
    await waitUntil(() => (found = this.messages.find(predicate)) !== undefined, 10_000, what);
    return found as Message;
  }

  async waitClosed(): Promise<number> {
    await waitUntil(() => this.closeCode !== null, 15_000, 'close');
    return this.closeCode as number;
  }

  close(): void {
    this.socket.terminate();
  }
}

export const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

export interface Child {
  readonly child: ChildProcess;
  readonly port: number;
  readonly scheme: string;
  readonly exited: Promise<number | null>;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** `sluice start` in a child process with these arguments and environment; waits for its API line. */
export async function spawnSluice(args: string[], env: Record<string, string> = {}): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'start', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...cleanEnv(), ...env },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let dead = false;
  void exited.then(() => (dead = true));
  let found: RegExpExecArray | null = null;
  await waitUntil(
    () => {
      if (dead) throw new Error(`server exited early:\n${out}`);
      found = /API docs at (https?):\/\/[^\s]+:(\d+)\/docs/.exec(out);
      return found !== null;
    },
    60_000,
    'the child server to listen',
  );
  const m = found as unknown as RegExpExecArray;
  return {
    child,
    port: Number(m[2]),
    scheme: m[1] as string,
    exited,
    output: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** The test process's environment without any Sluice setting of the caller's. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('SLUICE_') && k !== 'PORT' && k !== 'LOG_LEVEL') env[k] = v;
  }
  return env;
}

/** Runs a `sluice` client command to its end. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...cleanEnv(), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (status) => resolve({ status, stdout, stderr }));
  });
}
