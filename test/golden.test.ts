// Golden tests: runs every test/golden/*.slt file against a fresh engine, one node:test test per file
// and one subtest per record. SLUICE_REWRITE=1 rewrites every ---- block with the actual output, in
// place, so expected-output changes are reviewed as diffs like code. SLUICE_GOLDEN=<substring> runs
// only the matching files.
//
// Format (full description with examples in test/golden/README.md). Records are separated by blank
// lines; lines starting with `#` are comments. Expected output follows a `----` line up to the next
// blank line.
//   statement ok | statement error CODE      SQL lines; optional ---- block: `message` and, when the
//                                            error has one, `at line L, column C`
//   insert T | delete T [error CODE]         one JSON object per line; the block is ONE batch (epoch)
//   update T [error CODE]                    lines `{old} -> {new}`: one batch deleting olds, inserting news
//   batch T [error CODE]                     lines `+ {row}` / `- {row}`: a mixed batch
//   query NAME | query <SELECT...>           ---- rows sorted, cells ` | `-separated, NULL, (empty) for '';
//                                            a bare name reads the view snapshot, anything else runs SQL;
//                                            a failure prints `error CODE`
//   schema VIEW                              ---- `name type [not null]` per column, then `key: a, b|none`
//   changes VIEW                             ---- the view's consolidated change set of the LAST epoch,
//                                            sorted by key then -D -U +U +I; `(none)` if it did not change
//   errors VIEW                              ---- the view's row errors, sorted; `(none)` if none
//   explain | explain dataflow               SELECT lines; ---- the plan text verbatim
//   epoch N                                  asserts the engine's current epoch
//   clock TIMESTAMPTZ                        sets the engine's manual clock (it starts at 1970-01-01
//                                            00:00 UTC) and ticks: an epoch when a temporal filter's
//                                            bound is crossed
//   halt                                     stops the file here (debugging)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine, SluiceError } from '../src/index.ts';
import { ManualClock } from '../src/exec/logical-clock.ts';
import { parseTimestamptz } from '../src/common/time/datetime.ts';
import { instantMicros } from '../src/common/time/instant-micros.ts';
import type { ViewChangeSet } from '../src/exec/api.ts';
import type { ColumnInfo, Row } from '../src/common/types.ts';
import type { EngineLike } from './support/engine-like.ts';
import {
  formatChanges,
  formatError,
  formatRows,
  parseRow,
  parseSlt,
  type Block,
  type Record_,
} from './support/slt.ts';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'golden');
const REWRITE = process.env['SLUICE_REWRITE'] === '1';
const ONLY = process.env['SLUICE_GOLDEN'];
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.slt') && (ONLY === undefined || f.includes(ONLY)))
  .sort();

interface Watched {
  last: ViewChangeSet | undefined;
  columns: readonly ColumnInfo[] | undefined;
  key: readonly string[] | null;
  unsubscribe: () => void;
}

class GoldenRun {
  /** Every file runs on a manual clock: temporal filters move only at `clock` records. */
  readonly clock = new ManualClock();
  readonly engine: EngineLike & Pick<Engine, 'tick'> = new Engine({ clock: this.clock });
  readonly watched = new Map<string, Watched>();
  readonly rewrites: { block: Block; text: string }[] = [];

