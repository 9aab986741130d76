// The double fast paths of exact decimals against plain BigInt (and text) references written here:
// division and select_div_scale on safe-integer operands, floor/ceil/trunc/round of big unscaled
// values decided on doubles, and JSON numbers read without their text. Seeded, across 2^53.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Decimal, div, divFloorCeil, divScale, fitDecimal, parseDecimal } from './decimal.ts';
import { shortestAtScale, shortestDecimal } from './decimal-of-double.ts';
import { INVALID_INGEST, coerceIngest, coerceIngestFast } from './cast.ts';
import { T, type SqlType, type Value } from './types.ts';
import { compileScalar, type ScalarExpr } from './scalar-expr.ts';

const SEED = 1414;
const RUNS = { seed: SEED, numRuns: 3000 };
const MAX = BigInt(Number.MAX_SAFE_INTEGER);
const abs = (v: bigint): bigint => (v < 0n ? -v : v);
const pow = (k: number): bigint => 10n ** BigInt(k);

/** PostgreSQL's select_div_scale on the digit text (the form before the double path). */
function refDivScale(a: Decimal, b: Decimal): number {
  const lead = (d: Decimal): [number, number] => {
    if (d.sign() === 0) return [0, 0];
    const digits = abs(d.big()).toString();
    const e10 = digits.length - d.scale - 1;
    const weight = Math.floor(e10 / 4);
    const count = e10 - weight * 4 + 1;
    return [weight, Number(digits.slice(0, count).padEnd(count, '0'))];
  };
  const [w1, f1] = lead(a);
  const [w2, f2] = lead(b);
  let qweight = w1 - w2;
  if (f1 <= f2) qweight--;
  return Math.min(Math.max(16 - qweight * 4, a.scale, b.scale, 0), 1000);
}

/** a / b at `scale`, rounded half away from zero, on bigints. */
function refDiv(a: Decimal, b: Decimal, scale: number): bigint {
  const k = scale - a.scale + b.scale;
  let num = a.big();
  let den = b.big();
  if (k >= 0) num *= pow(k);
  else den *= pow(-k);
  const q = num / den;
  const rem = num - q * den;
  return 2n * abs(rem) >= abs(den) ? q + (num < 0n === den < 0n ? 1n : -1n) : q;
}

/** Unscaled values where the double paths have edges: small, near ±2^53 (both sides), random. */
const unscaledArb = fc.oneof(
  fc.bigInt({ min: -1000n, max: 1000n }),
  fc.bigInt({ min: MAX - 1000n, max: MAX + 1000n }),
  fc.bigInt({ min: -MAX - 1000n, max: -MAX + 1000n }),
  fc.bigInt({ min: -MAX, max: MAX }),
  fc.constantFrom(1n, -1n, 10n, -10n, 10n ** 15n, 10n ** 15n - 1n, 2n ** 52n, 4503599627370497n),
  // Leading 9s: den × 10^chunk is closest to 2^53 there.
  fc
    .integer({ min: 0, max: 14 })
    .chain((j) => fc.bigInt({ min: 9n * pow(j), max: pow(j + 1) - 1n }))
    .map((v) => v),
);
const decimalArb = fc.tuple(unscaledArb, fc.integer({ min: 0, max: 20 })).map(([u, s]) => new Decimal(u, s));

test('property: division on safe integers equals the BigInt quotient, scale and sign', () => {
  let fast = 0;
  fc.assert(
    fc.property(decimalArb, decimalArb, fc.option(fc.integer({ min: 0, max: 45 })), (a, b, given) => {
      fc.pre(b.sign() !== 0);
      const scale = given ?? refDivScale(a, b);
      assert.equal(divScale(a, b), refDivScale(a, b), `${a.toString()} / ${b.toString()}`);
      const q = given === null ? div(a, b) : div(a, b, given);
      assert.equal(q.scale, scale);
      assert.equal(q.big(), refDiv(a, b, scale), `${a.toString()} / ${b.toString()} at ${scale}`);
      // The invariant the rest of the code relies on: a number exactly when a safe integer.
      assert.equal(typeof q.unscaled === 'number', abs(q.big()) <= MAX);
      if (typeof a.unscaled === 'number' && typeof b.unscaled === 'number') fast++;
    }),
    RUNS,
  );
  assert.ok(fast > 1000, `the double path ran (${fast} times)`);
});

