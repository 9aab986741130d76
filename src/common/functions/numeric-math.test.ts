// numeric-math.ts against exact references: results checked by inverting them with exact BigInt
// arithmetic (a rounded square root squares to within half a unit of the input), PostgreSQL's scales
// at the edges of its estimates, and the largest inputs finishing with the right digit counts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Decimal, parseDecimal } from '../decimal.ts';
import { SluiceError } from '../errors.ts';
import { numericExp, numericLn, numericLog, numericPower, numericSqrt } from './numeric-math.ts';

const d = (s: string): Decimal => parseDecimal(s) as Decimal;

describe('numeric sqrt', () => {
  it('is correctly rounded: r - 1/2 ulp < sqrt(x) < r + 1/2 ulp, checked exactly', () => {
    for (const x of ['2', '3.0', '0.0001', '123456789012345678901234567890.5', '1e-20', '99.99']) {
      const v = d(x);
      const r = numericSqrt(v);
      // (2r ± 1)^2 vs 4x·10^(2s), all as integers at scale s = r.scale
      const s = r.scale;
      const lhsLow = (2n * r.big() - 1n) ** 2n;
      const lhsHigh = (2n * r.big() + 1n) ** 2n;
      const k = 2 * s - v.scale;
      const four = k >= 0 ? 4n * v.big() * 10n ** BigInt(k) : undefined;
      assert.ok(four !== undefined, x);
      assert.ok(lhsLow <= four && four <= lhsHigh, `sqrt(${x}) = ${r.toString()}`);
    }
  });

  it("uses PostgreSQL's scale: 16 significant digits from the base-10000 weight, at least x's scale", () => {
    assert.equal(numericSqrt(d('2')).toString(), '1.414213562373095');
    assert.equal(numericSqrt(d('10000')).toString(), '100.0000000000000');
    assert.equal(numericSqrt(d('0.0002')).toString(), '0.01414213562373095');
    assert.equal(numericSqrt(d('0')).toString(), '0.000000000000000');
    assert.equal(numericSqrt(d('4.000000000000000000')).toString(), '2.000000000000000000');
  });

  it('of the largest numeric finishes with all its digits', () => {
    const x = d(`${'9'.repeat(131_072)}.${'9'.repeat(16_383)}`);
    const r = numericSqrt(x);
    assert.equal(r.scale, 1000);
    assert.equal(r.integerDigits(), 65_537); // sqrt(10^131072) is 10^65536
  });
});

describe('numeric exp, ln, log, power', () => {
  it('agree with their inverses to the digits shown', () => {
    for (const x of ['0.5', '1.0', '2.5', '-3.25', '10.0']) {
      const e = numericExp(d(x));
      const back = numericLn(e);
      assert.ok(Math.abs(back.toNumber() - Number(x)) < 1e-14, `ln(exp(${x})) = ${back.toString()}`);
    }
  });

  it('print the known digits (e, ln 2, ln 10 to 16 decimals; a tiny ln at 22)', () => {
    assert.equal(numericExp(d('1')).toString(), '2.7182818284590452');
    assert.equal(numericExp(d('-1')).toString(), '0.3678794411714423');
    assert.equal(numericLn(d('2')).toString(), '0.6931471805599453');
    assert.equal(numericLn(d('10')).toString(), '2.3025850929940457');
    // near 1 PostgreSQL estimates ln(1 + x) by x: scale 16 + 6
    assert.equal(numericLn(d('1.000001')).toString(), '0.0000009999995000003333');
    assert.equal(numericLog(d('2'), d('1024')).toString(), '10.0000000000000000');
  });

  it('power with an integer exponent is exact when the digits fit', () => {
    assert.equal(numericPower(d('1.5'), d('3')).toString(), '3.3750000000000000');
    assert.equal(numericPower(d('1.5'), d('-3')).toString(), '0.2962962962962963');
    assert.equal(numericPower(d('2'), d('100')).toString(), '1267650600228229401496703205376');
    assert.equal(numericPower(d('2'), d('100000')).integerDigits(), 30_103);
    // 1.0000001 ^ (2^31 - 1): no exact product (15 billion digits), 7 decimals as the base shows
    assert.equal(numericPower(d('1.0000001'), d('2147483647')).scale, 7);
  });

  it('an integer power equals the exact rational b^n rounded half away from zero at its scale', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -99_999n, max: 99_999n }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: -6, max: 9 }),
        (u, scale, n) => {
          fc.pre(u !== 0n || n >= 0);
          const b = new Decimal(u, scale);
          const r = numericPower(b, new Decimal(n, 0));
          // exact: u^n / 10^(scale·n) at r.scale, as num / den
          let num = u ** BigInt(Math.abs(n));
          let den = 10n ** BigInt(scale * Math.abs(n));
          if (n < 0) [num, den] = [den, num];
          if (den < 0n) [num, den] = [-num, -den];
          const scaled = num * 10n ** BigInt(r.scale);
          let q = scaled / den;
          const rem = scaled - q * den;
          if ((rem < 0n ? -rem : rem) * 2n >= den) q += scaled < 0n ? -1n : 1n;
          assert.equal(r.big(), q, `power(${b.toString()}, ${n}) = ${r.toString()}`);
        },
      ),
      { seed: 14, numRuns: 500 },
    );
  });

  it('a non-integer power goes through exp(y · ln x), with its scale from a rough ln', () => {
    assert.equal(numericPower(d('2'), d('0.5')).toString(), '1.4142135623730950');
    // log10(100^0.5) is 1 exactly: PostgreSQL's 8-digit estimate lands on 1, so 15 decimals
    assert.equal(numericPower(d('100'), d('0.5')).toString(), '10.000000000000000');
    assert.equal(numericPower(d('0'), d('0.5')).toString(), '0.0000000000000000');
  });

  it('exp beyond PostgreSQL range: overflow above 6000, zero at scale 1000 below -6000', () => {
    assert.throws(
      () => numericExp(d('6000')),
      (e: unknown) => e instanceof SluiceError && e.code === 'NUMERIC_OVERFLOW',
    );
    const z = numericExp(d('-6000'));
    assert.equal(z.sign(), 0);
    assert.equal(z.scale, 1000);
    // just inside: 2606 integer digits
    assert.equal(numericExp(d('5999')).integerDigits(), 2606);
  });
});