  /** Subscribes to every view a statement creates, so `changes` can show the last epoch. */
  watchCreated(sql: string): void {
    for (const m of sql.matchAll(/create\s+materialized\s+view\s+(?:if\s+not\s+exists\s+)?("?)(\w+)\1/gi)) {
      const name = m[2]!.toLowerCase();
      this.watched.get(name)?.unsubscribe();
      let columns: readonly ColumnInfo[] | undefined;
      let key: readonly string[] | null = null;
      try {
        const snap = this.engine.viewSnapshot(name);
        columns = snap.columns;
        key = snap.key;
      } catch {
        // A view holding row errors has no snapshot; changes then print columns in row order.
      }
      const w: Watched = { last: undefined, columns, key, unsubscribe: () => {} };
      w.unsubscribe = this.engine.subscribe(name, (cs) => {
        w.last = cs;
      });
      this.watched.set(name, w);
    }
  }

  check(block: Block, actual: string, what: string): void {
    if (REWRITE) {
      if (actual !== block.text) this.rewrites.push({ block, text: actual });
      return;
    }
    assert.equal(actual, block.text, `${what}: output differs from the golden block`);
  }

  private changesFor(
    table: string,
    lines: readonly string[],
    verb: string,
  ): { insert: Row[]; delete: Row[] } {
    const insert: Row[] = [];
    const del: Row[] = [];
    for (const l of lines) {
      const t = l.trim();
      if (verb === 'insert') insert.push(parseRow(t));
      else if (verb === 'delete') del.push(parseRow(t));
      else if (verb === 'update') {
        const at = t.indexOf('} -> {');
        if (at < 0) throw new Error(`update ${table}: expected "{old} -> {new}", got ${t}`);
        del.push(parseRow(t.slice(0, at + 1)));
        insert.push(parseRow(t.slice(at + 5)));
      } else if (t.startsWith('+')) insert.push(parseRow(t.slice(1).trim()));
      else if (t.startsWith('-')) del.push(parseRow(t.slice(1).trim()));
      else throw new Error(`batch ${table}: lines start with + or -, got ${t}`);
    }
    return { insert, delete: del };
  }

  run(r: Record_): void {
    const e = this.engine;
    switch (r.verb) {
      case 'statement': {
        if (r.expectError === undefined) {
          e.execute(r.sql);
          this.watchCreated(r.sql);
          return;
        }
        const err = catchSluice(() => e.execute(r.sql), `statement expected to fail with ${r.expectError}`);
        assert.equal(err.code, r.expectError, `wrong error code (message: ${err.message})`);
        if (r.block !== undefined) {
          const pos =
            err.position !== undefined ? `\nat line ${err.position.line}, column ${err.position.column}` : '';
          this.check(r.block, `${err.message}${pos}`, 'error message');
        }
        return;
      }
      case 'insert':
      case 'delete':
      case 'update':
      case 'batch': {
        const changes = this.changesFor(r.table, r.rows, r.verb);
        const before = e.epoch;
        if (r.expectError === undefined) {
          const res = e.applyChanges(r.table, changes);
          assert.equal(res.epoch, before + 1, 'a batch is one epoch');
          assert.equal(e.epoch, before + 1);
          return;
        }
        const rowCount = (): number | undefined => {
          try {
            return e.tableRows(r.table).length;
          } catch {
            return undefined;
          }
        };
        const rowsBefore = rowCount();
        const err = catchSluice(
          () => e.applyChanges(r.table, changes),
          `batch expected to fail with ${r.expectError}`,
        );
        assert.equal(err.code, r.expectError, `wrong error code (message: ${err.message})`);
        assert.equal(e.epoch, before, 'a rejected batch must not advance the epoch');
        assert.equal(rowCount(), rowsBefore, 'a rejected batch must apply nothing');
        return;
      }
      case 'query': {
        let text: string;
        try {
          if (/^\w+$/.test(r.target)) {
            const snap = e.viewSnapshot(r.target);
            text = formatRows(snap.columns, snap.rows);
          } else {
            const results = e.execute(r.target);
            const last = results[results.length - 1];
            text = formatRows(last?.columns, last?.rows ?? []);
          }
        } catch (err) {
          if (!(err instanceof SluiceError)) throw err;
          text = `error ${err.code}`;
        }
        this.check(r.block, text, `query ${r.target}`);
        return;
      }
      case 'schema': {
        const snap = e.viewSnapshot(r.view);
        const lines = snap.columns.map((c) => `${c.name} ${c.type}${c.nullable ? '' : ' not null'}`);
        lines.push(`key: ${snap.key === null ? 'none' : snap.key.length === 0 ? '()' : snap.key.join(', ')}`);
        this.check(r.block, lines.join('\n'), `schema ${r.view}`);
        return;
      }
      case 'changes': {
        const w = this.watched.get(r.view.toLowerCase());
        if (w === undefined)
          throw new Error(`changes ${r.view}: the view was not created by a "statement ok" record`);
        const cs = w.last !== undefined && w.last.epoch === e.epoch ? w.last : undefined;
        this.check(
          r.block,
          cs === undefined ? '(none)' : formatChanges(w.columns, w.key, cs),
          `changes ${r.view}`,
        );
        return;
      }
      case 'errors': {
        const errs = e.viewErrors(r.view).map(formatError).sort();
        this.check(r.block, errs.length === 0 ? '(none)' : errs.join('\n'), `errors ${r.view}`);
        return;
      }
      case 'explain': {
        const results = e.execute(`EXPLAIN ${r.dataflow ? 'DATAFLOW ' : ''}${r.sql}`);
        const plan = results[results.length - 1]?.plan;
        assert.ok(plan !== undefined, 'EXPLAIN returned no plan text');
        this.check(r.block, plan.trimEnd(), 'explain');
        return;
      }
      case 'epoch':
        assert.equal(e.epoch, r.expected, 'epoch');
        return;
      case 'clock': {
        const text = parseTimestamptz(r.time);
        if (text === null) throw new Error(`line ${r.line}: not a timestamptz: ${r.time}`);
        this.clock.set(instantMicros(text));
        this.engine.tick();
        return;
      }
      case 'halt':
        return;
    }
  }
}

function catchSluice(fn: () => unknown, what: string): SluiceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SluiceError) return err;
    throw err;
  }
  assert.fail(`${what}, but it succeeded`);
}

function applyRewrites(
  path: string,
  text: string,
  rewrites: readonly { block: Block; text: string }[],
): void {
  const lines = text.split('\n');
  for (const { block, text: t } of [...rewrites].sort((a, b) => b.block.start - a.block.start)) {
    lines.splice(block.start, block.end - block.start, ...(t === '' ? [] : t.split('\n')));
  }
  writeFileSync(path, lines.join('\n'));
}

test('golden: there are .slt files to run', () => {
  assert.ok(files.length > 0, `no .slt files in ${dir}`);
});

for (const file of files) {
  test(`golden ${file}`, async (t) => {
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    const records = parseSlt(text);
    const run = new GoldenRun();
    for (const r of records) {
      if (r.verb === 'halt') break;
      const label = `${file}:${r.line} ${r.verb}${'view' in r ? ` ${r.view}` : 'table' in r ? ` ${r.table}` : ''}`;
      await t.test(label, () => run.run(r));
    }
    if (REWRITE && run.rewrites.length > 0) {
      applyRewrites(path, text, run.rewrites);
      console.log(`rewrote ${run.rewrites.length} block(s) in ${file}`);
    }
  });
}
