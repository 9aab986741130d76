// Every stable error code is documented in docs/errors.md, and every documented code exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ErrorCodes, SluiceError, httpStatusOf } from './errors.ts';
import type { ErrorCode } from './errors.ts';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const documented = new Set([...doc.matchAll(/^\|\s*`([A-Z_]+)`\s*\|/gm)].map((m) => m[1] ?? ''));

test('every error code is documented, and only existing codes are', () => {
  const codes = Object.keys(ErrorCodes);
  assert.deepEqual(
    codes.filter((c) => !documented.has(c)),
    [],
    'codes missing from docs/errors.md',
  );
  assert.deepEqual(
    [...documented].filter((c) => !(c in ErrorCodes)),
    [],
    'documented codes that do not exist',
  );
});

test('every code maps to an HTTP status in one place', () => {
  for (const code of Object.keys(ErrorCodes) as ErrorCode[]) {
    const status = httpStatusOf(new SluiceError(code, 'x'));
    assert.ok(status >= 400 && status < 600, `${code} → ${status}`);
  }
});
