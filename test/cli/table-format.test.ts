// The shell's table formatter: alignment by terminal columns (wide CJK and emoji, combining marks),
// numbers right-aligned by column type, NULL as its own marker, control characters escaped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cellText,
  displayWidth,
  escapeControls,
  formatTable,
  rowsFooter,
} from '../../src/cli/table-format.ts';

test('numbers right-aligned, text left, NULL distinct, header and rule', () => {
  const lines = formatTable(
    [
      { name: 'id', type: 'bigint' },
      { name: 'name', type: 'text' },
      { name: 'price', type: 'double precision' },
    ],
    [
      { id: 1, name: 'apple', price: 1.5 },
      { id: 12345, name: null, price: null },
      { id: '9223372036854775807', name: 'big', price: -0.25 },
    ],
  );
  assert.deepEqual(lines, [
    '                  id | name  | price',
    '---------------------+-------+-------',
    '                   1 | apple |   1.5',
    '               12345 | NULL  |  NULL',
    ' 9223372036854775807 | big   | -0.25',
  ]);
});

test('a NULL marker of choice, booleans and empty strings', () => {
  const lines = formatTable(
    [
      { name: 'b', type: 'boolean' },
      { name: 's', type: 'text' },
    ],
    [
      { b: true, s: '' },
      { b: null, s: null },
    ],
    { nullText: '∅' },
  );
  assert.deepEqual(lines, [' b    | s', '------+---', ' true |', ' ∅    | ∅']);
});

test('wide and combining characters are measured in terminal columns', () => {
  assert.equal(displayWidth('日本'), 4);
  assert.equal(displayWidth('😀'), 2);
  assert.equal(displayWidth('e\u0301'), 1); // e + combining acute
  const lines = formatTable(
    [
      { name: 'city', type: 'text' },
      { name: 'n', type: 'integer' },
    ],
    [
      { city: '東京', n: 1 },
      { city: 'Zürich', n: 22 },
      { city: 'Mu\u0308nchen 😀', n: 333 },
    ],
  );
  assert.deepEqual(lines, [
    ' city       |   n',
    '------------+-----',
    ' 東京       |   1',
    ' Zürich     |  22',
    ' Mu\u0308nchen 😀 | 333',
  ]);
  // Every separator sits at the same terminal column.
  const bars = lines.map((l) => displayWidth(l.slice(0, l.indexOf(l.includes('|') ? '|' : '+'))));
  assert.deepEqual(new Set(bars).size, 1);
});

test('control characters in data cannot break a row or reach the terminal', () => {
  assert.equal(escapeControls('a\nb\tc\r'), 'a\\nb\\tc\\r');
  assert.equal(escapeControls('\u001b[31mred'), '\\x1b[31mred');
  assert.equal(escapeControls('x\u202ey'), 'x\\u202ey');
  const lines = formatTable([{ name: 'v\n', type: 'text' }], [{ 'v\n': 'two\nlines\u001b[2J' }]);
  assert.equal(lines.length, 3);
  assert.ok(lines.every((l) => !/[\u0000-\u001f]/.test(l)));
  assert.equal(lines[2], ' two\\nlines\\x1b[2J');
  assert.equal(cellText({ nested: [1] }), '{"nested":[1]}');
});

test('an empty result still has its header; the footer counts rows and names the epoch', () => {
  assert.deepEqual(formatTable([{ name: 'a', type: 'integer' }], []), [' a', '---']);
  assert.equal(rowsFooter(0), '(0 rows)');
  assert.equal(rowsFooter(1), '(1 row)');
  assert.equal(rowsFooter(2, 7), '(2 rows, epoch 7)');
});
