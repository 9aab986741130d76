// Window assignment of TUMBLE/HOP (time-window.ts, expand.ts): alignment to the epoch plus an offset,
// floor (not truncation) before 1970, exact bigint arithmetic past 2^53 µs, and HOP's windows each
// holding the row, checked against a brute-force scan of candidate starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Interval } from './interval.ts';
import {
  alignedStart,
  epochMicrosOf,
  formatEpochMicros,
  hopWindowCount,
  tumbleStart,
} from './time-window.ts';
import { compileExpand } from '../expand.ts';
import { T } from '../types.ts';

const sec = (n: number): Interval => Interval.of(0, 0, n * 1_000_000);

test('tumble windows align to the epoch plus the offset', () => {
  assert.equal(tumbleStart('2024-01-01 00:00:09.999999', sec(10), sec(0), false), '2024-01-01 00:00:00');
  assert.equal(tumbleStart('2024-01-01 00:00:10', sec(10), sec(0), false), '2024-01-01 00:00:10');
  assert.equal(tumbleStart('2024-01-01 00:00:02', sec(10), sec(3), false), '2023-12-31 23:59:53');
  assert.equal(tumbleStart('2024-01-01 00:00:02', sec(10), sec(-7), false), '2023-12-31 23:59:53');
  // 7-day windows start on Thursdays (1970-01-01 was one); a date is its midnight.
  assert.equal(tumbleStart('2024-03-10', Interval.of(0, 7, 0), sec(0), false), '2024-03-07 00:00:00');
  assert.equal(tumbleStart('2024-03-09 23:30:00+00', sec(3600), sec(0), true), '2024-03-09 23:00:00+00');
});

test('before 1970 a window start is the floor, not the truncation toward zero', () => {
  assert.equal(tumbleStart('1969-12-31 23:59:55', sec(10), sec(0), false), '1969-12-31 23:59:50');
  assert.equal(tumbleStart('1969-12-31 23:59:50', sec(10), sec(0), false), '1969-12-31 23:59:50');
  assert.equal(alignedStart(-1, 10, 0), -10);
  assert.equal(alignedStart(-10, 10, 0), -10);
  assert.equal(alignedStart(9, 10, 0), 0);
});

test('window arithmetic is exact beyond 2^53 microseconds (both ends of the timestamp range)', () => {
  const t = epochMicrosOf('9999-12-31 23:59:49.5');
  assert.equal(typeof t, 'bigint');
  assert.equal(formatEpochMicros(t, false), '9999-12-31 23:59:49.5');
  assert.equal(tumbleStart('9999-12-31 23:59:49.5', sec(10), sec(0), false), '9999-12-31 23:59:40');
  assert.equal(tumbleStart('0001-01-01 00:00:07', sec(10), sec(0), false), '0001-01-01 00:00:00');
  assert.equal(tumbleStart('0001-01-01 00:00:07.25', sec(1), sec(0), false), '0001-01-01 00:00:07');
});

test('HOP needs the size to be a whole multiple of the slide', () => {
  assert.equal(hopWindowCount(sec(5), sec(10)), 2);
  assert.equal(hopWindowCount(sec(3), sec(10)), null);
  assert.equal(hopWindowCount(sec(1), Interval.of(0, 1, 0)), 86_400);
});

test('HOP yields exactly the windows holding the row, earliest first (brute force over starts)', () => {
  let checked = 0;
  for (const [slide, size, offset] of [
    [5, 10, 0],
    [4, 12, 1],
    [3, 3, 2],
    [7, 21, -5],
  ] as const) {
    const expand = compileExpand({
      kind: 'hop',
      time: { kind: 'col', index: 0, name: 't', type: T.timestamp },
      slide: sec(slide),
      size: sec(size),
      offset: sec(offset),
      tz: false,
    });
    for (let s = -40; s <= 40; s++) {
      const ts = formatEpochMicros(s * 1_000_000 + 250_000, false);
      const expected: string[] = [];
      // Every window start offset + k·slide whose window [start, start + size) holds t.
      for (let k = -30; k <= 30; k++) {
        const start = offset + k * slide;
        if (start * 1e6 <= s * 1e6 + 250_000 && s * 1e6 + 250_000 < (start + size) * 1e6) {
          expected.push(
            `${formatEpochMicros(start * 1e6, false)}|${formatEpochMicros((start + size) * 1e6, false)}`,
          );
        }
      }
      const actual = expand([ts]).map(([a, b]) => `${String(a)}|${String(b)}`);
      assert.deepEqual(actual, expected, `hop(${slide}, ${size}, ${offset}) of ${ts}`);
      checked++;
    }
  }
  assert.equal(
    compileExpand({
      kind: 'hop',
      time: { kind: 'col', index: 0, name: 't', type: T.timestamp },
      slide: sec(5),
      size: sec(10),
      offset: sec(0),
      tz: false,
    })([null]).length,
    0,
    'a NULL time falls in no window',
  );
  assert.equal(checked, 4 * 81);
});
