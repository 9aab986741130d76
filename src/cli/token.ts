// `sluice token create|list|revoke`: a tenant's tokens through the admin API of a running server
// (docs/security.md). The new token is the only thing written to stdout, so a script can capture it;
// everything else goes to stderr. Like the other clients it speaks only HTTP.
import { parseArgs } from 'node:util';
import { ApiClient, ClientError, MAX_RESPONSE_BYTES, timeoutOption } from './api-client.ts';
import { cellText, escapeControls, formatTable } from './table-format.ts';

export const TOKEN_USAGE = `Usage: sluice token create --role <role> [options]   create a token; prints it (shown only once)
       sluice token list [options]                     list the tenant's tokens (no secrets)
       sluice token revoke <id> [options]              revoke a token at once

Roles: reader (reads, SELECT, subscriptions), writer (+ ingest, INSERT/UPDATE/DELETE),
admin (+ DDL, sources, sinks, the tenant's tokens), operator (server-wide; operators only).

Options:
  --url <url>            the server (env SLUICE_URL; default http://127.0.0.1:8080)
  --token <token>        your token, an admin's or the operator's (env SLUICE_TOKEN)
  --timeout <seconds>    give up when the server has not answered in this long (env SLUICE_TIMEOUT;
                         default 0 = no limit)
  --tenant <name>        the tenant (default: default)
  -h, --help             show this help
`;

/** A field of the server's answer as one line of text, control characters escaped. */
function shown(value: unknown): string {
  return cellText(value, '');
}

function usageError(message: string): number {
  process.stderr.write(`sluice token: ${message}\n\n${TOKEN_USAGE}`);
  return 2;
}

/** `sluice token …`: returns the exit status. */
export async function tokenMain(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        timeout: { type: 'string' },
        tenant: { type: 'string' },
        role: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(TOKEN_USAGE);
    return 0;
  }
  const [command, ...rest] = positionals;
  let client: ApiClient;
  try {
    client = new ApiClient(
      values.url ?? (process.env.SLUICE_URL || 'http://127.0.0.1:8080'),
      values.token ?? process.env.SLUICE_TOKEN ?? null,
      MAX_RESPONSE_BYTES,
      timeoutOption(values.timeout),
    );
  } catch (error) {
    return usageError(error instanceof ClientError ? error.message : String(error));
  }
  const tenant = encodeURIComponent(values.tenant ?? 'default');
  const fail = (error: { code: string; message: string; hint?: string }): number => {
    // The server's text is shown, never interpreted: an escape sequence in it prints as `\x1b`.
    process.stderr.write(`sluice token: ${escapeControls(error.code)}: ${escapeControls(error.message)}\n`);
    if (error.hint !== undefined) process.stderr.write(`sluice token: hint: ${escapeControls(error.hint)}\n`);
    return 1;
  };
  try {
    if (command === 'create') {
      if (rest.length > 0) return usageError(`unexpected argument "${rest[0] ?? ''}"`);
      if (values.role === undefined) return usageError('create needs --role reader|writer|admin|operator');
      const r = await client.send('POST', `/v1/tenants/${tenant}/tokens`, { role: values.role });
      if (!r.ok) return fail(r.error);
      process.stderr.write(
        `sluice token: created token ${shown(r.body.id)} (role ${shown(r.body.role)}, tenant ${shown(r.body.tenant)}); it is shown only now\n`,
      );
      process.stdout.write(`${shown(r.body.token)}\n`);
      return 0;
    }
    if (command === 'list') {
      if (rest.length > 0) return usageError(`unexpected argument "${rest[0] ?? ''}"`);
      const r = await client.send('GET', `/v1/tenants/${tenant}/tokens`);
      if (!r.ok) return fail(r.error);
      const tokens = Array.isArray(r.body.tokens) ? (r.body.tokens as Record<string, unknown>[]) : [];
      const columns = ['id', 'role', 'tenant', 'createdAt', 'lastUsedAt', 'revoked'].map((name) => ({
        name,
        type: 'text',
      }));
      const lines = formatTable(
        columns,
        tokens.map((t) => ({ ...t, revoked: t.revoked === true ? 'yes' : 'no' })),
      );
      process.stdout.write(`${lines.join('\n')}\n`);
      return 0;
    }
    if (command === 'revoke') {
      if (rest.length !== 1)
        return usageError(rest.length === 0 ? 'revoke needs a token id' : 'one id at a time');
      const r = await client.send(
        'DELETE',
        `/v1/tenants/${tenant}/tokens/${encodeURIComponent(rest[0] ?? '')}`,
      );
      if (!r.ok) return fail(r.error);
      process.stderr.write(`sluice token: revoked token ${shown(r.body.id)}\n`);
      return 0;
    }
  } catch (error) {
    process.stderr.write(
      `sluice token: ${escapeControls(error instanceof Error ? error.message : String(error))}\n`,
    );
    return 1;
  }
  return usageError(
    command === undefined ? 'missing command (create, list or revoke)' : `unknown command "${command}"`,
  );
}
