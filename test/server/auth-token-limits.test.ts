// Tokens under attack by a tenant's own admin (docs/security.md#tokens, #managing-tokens), each on a
// real server and counting answers, never time: a flood of wrong secrets under the ids an admin knows
// must not turn the operator away; an admin is not shown the operator's token ids; a tenant holds a
// bounded number of live tokens and its admins create them at a bounded rate; revoked tokens are
// deleted after the retention, operator ones excepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TokenInfo } from '../../src/storage/token-store.ts';
import { TokenStore, tokenId } from '../../src/storage/token-store.ts';
import { waitUntil } from './helpers.ts';
import { OPERATOR_TOKEN, TEST_KDF, call, createToken, startAuthServer, type Answer } from './auth-helpers.ts';

/** A token of the format with this id and a random secret: never a valid token. */
const wrongSecret = (id: string): string => `sluice_${id}_${randomBytes(32).toString('base64url')}`;

async function createIn(base: string, asToken: string, tenant: string, role: string): Promise<Answer> {
  return call(base, 'POST', `/v1/tenants/${tenant}/tokens`, { token: asToken, body: { role } });
}

async function newTenant(base: string, name: string): Promise<void> {
  const r = await call(base, 'POST', '/v1/tenants', { token: OPERATOR_TOKEN, body: { name } });
  assert.equal(r.status, 201, r.text);
}

test('wrong secrets under every id the admins know fill their shares, and a new operator token is still verified', async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    const auth = server.app.sluiceAuth.authenticator;
    // Ids the tenants' admins know: a reader of default, and of three more tenants (4 × 8 = 32 slots,
    // every slot of the tenants' tokens).
    const targets = [(await createToken(base, OPERATOR_TOKEN, 'reader')).id];
    for (const name of ['acme', 'beta', 'gamma']) {
      await newTenant(base, name);
      targets.push((await createIn(base, OPERATOR_TOKEN, name, 'reader')).body.id as string);
    }
    const operator = await createToken(base, OPERATOR_TOKEN, 'operator'); // not verified yet

    // Every KDF run of a wrong secret is held until the operator's request is answered, so the
    // shares stay full while it arrives.
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    const verify = auth.store.verify.bind(auth.store);
    auth.store.verify = async (token: string): Promise<TokenInfo | null> => {
      if (token === operator.token) return verify(token);
      held += 1;
      await gate;
      return verify(token);
    };
    const flood = targets.flatMap((id) =>
      Array.from({ length: 12 }, () => call(base, 'GET', '/v1/views', { token: wrongSecret(id) })),
    );
    await waitUntil(() => held === 32, 10_000, 'every share of the tenants full');
    const asOperator = await call(base, 'GET', '/v1/tenants', { token: operator.token });
    release();
    const statuses = (await Promise.all(flood)).map((r) => r.status);
    assert.equal(asOperator.status, 200, asOperator.text);
    assert.equal(statuses.filter((s) => s === 401).length, 32, 'each share ran 8 wrong secrets');
    assert.equal(statuses.filter((s) => s === 503).length, 16, 'the rest were turned away');
    assert.equal(held, 32);
  } finally {
    await server.close();
  }
});

test("an admin of default is not shown the operator's tokens, and cannot confirm their ids", async () => {
  const server = await startAuthServer();
  try {
    const base = server.base;
    const admin = await createToken(base, OPERATOR_TOKEN, 'admin');
    const reader = await createToken(base, admin.token, 'reader');
    const operatorIds = [tokenId(OPERATOR_TOKEN), (await createToken(base, OPERATOR_TOKEN, 'operator')).id];

    const asAdmin = await call(base, 'GET', '/v1/tenants/default/tokens', { token: admin.token });
    const seen = (asAdmin.body.tokens as { id: string; role: string }[]).map((t) => t.id).sort();
    assert.deepEqual(seen, [admin.id, reader.id].sort());
    for (const id of operatorIds) {
      const r = await call(base, 'DELETE', `/v1/tenants/default/tokens/${id}`, { token: admin.token });
      assert.equal(r.status, 404, r.text);
      assert.equal(r.body.error?.code, 'NOT_FOUND');
    }
    assert.equal((await call(base, 'GET', '/v1/views', { token: OPERATOR_TOKEN })).status, 200);

    const asOperator = await call(base, 'GET', '/v1/tenants/default/tokens', { token: OPERATOR_TOKEN });
    const all = (asOperator.body.tokens as { id: string }[]).map((t) => t.id);
    for (const id of [...operatorIds, admin.id, reader.id])
      assert.ok(all.includes(id as string), id as string);
  } finally {
    await server.close();
  }
});

