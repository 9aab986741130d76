// GET /v1/tables/{name}/rows, the filter operators and `order` of row pages, and
// GET /v1/views/{name}/errors, against a real in-process server over HTTP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestServer, request, sqlOk, startServer } from './helpers.ts';

let server: TestServer;

before(async () => {
  // A small scan budget, so the bound on orders other than the key is reachable with a few rows.
  server = await startServer({ reads: { scanRows: 50 } });
  await sqlOk(
    server.base,
    `CREATE TABLE orders (id BIGINT PRIMARY KEY, seller INT, amount INT, note TEXT, at TIMESTAMP);
     CREATE TABLE tags (tag TEXT, n INT);
     CREATE MATERIALIZED VIEW totals AS SELECT seller, SUM(amount) AS total FROM orders GROUP BY seller;
     CREATE MATERIALIZED VIEW ratios AS SELECT id, 100 / amount AS r FROM orders`,
  );
});

after(async () => {
  await server.close();
});

type Rows = Record<string, unknown>[];

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await request(server.base, 'GET', path);
  return { status: r.status, body: r.body };
}

async function ingest(table: string, body: unknown): Promise<number> {
  const r = await request(server.base, 'POST', `/v1/tables/${table}/rows`, body);
  assert.equal(r.status, 200, r.text);
  return r.body.epoch as number;
}

/** Every page of a read (following `next` with `limit` rows a page); all pages must be 200. */
async function walk(
  path: string,
  limit: number,
): Promise<{ rows: Rows; pages: number; epochs: Set<number> }> {
  const rows: Rows = [];
  const epochs = new Set<number>();
  let next: string | null = null;
  let pages = 0;
  const sep = path.includes('?') ? '&' : '?';
  do {
    const cursor: string = next === null ? '' : `&after=${encodeURIComponent(next)}`;
    const page = await get(`${path}${sep}limit=${limit}${cursor}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    rows.push(...(page.body.rows as Rows));
    epochs.add(page.body.epoch as number);
    next = page.body.next as string | null;
    pages += 1;
    assert.ok(pages < 1000, 'the cursor walk ends');
  } while (next !== null);
  return { rows, pages, epochs };
}

test('GET /v1/tables/{name}/rows pages a keyed table by its key, kept up to date by later batches', async () => {
  const rows = Array.from({ length: 30 }, (_, i) => ({
    id: 30 - i,
    seller: i % 4,
    amount: i + 1,
    note: i % 5 === 0 ? null : `n${i}`,
    at: `2024-01-${String((i % 28) + 1).padStart(2, '0')} 10:00:00`,
  }));
  const epoch = await ingest('orders', rows);
  const first = await get('/v1/tables/orders/rows');
  assert.equal(first.status, 200);
  assert.equal(first.body.epoch, epoch);
  assert.deepEqual(first.body.key, ['id']);
  assert.equal(first.body.total, 30);
  assert.deepEqual(
    (first.body.rows as Rows).map((r) => r.id),
    Array.from({ length: 30 }, (_, i) => i + 1),
  );
  const walked = await walk('/v1/tables/orders/rows', 7);
  assert.equal(walked.pages, 5);
  assert.deepEqual(walked.rows, first.body.rows);

  // The index the first read built follows deletes and key replacements of later batches.
  await ingest('orders', {
    delete: [{ id: 1 }],
    insert: [{ id: 2, seller: 9, amount: 99, note: 'x', at: null }],
  });
  const after = await get('/v1/tables/orders/rows?limit=2');
  assert.deepEqual(after.body.rows, [
    { id: 2, seller: 9, amount: 99, note: 'x', at: null },
    { id: 3, seller: 27 % 4, amount: 28, note: 'n27', at: '2024-01-28 10:00:00' },
  ]);
  assert.equal(after.body.total, 29);
});

test('a keyless table pages its repeated rows once each copy, in all-column order', async () => {
  const epoch = await ingest('tags', [
    { tag: 'b', n: 1 },
    { tag: 'a', n: 2 },
    { tag: 'b', n: 1 },
    { tag: 'a', n: null },
    { tag: 'b', n: 1 },
  ]);
  const page = await get('/v1/tables/tags/rows');
  assert.equal(page.body.epoch, epoch);
  assert.equal(page.body.key, null);
  assert.deepEqual(page.body.rows, [
    { tag: 'a', n: 2 },
    { tag: 'a', n: null },
    { tag: 'b', n: 1 },
    { tag: 'b', n: 1 },
    { tag: 'b', n: 1 },
  ]);
  // A cursor inside a row's copies continues with the next copy.
  assert.deepEqual((await walk('/v1/tables/tags/rows', 2)).rows, page.body.rows);
  await ingest('tags', { delete: [{ tag: 'b', n: 1 }] });
  assert.equal((await get('/v1/tables/tags/rows')).body.total, 4);
  assert.deepEqual((await get('/v1/tables/tags/rows?tag=b')).body.rows, [
    { tag: 'b', n: 1 },
    { tag: 'b', n: 1 },
  ]);
});

test('a table read names what is wrong: unknown table or column, asOf, and changes nothing', async () => {
  const before = (await get('/v1/tables/orders/rows?limit=0')).body.epoch;
  const unknown = await get('/v1/tables/nope/rows');
  assert.equal(unknown.status, 404);
  assert.equal((unknown.body.error as { code: string }).code, 'UNKNOWN_TABLE');
  const column = await get('/v1/tables/orders/rows?amout=1');
  assert.equal(column.status, 400);
  assert.equal((column.body.error as { code: string }).code, 'UNKNOWN_COLUMN');
  assert.match(
    (column.body.error as { message: string }).message,
    /column "amout" does not exist in table "orders"/,
  );
  const asOf = await get('/v1/tables/orders/rows?asOf=1');
  assert.equal(asOf.status, 400);
  assert.equal((await get('/v1/tables/orders/rows?limit=0')).body.epoch, before);
});

test('comparison, range, IN and NULL filters, ANDed per column, typed by the column', async () => {
  const ids = async (query: string): Promise<unknown[]> => {
    const page = await get(`/v1/tables/orders/rows?${query}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    return (page.body.rows as Rows).map((r) => r.id);
  };
  // amounts: id k (k = 3..30) has amount 31 - k; id 2 has 99.
  assert.deepEqual(await ids('amount=gt.27'), [2, 3]);
  assert.deepEqual(await ids('amount=gte.27'), [2, 3, 4]);
  assert.deepEqual(await ids('amount=lt.3'), [29, 30]);
  assert.deepEqual(await ids('amount=lte.3'), [28, 29, 30]);
  assert.deepEqual(await ids('amount=gte.10&amount=lt.12'), [20, 21]);
  assert.deepEqual(await ids('amount=eq.99'), [2]);
  assert.deepEqual(await ids('amount=99'), [2]);
  assert.equal((await ids('amount=neq.99')).length, 28);
  assert.deepEqual(await ids('id=in.(3,5,404)'), [3, 5]);
  assert.deepEqual(await ids('id=in.()'), []);
  assert.deepEqual(await ids('note=in.("n27","n26",x)'), [2, 3, 4]);
  // NULL matches only is.null: not a comparison, not neq, not IN.
  const nullNotes = await ids('note=is.null');
  assert.deepEqual(nullNotes, [5, 10, 15, 20, 25, 30]);
  assert.equal((await ids('note=not.null')).length, 29 - nullNotes.length);
  assert.equal((await ids('note=neq.x')).length, 29 - nullNotes.length - 1);
  assert.deepEqual(await ids('at=is.null'), [2]);
  // Timestamps compare as timestamps, whatever the literal's spelling.
  assert.deepEqual(await ids('at=lt.2024-01-03T10:00'), [29, 30]);
  assert.deepEqual(await ids('at=eq.2024-01-02 10:00:00.000'), [29]);
  // The key range seek and a filter on the same key column together.
  assert.deepEqual(await ids('id=5&id=gt.4'), [5]);
  assert.deepEqual(await ids('id=5&id=gt.5'), []);
});

