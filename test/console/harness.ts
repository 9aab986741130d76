// The console suites' server: the real app (buildApp) on an ephemeral loopback port with a temp
// data directory, optionally feeding the Double 11 demo, plus a JSON helper for the API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type FastifyInstance } from '../../src/server/app.ts';
import { startDemo } from '../../src/server/demo.ts';

export interface ConsoleServer {
  readonly app: FastifyInstance;
  readonly base: string;
  close(): Promise<void>;
}

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

export async function startConsoleServer(options: { demoRate?: number } = {}): Promise<ConsoleServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-console-'));
  const app = await buildApp({ dataDir, heartbeatMs: 500 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address !== 'object') throw new Error('server has no address');
  const stopDemo =
    options.demoRate !== undefined
      ? startDemo(app.sluice, { rate: options.demoRate, logger: quiet })
      : () => undefined;
  return {
    app,
    base: `http://127.0.0.1:${address.port}`,
    close: async () => {
      stopDemo();
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(base + path, {
    method,
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
      : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
