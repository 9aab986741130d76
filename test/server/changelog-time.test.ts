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
