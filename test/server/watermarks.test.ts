// Watermarks in the server: the watermark and late-row count on REST (GET /v1/tables/{name}), in
// SHOW WATERMARKS and in /metrics; and a kill -9 in the middle of a workload with late rows —
// recovered by replaying the whole journal, or from a checkpoint (which stores the watermark with
// the table) and the journal after it — drops the same rows and leaves the same changelog and
// watermark, byte for byte, as a run without the crash.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { type ChildServer, removeDir, request, spawnServer, sqlOk, startServer, tempDir } from './helpers.ts';

const at = (s: number): string =>
  `2024-01-01 10:${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;

test('REST, SHOW WATERMARKS and metrics show the watermark and the late rows', async () => {
  const server = await startServer();
  try {
    await sqlOk(
      server.base,
      `CREATE TABLE bids (id integer PRIMARY KEY, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
       INSERT INTO bids VALUES (1, '${at(20)}');
       INSERT INTO bids VALUES (2, '${at(14)}'), (3, '${at(16)}'), (4, '${at(30)}')`,
    );
    const info = await request(server.base, 'GET', '/v1/tables/bids');
    assert.equal(info.status, 200);
    assert.deepEqual(info.body['watermark'], {
      column: 'ts',
      expression: "ts - INTERVAL '5' SECOND",
      watermark: at(25),
      lateRows: 1,
    });
    assert.equal(info.body['rowCount'], 3);
    const show = await sqlOk(server.base, 'SHOW WATERMARKS');
    assert.deepEqual((show.body['results'] as { rows: unknown[] }[])[0]?.rows, [
      { name: 'bids', column: 'ts', expression: "ts - INTERVAL '5' SECOND", watermark: at(25), late_rows: 1 },
    ]);
    const metrics = await request(server.base, 'GET', '/metrics');
    assert.match(metrics.text, /sluice_table_late_rows_total\{table="bids",tenant="default"\} 1\n/);
  } finally {
    await server.close();
  }
});

test('an EMIT ON WINDOW CLOSE view shows in SHOW WATERMARKS and counts changes to closed windows in /metrics', async () => {
  const server = await startServer();
  try {
    await sqlOk(
      server.base,
      `CREATE TABLE bids (id integer PRIMARY KEY, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND);
       CREATE MATERIALIZED VIEW per10 AS SELECT window_end, count(*) AS n FROM TUMBLE(bids, ts, INTERVAL '10' SECOND)
         GROUP BY window_end EMIT ON WINDOW CLOSE;
       INSERT INTO bids VALUES (1, '${at(1)}'), (2, '${at(3)}');
       INSERT INTO bids VALUES (3, '${at(16)}');
       DELETE FROM bids WHERE id = 1`,
    );
    const rows = await sqlOk(server.base, 'SELECT * FROM per10');
    assert.deepEqual((rows.body['results'] as { rows: unknown[] }[])[0]?.rows, [
      { window_end: at(10), n: 2 },
    ]);
    const show = await sqlOk(server.base, 'SHOW WATERMARKS');
    assert.deepEqual((show.body['results'] as { rows: unknown[] }[])[0]?.rows, [
      { name: 'bids', column: 'ts', expression: "ts - INTERVAL '5' SECOND", watermark: at(11), late_rows: 0 },
      {
        name: 'per10',
        column: 'window_end',
        expression: 'EMIT ON WINDOW CLOSE',
        watermark: at(11),
        late_rows: 1,
      },
    ]);
    const metrics = await request(server.base, 'GET', '/metrics');
    assert.match(
      metrics.text,
      /sluice_view_closed_window_changes_total\{view="per10",tenant="default"\} 1\n/,
    );
    // The view's catalog entry states its policy and progress; a view without the clause has none.
    const view = await request(server.base, 'GET', '/v1/views/per10');
    assert.deepEqual(view.body['windowClose'], {
      allowedLateness: '00:00:00',
      closedThrough: at(11),
      ignoredChanges: 1,
    });
    await sqlOk(
      server.base,
      `CREATE MATERIALIZED VIEW late AS SELECT window_end, count(*) AS n FROM TUMBLE(bids, ts, INTERVAL '10' SECOND)
         GROUP BY window_end EMIT ON WINDOW CLOSE ALLOWED LATENESS INTERVAL '90' SECOND;
       CREATE MATERIALIZED VIEW plain AS SELECT count(*) AS n FROM bids`,
    );
    const late = await request(server.base, 'GET', '/v1/views/late');
    assert.deepEqual(late.body['windowClose'], {
      allowedLateness: '00:01:30',
      // windows close 90 s behind the watermark
      closedThrough: '2024-01-01 09:58:41',
      ignoredChanges: 0,
    });
    const plain = await request(server.base, 'GET', '/v1/views/plain');
    assert.equal(plain.status, 200);
    assert.equal('windowClose' in plain.body, false);
  } finally {
    await server.close();
  }
});

const SCHEMA = `CREATE TABLE bids (id integer PRIMARY KEY, auction integer, ts timestamp,
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND);
CREATE MATERIALIZED VIEW per_window AS
  SELECT window_start, auction, count(*) AS n FROM TUMBLE(bids, ts, INTERVAL '30' SECOND)
  GROUP BY window_start, auction`;

/** SQL steps: times mostly rising, every fourth row 15 s behind (often late), updates and deletes. */
function steps(): string[] {
  const out: string[] = [SCHEMA];
  for (let i = 0; i < 40; i++) {
    const t = 3 * i + (i % 4 === 3 ? -15 : 0) + 15;
    out.push(`INSERT INTO bids VALUES (${i}, ${i % 3}, '${at(t)}')`);
    if (i % 7 === 2) out.push(`UPDATE bids SET ts = '${at(0)}' WHERE id = ${i - 1}`);
    if (i % 9 === 4) out.push(`DELETE FROM bids WHERE id = ${i - 2}`);
  }
  return out;
}

/** The stored changelog of every view and the journal (read once the server is gone). */
function stored(dir: string): { changelog: string; journal: string } {
  const db = new Database(join(dir, 'sluice.db'), { readonly: true });
  try {
    const all = (q: string): string =>
      db
        .prepare(q)
        .all()
        .map((r) => JSON.stringify(r))
        .join('\n');
    return {
      changelog: all('SELECT view, epoch, message FROM changelog ORDER BY view, epoch'),
      journal: all('SELECT log_offset, kind, epoch, target, payload FROM journal ORDER BY log_offset'),
    };
  } finally {
    db.close();
  }
}

/** Runs the workload (crashing once after step `crashAfter`): SHOW WATERMARKS at the end, and what is stored. */
async function run(
  dir: string,
  crashAfter: number | null,
  extra: string[] = [],
): Promise<{ changelog: string; journal: string; wm: string }> {
  const all = steps();
  const args = ['--clock', 'manual', ...extra];
  let server: ChildServer = await spawnServer(dir, args);
  let wm: string;
  try {
    for (let i = 0; i < all.length; i++) {
      await sqlOk(server.base, all[i] as string);
      if (i === crashAfter) {
        server.child.kill('SIGKILL');
        await server.exited;
        server = await spawnServer(dir, args);
      }
    }
    wm = JSON.stringify((await sqlOk(server.base, 'SHOW WATERMARKS')).body['results']);
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  return { ...stored(dir), wm };
}

test(
  'a kill -9 mid-workload drops the same late rows and leaves the same changelog',
  { timeout: 180_000 },
  async () => {
    const dirs = [tempDir(), tempDir(), tempDir()];
    try {
      const [plain, replayed, checkpointed] = dirs as [string, string, string];
      const expected = await run(plain, null);
      const late = (JSON.parse(expected.wm) as { rows: { late_rows: number }[] }[])[0]?.rows[0]?.late_rows;
      assert.ok(late !== undefined && late >= 5, `the workload has late rows (${String(late)})`);
      const crashAt = Math.floor(steps().length / 2);
      // The crash lands after late rows were dropped, so recovery must reproduce the count too.
      for (const [dir, extra] of [
        [replayed, []],
        [checkpointed, ['--checkpoint-epochs', '3']],
      ] as const) {
        const got = await run(dir, crashAt, [...extra]);
        assert.equal(got.wm, expected.wm);
        assert.equal(got.changelog, expected.changelog);
        assert.equal(got.journal, expected.journal);
      }
    } finally {
      for (const d of dirs) removeDir(d);
    }
  },
);
