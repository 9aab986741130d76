// The world the UPDATE/DELETE differential tests write to: three tables (two keyed, one keyless)
// with views over them, the same in Sluice and SQLite, and the random plain writes between the
// statements under test. A repeated key replaces the row on both sides (Sluice's INSERT is an upsert
// by primary key; SQLite's INSERT OR REPLACE).
import assert from 'node:assert/strict';
import { Engine } from '../../src/exec/engine.ts';
import { SqliteOracle } from './sqlite-oracle.ts';
import { mulberry32 } from './checkpoint-workload.ts';

const SCHEMA = `CREATE TABLE t (id integer PRIMARY KEY, g integer, v integer, s text);
CREATE TABLE u (id integer PRIMARY KEY, w integer);
CREATE TABLE lake (g integer, v integer)`;

const VIEWS: readonly (readonly [string, string])[] = [
  ['t_all', 'SELECT id, g, v, s FROM t'],
  ['u_all', 'SELECT id, w FROM u'],
  ['lake_all', 'SELECT g, v FROM lake'],
  ['lake_by_g', 'SELECT g, COUNT(*) AS n, SUM(v) AS total FROM lake GROUP BY g'],
];

export interface DmlWorld {
  readonly engine: Engine;
  readonly oracle: SqliteOracle;
  /** The views both sides hold, by name. */
  readonly views: readonly string[];
  /** A random integer in [0, n). */
  int(n: number): number;
  /** A random integer in [0, n) as SQL, NULL one time in eight. */
  maybeNull(n: number): string;
  /** A random plain insert into t (0), u (1) or lake (2): [Sluice's text, SQLite's]. */
  randomInsert(table: 0 | 1 | 2): readonly [string, string];
}

/** The tables and views, plus `extraViews` ([name, SELECT]) over them, for a seed. */
export function dmlWorld(seed: number, extraViews: readonly (readonly [string, string])[] = []): DmlWorld {
  const rnd = mulberry32(seed);
  const int = (n: number): number => Math.floor(rnd() * n);
  const maybeNull = (n: number): string => (int(8) === 0 ? 'NULL' : String(int(n)));
  const views = [...VIEWS, ...extraViews];
  const engine = new Engine();
  const oracle = new SqliteOracle();
  engine.executeScript(
    [SCHEMA, ...views.map(([name, sql]) => `CREATE MATERIALIZED VIEW ${name} AS ${sql}`)].join(';\n'),
  );
  oracle.db.exec('CREATE TABLE t (id INTEGER NOT NULL PRIMARY KEY, g INTEGER, v INTEGER, s TEXT)');
  oracle.db.exec('CREATE TABLE u (id INTEGER NOT NULL PRIMARY KEY, w INTEGER)');
  oracle.db.exec('CREATE TABLE lake (g INTEGER, v INTEGER)');
  for (const [name, sql] of views) oracle.createView(name, sql);
  const randomInsert = (table: 0 | 1 | 2): readonly [string, string] => {
    if (table === 0) {
      const row = `${int(30)}, ${maybeNull(4)}, ${maybeNull(25)}, '${'abc'[int(3)]}'`;
      return [`INSERT INTO t VALUES (${row})`, `INSERT OR REPLACE INTO t VALUES (${row})`];
    }
    if (table === 1) {
      const row = `${int(30)}, ${maybeNull(25)}`;
      return [`INSERT INTO u VALUES (${row})`, `INSERT OR REPLACE INTO u VALUES (${row})`];
    }
    const sql = `INSERT INTO lake VALUES (${maybeNull(4)}, ${maybeNull(25)})`;
    return [sql, sql];
  };
  return { engine, oracle, views: views.map(([name]) => name), int, maybeNull, randomInsert };
}

/** Rows enough that a statement's query reads its input in several slices. */
export const FILLER = 20_000;

/**
 * A script run in steps with a deadline already past (one slice of the query's input a step), with
 * `meanwhile` run once, after the statement's query has read its first slice; its result and the
 * rows the query examined.
 */
export function stepped(engine: Engine, sql: string, meanwhile: () => void) {
  const script = engine.runScript(sql);
  let result = null;
  let ran = false;
  while (result === null) {
    result = script.step(performance.now() - 1);
    if (result === null && !ran && script.dmlRowsRead > 0) {
      meanwhile();
      ran = true;
    }
  }
  assert.ok(ran, 'the query ran in more than one slice');
  return { result, examined: script.dmlRowsRead };
}