test('division: money averages and buckets, exact against BigInt, either side of 2^53', () => {
  const cases: [string, string][] = [
    ['5000.00', '10'],
    ['5123.45', '10'],
    ['-5123.45', '10'],
    ['0.01', '3'],
    ['-0.01', '3'],
    ['90071992547409.91', '7'],
    ['-90071992547409.91', '7'],
    ['90071992547409.92', '7'], // unscaled 2^53 + 1: the bigint path
    ['1', '9007199254740991'],
    ['2', '3'],
    ['0', '-7'],
    ['12.5', '0.04'],
  ];
  for (const [x, y] of cases) {
    const a = parseDecimal(x) as Decimal;
    const b = parseDecimal(y) as Decimal;
    for (const scale of [refDivScale(a, b), 0, 1, 2, 17, 40]) {
      const q = div(a, b, scale);
      assert.equal(q.big(), refDiv(a, b, scale), `${x} / ${y} at ${scale}`);
    }
  }
  assert.equal(
    div(parseDecimal('5000.00') as Decimal, Decimal.fromInt(10)).toString(),
    '500.0000000000000000',
  );
  assert.equal(div(Decimal.fromInt(-2), Decimal.fromInt(3)).toString(), '-0.66666666666666666667');
  assert.equal(div(Decimal.fromInt(0), Decimal.fromInt(-3)).toString(), '0.00000000000000000000');
});

/** floor/ceil/trunc/round on bigints. */
function refCut(u: bigint, drop: number, mode: 'floor' | 'ceil' | 'trunc' | 'round'): bigint {
  const p = pow(drop);
  const t = u / p;
  const rem = u - t * p;
  if (mode === 'floor') return rem < 0n ? t - 1n : t;
  if (mode === 'ceil') return rem > 0n ? t + 1n : t;
  if (mode === 'round') return 2n * abs(rem) >= p ? t + (u < 0n ? -1n : 1n) : t;
  return t;
}

/** Quotients whose fraction is at or next to an integer or a half, and whole parts near 2^40. */
const cutArb = fc
  .tuple(
    fc.oneof(
      fc.bigInt({ min: -(2n ** 42n), max: 2n ** 42n }),
      fc.bigInt({ min: 2n ** 40n - 3n, max: 2n ** 40n + 3n }),
      fc.bigInt({ min: -1000n, max: 1000n }),
    ),
    fc.integer({ min: 1, max: 24 }),
    fc.oneof(
      fc.constantFrom('zero', 'one', 'minus', 'half', 'half+1', 'half-1', 'top'),
      fc.bigInt({ min: 0n, max: 10n ** 24n }),
    ),
  )
  .map(([whole, drop, frac]) => {
    const p = pow(drop);
    const f =
      typeof frac === 'bigint'
        ? frac % p
        : {
            zero: 0n,
            one: 1n,
            minus: -1n,
            half: p / 2n,
            'half+1': p / 2n + 1n,
            'half-1': p / 2n - 1n,
            top: p - 1n,
          }[frac];
    return { u: whole * p + f, drop };
  });

test('property: floor, ceil, trunc and round of big unscaled values equal the BigInt cut', () => {
  fc.assert(
    fc.property(cutArb, fc.integer({ min: 0, max: 3 }), ({ u, drop }, back) => {
      // Cut `drop` digits off a value of scale drop + back (back digits kept after the point).
      const d = new Decimal(u * pow(back), drop + back);
      assert.equal(d.floor().big(), refCut(u * pow(back), drop + back, 'floor'), `floor ${d.toString()}`);
      assert.equal(d.ceil().big(), refCut(u * pow(back), drop + back, 'ceil'), `ceil ${d.toString()}`);
      const t = d.trunc(back);
      assert.equal(t.big(), refCut(u * pow(back), drop, 'trunc'), `trunc ${d.toString()}`);
      assert.equal(t.scale, back);
      assert.equal(d.round(back).big(), refCut(u * pow(back), drop, 'round'), `round ${d.toString()}`);
      for (const r of [d.floor(), d.ceil(), t]) {
        assert.equal(typeof r.unscaled === 'number', abs(r.big()) <= MAX);
      }
    }),
    RUNS,
  );
});

