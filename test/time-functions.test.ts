// Date/time operators and functions against PostgreSQL's documented results (PostgreSQL 16's manual:
// tables 9.33 and 9.34 of "Date/Time Functions and Operators", 9.9.1 EXTRACT, 9.9.2 date_trunc,
// 9.9.4 AT TIME ZONE, "Data Type Formatting Functions", and 8.5.4 interval output) through the real
// engine: each case is an ad-hoc SELECT with its value and its result type; errors carry PostgreSQL's
// messages and point at the argument at fault; a view computing them keeps up with changing rows.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, SluiceError, type Value } from '../src/index.ts';
import { Decimal } from '../src/common/decimal.ts';
import { Interval } from '../src/common/time/interval.ts';
import { sortedRows } from './server/helpers.ts';

function one(e: Engine, expr: string): { value: Value; type: string } {
  const r = e.execute(`SELECT ${expr} AS x`)[0];
  const row = r?.rows?.[0];
  assert.ok(row !== undefined, `no row for ${expr}`);
  return { value: row['x'] as Value, type: r?.columns?.[0]?.type ?? '?' };
}

// [expression, PostgreSQL's result as text (NULL as null), PostgreSQL's result type]
const CASES: readonly (readonly [string, string | number | boolean | null, string])[] = [
  // table 9.33
  ["date '2001-09-28' + 7", '2001-10-05', 'date'],
  ["date '2001-09-28' + interval '1 hour'", '2001-09-28 01:00:00', 'timestamp'],
  ["date '2001-09-28' + time '03:00'", '2001-09-28 03:00:00', 'timestamp'],
  ["interval '1 day' + interval '1 hour'", '1 day 01:00:00', 'interval'],
  ["timestamp '2001-09-28 01:00' + interval '23 hours'", '2001-09-29 00:00:00', 'timestamp'],
  ["time '01:00' + interval '3 hours'", '04:00:00', 'time'],
  ["- interval '23 hours'", '-23:00:00', 'interval'],
  // int32 fields: their minimum is an interval too (its negation is out of range)
  ["interval '-2147483648 days -5 hours'", '-2147483648 days -05:00:00', 'interval'],
  ["interval '-2147483648 mons'", '-178956970 years -8 mons', 'interval'],
  ["date '2001-10-01' - date '2001-09-28'", 3, 'integer'],
  ["date '2001-10-01' - 7", '2001-09-24', 'date'],
  ["date '2001-09-28' - interval '1 hour'", '2001-09-27 23:00:00', 'timestamp'],
  ["time '05:00' - time '03:00'", '02:00:00', 'interval'],
  ["time '05:00' - interval '2 hours'", '03:00:00', 'time'],
  ["timestamp '2001-09-28 23:00' - interval '23 hours'", '2001-09-28 00:00:00', 'timestamp'],
  ["interval '1 day' - interval '1 hour'", '1 day -01:00:00', 'interval'],
  ["timestamp '2001-09-29 03:00' - timestamp '2001-07-27 12:00'", '63 days 15:00:00', 'interval'],
  ["900 * interval '1 second'", '00:15:00', 'interval'],
  ["21 * interval '1 day'", '21 days', 'interval'],
  ["3.5 * interval '1 hour'", '03:30:00', 'interval'],
  ["interval '1 hour' / 1.5", '00:40:00', 'interval'],
  ["interval '1 mon' / 2", '15 days', 'interval'],
  ["interval '1 day' * 0.5", '12:00:00', 'interval'],
  [
    "'2024-01-01 00:00+00'::timestamptz + interval '1 day'",
    '2024-01-02 00:00:00+00',
    'timestamp with time zone',
  ],
  // edge cases: month ends, leap days, negative intervals, ts - text literal
  ["timestamp '2024-01-31' + interval '1 month'", '2024-02-29 00:00:00', 'timestamp'],
  ["timestamp '2024-03-31' + interval '-1 month'", '2024-02-29 00:00:00', 'timestamp'],
  ["timestamp '2023-12-31 23:59:59.999999' + interval '1 microsecond'", '2024-01-01 00:00:00', 'timestamp'],
  ["timestamp '2024-01-02' - '2024-01-01'", '1 day', 'interval'],
  ["timestamp '2024-01-01' + '1 week'", '2024-01-08 00:00:00', 'timestamp'],
  ["interval '-1 day -02:00:00'", '-1 days -02:00:00', 'interval'],
  ["interval '1 day' = interval '24 hours'", true, 'boolean'],
  ["interval '1 mon' > interval '29 days 23:59:59'", true, 'boolean'],
  // table 9.34
  ["age(timestamp '2001-04-10', timestamp '1957-06-13')", '43 years 9 mons 27 days', 'interval'],
  ["age(timestamp '1957-06-13', timestamp '2001-04-10')", '-43 years -9 mons -27 days', 'interval'],
  ["date_part('hour', timestamp '2001-02-16 20:38:40')", 20, 'double precision'],
  ["date_part('month', interval '2 years 3 months')", 3, 'double precision'],
  ["date_part('second', timestamp '2001-02-16 20:38:40.5')", 40.5, 'double precision'],
  ["date_trunc('hour', timestamp '2001-02-16 20:38:40')", '2001-02-16 20:00:00', 'timestamp'],
  [
    "date_trunc('day', '2001-02-16 20:38:40+00'::timestamptz, 'Australia/Sydney')",
    '2001-02-16 13:00:00+00',
    'timestamp with time zone',
  ],
  ["date_trunc('hour', interval '2 days 3 hours 40 minutes')", '2 days 03:00:00', 'interval'],
  ["extract(hour from timestamp '2001-02-16 20:38:40')", '20', 'numeric'],
  ["extract(month from interval '2 years 3 months')", '3', 'numeric'],
  ["extract(epoch from timestamp '2001-02-16 20:38:40.12')", '982355920.120000', 'numeric'],
  ["extract(epoch from date '2001-02-16')", '982281600', 'numeric'],
  ["extract(second from time '17:12:28.5')", '28.500000', 'numeric'],
  ["justify_days(interval '35 days')", '1 mon 5 days', 'interval'],
  ["justify_hours(interval '27 hours')", '1 day 03:00:00', 'interval'],
  ["justify_interval(interval '1 mon -1 hour')", '29 days 23:00:00', 'interval'],
  ['make_date(2013, 7, 15)', '2013-07-15', 'date'],
  ['make_interval(0, 0, 0, 10)', '10 days', 'interval'],
  ['make_interval(1, 2, 0, 0, 0, 0, 1.5)', '1 year 2 mons 00:00:01.5', 'interval'],
  ['make_time(8, 15, 23.5)', '08:15:23.5', 'time'],
  ['make_timestamp(2013, 7, 15, 8, 15, 23.5)', '2013-07-15 08:15:23.5', 'timestamp'],
  ['to_timestamp(1284352323)', '2010-09-13 04:32:03+00', 'timestamp with time zone'],
  // 9.9.4 (Denver is UTC-7 in February)
  [
    "timezone('America/Denver', timestamp '2001-02-16 20:38:40')",
    '2001-02-17 03:38:40+00',
    'timestamp with time zone',
  ],
  ["timezone('America/Denver', '2001-02-16 20:38:40-05'::timestamptz)", '2001-02-16 18:38:40', 'timestamp'],
  [
    "timezone('Asia/Kolkata', timestamp '2024-01-01 05:30')",
    '2024-01-01 00:00:00+00',
    'timestamp with time zone',
  ],
  // to_char / to_timestamp
  ["to_char(timestamp '2002-04-20 17:31:12.66', 'HH12:MI:SS')", '05:31:12', 'text'],
  ["to_char(interval '15h 2m 12s', 'HH24:MI:SS')", '15:02:12', 'text'],
  ["to_char(date '2024-01-05', 'Dy, DD Mon YYYY')", 'Fri, 05 Jan 2024', 'text'],
  ["to_char(timestamp '2024-01-05 00:30', 'HH12:MI am')", '12:30 am', 'text'],
  ["to_char(timestamp '2024-01-05 13:04:05.123456', 'MS US')", '123 123456', 'text'],
  ["to_char(date '2024-01-01', 'FMMonth FMDDth')", 'January 1st', 'text'],
  ['to_char(date \'2024-01-01\', \'"Week" IW "of" IYYY\')', 'Week 01 of 2024', 'text'],
  ["to_timestamp('05 Dec 2000', 'DD Mon YYYY')", '2000-12-05 00:00:00+00', 'timestamp with time zone'],
  [
    "to_timestamp('2000-12-05 11:59:59.123 pm', 'YYYY-MM-DD HH:MI:SS.MS am')",
    '2000-12-05 23:59:59.123+00',
    'timestamp with time zone',
  ],
  // NULL in, NULL out
  ["NULL::timestamp + interval '1 day'", null, 'timestamp'],
  ['extract(year from NULL::date)', null, 'numeric'],
  ["date_trunc(NULL, timestamp '2024-01-01')", null, 'timestamp'],
];

