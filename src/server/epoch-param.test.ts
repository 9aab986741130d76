import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SluiceError } from '../common/errors.ts';
import { MAX_EPOCH_PARAM, epochParam } from './epoch-param.ts';

function refusal(raw: unknown): string {
  try {
    epochParam('resumeFrom', raw);
  } catch (error) {
    assert.ok(error instanceof SluiceError);
    assert.equal(error.code, 'INVALID_REQUEST');
    return error.message;
  }
  assert.fail(`${String(raw)} was taken`);
}

test('an epoch parameter is taken as its number up to 15 digits, and absent is undefined', () => {
  assert.equal(epochParam('asOf', undefined), undefined);
  assert.equal(epochParam('asOf', '0'), 0);
  assert.equal(epochParam('asOf', '000042'), 42);
  assert.equal(epochParam('asOf', String(MAX_EPOCH_PARAM)), MAX_EPOCH_PARAM);
  assert.ok(Number.isSafeInteger(MAX_EPOCH_PARAM));
});

test('a non-negative integer past the bound is refused naming the bound, anything else as not an epoch', () => {
  assert.match(
    refusal('1000000000000000'),
    /resumeFrom must be an epoch from 0 to 999999999999999, not "1000000000000000"/,
  );
  for (const raw of ['-5', 'abc', '1.5', '1e15', '', ['1', '2']]) {
    assert.match(refusal(raw), /resumeFrom must be an epoch \(a non-negative integer\)/, String(raw));
  }
  // A long value is shown cut.
  assert.ok(refusal('9'.repeat(10_000)).length < 200);
});
