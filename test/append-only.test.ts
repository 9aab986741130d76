// CREATE TABLE ... APPEND ONLY: the table takes inserts only. Every write that would remove a row —
// UPDATE, DELETE, an ingest request with deletes, an insert replacing the row stored under its key —
// is refused with APPEND_ONLY_TABLE and changes nothing (a request mixing inserts and deletes applies
// neither); the property shows in the catalog, survives a restart (DDL replay) and is enforced after it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, SluiceError } from '../src/index.ts';
import { parseStatements as parse } from '../src/parser/parse.ts';
import { openRuntime, removeDir, tempDir } from './server/helpers.ts';

function refused(run: () => unknown): SluiceError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof SluiceError, String(error));
    assert.equal(error.code, 'APPEND_ONLY_TABLE', error.message);
    return error;
  }
  assert.fail('expected the write to be refused');
}

function rows(e: Engine, table: string): string {
  const r = e.execute(`SELECT * FROM ${table} ORDER BY 1, 2`)[0];
  return JSON.stringify(r?.rows);
}

function engine(): Engine {
  const e = new Engine();
  e.executeScript(
    'CREATE TABLE bids (id INT PRIMARY KEY, auction INT, price INT) APPEND ONLY; ' +
      'CREATE TABLE ticks (sym TEXT, price INT) APPEND ONLY; ' +
      'CREATE TABLE plain (id INT PRIMARY KEY, v INT)',
  );
  e.execute('INSERT INTO bids VALUES (1, 10, 5), (2, 10, 7)');
  e.execute("INSERT INTO ticks VALUES ('a', 1), ('a', 1)");
  return e;
}

