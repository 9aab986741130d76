// A large ingest request's journal text is written ahead of its epoch, a step of
// INSERTS_AHEAD_SLICE_ROWS rows per turn of the event loop, so the epoch's one block no longer
// encodes the rows. Counted here: the most rows one step wrote, that the journal took the text, that
// its payload is byte for byte the one written in the block (so replay is the same), that a request
// applied meanwhile goes first entirely and the large one follows as one epoch, and that whatever
// makes the text another's (a table dropped and made again, a bad row, a value that needs the
// journal's tags) leaves the request to the usual path; a keyed table's request is not written ahead.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JournalBatch } from '../../src/common/journal.ts';
import type { SourcePositions } from '../../src/common/changes.ts';
import type { Row } from '../../src/common/types.ts';
import { Engine } from '../../src/exec/engine.ts';
import { INSERTS_AHEAD_SLICE_ROWS, insertsAheadCounts } from '../../src/exec/engine-writes.ts';
import { batchEntryPayload, encodeBatchPayload } from '../../src/storage/table-log.ts';
import { flatValuesText } from '../../src/storage/ascii-json.ts';
import { type TestServer, removeDir, request, sqlOk, startServer, tempDir } from './helpers.ts';

/** A journal that keeps each batch's payload as the durable journal writes it. */
class PayloadJournal {
  readonly payloads: { epoch: number; payload: string; ahead: boolean; inBlock: string }[] = [];
  appendBatch(entry: JournalBatch): SourcePositions {
    this.payloads.push({
      epoch: entry.epoch,
      payload: batchEntryPayload(entry),
      ahead: entry.insertsText !== undefined,
      // What the block itself would have written.
      inBlock: encodeBatchPayload(entry.columns, entry.inserts, entry.deletes, entry.clock),
    });
    return {};
  }
  encodeInserts(rows: readonly (readonly unknown[])[]): string | null {
    const text = flatValuesText(rows as Parameters<typeof flatValuesText>[0]);
    return text === null ? null : text.slice(1, -1);
  }
  appendDdl(): void {}
  appendTick(): void {}
}

function rows(n: number, from: number, row = (i: number): Row => ({ id: i, g: i % 7, s: `r${i}` })): Row[] {
  const out: Row[] = [];
  for (let i = from; i < from + n; i++) out.push(row(i));
  return out;
}

function count(engine: Engine, table: string): number {
  return engine.tableRows(table).length;
}

describe('the journal text of a large request is written ahead, in steps', () => {
  const n = 5 * INSERTS_AHEAD_SLICE_ROWS + 17;

  test('steps are bounded, the payload is the block’s own, and a request meanwhile goes first', () => {
    for (const ddl of [
      'CREATE TABLE t (id BIGINT, g INTEGER, s TEXT)',
      'CREATE TABLE t (id BIGINT, g INTEGER, s TEXT) APPEND ONLY',
    ]) {
      const engine = new Engine();
      const journal = new PayloadJournal();
      engine.execute(`${ddl}; CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS c FROM t GROUP BY g`);
      engine.setJournal(journal);
      const changes = { insert: rows(n, 0) };
      const job = engine.insertsAhead('t', changes);
      assert.ok(job !== null);
      const stepsBefore = insertsAheadCounts.steps;
      insertsAheadCounts.maxRowsInStep = 0;
      let steps = 0;
      // Half way, another request is applied: its epoch comes first, whole.
      while (!job.step(INSERTS_AHEAD_SLICE_ROWS)) {
        steps++;
        if (steps === 2) engine.applyChanges('t', { insert: [{ id: -1, g: 1, s: 'x' }] });
        assert.equal(count(engine, 't'), steps >= 2 ? 1 : 0, 'nothing of the large request is visible');
      }
      assert.equal(insertsAheadCounts.steps - stepsBefore, Math.ceil(n / INSERTS_AHEAD_SLICE_ROWS));
      assert.equal(insertsAheadCounts.maxRowsInStep, INSERTS_AHEAD_SLICE_ROWS);
      const used = insertsAheadCounts.used;
      const result = engine.applyChanges('t', changes, { insertsAhead: job });
      assert.equal(result.epoch, 2);
      assert.equal(insertsAheadCounts.used, used + 1);
      assert.equal(count(engine, 't'), n + 1);
      const last = journal.payloads.at(-1);
      assert.ok(last !== undefined && last.ahead && last.epoch === 2);
      assert.equal(last.payload, last.inBlock);
    }
  });

  test('text that is no longer the request’s is left to the block', () => {
    const cases: { name: string; ddl: string; input: Row[]; between?: string; error?: string }[] = [
      {
        name: 'table dropped and made again',
        ddl: 'CREATE TABLE t (id BIGINT, g INTEGER, s TEXT)',
        input: rows(n, 0),
        between: 'DROP TABLE t; CREATE TABLE t (id BIGINT, g INTEGER, s TEXT)',
      },
      {
        name: 'a value the journal tags (-0)',
        ddl: 'CREATE TABLE t (id BIGINT, g DOUBLE, s TEXT)',
        input: [...rows(n, 0), { id: 1, g: -0, s: 'z' }],
      },
      {
        name: 'a bad last row',
        ddl: 'CREATE TABLE t (id BIGINT, g INTEGER, s TEXT)',
        input: [...rows(n, 0), { id: 1, g: 'x', s: 'z' }],
        error: 'INVALID_VALUE',
      },
    ];
    for (const c of cases) {
      const engine = new Engine();
      const journal = new PayloadJournal();
      engine.execute(c.ddl);
      engine.setJournal(journal);
      const job = engine.insertsAhead('t', { insert: c.input });
      assert.ok(job !== null, c.name);
      while (!job.step(INSERTS_AHEAD_SLICE_ROWS));
      if (c.between !== undefined) engine.execute(c.between);
      const apply = () => engine.applyChanges('t', { insert: c.input }, { insertsAhead: job });
      if (c.error !== undefined) {
        assert.throws(apply, (e: { code?: string; detail?: string }) => {
          assert.equal(e.code, c.error);
          assert.match(e.detail ?? '', new RegExp(`row ${n + 1}\\b`));
          return true;
        });
        assert.equal(count(engine, 't'), 0, c.name);
        assert.equal(journal.payloads.length, 0, c.name);
        continue;
      }
      apply();
      const last = journal.payloads.at(-1);
      assert.ok(last !== undefined, c.name);
      assert.equal(last.ahead, false, c.name);
      assert.equal(last.payload, last.inBlock, c.name);
    }
  });

  test('small, deleting, keyed, clock-default and unjournaled requests are not written ahead', () => {
    const engine = new Engine();
    engine.execute(
      'CREATE TABLE t (id BIGINT, at TIMESTAMP DEFAULT now()); CREATE TABLE u (id BIGINT); CREATE TABLE k (id BIGINT PRIMARY KEY)',
    );
    assert.equal(engine.insertsAhead('u', { insert: rows(n, 0, (i) => ({ id: i })) }), null, 'no journal');
    engine.setJournal(new PayloadJournal());
    assert.equal(engine.insertsAhead('t', { insert: rows(n, 0, (i) => ({ id: i })) }), null);
    assert.equal(engine.insertsAhead('u', { insert: rows(100, 0, (i) => ({ id: i })) }), null);
    assert.equal(
      engine.insertsAhead('u', { insert: rows(n, 0, (i) => ({ id: i })), delete: [{ id: 1 }] }),
      null,
    );
    assert.equal(engine.insertsAhead('k', { insert: rows(n, 0, (i) => ({ id: i })) }), null);
    assert.ok(engine.insertsAhead('u', { insert: rows(n, 0, (i) => ({ id: i })) }) !== null);
  });
});