describe('time functions: PostgreSQL documented results', () => {
  const e = new Engine();
  for (const [expr, expected, type] of CASES) {
    it(expr, () => {
      const got = one(e, expr);
      const v = got.value;
      const shown = v instanceof Decimal || v instanceof Interval ? v.toString() : v;
      assert.deepEqual(shown, expected, `${expr} = ${String(v)}, PostgreSQL: ${String(expected)}`);
      assert.equal(got.type, type, `type of ${expr}`);
    });
  }
});

// [expression, code, message, column of the error in `SELECT <expr> AS x`]
const ERRORS: readonly (readonly [string, string, string, number])[] = [
  [
    "date_part('fortnight', timestamp '2001-02-16')",
    'INVALID_VALUE',
    'unit "fortnight" not recognized for type timestamp without time zone',
    18,
  ],
  ["extract(dow from interval '1 day')", 'INVALID_VALUE', 'unit "dow" not supported for type interval', 16],
  [
    "date_trunc('week', interval '1 day')",
    'INVALID_VALUE',
    'unit "week" not supported for type interval',
    19,
  ],
  [
    "timezone('Nowhere/City', timestamp '2024-01-01')",
    'INVALID_VALUE',
    'time zone "Nowhere/City" not recognized',
    17,
  ],
  ["timezone('+02', timestamp '2024-01-01')", 'INVALID_VALUE', 'time zone "+02" not recognized', 17],
  ["interval '1 day' / 0", 'DIVISION_BY_ZERO', 'division by zero', 8],
  ['make_date(2023, 2, 29)', 'NUMERIC_OVERFLOW', 'date field value out of range: 2023-02-29', 8],
  ["timestamp '9999-12-31' + interval '1 day'", 'NUMERIC_OVERFLOW', 'timestamp out of range', 8],
  ["'1 fortnight'::interval", 'INVALID_CAST', 'invalid input syntax for type interval: "1 fortnight"', 8],
  ["date '2024-01-01' * 2", 'TYPE_MISMATCH', 'operator does not exist: date * integer', 8],
  [
    "to_timestamp('2024-13-01', 'YYYY-MM-DD')",
    'NUMERIC_OVERFLOW',
    'date/time field value out of range: "2024-13-01"',
    8,
  ],
];

