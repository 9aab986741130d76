// The REST reads of state (docs/server.md, "Reading rows"): a view's rows (also at an earlier epoch,
// `asOf`), a table's or source's rows, and a view's row errors. Every read is one page, bounded like
// the view pages of view-rows.ts: limits, cursors, `--max-scan-rows`. A page in the index's order is
// read in one synchronous block after the open ingest group is committed, so it is consistent at one
// epoch. A page that must do more — sort its range for another `order`, or undo the stored changelog
// after `asOf` — works on a frozen snapshot of the index (copy-on-write: epochs go on meanwhile) in
// slices of a few milliseconds, so it never holds the event loop for long. `asOf` undoes the changes
// on a private fork of that snapshot, which copies only the chunks it changes: it costs the changes
// since that epoch (at most `scanRows` change rows), never a copy of the view.
import { decimalFromShortest, parseDecimal } from '../common/decimal.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeExactValues, normalizeBigInt } from '../common/values.ts';
import type { ViewReader } from '../exec/api.ts';
import type { FrozenIndex, OrderedIndex } from '../ivm/ordered-index.ts';
import type { SluiceRuntime } from './runtime.ts';
import { yieldToLoop } from './runtime/base.ts';
import * as S from './row-read-schemas.ts';
import {
  readPage,
  sortsRows,
  type Page,
  type PageRequest,
  type ReadLimits,
  type RelationKind,
} from './view-rows.ts';
import { epochParam } from './epoch-param.ts';

/** How long one slice of building an ordered index may hold the event loop. */
const READ_SLICE_MS = 8;
/** Changelog entries read from the store at once while undoing them. */
const CHANGELOG_PAGE = 8;
/** Undone rows applied to the fork between checks of the slice's deadline. */
const APPLY_SLICE = 1024;

type Query = Record<string, unknown>;

export function registerReadRoutes(
  app: FastifyInstance,
  runtimeOf: (request: FastifyRequest) => SluiceRuntime,
  limits: ReadLimits,
): void {
  app.get<{ Params: { name: string }; Querystring: Query }>(
    '/v1/views/:name/rows',
    { schema: S.viewRowsRoute },
    async (request) => {
      const { asOf, ...query } = request.query;
      const at = epochParam('asOf', asOf);
      const name = request.params.name;
      const runtime = runtimeOf(request);
      const reader = await runtime.viewReader(name);
      const current = at === undefined || at === reader.epoch;
      if (current && !sortsRows(reader, orderParam(query), `view "${name}"`)) {
        return pageJson(reader, await page(runtime, name, reader, query, limits, 'view'));
      }
      return withSnapshot(reader, async (snapshot, frozen) => {
        const state = current ? snapshot : await viewAsOf(runtime, name, snapshot, frozen, at, limits);
        return pageJson(state, await page(runtime, name, state, query, limits, 'view', yieldToLoop));
      });
    },
  );

  app.get<{ Params: { name: string }; Querystring: Query }>(
    '/v1/tables/:name/rows',
    { schema: S.tableRowsRoute },
    async (request) => {
      if (request.query.asOf !== undefined) {
        throw new SluiceError('INVALID_REQUEST', 'invalid request: asOf reads views only', {
          hint: 'tables keep no changelog; read a view over the table at an earlier epoch instead',
        });
      }
      const name = request.params.name;
      const runtime = runtimeOf(request);
      const reader = await tableReader(runtime, name);
      if (!sortsRows(reader, orderParam(request.query), `table "${name}"`)) {
        return pageJson(reader, await page(runtime, name, reader, request.query, limits, 'table'));
      }
      return withSnapshot(reader, async (snapshot) =>
        pageJson(snapshot, await page(runtime, name, snapshot, request.query, limits, 'table', yieldToLoop)),
      );
    },
  );

  app.get<{ Params: { name: string }; Querystring: { limit?: number; offset?: number } }>(
    '/v1/views/:name/errors',
    { schema: S.viewErrorsRoute },
    async (request) => {
      const runtime = runtimeOf(request);
      runtime.flush();
      const limit = request.query.limit ?? limits.defaultRows;
      if (limit > limits.maxRows) {
        throw new SluiceError(
          'INVALID_REQUEST',
          `invalid request: limit ${limit} is more than the largest page of ${limits.maxRows} rows`,
          { hint: 'read further pages with offset=<next>' },
        );
      }
      const offset = request.query.offset ?? 0;
      const { epoch, total, errors } = runtime.engine.viewErrorsRange(
        request.params.name,
        offset,
        offset + limit,
      );
      const end = offset + errors.length;
      return { view: request.params.name, epoch, total, errors, next: end < total ? end : null };
    },
  );
}