test('floor of division results: integers, halves and negatives as PostgreSQL', () => {
  const q = (x: string, y: string): Decimal => div(parseDecimal(x) as Decimal, parseDecimal(y) as Decimal);
  assert.equal(q('5000.00', '10').floor().toString(), '500');
  assert.equal(q('5123.45', '10').floor().toString(), '512');
  assert.equal(q('-5123.45', '10').floor().toString(), '-513');
  assert.equal(q('-5000.00', '10').floor().toString(), '-500');
  assert.equal(q('-5000.00', '10').ceil().toString(), '-500');
  assert.equal(q('-5123.45', '10').ceil().toString(), '-512');
  assert.equal(q('5.00', '2').round(0).toString(), '3');
  assert.equal(q('-5.00', '2').round(0).toString(), '-3');
  assert.equal(q('-1.00', '3').floor().toString(), '-1');
  assert.equal(q('1.00', '3').ceil().toString(), '1');
});

/** Doubles as JSON numbers arrive: money (r / 10^s), integers, and anything finite. */
const doubleArb = fc.oneof(
  fc
    .tuple(fc.integer({ min: -(10 ** 12), max: 10 ** 12 }), fc.integer({ min: 0, max: 6 }))
    .map(([r, s]) => r / 10 ** s),
  fc
    .tuple(fc.bigInt({ min: -MAX, max: MAX }), fc.integer({ min: 0, max: 18 }))
    .map(([r, s]) => Number(r) / 10 ** s),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  // 16 significant digits in [0.1, 1): two such decimals can round to one double there.
  fc.bigInt({ min: 10n ** 15n, max: 10n ** 16n - 1n }).map((r) => Number(r) / 1e16),
  fc.constantFrom(0.1 + 0.2, 1.005, 2.675, 1e-7, 1e21, 2 ** 53, 2 ** 53 + 2, -0, 0.5, 123.45, -99999.995),
);

test('property: a JSON number read without its text equals parseDecimal(String(x)), fitted', () => {
  let hits = 0;
  fc.assert(
    fc.property(doubleArb, fc.integer({ min: 1, max: 20 }), (x, p) => {
      const text = parseDecimal(String(x)) as Decimal;
      const free = shortestDecimal(x);
      if (free !== null) {
        assert.equal(free.toString(), text.toString(), String(x));
        assert.equal(free.scale, text.scale);
      }
      for (let s = 0; s <= 17; s++) {
        const fixed = shortestAtScale(x, s, p);
        if (fixed === null) continue;
        hits++;
        const slow = fitDecimal(text, p, s);
        assert.equal(fixed.big(), slow.big(), `${x} as numeric(${p},${s})`);
        assert.equal(fixed.scale, slow.scale);
      }
    }),
    RUNS,
  );
  assert.ok(hits > 200, `the double path ran (${hits} times)`);
  // Money always takes it.
  for (let r = -100_000; r <= 100_000; r += 37) {
    assert.equal(
      shortestAtScale(r / 100, 2, 12)?.toString(),
      (parseDecimal(String(r / 100)) as Decimal).withScale(2).toString(),
    );
  }
});

test('property: ingest of a JSON number into numeric(p,s) is the same value or the same refusal', () => {
  const types: SqlType[] = [
    { kind: 'numeric', precision: 12, scale: 2 },
    { kind: 'numeric', precision: 5, scale: 2 },
    { kind: 'numeric', precision: 18, scale: 0 },
    { kind: 'numeric', precision: 20, scale: 6 },
    T.numeric,
  ];
  fc.assert(
    fc.property(doubleArb, fc.constantFrom(...types), (x, type) => {
      const slow = coerceIngest(x, type);
      const fast = coerceIngestFast(x, type);
      if (!slow.ok) assert.equal(fast, INVALID_INGEST);
      else {
        assert.ok(fast instanceof Decimal);
        const v = slow.value as Decimal;
        assert.equal(fast.toString(), v.toString());
        assert.equal(fast.exactKey(), v.exactKey(), 'the same row identity');
      }
    }),
    RUNS,
  );
  // A JSON integer beyond 2^53 shows all its digits (String(1e21) is '1e+21').
  const big = coerceIngestFast(1e21, T.numeric);
  assert.ok(big instanceof Decimal);
  assert.equal(big.toString(), '1000000000000000000000');
  assert.equal(typeof big.unscaled, 'bigint');
});