describe('APPEND ONLY tables', () => {
  it('parse: after the column list, absent unless written', () => {
    const [stmt] = parse('CREATE TABLE t (a INT, PRIMARY KEY (a)) append only');
    assert.equal(stmt?.kind === 'createTable' && stmt.appendOnly, true);
    const [plain] = parse('CREATE TABLE t (a INT)');
    assert.equal(plain?.kind === 'createTable' && plain.appendOnly, undefined);
    // APPEND stays a usable name; ONLY alone is still refused where it means FROM ONLY.
    parse('CREATE TABLE append (append INT) APPEND ONLY');
    assert.throws(() => parse('CREATE TABLE t (a INT) APPEND'));
  });

  it('the catalog shows it', () => {
    const e = engine();
    const tables = e.catalog().tables;
    assert.deepEqual(
      tables.map((t) => [t.name, t.appendOnly ?? false]),
      [
        ['bids', true],
        ['ticks', true],
        ['plain', false],
      ],
    );
  });

  it('refuses UPDATE and DELETE at the statement, whatever rows they match', () => {
    const e = engine();
    const before = rows(e, 'bids');
    const epoch = e.epoch;
    const upd = refused(() => e.execute('UPDATE bids SET price = 9 WHERE id = 1'));
    assert.equal(upd.message, 'cannot update append-only table "bids"');
    assert.deepEqual(upd.position, { line: 1, column: 1 });
    refused(() => e.execute('UPDATE bids SET price = 9 WHERE id = 99'));
    const del = refused(() => e.execute('DELETE FROM bids WHERE id = 1'));
    assert.equal(del.message, 'cannot delete from append-only table "bids"');
    refused(() => e.execute('DELETE FROM ticks'));
    refused(() => e.execute('DELETE FROM ticks WHERE false'));
    assert.equal(rows(e, 'bids'), before);
    assert.equal(e.epoch, epoch);
  });

  it('refuses an ingest request with deletes: a mixed request applies neither part', () => {
    const e = engine();
    const before = [rows(e, 'bids'), rows(e, 'ticks')];
    const epoch = e.epoch;
    const mixed = refused(() =>
      e.applyChanges('bids', { insert: [{ id: 3, auction: 11, price: 1 }], delete: [{ id: 1 }] }),
    );
    assert.equal(mixed.message, 'cannot delete from append-only table "bids"');
    assert.equal(mixed.detail, 'the request deletes 1 row; nothing was applied');
    refused(() => e.applyChanges('ticks', { delete: [{ sym: 'a', price: 1 }] }));
    // A delete of a key the table does not hold is refused as a delete, not ROW_NOT_FOUND.
    refused(() => e.applyChanges('bids', { delete: [{ id: 99 }] }));
    assert.deepEqual([rows(e, 'bids'), rows(e, 'ticks')], before);
    assert.equal(e.epoch, epoch);
  });

  it('refuses an insert that would replace the row stored under its key (SQL and ingest)', () => {
    const e = engine();
    const before = rows(e, 'bids');
    const epoch = e.epoch;
    const sql = refused(() => e.execute('INSERT INTO bids VALUES (3, 1, 1), (2, 10, 8)'));
    assert.equal(
      sql.message,
      'cannot replace a row of append-only table "bids": an insert names a key it holds',
    );
    assert.equal(sql.detail, 'Key (id)=(2) already exists; nothing was applied.');
    refused(() =>
      e.applyChanges('bids', {
        insert: [
          { id: 4, auction: 1, price: 1 },
          { id: 1, auction: 10, price: 5 },
        ],
      }),
    );
    assert.equal(rows(e, 'bids'), before);
    assert.equal(e.epoch, epoch);
    // A plain keyed table still upserts; new keys and duplicate rows of a keyless table are inserts.
    e.execute('INSERT INTO plain VALUES (1, 1)');
    e.execute('INSERT INTO plain VALUES (1, 2)');
    assert.equal(rows(e, 'plain'), '[{"id":1,"v":2}]');
    e.execute('INSERT INTO bids VALUES (3, 11, 1)');
    e.applyChanges('ticks', { insert: [{ sym: 'a', price: 1 }] });
    assert.equal(rows(e, 'ticks'), '[{"sym":"a","price":1},{"sym":"a","price":1},{"sym":"a","price":1}]');
  });

  it('an insert-only Top-N view survives a restart (its trimmed state reloads) and goes on right', () => {
    const ddl =
      'CREATE TABLE bids (id INT PRIMARY KEY, auction INT, price INT) APPEND ONLY; ' +
      'CREATE MATERIALIZED VIEW top2 AS SELECT auction, id, price FROM (SELECT auction, id, price, ' +
      'ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, id) AS rn FROM bids) r WHERE rn <= 2';
    const batch = (from: number): { insert: { id: number; auction: number; price: number }[] } => ({
      insert: Array.from({ length: 20 }, (_, i) => ({
        id: from + i,
        auction: (from + i) % 3,
        price: ((from + i) * 37) % 50,
      })),
    });
    const reference = new Engine();
    reference.executeScript(ddl);
    const view = (e: Engine): string =>
      JSON.stringify(e.execute('SELECT * FROM top2 ORDER BY auction, price DESC, id')[0]?.rows);
    const dir = tempDir();
    try {
      const first = openRuntime(dir);
      first.executeScript(ddl);
      for (const from of [0, 20, 40]) {
        first.ingest('bids', batch(from));
        reference.applyChanges('bids', batch(from));
      }
      assert.ok(first.checkpoint() !== null);
      first.ingest('bids', batch(60)); // after the checkpoint: replayed from the journal
      reference.applyChanges('bids', batch(60));
      first.close();
      const second = openRuntime(dir);
      try {
        assert.equal(view(second.engine), view(reference));
        for (const from of [80, 100]) {
          second.ingest('bids', batch(from));
          reference.applyChanges('bids', batch(from));
          assert.equal(view(second.engine), view(reference));
        }
      } finally {
        second.close();
      }
    } finally {
      removeDir(dir);
    }
  });

  it('survives a restart: restored from the checkpoint and from journal replay, still enforced', () => {
    const dir = tempDir();
    try {
      const first = openRuntime(dir);
      first.executeScript('CREATE TABLE bids (id INT PRIMARY KEY, price INT) APPEND ONLY');
      first.ingest('bids', { insert: [{ id: 1, price: 5 }] });
      first.checkpoint();
      first.ingest('bids', { insert: [{ id: 2, price: 6 }] });
      first.close();
      const second = openRuntime(dir);
      try {
        assert.equal(second.engine.catalog().tables[0]?.appendOnly, true);
        refused(() => second.ingest('bids', { delete: [{ id: 1 }] }));
        refused(() => second.engine.execute('UPDATE bids SET price = 0'));
        second.ingest('bids', { insert: [{ id: 3, price: 7 }] });
        assert.equal(
          rows(second.engine, 'bids'),
          '[{"id":1,"price":5},{"id":2,"price":6},{"id":3,"price":7}]',
        );
      } finally {
        second.close();
      }
    } finally {
      removeDir(dir);
    }
  });
});