function orderParam(query: Query): string | undefined {
  return typeof query.order === 'string' ? query.order : undefined;
}

/** Runs `read` on a frozen snapshot of the reader's index, held until it is done. */
async function withSnapshot<T>(
  reader: ViewReader,
  read: (snapshot: ViewReader, frozen: FrozenIndex) => Promise<T>,
): Promise<T> {
  const frozen = (reader.index as OrderedIndex).freeze();
  try {
    return await read({ ...reader, index: frozen as unknown as OrderedIndex }, frozen);
  } finally {
    frozen.release();
  }
}

async function page(
  runtime: SluiceRuntime,
  name: string,
  reader: ViewReader,
  query: Query,
  limits: ReadLimits,
  kind: RelationKind,
  pause?: () => Promise<void>,
): Promise<Page> {
  const { limit, offset, after, order, ...filters } = query;
  const request: PageRequest = {
    filters: filters as Record<string, string | string[]>,
    limit: typeof limit === 'number' ? limit : undefined,
    offset: typeof offset === 'number' ? offset : undefined,
    after: typeof after === 'string' ? after : undefined,
    order: typeof order === 'string' ? order : undefined,
  };
  const result = await readPage(name, reader, request, limits, kind, pause);
  runtime.hooks.rowsExamined?.('page', result.examined);
  return result;
}

function pageJson(reader: ViewReader, page: Page): Record<string, unknown> {
  return {
    epoch: reader.epoch,
    ...(reader.clock !== undefined ? { clock: reader.clock } : {}),
    ...(reader.watermarks !== undefined ? { watermarks: reader.watermarks } : {}),
    columns: reader.columns,
    key: reader.key,
    total: page.total,
    rows: page.rows,
    next: page.next,
  };
}

/** A table's reader once its ordered index exists (built in slices, as a view's is). */
async function tableReader(runtime: SluiceRuntime, table: string): Promise<ViewReader> {
  for (;;) {
    runtime.flush();
    const reader = runtime.engine.tableReader(table, performance.now() + READ_SLICE_MS);
    if (reader.index !== null) return reader;
    await yieldToLoop();
  }
}

/**
 * The view as of epoch `asOf` < the snapshot's epoch: the snapshot with the changes stored after
 * `asOf` undone on a fork of it, read and applied in slices (the snapshot stays as it is meanwhile).
 */
async function viewAsOf(
  runtime: SluiceRuntime,
  view: string,
  snapshot: ViewReader,
  frozen: FrozenIndex,
  asOf: number,
  limits: ReadLimits,
): Promise<ViewReader> {
  if (asOf > snapshot.epoch) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `invalid request: asOf ${asOf} is after the current epoch ${snapshot.epoch}`,
      { hint: 'read without asOf for the current state' },
    );
  }
  const tooOld = (horizon: number, createdEpoch: number | null): SluiceError =>
    new SluiceError(
      'AS_OF_TOO_OLD',
      `cannot read view "${view}" as of epoch ${asOf}: ${createdEpoch !== null ? `the view was created at epoch ${createdEpoch}` : `changes are retained after epoch ${horizon} only`}`,
      { hint: 'read a later epoch, or the current state without asOf' },
    );
  // Entries at or before the horizon are pruned (retention); changes after it are all stored.
  const info = runtime.changelog.info(view);
  if (info === undefined) throw tooOld(snapshot.epoch, null);
  if (asOf < info.horizon) throw tooOld(info.horizon, asOf < info.createdEpoch ? info.createdEpoch : null);

  const undo = new Map<string, { row: Value[]; weight: number }>();
  const decode = valueDecoders(snapshot);
  let rows = 0;
  let after = asOf;
  let deadline = performance.now() + READ_SLICE_MS;
  const pause = async (): Promise<void> => {
    if (performance.now() < deadline) return;
    await yieldToLoop();
    deadline = performance.now() + READ_SLICE_MS;
  };
  for (;;) {
    const entries = runtime.changelog.read(view, after, snapshot.epoch, CHANGELOG_PAGE);
    // Retention may prune while this read yields, and the view may be dropped: neither may go unseen.
    const now = runtime.changelog.info(view);
    if (now === undefined || now.incarnation !== info.incarnation) {
      throw new SluiceError('UNKNOWN_VIEW', `materialized view "${view}" does not exist`);
    }
    if (now.horizon > after) throw tooOld(now.horizon, null);
    if (entries.length === 0) break;
    for (const entry of entries) {
      for (const [op, row, n] of changesOf(entry.message, decode)) {
        rows += 1;
        if (rows > limits.scanRows) {
          throw new SluiceError(
            'SCAN_TOO_LARGE',
            `cannot read view "${view}" as of epoch ${asOf}: more than ${limits.scanRows} changed rows since then`,
            { hint: 'read a later epoch, or the current state without asOf (--max-scan-rows)' },
          );
        }
        // Undoing: what was added since asOf goes, what was removed comes back.
        const w = op === '+I' || op === '+U' ? -n : n;
        const k = encodeExactValues(row);
        const e = undo.get(k);
        if (e === undefined) undo.set(k, { row, weight: w });
        else e.weight += w;
        if ((rows & 1023) === 0) await pause();
      }
      after = entry.epoch;
      await pause();
    }
  }
  // Removals first, then insertions (a key's row at asOf comes back after its later row left).
  const removed: Value[][] = [];
  const added: Value[][] = [];
  for (const e of undo.values()) {
    if (e.weight < 0) for (let i = 0; i < -e.weight; i++) removed.push(e.row);
    else for (let i = 0; i < e.weight; i++) added.push(e.row);
  }
  const fork = frozen.fork();
  try {
    for (const [list, weight] of [
      [removed, -1],
      [added, 1],
    ] as const) {
      for (let i = 0; i < list.length; i += APPLY_SLICE) {
        const slice = list.slice(i, i + APPLY_SLICE);
        fork.apply(slice, new Array<number>(slice.length).fill(weight));
        await pause();
      }
    }
  } catch (error) {
    if (error instanceof SluiceError && error.code !== 'INTERNAL_ERROR') throw error;
    throw new SluiceError(
      'STATE_ERROR',
      `the changelog of view "${view}" does not lead to its current state`,
      {
        detail: error instanceof Error ? error.message : String(error),
        hint: 'read the current state without asOf',
      },
    );
  }
  // The clock and watermarks of `asOf` itself, never the current epoch's (left out if not known).
  const { clock: _clock, watermarks: _watermarks, ...earlier } = snapshot;
  const time = runtime.timeAt(view, asOf);
  return { ...earlier, ...time, epoch: asOf, index: fork };
}

