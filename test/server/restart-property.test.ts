// Whatever the server accepts, a restart reproduces: random DDL, SQL DML and REST ingest whose
// identifiers, literals and values are drawn from hostile text (lone UTF-16 surrogates, NUL,
// quotes, backslashes, astral characters, line breaks) go to a real server; each request is either
// refused with a 4xx and no effect, or accepted — and then the catalog, every table and every view
// read the same after a SIGTERM restart and after a SIGKILL restart. (A lone surrogate once went
// into the journal as other bytes than its checksum covered, and no later start succeeded.)
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { type CrashableServer, killHard, spawnCrashable } from '../support/crash-harness.ts';
import { removeDir, request, sql, tempDir } from './helpers.ts';

const RUNS = Number(process.env.SLUICE_PROP_RUNS ?? 6);

const live: CrashableServer[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of live) await killHard(s);
  for (const d of dirs) removeDir(d);
});

const nasty = fc.constantFrom(
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '\u0000',
  '\n',
  '"',
  "'",
  '\\',
  'é',
  '\u2028',
  ' ',
);
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const text = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('a', 'b', 'x', '1') },
      { weight: 2, arbitrary: nasty },
      codeUnit,
    ),
    {
      minLength: 1,
      maxLength: 6,
    },
  )
  .map((parts) => parts.join(''));

const quoteIdent = (s: string): string => `"${s.replaceAll('"', '""')}"`;
const quoteLiteral = (s: string): string => `'${s.replaceAll("'", "''")}'`;

type Op =
  | { kind: 'table'; name: string; column: string }
  | { kind: 'view'; name: string; table: number; literal: string }
  | { kind: 'ingest'; table: number; values: string[]; extraKey: string | null }
  | { kind: 'insert'; table: number; value: string }
  | { kind: 'delete'; table: number; value: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('table' as const), name: text, column: text }),
  fc.record({ kind: fc.constant('view' as const), name: text, table: fc.nat(3), literal: text }),
  fc.record({
    kind: fc.constant('ingest' as const),
    table: fc.nat(3),
    values: fc.array(text, { minLength: 1, maxLength: 4 }),
    extraKey: fc.option(text, { freq: 4 }),
  }),
  fc.record({ kind: fc.constant('insert' as const), table: fc.nat(3), value: text }),
  fc.record({ kind: fc.constant('delete' as const), table: fc.nat(3), value: text }),
);

interface Table {
  readonly name: string;
  readonly column: string;
}

let nextKey = 1;
const tally = { accepted: 0, refused: 0 };

async function run(base: string, ops: readonly Op[], tables: Table[]): Promise<void> {
  for (const o of ops) {
    const table = tables.length === 0 ? undefined : tables[('table' in o ? o.table : 0) % tables.length];
    let r;
    switch (o.kind) {
      case 'table':
        r = await sql(
          base,
          `CREATE TABLE ${quoteIdent(o.name)} (k INTEGER PRIMARY KEY, ${quoteIdent(o.column)} TEXT)`,
        );
        if (r.status === 200) tables.push({ name: o.name, column: o.column });
        break;
      case 'view':
        if (table === undefined) continue;
        r = await sql(
          base,
          `CREATE MATERIALIZED VIEW ${quoteIdent(o.name)} AS SELECT ${quoteIdent(table.column)} AS c, COUNT(*) AS n FROM ${quoteIdent(table.name)} WHERE ${quoteIdent(table.column)} <> ${quoteLiteral(o.literal)} GROUP BY ${quoteIdent(table.column)}`,
        );
        break;
      case 'ingest': {
        if (table === undefined) continue;
        const rows = o.values.map((v) => {
          const row: Record<string, unknown> = { k: nextKey++, [table.column]: v };
          if (o.extraKey !== null) row[o.extraKey] = 1;
          return row;
        });
        // Not encodeURIComponent: it throws on a lone surrogate; the server must answer it.
        r = await request(
          base,
          'POST',
          `/v1/tables/${encodeURIComponent(table.name.toWellFormed())}/rows`,
          rows,
        );
        break;
      }
      case 'insert':
        if (table === undefined) continue;
        r = await sql(
          base,
          `INSERT INTO ${quoteIdent(table.name)} VALUES (${nextKey++}, ${quoteLiteral(o.value)})`,
        );
        break;
      case 'delete':
        if (table === undefined) continue;
        r = await sql(
          base,
          `DELETE FROM ${quoteIdent(table.name)} WHERE ${quoteIdent(table.column)} = ${quoteLiteral(o.value)}`,
        );
        break;
    }
    assert.ok(
      r.status === 200 || (r.status >= 400 && r.status < 500),
      `a 200 or a 4xx, got ${r.status}: ${r.text}`,
    );
    if (r.status === 200) tally.accepted++;
    else tally.refused++;
  }
}

/** Everything a client can read: the catalog and the rows of every table and view, canonically. */
async function state(base: string): Promise<string> {
  const out: string[] = [];
  for (const kind of ['tables', 'views'] as const) {
    const list = await request(base, 'GET', `/v1/${kind}`);
    assert.equal(list.status, 200, list.text);
    const items = list.body[kind] as { name: string }[];
    for (const { name } of [...items].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rows = await sql(base, `SELECT * FROM ${quoteIdent(name)}`);
      assert.equal(rows.status, 200, rows.text);
      const canonical = (rows.body.results as { rows: unknown[] }[])[0]?.rows
        .map((r) => JSON.stringify(r))
        .sort();
      out.push(`${kind} ${JSON.stringify(name)}: ${JSON.stringify(canonical)}`);
    }
  }
  return out.join('\n');
}

async function start(dir: string): Promise<CrashableServer> {
  const outcome = await spawnCrashable(dir, {
    args: ['--checkpoint-interval-ms', '100', '--checkpoint-epochs', '3'],
  });
  if (outcome.kind !== 'listening') throw new Error(`the server did not start again:\n${outcome.output}`);
  live.push(outcome.server);
  return outcome.server;
}

test('whatever the server accepts, a SIGTERM and a SIGKILL restart reproduce', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 24 }), async (ops) => {
      const dir = tempDir('sluice-restart-prop-');
      dirs.push(dir);
      const tables: Table[] = [];
      let server = await start(dir);
      try {
        await run(server.base, ops, tables);
        const before = await state(server.base);
        server.child.kill('SIGTERM');
        assert.equal((await server.exited).code, 0, server.output());
        server = await start(dir);
        assert.equal(await state(server.base), before, 'after a SIGTERM restart');
        // More of the same, then a kill with no clean stop.
        await run(server.base, ops.slice(0, 6), tables);
        const beforeKill = await state(server.base);
        await killHard(server);
        server = await start(dir);
        assert.equal(await state(server.base), beforeKill, 'after a SIGKILL restart');
      } finally {
        await killHard(server);
        removeDir(dir);
      }
    }),
    {
      numRuns: RUNS,
      ...(process.env.SLUICE_FC_SEED !== undefined ? { seed: Number(process.env.SLUICE_FC_SEED) } : {}),
    },
  );
  // Both happened: the property saw hostile text accepted and hostile text refused.
  assert.ok(tally.accepted > 0 && tally.refused > 0, `accepted ${tally.accepted}, refused ${tally.refused}`);
});