describe('over HTTP: a large ingest request takes the text written ahead', () => {
  let dir: string;
  let server: TestServer;
  before(async () => {
    dir = tempDir();
    server = await startServer({ dataDir: dir });
    await sqlOk(
      server.base,
      `CREATE TABLE t (id BIGINT, g INTEGER, s TEXT);
       CREATE MATERIALIZED VIEW by_g AS SELECT g, count(*) AS n FROM t GROUP BY g`,
    );
  });
  after(async () => {
    await server.close();
    removeDir(dir);
  });

  const total = async (): Promise<number> => {
    const r = await sqlOk(server.base, 'SELECT count(*) AS n FROM t');
    const results = (r.body as { results: { rows: { n: number | string }[] }[] }).results;
    return Number(results[0]?.rows[0]?.n);
  };

  test('readers and small writes meanwhile see none or all of it, and a restart gives it back', async () => {
    const big = rows(40_000, 0);
    const used = insertsAheadCounts.used;
    insertsAheadCounts.maxRowsInStep = 0;
    let done = false;
    const sent = request(server.base, 'POST', '/v1/tables/t/rows', big).then((r) => {
      done = true;
      return r;
    });
    const seen: number[] = [];
    for (let i = 0; !done; i++) {
      const small = await request(server.base, 'POST', '/v1/tables/t/rows', [{ id: -1 - i, g: 1, s: 'x' }]);
      assert.equal(small.status, 200, small.text);
      seen.push((await total()) - (i + 1));
    }
    const r = await sent;
    assert.equal(r.status, 200, r.text);
    for (const s of seen) assert.ok(s === 0 || s === 40_000, `a reader saw ${s} of the large request's rows`);
    assert.equal(insertsAheadCounts.used, used + 1);
    assert.ok(insertsAheadCounts.maxRowsInStep <= INSERTS_AHEAD_SLICE_ROWS);
    const expected = await total();
    assert.equal(expected, 40_000 + seen.length);
    await server.close();
    server = await startServer({ dataDir: dir });
    assert.equal(await total(), expected);
  });

  test('an idempotency key still answers a request written ahead once', async () => {
    const body = JSON.stringify(rows(20_000, 100_000));
    const send = () =>
      fetch(`${server.base}/v1/tables/t/rows`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'ahead-1' },
        body,
      }).then(async (r) => ({ status: r.status, replayed: r.headers.get('idempotent-replayed') }));
    const before = await total();
    // Both are written ahead at once; the one applied first is remembered, the other replays it.
    const [a, b] = await Promise.all([send(), send()]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.deepEqual([a.replayed, b.replayed].sort(), ['true', null].sort());
    assert.equal(await total(), before + 20_000);
  });
});
