// UPDATE and DELETE by primary key on a large table, in process: Sluice's Engine (of this checkout,
// or of `--root DIR`, for before/after figures) side by side with SQLite on the same rows and
// statements. Prints one JSON line per engine with the median and p90 of an UPDATE plus a DELETE by
// id, and the ratio to SQLite. Sluice also keeps one materialized view over the table up to date;
// SQLite only updates its table and primary-key index.
//   node --import tsx bench/dml-by-key.ts [--rows 1000000] [--rounds 50] [--root DIR]
// With `--bulk N`, each statement changes N rows instead (`WHERE id < N`), on a keyed and on a
// keyless table with the same view, and the line gives the CPU time of each kind (UPDATE, DELETE
// and re-insert of what it deleted, UPDATE of the key): what one statement under --max-dml-rows costs.
//   node --import tsx bench/dml-by-key.ts --rows 100000 --bulk 99000 --rounds 5 [--root DIR]
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '50' },
    root: { type: 'string', default: new URL('..', import.meta.url).pathname },
    bulk: { type: 'string', default: '0' },
  },
});
const BULK = Number(values.bulk);
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);
const root = resolve(String(values.root));

interface Sql {
  run(sql: string): void;
}

function quantiles(times: number[]): { median_ms: number; p90_ms: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number): number =>
    +(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(3);
  return { median_ms: at(0.5), p90_ms: at(0.9) };
}

/** UPDATE + DELETE by id, ROUNDS times, on distinct keys; the time of each pair. */
function measure(db: Sql): number[] {
  const times: number[] = [];
  for (let k = 0; k < ROUNDS; k++) {
    const id = (k * 9973) % (ROWS - 1);
    const started = performance.now();
    db.run(`UPDATE t SET v = v + 1 WHERE id = ${id}`);
    db.run(`DELETE FROM t WHERE id = ${id + 1}`);
    times.push(performance.now() - started);
  }
  return times;
}

const DDL = 'CREATE TABLE t (id BIGINT PRIMARY KEY, v INT)';
const VIEW = 'CREATE MATERIALIZED VIEW by_v AS SELECT v, count(*) AS n FROM t GROUP BY v';

const { Engine } = (await import(`${root}/src/index.ts`)) as typeof import('../src/index.ts');
if (BULK > 0) {
  bulkStatements();
  process.exit(0);
}
const engine = new Engine();
engine.execute(`${DDL}; ${VIEW}`);
for (let i = 0; i < ROWS; i += 50_000) {
  const n = Math.min(50_000, ROWS - i);
  engine.applyChanges('t', { insert: Array.from({ length: n }, (_, j) => ({ id: i + j, v: (i + j) % 10 })) });
}
const sluice = quantiles(measure({ run: (sql) => void engine.execute(sql) }));

const sqlite = new Database(':memory:');
sqlite.exec(DDL);
const insert = sqlite.prepare('INSERT INTO t VALUES (?, ?)');
sqlite.transaction(() => {
  for (let i = 0; i < ROWS; i++) insert.run(i, i % 10);
})();
const peer = quantiles(measure({ run: (sql) => void sqlite.exec(sql) }));

const line = (name: string, q: { median_ms: number; p90_ms: number }): string =>
  JSON.stringify({
    bench: 'dml-by-key',
    engine: name,
    rows: ROWS,
    rounds: ROUNDS,
    ...q,
    ratio_to_sqlite: +(q.median_ms / peer.median_ms).toFixed(1),
  });
console.log(line(`sluice (${root})`, sluice));
console.log(line('sqlite', peer));

/** CPU ms of `run` on this thread (the statement holds it whole: nothing else runs meanwhile). */
function cpuMs(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** `--bulk`: statements of BULK rows on a keyed and a keyless table, ROUNDS times each. */
function bulkStatements(): void {
  for (const keyed of [true, false]) {
    const engine = new Engine();
    engine.execute(`CREATE TABLE t (id BIGINT${keyed ? ' PRIMARY KEY' : ''}, v INT); ${VIEW}`);
    const rows = (from: number, n: number): { id: number; v: number }[] =>
      Array.from({ length: n }, (_, j) => ({ id: from + j, v: (from + j) % 10 }));
    for (let i = 0; i < ROWS; i += 50_000)
      engine.applyChanges('t', { insert: rows(i, Math.min(50_000, ROWS - i)) });
    const times: Record<string, number[]> = { update: [], delete: [], update_key: [] };
    for (let k = 0; k < ROUNDS; k++) {
      times.update!.push(cpuMs(() => engine.execute(`UPDATE t SET v = v + 1 WHERE id < ${BULK}`)));
      times.delete!.push(cpuMs(() => engine.execute(`DELETE FROM t WHERE id < ${BULK}`)));
      engine.applyChanges('t', { insert: rows(0, BULK) });
      const moved = `UPDATE t SET id = id + 10000000 WHERE id < ${BULK}`;
      times.update_key!.push(cpuMs(() => engine.execute(moved)));
      engine.execute('UPDATE t SET id = id - 10000000 WHERE id >= 10000000'); // back, not timed
    }
    engine.close();
    const medians = Object.fromEntries(
      Object.entries(times).map(([kind, t]) => [`${kind}_cpu_ms`, quantiles(t).median_ms]),
    );
    console.log(
      JSON.stringify({
        bench: 'dml-by-key',
        mode: 'bulk',
        engine: root,
        keyed,
        rows: ROWS,
        bulk: BULK,
        rounds: ROUNDS,
        ...medians,
      }),
    );
  }
}