test('property: FLOOR and CEIL of a / b without the quotient equal div then floor/ceil', () => {
  let fused = 0;
  const operand = fc.oneof(
    decimalArb,
    // Near-integer and near-carry quotients: multiples of b, give or take a unit.
    fc
      .tuple(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.integer({ min: 0, max: 4 }))
      .map(([u, s]) => new Decimal(u, s)),
  );
  fc.assert(
    fc.property(operand, operand, fc.integer({ min: -2, max: 2 }), (a, b, nudge) => {
      fc.pre(b.sign() !== 0);
      // a = k·b + nudge units: quotients at, just below and just above integers.
      const k = BigInt(Math.trunc(a.toNumber()));
      const near = new Decimal(k * b.big() + BigInt(nudge), b.scale);
      for (const x of [a, near]) {
        const q = div(x, b);
        for (const up of [false, true]) {
          const f = divFloorCeil(x, b, up);
          if (f === null) continue;
          fused++;
          const want = up ? q.ceil() : q.floor();
          assert.equal(
            f.toString(),
            want.toString(),
            `${up ? 'ceil' : 'floor'}(${x.toString()} / ${b.toString()})`,
          );
          assert.equal(f.scale, 0);
        }
      }
    }),
    RUNS,
  );
  assert.ok(fused > 1000, `the fused path ran (${fused} times)`);
});

test('FLOOR/CEIL of a division: exact multiples, signs, and operands left to div', () => {
  const dd = (t: string): Decimal => parseDecimal(t) as Decimal;
  const check = (x: string, y: string, fused: boolean): void => {
    const q = div(dd(x), dd(y));
    for (const up of [false, true]) {
      const f = divFloorCeil(dd(x), dd(y), up);
      assert.equal(f !== null, fused, `${x} / ${y} fused`);
      if (f !== null) assert.equal(f.toString(), (up ? q.ceil() : q.floor()).toString(), `${x} / ${y}`);
    }
  };
  for (const [x, y] of [
    ['5000.00', '10'],
    ['5123.45', '10'],
    ['-5123.45', '10'],
    ['-5000.00', '10'],
    ['8999999999999999', '9'],
    ['99999999.9', '0.9999999'],
    ['-99999999.9', '0.9999999'],
    ['1', '3'],
    ['-1', '3'],
    ['0', '-3'],
    ['2', '0.5'],
    ['-7.5', '-2.5'],
  ] as const)
    check(x, y, true);
  // b's 16 digits after the point, or a value past 2^53: the composed path.
  check('999999999999999', '1.0000000000000001', false);
  check('9007199254740993', '10', false);
  check('99999999999999.9', '0.99999999999999', false);
  assert.equal(divFloorCeil(dd('1'), dd('0'), false), null, "division by zero is div's to report");
});

test('compiled FLOOR/CEIL(x / y) over numeric columns: the same values, NULLs and errors', () => {
  const col = (index: number): ScalarExpr => ({ kind: 'col', index, name: `c${index}`, type: T.numeric });
  const quotient: ScalarExpr = { kind: 'call', fn: 'div', args: [col(0), col(1)], type: T.numeric };
  const values: Value[] = [
    null,
    Decimal.fromInt(0),
    Decimal.fromInt(10),
    Decimal.fromInt(-3),
    parseDecimal('5123.45') as Decimal,
    parseDecimal('-5000.00') as Decimal,
    parseDecimal('0.0001') as Decimal,
    new Decimal(2n ** 60n, 2),
  ];
  for (const fn of ['floor', 'ceil'] as const) {
    const fused = compileScalar({ kind: 'call', fn, args: [quotient], type: T.numeric });
    const q = compileScalar(quotient);
    for (const x of values)
      for (const y of values) {
        const row = [x, y];
        let want: string;
        try {
          const v = q(row);
          want =
            v === null
              ? 'NULL'
              : (fn === 'floor' ? (v as Decimal).floor() : (v as Decimal).ceil()).toString();
        } catch (e) {
          want = `error ${(e as Error).message}`;
        }
        let got: string;
        try {
          const v = fused(row);
          got = v === null ? 'NULL' : (v as Decimal).toString();
        } catch (e) {
          got = `error ${(e as Error).message}`;
        }
        assert.equal(got, want, `${fn}(${String(x)} / ${String(y)})`);
      }
  }
});
