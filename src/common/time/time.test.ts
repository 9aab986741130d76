// The calendar against JavaScript's Date (an independent Gregorian implementation), interval text
// in and out, interval equality and keys with 30-day months, and zone offsets across DST with
// PostgreSQL's standard-time rule for local times in a gap or an overlap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  MAX_DAY,
  MIN_DAY,
  addMonths,
  civil,
  dayNumber,
  formatDay,
  fractionMicros,
  isoWeek,
} from './calendar.ts';
import { Interval, compareIntervals, formatInterval, mulInterval, parseInterval } from './interval.ts';
import { intlOffsetMs, localToUtc, offsetMs, utcToLocal } from './zone.ts';
import { parseTime, parseTimestamptz, timestampDiff } from './datetime.ts';
import { parseDate, parseTimestamp } from '../cast.ts';
import { compareValues, encodeOne, singleKey, valuesEqual } from '../values.ts';

test('day numbers agree with Date for every day from year 1 to 9999 (sampled)', () => {
  fc.assert(
    fc.property(fc.integer({ min: MIN_DAY, max: MAX_DAY }), (day) => {
      const d = new Date(day * 86_400_000);
      const [y, m, dd] = civil(day);
      assert.deepEqual([y, m, dd], [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()]);
      assert.equal(dayNumber(y, m, dd), day);
    }),
    { numRuns: 2000 },
  );
  assert.equal(formatDay(MIN_DAY), '0001-01-01');
  assert.equal(formatDay(MAX_DAY), '9999-12-31');
  assert.throws(() => formatDay(MAX_DAY + 1), /date out of range/);
});

test('adding months clamps to the month end, leap years included', () => {
  const add = (text: string, months: number): string =>
    formatDay(addMonths(dayNumber(+text.slice(0, 4), +text.slice(5, 7), +text.slice(8)), months));
  assert.equal(add('2024-01-31', 1), '2024-02-29');
  assert.equal(add('2023-01-31', 1), '2023-02-28');
  assert.equal(add('2024-02-29', 12), '2025-02-28');
  assert.equal(add('2024-03-31', -1), '2024-02-29');
  assert.equal(add('2024-05-31', -13), '2023-04-30');
  assert.equal(add('2000-02-29', 1200), '2100-02-28');
});

test('ISO weeks: the Thursday rule', () => {
  assert.deepEqual(isoWeek(dayNumber(2006, 1, 1)), [2005, 52]);
  assert.deepEqual(isoWeek(dayNumber(2006, 1, 2)), [2006, 1]);
  assert.deepEqual(isoWeek(dayNumber(2024, 12, 30)), [2025, 1]);
  assert.deepEqual(isoWeek(dayNumber(2020, 12, 31)), [2020, 53]);
});

test('interval text: PostgreSQL input forms and IntervalStyle postgres output', () => {
  const cases: [string, string][] = [
    ['1 day 2 hours', '1 day 02:00:00'],
    ['1-2', '1 year 2 mons'],
    ['-1-2', '-1 years -2 mons'],
    ['P1DT2H', '1 day 02:00:00'],
    ['PT0.5S', '00:00:00.5'],
    ['10:00:00', '10:00:00'],
    ['-1 day 2 hours', '-1 days +02:00:00'],
    ['1 day -2 hours', '1 day -02:00:00'],
    ['@ 3 days ago', '-3 days'],
    ['1.5 years', '1 year 6 mons'],
    ['0.5 mon', '15 days'],
    ['2 weeks 1 ms', '14 days 00:00:00.001'],
    ['1 century', '100 years'],
    ['100000 hours', '100000:00:00'],
    ['3d 4h', '3 days 04:00:00'],
  ];
  for (const [input, output] of cases) assert.equal(String(parseInterval(input)), output, input);
  for (const bad of ['', 'day', '1 fortnight', '1:60', 'P', 'PT', '1 day ago ago', '1-13'])
    assert.equal(parseInterval(bad), null, bad);
  assert.equal(String(parseInterval('10', 'second')), '00:00:10');
  assert.equal(String(parseInterval('1 day 03:04', 'day')), '1 day');
});

