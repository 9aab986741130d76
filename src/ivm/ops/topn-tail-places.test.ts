import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TailPlaces } from './topn-tail-places.ts';

test('tail places by key: small ints, sparse ints, -0, bigints, text and doubles, noted, replaced and dropped', () => {
  const places = new TailPlaces();
  places.set(5, 3, 10);
  places.set(-0, 7, 10);
  places.set(2 ** 40, 1, 10); // past any direct table: the Map
  places.set(1 << 30, 2, 10); // an int too large for 4 cells per row held: the Map
  places.set(12345678901234567890n, 4, 10);
  places.set('bid-9', 6, 10);
  places.set(1.5, 8, 10);
  assert.equal(places.get(5), 3);
  assert.equal(places.get(0), 7);
  assert.equal(places.get(2 ** 40), 1);
  assert.equal(places.get(1 << 30), 2);
  assert.equal(places.get(12345678901234567890n), 4);
  assert.equal(places.get('bid-9'), 6);
  assert.equal(places.get(1.5), 8);
  assert.equal(places.get(6), -1);
  assert.equal(places.get('bid-8'), -1);
  places.set(5, 9, 10);
  assert.equal(places.get(5), 9);
  places.delete(5);
  places.delete('bid-9');
  assert.equal(places.get(5), -1);
  assert.equal(places.get('bid-9'), -1);
});

test('tail places: an int noted in the Map stays found once the direct table grows over it', () => {
  const places = new TailPlaces();
  places.set(5000, 1, 0); // few rows held: 5000 is past the direct table's allowance, so the Map
  assert.ok(places.bytes() < 2 * 5000, `${places.bytes()} bytes`);
  places.set(6000, 2, 10_000); // many rows held: the direct table grows to cover both
  assert.ok(places.bytes() >= 2 * 6000, `${places.bytes()} bytes`); // 16-bit cells over 6000 keys
  assert.equal(places.get(5000), 1);
  assert.equal(places.get(6000), 2);
  places.set(5000, 3, 10_000); // noted again in the direct table, the Map's stale note behind it
  assert.equal(places.get(5000), 3);
  places.delete(5000);
  assert.equal(places.get(5000), -1);
});

test('tail places: an index too large for a 16-bit cell is noted in the Map, and found', () => {
  const places = new TailPlaces();
  places.set(7, 70_000, 10); // a long partition sorted in full: its tail starts past 2^16
  assert.equal(places.get(7), 70_000);
  places.set(7, 65_534, 10); // the largest index a cell holds: noted there, the Map's note behind it
  assert.equal(places.get(7), 65_534);
  places.set(7, 65_535, 10); // one more: the Map again, the cell cleared so that the Map is read
  assert.equal(places.get(7), 65_535);
  places.set(8, 3, 10);
  assert.equal(places.get(8), 3);
  places.delete(7);
  assert.equal(places.get(7), -1);
  assert.equal(places.get(8), 3);
});
