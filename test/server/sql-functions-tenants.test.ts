// SQL functions are per tenant: two tenants define functions of the same name with different
// bodies and each query inlines its own; a function one tenant defines is unknown to the other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATOR_TOKEN, call, startAuthServer } from './auth-helpers.ts';

async function adminOf(base: string, tenant: string): Promise<string> {
  assert.equal(
    (await call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name: tenant } })).status,
    201,
  );
  const r = await call(base, 'POST', `/v1/tenants/${tenant}/tokens`, {
    token: OPERATOR_TOKEN,
    body: { role: 'admin' },
  });
  assert.equal(r.status, 201, r.text);
  return r.body.token as string;
}

test('functions of the same name in two tenants are two functions', async () => {
  const server = await startAuthServer();
  try {
    const { base } = server;
    const acme = await adminOf(base, 'acme');
    const beta = await adminOf(base, 'beta');
    const sql = (token: string, text: string) =>
      call(base, 'POST', '/v1/sql', { token, body: { sql: text } });
    assert.equal((await sql(acme, 'CREATE FUNCTION f(x int) RETURNS int RETURN x + 1')).status, 200);
    assert.equal((await sql(beta, 'CREATE FUNCTION f(x int) RETURNS int RETURN x * 100')).status, 200);
    assert.equal((await sql(beta, 'CREATE FUNCTION only_beta(x int) RETURNS int RETURN x')).status, 200);
    const rows = async (token: string, text: string) =>
      ((await sql(token, text)).body['results'] as { rows: Record<string, unknown>[] }[])[0]?.rows;
    assert.deepEqual(await rows(acme, 'SELECT f(2) AS v'), [{ v: 3 }]);
    assert.deepEqual(await rows(beta, 'SELECT f(2) AS v'), [{ v: 200 }]);
    assert.deepEqual(
      (await rows(acme, 'SHOW FUNCTIONS'))?.map((r) => r['name']),
      ['f'],
    );
    const missing = await sql(acme, 'SELECT only_beta(1)');
    assert.equal(missing.body.error?.code, 'UNKNOWN_FUNCTION');
  } finally {
    await server.close();
  }
});
