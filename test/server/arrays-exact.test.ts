// Arrays end to end: an int[] / numeric[] / text[] table ingested over HTTP as JSON arrays (and as
// PostgreSQL's '{...}' text), REST rows and WebSocket changes as JSON arrays, ARRAY_AGG and
// unnest views read back; then journal replay, a checkpoint and a restart keep every array exactly
// (numerics' scales, big integers, NULL elements, quoting-worthy text) and the views' state.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJsonExact } from '../../src/common/json-codec.ts';
import { WsClient, openRuntime, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

const SCHEMA = `CREATE TABLE posts (id INTEGER PRIMARY KEY, scores BIGINT[], prices NUMERIC(10,2)[], tags TEXT[]);
CREATE MATERIALIZED VIEW tag_posts AS SELECT tag, ARRAY_AGG(p.id ORDER BY p.id DESC) AS ids FROM posts p, unnest(p.tags) AS u(tag) GROUP BY tag;
CREATE MATERIALIZED VIEW by_scores AS SELECT scores, COUNT(*) AS n FROM posts GROUP BY scores`;

test('arrays are JSON arrays on REST and WebSocket; ingest takes JSON arrays and the text form', async () => {
  const dir = tempDir();
  const server = await startServer({ dataDir: dir });
  const ws: WsClient[] = [];
  try {
    await sqlOk(server.base, SCHEMA);
    const sub = new WsClient(`${server.wsBase}/v1/views/tag_posts/subscribe?snapshot=false`);
    ws.push(sub);
    await sub.waitFor((m) => m.type === 'subscribed');
    const body = `[{"id": 1, "scores": [9223372036854775807, null, -1], "prices": [1.5, "2.25"], "tags": ["a b", "x"]},
      {"id": 2, "scores": "{1,2}", "prices": "{3.10,NULL}", "tags": "{\\"a b\\",NULL,\\"\\"}"}]`;
    const ingest = await request(server.base, 'POST', '/v1/tables/posts/rows?wait=true', undefined, body);
    assert.equal(ingest.status, 200, ingest.text);
    const rows = await request(server.base, 'GET', '/v1/tables/posts/rows');
    assert.equal(rows.status, 200, rows.text);
    // bigints beyond a double and numerics travel as strings, as scalar ones do
    assert.match(
      rows.text,
      /"scores":\["9223372036854775807",null,-1\],"prices":\["1.50","2.25"\],"tags":\["a b","x"\]/,
    );
    assert.match(rows.text, /"scores":\[1,2\],"prices":\["3.10",null\],"tags":\["a b",null,""\]/);

    const bad = await request(
      server.base,
      'POST',
      '/v1/tables/posts/rows',
      undefined,
      '[{"id": 3, "scores": [[1]]}]',
    );
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.text, /multidimensional arrays are not supported/);
    const tooBig = await request(
      server.base,
      'POST',
      '/v1/tables/posts/rows',
      undefined,
      JSON.stringify([{ id: 4, tags: Array.from({ length: 100_001 }, () => 'x') }]),
    );
    assert.equal(tooBig.status, 400, tooBig.text);

    const view = await request(server.base, 'GET', '/v1/views/tag_posts/rows');
    const tags = (parseJsonExact(view.text) as { rows: { tag: string | null; ids: number[] }[] }).rows;
    assert.deepEqual(tags.map((r) => `${String(r.tag)}=${r.ids.join(',')}`).sort(), [
      '=2',
      'a b=2,1',
      'null=2',
      'x=1',
    ]);
    const select = await sqlOk(
      server.base,
      "SELECT tags[1] AS t1, scores || 5::bigint AS more, array_to_string(prices, ';') AS p FROM posts WHERE id = 2",
    );
    assert.match(select.text, /"t1":"a b","more":\[1,2,5\],"p":"3.10"/);
    // a REST filter on an array column reads PostgreSQL's text form, element by element
    const filtered = await request(
      server.base,
      'GET',
      `/v1/tables/posts/rows?prices=${encodeURIComponent('{3.1,NULL}')}`,
    );
    assert.equal(filtered.status, 200, filtered.text);
    assert.deepEqual(
      (filtered.body as { rows: { id: number }[] }).rows.map((r) => r.id),
      [2],
    );
    const badFilter = await request(server.base, 'GET', '/v1/tables/posts/rows?scores=1,2');
    assert.equal(badFilter.status, 400, badFilter.text);
    const change = await sub.waitFor((m) => m.type === 'changes');
    assert.match(JSON.stringify(change), /"ids":\[2,1\]/);
  } finally {
    for (const c of ws) c.close();
    await server.close();
    removeDir(dir);
  }
});

function snapshot(engine: {
  execute(sql: string): readonly { rows?: readonly Record<string, unknown>[] }[];
}): string[] {
  return (engine.execute('SELECT id, scores, prices, tags FROM posts')[0]?.rows ?? [])
    .map((r) => [r.id, r.scores, r.prices, r.tags].map(String).join('|'))
    .sort();
}

function views(engine: {
  viewSnapshot(name: string): { rows: readonly Record<string, unknown>[] };
}): string[] {
  return ['tag_posts', 'by_scores']
    .flatMap((v) => engine.viewSnapshot(v).rows.map((r) => `${v}:${Object.values(r).map(String).join('|')}`))
    .sort();
}

test('arrays survive journal replay, a checkpoint and a restart exactly', () => {
  for (const checkpoint of [false, true]) {
    const dir = tempDir();
    try {
      const rt = openRuntime(dir);
      rt.executeScript(SCHEMA);
      rt.executeScript(
        `INSERT INTO posts VALUES (1, ARRAY[9223372036854775807, NULL], '{1.5,2.50}', ARRAY['NULL', 'a,b', 'x"y', ''])`,
      );
      rt.ingest('posts', {
        insert: [
          {
            id: 2,
            scores: parseJsonExact('[1234567890123456789, 1]') as never,
            prices: parseJsonExact('["0.1", 7]') as never,
            tags: parseJsonExact('["a b", null]') as never,
          },
          {
            id: 3,
            scores: parseJsonExact('[1]') as never,
            prices: null,
            tags: parseJsonExact('[]') as never,
          },
        ],
      });
      rt.executeScript(
        `UPDATE posts SET tags = tags || 'z'::text WHERE id = 3; DELETE FROM posts WHERE scores[1] = 1234567890123456789`,
      );
      if (checkpoint) assert.ok(rt.checkpoint() !== null);
      const before = snapshot(rt.engine);
      assert.deepEqual(before, [
        '1|{9223372036854775807,NULL}|{1.50,2.50}|{"NULL","a,b","x\\"y",""}',
        '3|{1}|null|{z}',
      ]);
      const viewsBefore = views(rt.engine);
      rt.close();
      const again = openRuntime(dir);
      try {
        assert.deepEqual(
          snapshot(again.engine),
          before,
          `table rows after restart (checkpoint: ${checkpoint})`,
        );
        assert.deepEqual(views(again.engine), viewsBefore, `views after restart (checkpoint: ${checkpoint})`);
      } finally {
        again.close();
      }
    } finally {
      removeDir(dir);
    }
  }
});
