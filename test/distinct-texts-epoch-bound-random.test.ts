// Random writes into the table of a DISTINCT that a view joins, over NUMERIC values written with
// several scales (1.5, 1.50, 1.500 are one value; the DISTINCT shows the text of smallest scale it
// holds): a write is refused exactly when it changes more than the bound's view rows, as an engine
// with no bound shows. The count took one row per value the write touches: a value whose shown text
// changes (1.50 held, 1.5 written) retracts and inserts every joined row, twice what it counted (an
// accepted write past the bound), and a value held whose text stays changes nothing (a refused
// write that built no row).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../src/index.ts';

import { changedRows, drawFrom, sorted } from './support/epoch-bound.ts';

const LIMIT = 40;
const TEXTS = ['1.5', '1.50', '1.500', '2', '2.0', '3.25', '3.250'];

const VIEWS = [
  'SELECT big.x, d.v FROM big JOIN (SELECT DISTINCT v FROM s) d ON big.v = d.v',
  'SELECT big.x, d.v, d.w FROM big JOIN (SELECT DISTINCT v, w FROM s) d ON big.v = d.v',
];

type Row = { v: string; w: number };

const snapshot = (e: Engine): string[] =>
  sorted(e.viewSnapshot('v').rows.map((r) => ({ ...r, v: String(r.v) })));

for (const view of VIEWS) {
  test(`refused exactly when the write changes more than the bound: ${view}`, () => {
    const draw = drawFrom(3);
    const bounded = new Engine({ maxEpochJoinRows: LIMIT });
    const free = new Engine({ maxEpochJoinRows: Number.MAX_SAFE_INTEGER });
    for (const e of [bounded, free]) {
      e.execute('CREATE TABLE big (v NUMERIC, x BIGINT); CREATE TABLE s (v NUMERIC, w BIGINT)');
      e.execute(`CREATE MATERIALIZED VIEW v AS ${view}`);
      // 15 outer rows under each of 1.5, 2 and 3.25 (a write of 20 builds at most 20 rows).
      for (let at = 0; at < 45; at += 15)
        e.applyChanges('big', {
          insert: Array.from({ length: 15 }, (_, i) => ({
            v: ['1.5', '2', '3.25'][at / 15] as string,
            x: at + i,
          })),
        });
    }
    const held: Row[] = [];
    let accepted = 0;
    let refused = 0;
    let textChanged = 0;
    for (let step = 0; step < 250; step++) {
      const inserts: Row[] = [];
      const deletes: Row[] = [];
      for (let j = 1 + draw(2); j > 0; j--) {
        const row = held[draw(Math.max(held.length, 1))];
        if (draw(2) === 0 && row !== undefined && !deletes.includes(row)) deletes.push(row);
        else inserts.push({ v: TEXTS[draw(TEXTS.length)] as string, w: draw(2) });
      }
      const changes = { insert: inserts, delete: deletes.map((r) => ({ ...r })) };
      const before = snapshot(free);
      free.applyChanges('s', changes);
      const after = snapshot(free);
      const changed = changedRows(before, after);
      try {
        bounded.applyChanges('s', changes);
      } catch (error) {
        assert.equal((error as { code?: string }).code, 'EPOCH_TOO_LARGE');
        assert.ok(changed > LIMIT, `step ${step}: refused, ${changed} view rows changed`);
        refused++;
        free.applyChanges('s', { insert: deletes.map((r) => ({ ...r })), delete: inserts });
        continue;
      }
      assert.ok(changed <= LIMIT, `step ${step}: accepted, ${changed} view rows changed`);
      accepted++;
      if (changed > 0 && before.length === after.length) textChanged++;
      for (const row of deletes) held.splice(held.indexOf(row), 1);
      held.push(...inserts);
      assert.deepEqual(snapshot(bounded), after);
    }
    assert.ok(refused > 10 && accepted > 100, `${accepted} accepted, ${refused} refused`);
    // Writes that change only which text shows are among those accepted.
    assert.ok(textChanged > 5, `${textChanged} accepted writes changed a shown text alone`);
  });
}