describe('time functions: bad arguments are errors with positions', () => {
  const e = new Engine();
  for (const [expr, code, message, column] of ERRORS) {
    it(expr, () => {
      try {
        e.execute(`SELECT ${expr} AS x`);
      } catch (error) {
        assert.ok(error instanceof SluiceError, String(error));
        assert.equal(error.code, code);
        assert.equal(error.message, message);
        assert.deepEqual(error.position, { line: 1, column });
        return;
      }
      assert.fail(`expected ${code}`);
    });
  }
});

describe('time functions in views', () => {
  it('maintains date arithmetic, EXTRACT, date_trunc and AT TIME ZONE over inserts, updates and deletes', () => {
    const e = new Engine();
    e.execute('CREATE TABLE ev (id INT PRIMARY KEY, t0 TIMESTAMPTZ NOT NULL, d DATE NOT NULL, dur INTERVAL)');
    e.execute(`CREATE MATERIALIZED VIEW ev_v AS SELECT id, t0 + dur AS ends, EXTRACT(ISODOW FROM d) AS dow,
      date_trunc('month', d) AS m, d - 1 AS prev, timezone('Europe/Berlin', t0) AS berlin FROM ev`);
    e.execute(
      `CREATE MATERIALIZED VIEW ev_month AS SELECT date_trunc('month', t0) AS m, COUNT(*) AS n, SUM(EXTRACT(EPOCH FROM dur)) AS secs FROM ev GROUP BY date_trunc('month', t0)`,
    );
    e.applyChanges('ev', {
      insert: [
        { id: 1, t0: '2024-03-31 00:30:00+00', d: '2024-03-31', dur: '90 minutes' },
        { id: 2, t0: '2024-03-31 01:30:00+00', d: '2024-02-29', dur: '1 day' },
        { id: 3, t0: '2024-04-01 00:00:00+00', d: '2024-01-01', dur: null },
      ],
    });
    const show = (rows: readonly Record<string, Value>[]): string[] =>
      sortedRows(
        rows.map((r) =>
          Object.fromEntries(
            Object.entries(r).map(([k, v]) => [
              k,
              v instanceof Decimal || v instanceof Interval ? v.toString() : v,
            ]),
          ),
        ),
      );
    assert.deepEqual(
      show(e.viewSnapshot('ev_v').rows),
      show([
        {
          id: 1,
          ends: '2024-03-31 02:00:00+00',
          dow: '7',
          m: '2024-03-01 00:00:00+00',
          prev: '2024-03-30',
          berlin: '2024-03-31 01:30:00',
        },
        {
          id: 2,
          ends: '2024-04-01 01:30:00+00',
          dow: '4',
          m: '2024-02-01 00:00:00+00',
          prev: '2024-02-28',
          berlin: '2024-03-31 03:30:00',
        },
        {
          id: 3,
          ends: null,
          dow: '1',
          m: '2024-01-01 00:00:00+00',
          prev: '2023-12-31',
          berlin: '2024-04-01 02:00:00',
        },
      ]),
    );
    assert.deepEqual(
      show(e.viewSnapshot('ev_month').rows),
      show([
        { m: '2024-03-01 00:00:00+00', n: 2, secs: '91800.000000' },
        { m: '2024-04-01 00:00:00+00', n: 1, secs: null },
      ]),
    );
    e.applyChanges('ev', {
      delete: [{ id: 1 }],
      insert: [{ id: 3, t0: '2024-03-15 12:00:00+00', d: '2024-01-01', dur: '-1 day' }],
    });
    assert.deepEqual(
      show(e.viewSnapshot('ev_month').rows),
      show([{ m: '2024-03-01 00:00:00+00', n: 2, secs: '0.000000' }]),
    );
  });
});
