// The token store and the authenticator without a server: what verifies and what does not, how
// much KDF work a request may cause, and the bootstrap rules.
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { SluiceError } from '../../src/common/errors.ts';
import { Authenticator } from '../../src/server/auth.ts';
import { TokenStore, generateToken, tokenId } from '../../src/storage/token-store.ts';
import { TEST_KDF } from './auth-helpers.ts';

test('a token verifies only whole: a wrong secret under a known id, a revoked or malformed token do not', async () => {
  const store = new TokenStore(null, TEST_KDF);
  try {
    const { info, token } = await store.create('default', 'writer');
    assert.equal(info.id, tokenId(token));
    assert.equal((await store.verify(token))?.role, 'writer');
    const secret = token.slice(24);
    const flipped = `${token.slice(0, 24)}${secret[0] === 'A' ? 'B' : 'A'}${secret.slice(1)}`;
    assert.equal(await store.verify(flipped), null, 'same id, another secret');
    assert.equal(await store.verify(token.slice(0, -1)), null, 'a truncated token');
    assert.equal(await store.verify('Bearer ' + token), null);
    assert.equal(await store.verify(generateToken()), null, 'an unknown id');
    assert.ok(store.revoke(info.id));
    assert.equal(store.revoke(info.id), false, 'revoked once');
    assert.equal(await store.verify(token), null);
    assert.notEqual(store.get(info.id)?.revokedAt, null);
  } finally {
    store.close();
  }
});

test('bootstrap: only while no operator token is live; a revoked bootstrap token cannot come back', async () => {
  const store = new TokenStore(null, TEST_KDF);
  try {
    const first = await store.bootstrap();
    assert.ok(first !== null && tokenId(first) !== null);
    assert.equal(await store.bootstrap(), null, 'a live operator exists: nothing new');
    store.revoke(tokenId(first) as string);
    const again = await store.bootstrap();
    assert.ok(again !== null && again !== first, 'every operator revoked: a new one');
    const fixed = `sluice_aaaaaaaaaaaaaaaa_${'k'.repeat(40)}`;
    store.revoke(tokenId(again) as string);
    assert.equal(await store.bootstrap(fixed), fixed);
    store.revoke('aaaaaaaaaaaaaaaa');
    await assert.rejects(store.bootstrap(fixed), /was revoked; set SLUICE_BOOTSTRAP_TOKEN to a new token/);
  } finally {
    store.close();
  }
});

test('KDF work is bounded: one run per token at a time, and a bounded number in flight', async () => {
  const store = new TokenStore(null, TEST_KDF);
  const auth = new Authenticator(store, { enabled: true, maxVerifications: 2, maxVerificationsPerTenant: 2 });
  try {
    const { token } = await store.create('default', 'reader');
    // Twenty requests with one new token share one KDF run.
    const same = await Promise.all(Array.from({ length: 20 }, () => auth.fromToken(token)));
    assert.ok(same.every((p) => !(p instanceof SluiceError) && p.role === 'reader'));
    assert.equal(auth.verifications, 1);
    // Wrong secrets under the known id: two verify (and fail), the rest are turned away at once.
    const id = tokenId(token) as string;
    const wrong = Array.from({ length: 6 }, (_, i) => `sluice_${id}_${String(i).repeat(43)}`);
    const outcomes = await Promise.allSettled(wrong.map((t) => auth.fromToken(t)));
    const refused = outcomes.filter((o) => o.status === 'rejected');
    assert.equal(refused.length, 4);
    for (const o of refused)
      assert.equal(((o as PromiseRejectedResult).reason as SluiceError).code, 'UNAVAILABLE');
    assert.equal(auth.verifications, 3);
    // A refused token is remembered too: repeating it costs no KDF run.
    assert.ok((await auth.fromToken(wrong[0] as string)) instanceof SluiceError);
    assert.equal(auth.verifications, 3);
    // Malformed or oversized tokens never reach the KDF.
    assert.ok((await auth.fromToken('x'.repeat(10_000))) instanceof SluiceError);
    assert.ok((await auth.fromToken('sluice_nothex_abc')) instanceof SluiceError);
    assert.equal(auth.verifications, 3);
  } finally {
    store.close();
  }
});

test('timing-safe comparison: a wrong secret costs one KDF run and one constant-time compare of whole hashes, wherever it differs', async () => {
  const store = new TokenStore(null, TEST_KDF);
  // The store imports timingSafeEqual by name: the mock reaches it once the builtin's exports are synced.
  const compare = mock.method(crypto, 'timingSafeEqual');
  syncBuiltinESMExports();
  try {
    const { token } = await store.create('default', 'reader');
    const secret = token.slice(24);
    const flip = (c: string): string => (c === 'A' ? 'B' : 'A');
    const wrongFirst = `${token.slice(0, 24)}${flip(secret[0] as string)}${secret.slice(1)}`;
    const wrongLast = `${token.slice(0, -1)}${flip(token.at(-1) as string)}`;
    const lengths: number[][] = [];
    for (const candidate of [wrongFirst, wrongLast, token]) {
      const runs = store.verifications;
      const calls = compare.mock.callCount();
      const verified = await store.verify(candidate);
      assert.equal(verified === null, candidate !== token);
      // Exactly one KDF run and one constant-time comparison, whether the secret differs in its
      // first character, its last, or not at all: nothing returns early on a prefix.
      assert.equal(store.verifications - runs, 1);
      assert.equal(compare.mock.callCount() - calls, 1);
      const args = compare.mock.calls.at(-1)?.arguments as [Buffer, Buffer];
      lengths.push(args.map((b) => b.length));
    }
    // Whole KDF outputs are compared (the hashes, never the token text), all of one length.
    assert.ok(
      lengths.every(([a, b]) => a === b && (a ?? 0) >= 32),
      JSON.stringify(lengths),
    );
  } finally {
    compare.mock.restore();
    syncBuiltinESMExports();
    store.close();
  }
});