type Decoder = (wire: unknown) => Value;

/** Per column, the wire JSON of a stored value back to the view's own representation. */
function valueDecoders(reader: ViewReader): Map<string, Decoder> {
  const out = new Map<string, Decoder>();
  for (const c of reader.columns) {
    const t = c.type.toLowerCase();
    let decode: Decoder;
    if (t === 'smallint' || t === 'integer' || t === 'bigint')
      decode = (v) => (typeof v === 'string' ? normalizeBigInt(BigInt(v)) : (v as Value));
    else if (t.startsWith('numeric') || t.startsWith('decimal'))
      // The exact text since numerics are exact; a number in a changelog stored before that is
      // read back as the decimal of its shortest text.
      decode = (v) =>
        typeof v === 'string'
          ? (parseDecimal(v) ?? v)
          : typeof v === 'number'
            ? decimalFromShortest(v)
            : (v as Value);
    else if (t === 'real' || t === 'double precision')
      decode = (v) => (typeof v === 'string' ? Number(v) : (v as Value));
    else decode = (v) => v as Value;
    out.set(c.name, decode);
  }
  return out;
}

/**
 * Every row change of one stored changelog entry (the compact stored form, or a wire `changes`
 * message stored as is) as [op, values in the view's column order, multiplicity].
 */
function* changesOf(message: string, decode: Map<string, Decoder>): Generator<[string, Value[], number]> {
  const columns = [...decode.keys()];
  const parsed = JSON.parse(message) as {
    k?: string[];
    c?: unknown[];
    n?: number[];
    changes?: { op: string; row: Record<string, unknown>; n?: number }[];
  };
  if (parsed.k !== undefined && parsed.c !== undefined) {
    const keys = parsed.k;
    const stride = keys.length + 1;
    const positions = columns.map((name) => keys.indexOf(name));
    const decoders = columns.map((name) => decode.get(name) as Decoder);
    const multiplicity = new Map<number, number>();
    const n = parsed.n ?? [];
    for (let i = 0; i + 1 < n.length; i += 2) multiplicity.set(n[i] as number, n[i + 1] as number);
    const c = parsed.c;
    for (let i = 0, at = 0; at < c.length; i++, at += stride) {
      const row = positions.map((p, j) => (decoders[j] as Decoder)(p < 0 ? null : (c[at + 1 + p] ?? null)));
      yield [String(c[at]), row, multiplicity.get(i) ?? 1];
    }
    return;
  }
  for (const change of parsed.changes ?? []) {
    const row = columns.map((name) => (decode.get(name) as Decoder)(change.row[name] ?? null));
    yield [change.op, row, change.n ?? 1];
  }
}
