// UUID and BYTEA views against SQLite (its own comparison, not ours): uuids are SQLite text in the
// canonical form and byte strings SQLite blobs (memcmp order, as PostgreSQL's bytea). Rows arrive with
// uuids and bytes in random input spellings, are updated and deleted batch by batch, and after every
// batch each view (GROUP BY, MIN/MAX, filters by order, a join on uuid, Top-N by bytes) equals SQLite.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Engine } from '../src/index.ts';
import type { Value } from '../src/common/types.ts';
import { rowsAsText } from './support/sqlite-oracle.ts';
import { LcgRng } from './support/lcg-rng.ts';

const UUIDS = [
  '00000000-0000-0000-0000-000000000000',
  '7fffffff-ffff-ffff-ffff-ffffffffffff',
  '80000000-0000-0000-0000-000000000001',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
];
const BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff];
// SQLite's blob as Sluice prints a bytea
const HEX = (col: string): string => `'\\x' || lower(hex(${col}))`;

const VIEWS: readonly { name: string; sluice: string; sqlite: string }[] = [
  {
    name: 'by_u',
    sluice: 'SELECT u, COUNT(*) AS c, SUM(n) AS s, MIN(b) AS mn, MAX(b) AS mx FROM ev GROUP BY u',
    sqlite: `SELECT u, COUNT(*) AS c, SUM(n) AS s, ${HEX('MIN(b)')} AS mn, ${HEX('MAX(b)')} AS mx FROM ev GROUP BY u`,
  },
  {
    name: 'by_b',
    sluice: "SELECT b, length(b) AS len, encode(b, 'hex') AS h, COUNT(*) AS c FROM ev GROUP BY b",
    sqlite: `SELECT ${HEX('b')} AS b, length(b) AS len, lower(hex(b)) AS h, COUNT(*) AS c FROM ev GROUP BY b`,
  },
  {
    name: 'ranged',
    sluice:
      "SELECT id, b || '\\x00'::bytea AS b0 FROM ev WHERE b > '\\x01'::bytea AND u < '80000000-0000-0000-0000-000000000001'",
    sqlite: `SELECT id, ${HEX('b')} || '00' AS b0 FROM ev WHERE b > x'01' AND u < '80000000-0000-0000-0000-000000000001'`,
  },
  {
    name: 'owned',
    sluice: 'SELECT e.id, o.name FROM ev e JOIN owners o ON o.u = e.u',
    sqlite: 'SELECT e.id, o.name FROM ev e JOIN owners o ON o.u = e.u',
  },
  {
    name: 'top',
    sluice: 'SELECT id, b, u FROM ev ORDER BY b DESC, u, id LIMIT 3',
    sqlite: `SELECT id, ${HEX('b')} AS b, u FROM ev ORDER BY ev.b DESC, u, id LIMIT 3`,
  },
];

/** A uuid in one of PostgreSQL's input spellings. */
function spellUuid(rng: LcgRng, u: string): string {
  const bare = u.replace(/-/g, '');
  return rng.pick([u, u.toUpperCase(), bare, `{${u}}`, `{${bare.toUpperCase()}}`]);
}

/** Bytes in the hex (either case) or the escape input format. */
function spellBytes(rng: LcgRng, bytes: readonly number[]): string {
  const hex = Buffer.from(bytes).toString('hex');
  const form = rng.int(3);
  if (form === 0) return `\\x${hex}`;
  if (form === 1) return `\\X${hex.toUpperCase()}`;
  return bytes.map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
}

const cell = (v: unknown): string => (v === null || v === undefined ? 'NULL' : String(v));

test('uuid and bytea views equal SQLite (text uuids, blobs) after every batch', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const rng = new LcgRng(seed);
    const engine = new Engine();
    const db = new Database(':memory:');
    engine.execute('CREATE TABLE ev (id INT PRIMARY KEY, u UUID, b BYTEA, n INT)');
    engine.execute('CREATE TABLE owners (u UUID, name TEXT)');
    db.exec('CREATE TABLE ev (id INTEGER PRIMARY KEY, u TEXT, b BLOB, n INTEGER)');
    db.exec('CREATE TABLE owners (u TEXT, name TEXT)');
    const owners = UUIDS.slice(1, 4).map((u, i) => ({ u, name: `o${i}` }));
    engine.applyChanges('owners', { insert: owners.map((o) => ({ u: spellUuid(rng, o.u), name: o.name })) });
    for (const o of owners) db.prepare('INSERT INTO owners VALUES (?, ?)').run(o.u, o.name);
    for (const v of VIEWS) engine.execute(`CREATE MATERIALIZED VIEW ${v.name} AS ${v.sluice}`);
    const live = new Set<number>();
    let nextId = 0;
    let checks = 0;
    for (let epoch = 0; epoch < 30; epoch++) {
      const insert: { id: number; u: Value; b: Value; n: number; bytes: number[]; canon: string }[] = [];
      const del: { id: number }[] = [];
      const ids = [...live];
      for (let i = rng.int(6); i > 0; i--) {
        const id = rng.int(3) === 0 && ids.length > 0 ? rng.pick(ids) : nextId++;
        if (live.has(id) && !del.some((d) => d.id === id)) del.push({ id });
        if (insert.some((r) => r.id === id)) continue;
        const canon = rng.pick(UUIDS);
        const bytes = Array.from({ length: rng.int(3) }, () => rng.pick(BYTES));
        insert.push({
          id,
          u: spellUuid(rng, canon),
          b: spellBytes(rng, bytes),
          n: rng.int(10),
          bytes,
          canon,
        });
      }
      for (let i = rng.int(3); i > 0 && ids.length > 0; i--) {
        const id = rng.pick(ids);
        if (!del.some((d) => d.id === id) && !insert.some((r) => r.id === id)) del.push({ id });
      }
      engine.applyChanges('ev', { insert: insert.map(({ id, u, b, n }) => ({ id, u, b, n })), delete: del });
      for (const d of del) {
        db.prepare('DELETE FROM ev WHERE id = ?').run(d.id);
        live.delete(d.id);
      }
      for (const r of insert) {
        db.prepare('INSERT INTO ev VALUES (?, ?, ?, ?)').run(r.id, r.canon, Buffer.from(r.bytes), r.n);
        live.add(r.id);
      }
      for (const v of VIEWS) {
        const actual = rowsAsText(engine.viewSnapshot(v.name).rows, cell);
        const expected = rowsAsText(db.prepare(v.sqlite).all() as Record<string, unknown>[], cell);
        assert.deepEqual(actual, expected, `seed ${seed}, epoch ${epoch}, view ${v.name}`);
        checks++;
      }
    }
    assert.equal(checks, 30 * VIEWS.length);
    db.close();
  }
});