test('intervals compare and key by their total with 30-day months and 24-hour days', () => {
  const iv = (s: string): Interval => parseInterval(s) as Interval;
  assert.equal(compareIntervals(iv('1 day'), iv('24 hours')), 0);
  assert.equal(compareIntervals(iv('1 mon'), iv('30 days')), 0);
  assert.equal(compareIntervals(iv('1 year'), iv('360 days')), 0);
  assert.equal(compareIntervals(iv('1 mon'), iv('31 days')), -1);
  assert.ok(valuesEqual(iv('1 day'), iv('24 hours')));
  assert.equal(encodeOne(iv('1 day')), encodeOne(iv('86400 seconds')));
  assert.equal(singleKey(iv('P1D')), singleKey(iv('1440 minutes')));
  assert.notEqual(singleKey(iv('1 day')), singleKey(iv('1 day 1 microsecond')));
  assert.equal(compareValues(iv('-1 day'), iv('1 second')), -1);
  // beyond a double's exact range, compared as bigints
  const huge = Interval.of(2_000_000_000, 0, 0);
  assert.equal(compareIntervals(huge, Interval.of(2_000_000_000, 0, 1)), -1);
  assert.equal(typeof huge.span(), 'bigint');
});

test('interval * n cascades fractions as PostgreSQL (interval_mul)', () => {
  const iv = (s: string): Interval => parseInterval(s) as Interval;
  assert.equal(formatInterval(mulInterval(iv('1 mon'), 0.5)), '15 days');
  assert.equal(formatInterval(mulInterval(iv('1 day'), 1.5)), '1 day 12:00:00');
  assert.equal(formatInterval(mulInterval(iv('1 hour'), 1 / 1.5)), '00:40:00');
  assert.equal(formatInterval(mulInterval(iv('1 mon 1 day'), -2)), '-2 mons -2 days');
});

test('timestamp - timestamp is justified into days and time', () => {
  assert.equal(
    formatInterval(timestampDiff('2001-09-29 03:00:00', '2001-07-27 12:00:00')),
    '63 days 15:00:00',
  );
  assert.equal(
    formatInterval(timestampDiff('2001-07-27 12:00:00', '2001-09-29 03:00:00')),
    '-63 days -15:00:00',
  );
  assert.equal(formatInterval(timestampDiff('2024-01-01', '2024-01-01')), '00:00:00');
});

test('zones: offsets across DST, and local times in a gap or an overlap read as standard time', () => {
  const berlinSummer = Date.UTC(2024, 6, 1);
  assert.equal(offsetMs('Europe/Berlin', berlinSummer), 2 * 3_600_000);
  assert.equal(offsetMs('Europe/Berlin', Date.UTC(2024, 0, 1)), 3_600_000);
  assert.equal(offsetMs('UTC', berlinSummer), 0);
  const at = (y: number, mo: number, d: number, h: number, mi: number) => ({
    day: dayNumber(y, mo, d),
    micros: (h * 60 + mi) * 60_000_000,
  });
  const show = (dt: { day: number; micros: number }): string =>
    `${formatDay(dt.day)} ${dt.micros / 60_000_000}`;
  // gap: 02:30 does not exist on 2024-03-31 in Berlin; standard time (+01) gives 01:30 UTC
  assert.equal(show(localToUtc('Europe/Berlin', at(2024, 3, 31, 2, 30))), '2024-03-31 90');
  // overlap: 02:30 exists twice on 2024-10-27; standard time (+01) gives 01:30 UTC
  assert.equal(show(localToUtc('Europe/Berlin', at(2024, 10, 27, 2, 30))), '2024-10-27 90');
  // unambiguous times round-trip
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 366 * 24 * 4 }), (quarter) => {
      const utc = {
        day: dayNumber(2024, 1, 1) + Math.floor(quarter / 96),
        micros: (quarter % 96) * 900_000_000,
      };
      const local = utcToLocal('America/New_York', utc);
      const back = localToUtc('America/New_York', local);
      const ambiguous =
        offsetMs('America/New_York', utc.day * 86_400_000 + utc.micros / 1000 - 3_600_000) !==
        offsetMs('America/New_York', utc.day * 86_400_000 + utc.micros / 1000 + 3_600_000);
      if (!ambiguous) assert.deepEqual(back, utc);
    }),
    { numRuns: 300 },
  );
  assert.throws(() => offsetMs('Mars/Olympus', 0), /time zone "Mars\/Olympus" not recognized/);
});

