// INTERVAL, TIMESTAMPTZ, TIME and DATE end to end: PostgreSQL's text on the REST wire (rows and
// ad-hoc SELECT) and in WebSocket changes, filters that match '24 hours' to '1 day', then
// properties: random intervals survive the codecs field for field, and random rows of every time
// type survive journal replay, a checkpoint and restart unchanged, with equal intervals one group.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Interval, compareIntervals, formatInterval, parseInterval } from '../../src/common/time/interval.ts';
import { decodeStored, encodeStored, stringifyWire } from '../../src/common/json-codec.ts';
import { coerceIngest } from '../../src/common/cast.ts';
import { T } from '../../src/common/types.ts';
import { formatDayTime, formatTimeOfDay } from '../../src/common/time/calendar.ts';
import { WsClient, openRuntime, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

const SCHEMA = `CREATE TABLE trips (id INTEGER PRIMARY KEY, started TIMESTAMPTZ, took INTERVAL, clock TIME, day DATE);
CREATE MATERIALIZED VIEW by_took AS SELECT took, COUNT(*) AS n, MIN(started) AS first, MAX(clock) AS latest, MAX(day) AS last_day FROM trips GROUP BY took`;

test('time values are PostgreSQL text on REST and WebSocket, and filters compare intervals by value', async () => {
  const dir = tempDir();
  const server = await startServer({ dataDir: dir });
  const ws: WsClient[] = [];
  try {
    await sqlOk(server.base, SCHEMA);
    const sub = new WsClient(`${server.wsBase}/v1/views/by_took/subscribe?snapshot=false`);
    ws.push(sub);
    await sub.waitFor((m) => m.type === 'subscribed');
    const body = [
      { id: 1, started: '2024-03-31T01:30:00+02:00', took: '1 day', clock: '10:00', day: '2024-02-29' },
      { id: 2, started: '2024-03-31 00:00:00Z', took: '24 hours', clock: '23:59:59.5', day: '2024-01-31' },
      { id: 3, started: '2024-10-27 02:30 Europe/Berlin', took: 'P1Y2M3DT4H5M6.5S', clock: null, day: null },
    ];
    const ingest = await request(server.base, 'POST', '/v1/tables/trips/rows?wait=true', body);
    assert.equal(ingest.status, 200, ingest.text);
    const rows = await request(server.base, 'GET', '/v1/tables/trips/rows');
    assert.equal(rows.status, 200, rows.text);
    const byId = new Map(
      (rows.body as { rows: Record<string, unknown>[] }).rows.map((r) => [r.id as number, r]),
    );
    assert.deepEqual(byId.get(1), {
      id: 1,
      started: '2024-03-30 23:30:00+00',
      took: '1 day',
      clock: '10:00:00',
      day: '2024-02-29',
    });
    assert.equal(byId.get(2)?.took, '24:00:00');
    assert.equal(byId.get(3)?.started, '2024-10-27 01:30:00+00', 'an ambiguous local time is standard time');
    assert.equal(byId.get(3)?.took, '1 year 2 mons 3 days 04:05:06.5');

    // '1 day' and '24 hours' are equal: one group of two
    const view = await request(server.base, 'GET', '/v1/views/by_took/rows');
    assert.equal(view.status, 200, view.text);
    const groups = (view.body as { rows: Record<string, unknown>[] }).rows;
    assert.equal(groups.length, 2);
    const day = groups.find((g) => g.n === 2);
    assert.ok(day !== undefined, JSON.stringify(groups));
    assert.equal(day.first, '2024-03-30 23:30:00+00');
    assert.equal(day.latest, '23:59:59.5');
    assert.equal(day.last_day, '2024-02-29');

    // a filter on an interval column matches by value, like SQL's =
    const filtered = await request(server.base, 'GET', '/v1/views/by_took/rows?took=86400%20seconds');
    assert.equal(filtered.status, 200, filtered.text);
    assert.equal((filtered.body as { rows: unknown[] }).rows.length, 1);

    const select = await sqlOk(
      server.base,
      'SELECT took * 2 AS twice, started + took AS ended FROM trips WHERE id = 3',
    );
    assert.match(select.text, /"2 years 4 mons 6 days 08:10:13"/);
    assert.match(select.text, /"2025-12-30 05:35:06.5\+00"/);

    const change = await sub.waitFor((m) => m.type === 'changes');
    assert.match(JSON.stringify(change), /"took":"1 day"|"took":"24:00:00"/);
  } finally {
    for (const c of ws) c.close();
    await server.close();
    removeDir(dir);
  }
});

const intervalArb = fc
  .tuple(
    fc.integer({ min: -120_000, max: 120_000 }),
    fc.integer({ min: -100_000, max: 100_000 }),
    fc.integer({ min: -(2 ** 52), max: 2 ** 52 }),
  )
  .map(([m, d, u]) => Interval.of(m, d, u));

test('property: intervals survive their text, the storage codec and the wire field for field', () => {
  fc.assert(
    fc.property(intervalArb, (iv) => {
      const text = formatInterval(iv);
      const back = parseInterval(text);
      assert.ok(back !== null, text);
      assert.deepEqual([back.months, back.days, back.micros], [iv.months, iv.days, iv.micros], text);
      const ingested = coerceIngest(text, T.interval);
      assert.ok(ingested.ok);
      const stored = decodeStored(encodeStored([iv, { x: iv }])) as [Interval, { x: Interval }];
      assert.ok(stored[0] instanceof Interval);
      assert.equal(stored[0].storageText(), iv.storageText(), 'storage keeps all three fields');
      assert.equal(stored[1].x.storageText(), iv.storageText());
      assert.equal(stringifyWire({ v: iv }), JSON.stringify({ v: text }), 'wire: the text');
      assert.equal(compareIntervals(stored[0], iv), 0);
      assert.equal(stored[0].key(), iv.key());
    }),
    { numRuns: 1000 },
  );
});

// Random rows: timestamps from 1900 to 2100 with microseconds, intervals from a few spellings of
// equal values (so groups mix '1 day' and '24 hours').
const DAY_SPELLINGS = ['1 day', '24 hours', '1440 minutes', 'P1D', '-1 day', '-24 hours', '1 mon', '30 days'];
const rowArb = fc.record({
  day: fc.integer({ min: -25_567, max: 47_482 }),
  micros: fc.integer({ min: 0, max: 86_400_000_000 - 1 }),
  took: fc.constantFrom(...DAY_SPELLINGS),
  clock: fc.integer({ min: 0, max: 86_400_000_000 - 1 }),
});

function snapshot(engine: {
  execute(sql: string): readonly { rows?: readonly Record<string, unknown>[] }[];
}): string[] {
  return (engine.execute('SELECT id, started, took, clock, day FROM trips')[0]?.rows ?? [])
    .map((r) => [r.id, r.started, r.took, r.clock, r.day].map(String).join('|'))
    .sort();
}

test('property: random time values survive journal replay, checkpoint and restart exactly', () => {
  fc.assert(
    fc.property(fc.array(rowArb, { minLength: 1, maxLength: 30 }), fc.boolean(), (rows, checkpoint) => {
      const dir = tempDir();
      try {
        const rt = openRuntime(dir);
        rt.executeScript(SCHEMA);
        const input = rows.map((r, id) => ({
          id,
          started: `${formatDayTime(r.day, r.micros)}+00`,
          took: r.took,
          clock: formatTimeOfDay(r.clock),
          day: formatDayTime(r.day, 0).slice(0, 10),
        }));
        rt.ingest('trips', { insert: input });
        if (checkpoint) assert.ok(rt.checkpoint() !== null);
        const before = snapshot(rt.engine);
        const view = rt.engine
          .viewSnapshot('by_took')
          .rows.map((r) => JSON.stringify(r))
          .sort();
        rt.close();
        // one group per distinct total: '1 day', '24 hours', '1440 minutes' and 'P1D' meet
        const totals = new Set(rows.map((r) => parseInterval(r.took)?.key()));
        assert.equal(view.length, totals.size);
        const again = openRuntime(dir);
        try {
          assert.deepEqual(snapshot(again.engine), before, 'table rows keep their values');
          assert.deepEqual(
            again.engine
              .viewSnapshot('by_took')
              .rows.map((r) => JSON.stringify(r))
              .sort(),
            view,
            'the view is the same after restart',
          );
          assert.deepEqual(
            before.map((line) => line.split('|')[1]).sort(),
            input.map((r) => r.started).sort(),
            'timestamptz as ingested (UTC)',
          );
        } finally {
          again.close();
        }
      } finally {
        removeDir(dir);
      }
    }),
    { numRuns: 12 },
  );
});
