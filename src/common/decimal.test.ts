// Exact decimals against BigInt arithmetic done here by hand, and PostgreSQL's rules: scales of
// + - * /, select_div_scale, rounding half away from zero, equality and Map keys across scales,
// and the digit limits that keep one value's work bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  Decimal,
  add,
  compareDecimals,
  decimalFromDouble,
  decimalFromShortest,
  div,
  fitDecimal,
  mod,
  mul,
  parseDecimal,
  sub,
} from './decimal.ts';
import { compareValues, encodeOne, singleKey, valuesEqual } from './values.ts';

const d = (text: string): Decimal => {
  const v = parseDecimal(text);
  assert.ok(v !== null, text);
  return v;
};

test('text round-trips exactly and keeps its display scale', () => {
  for (const t of ['0', '1.50', '-0.001', '12345678901234567.89', '99999999999999999999999.000001']) {
    assert.equal(d(t).toString(), t);
  }
  assert.equal(d('  -.5 ').toString(), '-0.5');
  assert.equal(d('1e3').toString(), '1000');
  assert.equal(d('1.5e-3').toString(), '0.0015');
  assert.equal(d('-0.00').toString(), '0.00', 'numeric has no negative zero');
  for (const bad of ['', '.', 'abc', '1.2.3', '1e', 'NaN', '--1']) assert.equal(parseDecimal(bad), null, bad);
});

test('equal values of different scales are equal, order alike and share one key', () => {
  assert.ok(valuesEqual(d('1.5'), d('1.50')));
  assert.equal(compareValues(d('1.5'), d('1.50')), 0);
  assert.equal(singleKey(d('1.5')), singleKey(d('1.500')));
  assert.equal(encodeOne(d('0')), encodeOne(d('0.000')));
  assert.notEqual(singleKey(d('1.5')), singleKey(d('15')));
  assert.equal(compareValues(d('-2'), d('1.99')), -1);
  assert.equal(compareValues(d('12345678901234567.89'), d('12345678901234567.9')), -1);
});

test('PostgreSQL result scales: + - keep the larger, * adds them, / per select_div_scale', () => {
  assert.equal(add(d('0.1'), d('0.2')).toString(), '0.3');
  assert.equal(sub(d('1.00'), d('0.5')).toString(), '0.50');
  assert.equal(mul(d('1.25'), d('1.5')).toString(), '1.875');
  assert.equal(div(d('1'), d('3')).toString(), '0.33333333333333333333');
  assert.equal(div(d('3'), d('2')).toString(), '1.5000000000000000');
  assert.equal(div(d('100000'), d('3.0')).toString(), '33333.333333333333');
  assert.equal(div(d('-2'), d('3')).toString(), '-0.66666666666666666667');
  assert.equal(mod(d('-10'), d('3.5')).toString(), '-3.0');
  assert.throws(() => div(d('1'), d('0.00')), /division by zero/);
});

test('rounding is half away from zero; casts fit precision and scale', () => {
  assert.equal(d('2.5').round(0).toString(), '3');
  assert.equal(d('-2.5').round(0).toString(), '-3');
  assert.equal(d('1234.5678').round(-2).toString(), '1200');
  assert.equal(d('42.4382').trunc(2).toString(), '42.43');
  assert.equal(d('-42.8').floor().toString(), '-43');
  assert.equal(d('-42.8').ceil().toString(), '-42');
  assert.equal(fitDecimal(d('1.005'), 10, 2).toString(), '1.01');
  assert.throws(() => fitDecimal(d('99999.995'), 7, 2), /numeric field overflow/);
  assert.equal(decimalFromDouble(0.1 + 0.2, 15).toString(), '0.3');
  assert.equal(decimalFromShortest(0.30000000000000004).toString(), '0.30000000000000004');
});

test('limits: too many digits is NUMERIC_OVERFLOW before any big work', () => {
  assert.throws(() => parseDecimal(`1${'0'.repeat(131_072)}`), { code: 'NUMERIC_OVERFLOW' });
  assert.throws(() => parseDecimal(`0.${'1'.repeat(16_384)}`), { code: 'NUMERIC_OVERFLOW' });
  assert.throws(() => parseDecimal('1e999999999'), { code: 'NUMERIC_OVERFLOW' });
  assert.throws(() => parseDecimal('1'.repeat(1_000_000)), { code: 'NUMERIC_OVERFLOW' });
  const big = d(`9${'0'.repeat(70_000)}`);
  const t = process.cpuUsage();
  assert.throws(() => mul(big, big), { code: 'NUMERIC_OVERFLOW' });
  const used = process.cpuUsage(t);
  // refused from the digit counts, not after multiplying (bound far above the real cost)
  assert.ok(used.user + used.system < 2_000_000, 'a refused product costs little CPU');
  assert.ok(parseDecimal(`1${'0'.repeat(131_071)}`) !== null, 'the limit itself is accepted');
});

const exactArb = fc.tuple(
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
  fc.integer({ min: 0, max: 20 }),
);

test('property: + - * and comparison agree with BigInt arithmetic at a common scale', () => {
  fc.assert(
    fc.property(exactArb, exactArb, ([ua, sa], [ub, sb]) => {
      const a = new Decimal(ua, sa);
      const b = new Decimal(ub, sb);
      const s = Math.max(sa, sb);
      const x = ua * 10n ** BigInt(s - sa);
      const y = ub * 10n ** BigInt(s - sb);
      assert.equal(add(a, b).big(), x + y);
      assert.equal(add(a, b).scale, s);
      assert.equal(sub(a, b).big(), x - y);
      assert.equal(mul(a, b).big(), ua * ub);
      assert.equal(mul(a, b).scale, sa + sb);
      assert.equal(compareDecimals(a, b), x < y ? -1 : x > y ? 1 : 0);
      assert.equal(singleKey(a) === singleKey(b), x === y);
      assert.equal(parseDecimal(a.toString())?.toString(), a.toString());
    }),
  );
});

test('property: division rounds half away from zero at its scale', () => {
  fc.assert(
    fc.property(exactArb, exactArb, ([ua, sa], [ub, sb]) => {
      fc.pre(ub !== 0n);
      const a = new Decimal(ua, sa);
      const b = new Decimal(ub, sb);
      const q = div(a, b);
      // |q - a/b| <= 1/2 unit in the last place, and q is the nearer of the two candidates.
      const k = BigInt(q.scale);
      const num = ua * 10n ** (k + BigInt(sb));
      const den = ub * 10n ** BigInt(sa);
      const err = q.big() * den - num; // (q - a/b) * den * 10^k
      const abs = (v: bigint): bigint => (v < 0n ? -v : v);
      assert.ok(2n * abs(err) <= abs(den), `${a.toString()} / ${b.toString()} = ${q.toString()}`);
      assert.ok(q.scale >= Math.max(sa, sb));
    }),
  );
});