test('cached zone offsets agree with Intl at every instant, across transitions too', () => {
  for (const zone of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu']) {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2023, 0, 1) / 1000, max: Date.UTC(2025, 0, 1) / 1000 }), (s) => {
        assert.equal(offsetMs(zone, s * 1000), intlOffsetMs(zone, s * 1000), `${zone} at ${s}`);
      }),
      { numRuns: 300 },
    );
    // seconds around Berlin's 2024 transitions (01:00 UTC on 2024-03-31 and 2024-10-27)
    for (const t of [Date.UTC(2024, 2, 31, 1), Date.UTC(2024, 9, 27, 1)])
      for (let d = -2000; d <= 2000; d += 1000)
        assert.equal(offsetMs(zone, t + d), intlOffsetMs(zone, t + d));
  }
  assert.equal(offsetMs('Europe/Berlin', Date.UTC(2024, 2, 31, 0, 59, 59)), 3_600_000);
  assert.equal(offsetMs('Europe/Berlin', Date.UTC(2024, 2, 31, 1)), 7_200_000);
});

test('timestamptz input: offsets, Z and zone names become UTC', () => {
  assert.equal(parseTimestamptz('2024-01-01 10:00:00+02'), '2024-01-01 08:00:00+00');
  assert.equal(parseTimestamptz('2024-01-01T10:00:00.25Z'), '2024-01-01 10:00:00.25+00');
  assert.equal(parseTimestamptz('2024-01-01 00:30-05:30'), '2024-01-01 06:00:00+00');
  assert.equal(parseTimestamptz('2024-07-01 10:00 Europe/Berlin'), '2024-07-01 08:00:00+00');
  assert.equal(parseTimestamptz('2024-01-01'), '2024-01-01 00:00:00+00');
  assert.equal(parseTimestamptz('2024-02-30 00:00'), null);
  assert.equal(parseTimestamptz('2024-01-01 00:00 Nowhere/Zone'), null);
});

test('fractions of a second past microseconds round as PostgreSQL does (ties to even in a double), carrying', () => {
  // PostgreSQL 16: rint(strtod(".ddddddd") * 1e6), so .0000005 reads as 0.5 µs and rounds to 0.
  assert.equal(parseTimestamp('2024-01-01 00:00:00.0000015'), '2024-01-01 00:00:00.000002');
  assert.equal(parseTimestamp('2024-01-01 00:00:00.0000005'), '2024-01-01 00:00:00');
  assert.equal(parseTimestamp('2024-01-01 10:00:00.12345649'), '2024-01-01 10:00:00.123456');
  assert.equal(parseTimestamp('2024-12-31 23:59:59.9999996'), '2025-01-01 00:00:00');
  assert.equal(parseTimestamptz('2024-12-31 23:59:59.9999996+01'), '2024-12-31 23:00:00+00');
  assert.equal(parseTimestamptz('2024-02-28 23:59:59.99999951 UTC'), '2024-02-29 00:00:00+00');
  assert.equal(parseTime('23:59:59.9999999'), '24:00:00');
  assert.equal(parseTime('12:00:00.1234567'), '12:00:00.123457');
  // A date keeps its day: the time is dropped, not rounded into the next one.
  assert.equal(parseDate('2024-01-01 23:59:59.99999999'), '2024-01-01');
  // Six digits or fewer are read as written.
  assert.equal(parseTimestamp('2024-01-01 00:00:00.100'), '2024-01-01 00:00:00.1');
  assert.equal(fractionMicros('999999'), 999_999);
  assert.equal(fractionMicros(''), 0);
});
