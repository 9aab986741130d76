// A join side read from a keyed table's rows keeps the columns it emits by slot: a row set in place
// of its key's row keeps its slot, so its cells are rewritten even in a step whose delta inserts no
// more rows than the table took new slots (a row deleted and put back unchanged takes a new slot
// while the consolidated change leaves its pair out).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Value } from '../common/types.ts';
import { SlotRowMap } from './slot-row-map.ts';
import { TableJoinSide, tableSideWork } from './join-table-side.ts';

type Row = readonly Value[];

test('kept cells follow a row replaced in place in the step that also puts a row back', () => {
  const table = new SlotRowMap<Value>(undefined, undefined, (row) => row[0] as Value);
  const row = (id: number, category: string): Row => [id, category];
  for (let id = 0; id < 10; id++) table.set(id, row(id, `c${id}`));
  const side = new TableJoinSide(() => table, 'R');
  const at = side.keepColumns([1]);
  assert.deepEqual(at, [0]);
  const keyOf = (r: Row): number => r[0] as number;
  // One step: 3 deleted and put back unchanged (a new slot, no change in the delta), 5 changed in
  // place (its slot kept): one insert in the delta, one new slot.
  table.delete(3);
  table.set(3, row(3, 'c3'));
  const old5 = table.get(5) as Row;
  table.set(5, row(5, 'changed'));
  side.sync({ rows: [old5, row(5, 'changed')], weights: [-1, 1], consolidated: true }, keyOf);
  const kept = side.keptColumns[0] as readonly Value[];
  assert.equal(kept[side.slotOf(5)], 'changed');
  assert.equal(kept[side.slotOf(3)], 'c3');
  // A step with new slots only reads no key.
  table.set(10, row(10, 'c10'));
  side.sync({ rows: [row(10, 'c10')], weights: [1], consolidated: true }, () => {
    throw new Error('no key is read when no row was replaced in place');
  });
  // Its cell is written when the probe reads the cells (`keptColumns`).
  assert.equal((side.keptColumns[0] as readonly Value[])[side.slotOf(10)], 'c10');
});

test('kept cells of new slots wait for the probe that reads them, then are written once', () => {
  const table = new SlotRowMap<Value>(4, 1, (row) => row[0] as Value);
  const side = new TableJoinSide(() => table, 'R');
  assert.deepEqual(side.keepColumns([1]), [0]);
  const keyOf = (r: Row): number => r[0] as number;
  const row = (id: number, category: string | null): Row => [id, category];
  const before = tableSideWork.keptWrites;
  // Steps that fill the table while nothing probes it write no cell.
  for (let id = 0; id < 6; id++) {
    table.set(id, row(id, id === 2 ? null : `c${id}`));
    side.sync({ rows: [row(id, id === 2 ? null : `c${id}`)], weights: [1], consolidated: true }, keyOf);
  }
  assert.equal(tableSideWork.keptWrites, before);
  // A row replaced in place while cells wait: the step writes the waiting cells and the replaced one.
  const old4 = table.get(4) as Row;
  table.set(4, row(4, 'changed'));
  side.sync({ rows: [old4, row(4, 'changed')], weights: [-1, 1], consolidated: true }, keyOf);
  assert.equal(tableSideWork.keptWrites, before + 6);
  table.delete(1);
  table.set(1, row(1, 'again'));
  side.sync({ rows: [row(1, 'c1'), row(1, 'again')], weights: [-1, 1], consolidated: true }, keyOf);
  assert.equal(tableSideWork.keptWrites, before + 6);
  // The probe's read writes the one waiting slot, once.
  const cell = (id: number): Value | undefined => (side.keptColumns[0] as readonly Value[])[side.slotOf(id)];
  assert.deepEqual([0, 1, 2, 3, 4, 5].map(cell), ['c0', 'again', null, 'c3', 'changed', 'c5']);
  assert.equal(tableSideWork.keptWrites, before + 7);
  // Slots squeezed while cells wait (a compaction): rebuilt whole, read as they are.
  for (let id = 0; id < 6; id++) table.delete(id);
  for (let id = 10; id < 14; id++) table.set(id, row(id, `c${id}`));
  table.compact();
  side.sync({ rows: [], weights: [], consolidated: true }, keyOf);
  assert.deepEqual([10, 11, 12, 13].map(cell), ['c10', 'c11', 'c12', 'c13']);
});