test('a literal that looks like an operator is matched exactly with eq.', async () => {
  await ingest('tags', [
    { tag: 'gt.5', n: 7 },
    { tag: 'in.(1)', n: 8 },
  ]);
  assert.deepEqual((await get('/v1/tables/tags/rows?tag=eq.gt.5')).body.rows, [{ tag: 'gt.5', n: 7 }]);
  assert.deepEqual((await get('/v1/tables/tags/rows?tag=eq.in.(1)')).body.rows, [{ tag: 'in.(1)', n: 8 }]);
  // Unprefixed, the same text is the operator: tags greater than "5".
  const greater = (await get('/v1/tables/tags/rows?tag=gt.5')).body.rows as Rows;
  assert.ok(greater.every((r) => (r.tag as string) > '5'));
  assert.ok(greater.some((r) => r.tag === 'a'));
});

test('bad filters are 400 with a code, and change nothing', async () => {
  const cases: [string, string][] = [
    ['amount=gt.ten', 'INVALID_VALUE'],
    ['amount=in.(1,x)', 'INVALID_VALUE'],
    ['at=lt.yesterday', 'INVALID_VALUE'],
    ['amount=in.1,2', 'INVALID_REQUEST'],
    ['amount=in.("1)', 'INVALID_REQUEST'],
    ['note=is.nothing', 'INVALID_REQUEST'],
    ['note=not.x', 'INVALID_REQUEST'],
    ['order=amout.desc', 'UNKNOWN_COLUMN'],
  ];
  const epoch = (await get('/v1/tables/orders/rows?limit=0')).body.epoch;
  for (const [query, code] of cases) {
    for (const route of ['/v1/tables/orders/rows', '/v1/views/ratios/rows']) {
      if (route.includes('ratios') && !query.startsWith('order')) continue;
      const r = await get(`${route}?${query}`);
      assert.equal(r.status, 400, `${query}: ${JSON.stringify(r.body)}`);
      assert.equal((r.body.error as { code: string }).code, code, query);
      assert.match((r.body.error as { message: string }).message, /"/, query);
    }
  }
  assert.equal((await get('/v1/tables/orders/rows?limit=0')).body.epoch, epoch);
});

test('order= pages in that order with a cursor; off the key it is bounded by --max-scan-rows', async () => {
  const byTotal = await walk('/v1/views/totals/rows?order=total.desc', 2);
  const totals = (byTotal.rows as { total: number }[]).map((r) => r.total);
  assert.deepEqual(
    totals,
    [...totals].sort((a, b) => b - a),
  );
  assert.equal(byTotal.rows.length, (await get('/v1/views/totals/rows')).body.total);

  // Ties broken by the key, so pages never skip or repeat a row.
  const bySeller = await walk('/v1/tables/orders/rows?order=seller.asc,amount.desc', 3);
  const expected = (
    (await get('/v1/tables/orders/rows')).body.rows as { id: number; seller: number; amount: number }[]
  )
    .slice()
    .sort((a, b) => a.seller - b.seller || b.amount - a.amount || a.id - b.id);
  assert.deepEqual(bySeller.rows, expected);
  // NULLs last ascending, first descending (PostgreSQL).
  const notesDesc = (await get('/v1/tables/orders/rows?order=note.desc&limit=7')).body.rows as Rows;
  assert.deepEqual(
    notesDesc.map((r) => r.note),
    [null, null, null, null, null, null, 'x'],
  );
  const notesAsc = (await walk('/v1/tables/orders/rows?order=note', 4)).rows;
  assert.equal(notesAsc.at(-1)?.note, null);
  assert.equal(notesAsc[0]?.note, 'n1');

  // The key order (also spelled out) is the index walk, at any size.
  const keyOrder = await get('/v1/tables/orders/rows?order=id.asc&limit=3');
  assert.equal(keyOrder.status, 200);
  assert.deepEqual(
    (keyOrder.body.rows as Rows).map((r) => r.id),
    [2, 3, 4],
  );

  // 29 rows: within the scan budget of 50. A table past it refuses another order, unless an
  // equality on the leading key column narrows the range.
  await ingest(
    'tags',
    Array.from({ length: 60 }, (_, i) => ({ tag: `t${i % 3}`, n: i })),
  );
  const refused = await get('/v1/tables/tags/rows?order=n.desc');
  assert.equal(refused.status, 400);
  assert.equal((refused.body.error as { code: string }).code, 'SCAN_TOO_LARGE');
  const narrowed = await walk('/v1/tables/tags/rows?tag=t1&order=n.desc', 6);
  assert.deepEqual(
    narrowed.rows.map((r) => r.n),
    Array.from({ length: 20 }, (_, i) => 58 - 3 * i),
  );
});

test('GET /v1/views/{name}/errors lists the row errors a view holds, paged, and [] when none', async () => {
  const none = await get('/v1/views/totals/errors');
  assert.equal(none.status, 200);
  assert.deepEqual(none.body.errors, []);
  assert.equal(none.body.total, 0);
  assert.equal(none.body.next, null);

  const epoch = await ingest('orders', [
    { id: 100, seller: 1, amount: 0, note: null, at: null },
    { id: 101, seller: 1, amount: 0, note: 'again', at: null },
  ]);
  const refused = await get('/v1/views/ratios/rows');
  assert.equal((refused.body.error as { code: string }).code, 'VIEW_ERROR');
  const all = await get('/v1/views/ratios/errors');
  assert.equal(all.status, 200);
  assert.equal(all.body.epoch, epoch);
  assert.equal(all.body.total, 2);
  const errors = all.body.errors as {
    code: string;
    message: string;
    row: Record<string, unknown>;
    epoch: number;
  }[];
  assert.deepEqual(
    errors.map((e) => [e.code, e.message, e.row.id, e.epoch]),
    [
      ['DIVISION_BY_ZERO', 'division by zero', 100, epoch],
      ['DIVISION_BY_ZERO', 'division by zero', 101, epoch],
    ],
  );
  const first = await get('/v1/views/ratios/errors?limit=1');
  assert.equal((first.body.errors as unknown[]).length, 1);
  assert.equal(first.body.next, 1);
  const second = await get('/v1/views/ratios/errors?limit=1&offset=1');
  assert.deepEqual(second.body.errors, [errors[1]]);
  assert.equal(second.body.next, null);

  // Fixing the rows retracts the errors.
  await ingest('orders', { delete: [{ id: 100 }, { id: 101 }] });
  assert.deepEqual((await get('/v1/views/ratios/errors')).body.errors, []);
  assert.equal((await get('/v1/views/ratios/rows?limit=0')).status, 200);

  const unknown = await get('/v1/views/nope/errors');
  assert.equal(unknown.status, 404);
  assert.equal((unknown.body.error as { code: string }).code, 'UNKNOWN_VIEW');
  const bad = await get('/v1/views/ratios/errors?limit=-1');
  assert.equal(bad.status, 400);
  assert.equal((bad.body.error as { code: string }).code, 'INVALID_REQUEST');
});