test('a tenant holds at most its cap of live tokens, concurrent creations included; revoking frees a place', async () => {
  const server = await startAuthServer({ auth: { enabled: true, maxTokensPerTenant: 5 } });
  try {
    const base = server.base;
    await newTenant(base, 'acme');
    const admin = (await createIn(base, OPERATOR_TOKEN, 'acme', 'admin')).body.token as string;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => createIn(base, admin, 'acme', 'reader')),
    );
    const created = answers.filter((r) => r.status === 201);
    assert.equal(created.length, 4, 'the admin and 4 readers');
    for (const r of answers.filter((a) => a.status !== 201)) {
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.error?.code, 'QUOTA_EXCEEDED');
    }
    assert.equal((await createIn(base, OPERATOR_TOKEN, 'acme', 'reader')).status, 403, 'the operator too');
    const revoked = await call(base, 'DELETE', `/v1/tenants/acme/tokens/${created[0]?.body.id as string}`, {
      token: admin,
    });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal((await createIn(base, admin, 'acme', 'reader')).status, 201);
    assert.equal((await createIn(base, admin, 'acme', 'reader')).status, 403);
    // Another tenant's cap is its own.
    assert.equal((await createToken(base, OPERATOR_TOKEN, 'reader')).id.length, 16);
  } finally {
    await server.close();
  }
});

test("a tenant's admins create tokens at a bounded rate (429 with Retry-After); the operator is not limited", async () => {
  const server = await startAuthServer({ auth: { enabled: true, tokenCreatesPerMinute: 3 } });
  try {
    const base = server.base;
    await newTenant(base, 'acme');
    const admin = (await createIn(base, OPERATOR_TOKEN, 'acme', 'admin')).body.token as string;
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i++) answers.push(await createIn(base, admin, 'acme', 'reader'));
    assert.deepEqual(
      answers.map((r) => r.status),
      [201, 201, 201, 429, 429, 429],
    );
    const limited = answers[3] as Answer;
    assert.equal(limited.body.error?.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1, limited.headers.get('retry-after') ?? 'none');
    const list = await call(base, 'GET', '/v1/tenants/acme/tokens', { token: admin });
    assert.equal((list.body.tokens as unknown[]).length, 4, 'nothing created by a refused request');
    for (let i = 0; i < 5; i++)
      assert.equal((await createIn(base, OPERATOR_TOKEN, 'acme', 'reader')).status, 201);
    // Another tenant's admins have a rate of their own.
    const other = await createToken(base, OPERATOR_TOKEN, 'admin');
    assert.equal((await createIn(base, other.token, 'default', 'reader')).status, 201);
  } finally {
    await server.close();
  }
});

test('revoked tokens are deleted after the retention, revoked operator tokens kept', async () => {
  const server = await startAuthServer({ auth: { enabled: true, revokedTokenRetentionMs: 0 } });
  try {
    const base = server.base;
    const reader = await createToken(base, OPERATOR_TOKEN, 'reader');
    const operator = await createToken(base, OPERATOR_TOKEN, 'operator');
    for (const id of [reader.id, operator.id]) {
      const r = await call(base, 'DELETE', `/v1/tenants/default/tokens/${id}`, { token: OPERATOR_TOKEN });
      assert.equal(r.status, 200, r.text);
    }
    const list = await call(base, 'GET', '/v1/tenants/default/tokens', { token: OPERATOR_TOKEN });
    const tokens = list.body.tokens as { id: string; revoked: boolean }[];
    assert.equal(
      tokens.find((t) => t.id === reader.id),
      undefined,
      'the revoked reader is gone',
    );
    assert.equal(tokens.find((t) => t.id === operator.id)?.revoked, true, 'the revoked operator is kept');
    assert.equal((await call(base, 'GET', '/v1/views', { token: reader.token })).status, 401);
  } finally {
    await server.close();
  }
  // A revoked bootstrap token stays known, so it can never be stored again under its old id.
  const store = new TokenStore(null, TEST_KDF, 0);
  try {
    const fixed = `sluice_bbbbbbbbbbbbbbbb_${'k'.repeat(40)}`;
    assert.equal(await store.bootstrap(fixed), fixed);
    await store.create('default', 'operator');
    store.revoke('bbbbbbbbbbbbbbbb');
    await store.create('default', 'reader');
    assert.equal(store.pruneRevoked(), 0);
    assert.equal(store.get('bbbbbbbbbbbbbbbb')?.revokedAt !== null, true);
  } finally {
    store.close();
  }
});
