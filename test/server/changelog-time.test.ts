// The clock and watermarks of each epoch in the changelog and on REST, on the manual clock: every
// `changes` message carries its epoch's logical clock and the watermark after it of each watermarked
// table the view reads (also through a view over a view; a view reading none has no `watermarks`);
// a changelog resumed from a position — also after a restart, from the stored changelog — replays
// the same values; a REST page and GET /v1/views/{name} say the clock and watermarks of their epoch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type Message,
  WsClient,
  removeDir,
  request,
  sqlOk,
  startServer,
  tempDir,
  type TestServer,
} from './helpers.ts';

const at = (s: number): string => `2024-01-01 10:00:${String(s).padStart(2, '0')}`;
const clock = (m: number): string => `2024-06-01 00:${String(m).padStart(2, '0')}:00+00`;

/** What a changes message says of time: [epoch, clock, watermarks]. */
function timeOf(m: Message): [unknown, unknown, unknown] {
  return [m.epoch, m['clock'], m['watermarks']];
}

test('changes messages and REST reads carry the clock and watermarks of their epoch, also resumed', async () => {
  const dir = tempDir();
  let server: TestServer | null = null;
  const subs: WsClient[] = [];
  const ws = (base: string, path: string): WsClient => {
    const c = new WsClient(base.replace('http', 'ws') + path);
    subs.push(c);
    return c;
  };
  try {
    const start = async (): Promise<TestServer> =>
      (server = await startServer({ dataDir: dir, clock: { mode: 'manual', tickMs: 0 } }));
    let s = await start();
    await sqlOk(
      s.base,
      `CREATE TABLE bids (id integer PRIMARY KEY, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
       CREATE TABLE notes (id integer PRIMARY KEY, body text);
       CREATE MATERIALIZED VIEW per10 AS SELECT window_end, count(*) AS n
         FROM TUMBLE(bids, ts, INTERVAL '10' SECOND) GROUP BY window_end;
       CREATE MATERIALIZED VIEW busy AS SELECT count(*) AS windows FROM per10 WHERE n > 1;
       CREATE MATERIALIZED VIEW note_count AS SELECT count(*) AS n FROM notes`,
    );
    const per10 = ws(s.base, '/v1/views/per10/subscribe?snapshot=false');
    const busy = ws(s.base, '/v1/views/busy/subscribe?snapshot=false');
    const notes = ws(s.base, '/v1/views/note_count/subscribe?snapshot=false');
    const e0 = (await per10.waitFor((m) => m.type === 'subscribed')).epoch as number;
    await busy.waitFor((m) => m.type === 'subscribed');
    await notes.waitFor((m) => m.type === 'subscribed');
    await sqlOk(s.base, `SET CLOCK TO '${clock(1)}'; INSERT INTO bids VALUES (1, '${at(12)}')`);
    await sqlOk(s.base, `SET CLOCK TO '${clock(2)}'; INSERT INTO bids VALUES (2, '${at(3)}')`); // late
    await sqlOk(s.base, `INSERT INTO bids VALUES (3, '${at(14)}'), (4, '${at(31)}')`);
    await sqlOk(s.base, `SET CLOCK TO '${clock(3)}'; INSERT INTO notes VALUES (1, 'x')`);
    const last = e0 + 4;
    await per10.waitEpoch(last - 1);
    await busy.waitEpoch(last - 1);
    await notes.waitEpoch(last);
    const wm = (s: number): Record<string, string> => ({ bids: at(s) });
    assert.deepEqual(per10.of('changes').map(timeOf), [
      [e0 + 1, clock(1), wm(7)],
      [e0 + 3, clock(2), wm(26)],
    ]);
    // A view over a view carries the watermarks of the tables under it.
    assert.deepEqual(busy.of('changes').map(timeOf), [[e0 + 3, clock(2), wm(26)]]);
    assert.deepEqual(notes.of('changes').map(timeOf), [[last, clock(3), undefined]]);
    assert.ok(
      !('watermarks' in (notes.of('changes')[0] as Message)),
      'no watermarks key without a watermark',
    );

    // REST: a page and the view's description say the clock and watermarks of their epoch.
    const page = await request(s.base, 'GET', '/v1/views/per10/rows');
    assert.equal(page.body['epoch'], last);
    assert.equal(page.body['clock'], clock(3));
    assert.deepEqual(page.body['watermarks'], wm(26));
    const info = await request(s.base, 'GET', '/v1/views/busy');
    assert.deepEqual(
      [info.body['epoch'], info.body['clock'], info.body['watermarks']],
      [last, clock(3), wm(26)],
    );
    const noteInfo = await request(s.base, 'GET', '/v1/views/note_count/rows');
    assert.equal(noteInfo.body['clock'], clock(3));
    assert.equal(noteInfo.body['watermarks'], undefined);

    const live = JSON.stringify(per10.of('changes'));
    const liveBusy = JSON.stringify(busy.of('changes'));
    // Resumed from a position: the stored changelog replays the same messages, time included.
    const resumed = ws(s.base, `/v1/views/per10/subscribe?resumeFrom=${e0}`);
    await resumed.waitEpoch(last);
    assert.equal(JSON.stringify(resumed.of('changes')), live);
    // After a restart (the changelog read back from the data directory), and an epoch later.
    for (const c of subs) c.close();
    await s.close();
    server = null;
    s = await start();
    const again = ws(s.base, `/v1/views/per10/subscribe?resumeFrom=${e0}`);
    const againBusy = ws(s.base, `/v1/views/busy/subscribe?resumeFrom=${e0}`);
    await again.waitEpoch(last);
    await againBusy.waitEpoch(last);
    await sqlOk(s.base, `SET CLOCK TO '${clock(4)}'; INSERT INTO bids VALUES (5, '${at(45)}')`);
    await again.waitEpoch(last + 1);
    const changes = again.of('changes');
    assert.equal(JSON.stringify(changes.slice(0, -1)), live);
    assert.equal(JSON.stringify(againBusy.of('changes')), liveBusy);
    assert.deepEqual(timeOf(changes.at(-1) as Message), [last + 1, clock(4), wm(40)]);
  } finally {
    for (const c of subs) c.close();
    await (server as TestServer | null)?.close();
    removeDir(dir);
  }
});

test('asOf pages, subscribed and snapshot messages carry the clock and watermarks of their own epoch', async () => {
  const dir = tempDir();
  let server: TestServer | null = null;
  const subs: WsClient[] = [];
  const ws = (base: string, path: string): WsClient => {
    const c = new WsClient(base.replace('http', 'ws') + path);
    subs.push(c);
    return c;
  };
  try {
    const start = async (): Promise<TestServer> =>
      (server = await startServer({ dataDir: dir, clock: { mode: 'manual', tickMs: 0 } }));
    let s = await start();
    await sqlOk(
      s.base,
      `CREATE TABLE bids (id integer PRIMARY KEY, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
       CREATE TABLE notes (id integer PRIMARY KEY, body text);
       CREATE MATERIALIZED VIEW per10 AS SELECT window_end, count(*) AS n
         FROM TUMBLE(bids, ts, INTERVAL '10' SECOND) GROUP BY window_end;
       CREATE MATERIALIZED VIEW note_count AS SELECT count(*) AS n FROM notes`,
    );
    const e0 = (await request(s.base, 'GET', '/v1/views/per10')).body['epoch'] as number;
    const wm = (sec: number): Record<string, string> => ({ bids: at(sec) });
    await sqlOk(s.base, `SET CLOCK TO '${clock(1)}'; INSERT INTO bids VALUES (1, '${at(12)}')`); // e0+1
    // The clock moves in an epoch that does not change per10 (nor its watermark).
    await sqlOk(s.base, `SET CLOCK TO '${clock(2)}'; INSERT INTO notes VALUES (1, 'x')`); // e0+2
    // The watermark moves while the clock stands still.
    await sqlOk(s.base, `INSERT INTO bids VALUES (2, '${at(31)}')`); // e0+3
    await sqlOk(s.base, `SET CLOCK TO '${clock(4)}'; INSERT INTO notes VALUES (2, 'y')`); // e0+4
    const last = e0 + 4;
    // What each epoch was: [epoch, clock, watermarks of per10, per10's rows].
    const expected: [number, string | undefined, unknown][] = [
      [e0, undefined, { bids: null }],
      [e0 + 1, clock(1), wm(7)],
      [e0 + 2, clock(2), wm(7)],
      [e0 + 3, clock(2), wm(26)],
      [e0 + 4, clock(4), wm(26)],
    ];
    const pageTimes = async (base: string): Promise<unknown[]> => {
      const out: unknown[] = [];
      for (const [e] of expected) {
        const page = await request(base, 'GET', `/v1/views/per10/rows?asOf=${e}`);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        out.push([page.body['epoch'], page.body['clock'], page.body['watermarks']]);
      }
      return out;
    };
    // The epoch the view was created at had no SET CLOCK yet: the clock stood at 1970.
    const want = expected.map(([e, c, w]) => [e, c ?? '1970-01-01 00:00:00+00', w]);
    assert.deepEqual(await pageTimes(s.base), want);
    // A view reading no watermarked table: the clock only, also at a past epoch.
    const notes = await request(s.base, 'GET', `/v1/views/note_count/rows?asOf=${e0 + 2}`);
    assert.deepEqual([notes.body['clock'], 'watermarks' in notes.body], [clock(2), false]);

    // subscribed: the epoch the stream continues from, with that epoch's time; snapshot chunks too.
    const snap = ws(s.base, '/v1/views/per10/subscribe?snapshot=true');
    await snap.waitFor((m) => m.type === 'snapshot_end');
    const hello = snap.of('subscribed')[0] as Message;
    assert.deepEqual(timeOf(hello), [last, clock(4), wm(26)]);
    const chunks = snap.of('snapshot');
    assert.ok(chunks.length > 0);
    for (const c of chunks) assert.deepEqual(timeOf(c), [last, clock(4), wm(26)]);
    const live = ws(s.base, '/v1/views/per10/subscribe?snapshot=false');
    assert.deepEqual(timeOf(await live.waitFor((m) => m.type === 'subscribed')), [last, clock(4), wm(26)]);
    for (const [e, , w] of expected.slice(1)) {
      const resumed = ws(s.base, `/v1/views/per10/subscribe?resumeFrom=${e}`);
      const m = await resumed.waitFor((x) => x.type === 'subscribed');
      assert.deepEqual(timeOf(m), [e, want[e - e0]?.[1], w]);
    }

    // After a restart (from the data directory's checkpoint and journal): the same times.
    for (const c of subs) c.close();
    await s.close();
    server = null;
    s = await start();
    assert.deepEqual(await pageTimes(s.base), want);
    const again = ws(s.base, `/v1/views/per10/subscribe?resumeFrom=${e0 + 2}`);
    assert.deepEqual(timeOf(await again.waitFor((m) => m.type === 'subscribed')), [e0 + 2, clock(2), wm(7)]);
    // NDJSON says the same as the WebSocket.
    const nd = await fetch(`${s.base}/v1/views/per10/changes?resumeFrom=${e0 + 1}`);
    const reader = (nd.body as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    await reader.cancel();
    const first = JSON.parse(new TextDecoder().decode(value).split('\n')[0] as string) as Message;
    assert.deepEqual([first.type, ...timeOf(first)], ['subscribed', e0 + 1, clock(1), wm(7)]);
  } finally {
    for (const c of subs) c.close();
    await (server as TestServer | null)?.close();
    removeDir(dir);
  }
});
