// The REST reads of state (docs/server.md, "Reading rows"): a view's rows (also at an earlier epoch,
// `asOf`), a table's or source's rows, and a view's row errors. Every read is one page, bounded like
// the view pages of view-rows.ts: limits, cursors, `--max-scan-rows`; each page is consistent at one
// epoch because it is read in one synchronous block after the open ingest group is committed.
// A read at epoch e < now undoes the view's stored changelog after e on a private fork of its
// ordered index (copy-on-write: only the chunks it changes are copied), at most `scanRows` change
// rows, so it costs the changes since e, never a copy of the view.
import type { FastifyInstance } from 'fastify';
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';
import { encodeValues, normalizeBigInt } from '../common/values.ts';
import type { ViewReader } from '../exec/api.ts';
import type { OrderedIndex } from '../ivm/ordered-index.ts';
import type { SluiceRuntime } from './runtime.ts';
import { yieldToLoop } from './runtime/base.ts';
import * as S from './schemas.ts';
import { readPage, type Page, type PageRequest, type ReadLimits, type RelationKind } from './view-rows.ts';

/** How long one slice of building an ordered index may hold the event loop. */
const READ_SLICE_MS = 8;
/** Changelog entries read from the store at once while undoing them. */
const CHANGELOG_PAGE = 256;

type Query = Record<string, unknown>;

export function registerReadRoutes(app: FastifyInstance, runtime: SluiceRuntime, limits: ReadLimits): void {
  app.get<{ Params: { name: string }; Querystring: Query }>(
    '/v1/views/:name/rows',
    { schema: S.viewRowsRoute },
    async (request) => {
      const { asOf, ...query } = request.query;
      const reader = await viewReaderAt(runtime, request.params.name, epochParam(asOf), limits);
      return pageJson(reader, page(runtime, request.params.name, reader, query, limits, 'view'));
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
      const reader = await tableReader(runtime, request.params.name);
      return pageJson(reader, page(runtime, request.params.name, reader, request.query, limits, 'table'));
    },
  );

  app.get<{ Params: { name: string }; Querystring: { limit?: number; offset?: number } }>(
    '/v1/views/:name/errors',
    { schema: S.viewErrorsRoute },
    async (request) => {
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

function page(
  runtime: SluiceRuntime,
  name: string,
  reader: ViewReader,
  query: Query,
  limits: ReadLimits,
  kind: RelationKind,
): Page {
  const { limit, offset, after, order, ...filters } = query;
  const request: PageRequest = {
    filters: filters as Record<string, string | string[]>,
    limit: typeof limit === 'number' ? limit : undefined,
    offset: typeof offset === 'number' ? offset : undefined,
    after: typeof after === 'string' ? after : undefined,
    order: typeof order === 'string' ? order : undefined,
  };
  const result = readPage(name, reader, request, limits, kind);
  runtime.hooks.rowsExamined?.('page', result.examined);
  return result;
}

function pageJson(reader: ViewReader, page: Page): Record<string, unknown> {
  return {
    epoch: reader.epoch,
    columns: reader.columns,
    key: reader.key,
    total: page.total,
    rows: page.rows,
    next: page.next,
  };
}

function epochParam(raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `invalid request: asOf must be an epoch (a non-negative integer), not "${String(raw).slice(0, 40)}"`,
    );
  }
  return Number(raw);
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
 * The view as of epoch `asOf` (the current one when undefined): the current index with the changes
 * stored after `asOf` undone on a fork of it. Within one synchronous block once the reader is had.
 */
async function viewReaderAt(
  runtime: SluiceRuntime,
  view: string,
  asOf: number | undefined,
  limits: ReadLimits,
): Promise<ViewReader> {
  const reader = await runtime.viewReader(view);
  if (asOf === undefined || asOf === reader.epoch) return reader;
  if (asOf > reader.epoch) {
    throw new SluiceError(
      'INVALID_REQUEST',
      `invalid request: asOf ${asOf} is after the current epoch ${reader.epoch}`,
      { hint: 'read without asOf for the current state' },
    );
  }
  // Entries at or before the horizon are pruned (retention); changes after it are all stored.
  const info = runtime.changelog.info(view);
  const horizon = info?.horizon ?? reader.epoch;
  if (asOf < horizon) {
    const created = info !== undefined && asOf < info.createdEpoch;
    throw new SluiceError(
      'AS_OF_TOO_OLD',
      `cannot read view "${view}" as of epoch ${asOf}: ${created && info !== undefined ? `the view was created at epoch ${info.createdEpoch}` : `changes are retained after epoch ${horizon} only`}`,
      { hint: 'read a later epoch, or the current state without asOf' },
    );
  }
  const undo = new Map<string, { row: Value[]; weight: number }>();
  const decode = valueDecoders(reader);
  let rows = 0;
  let after = asOf;
  for (;;) {
    const entries = runtime.changelog.read(view, after, reader.epoch, CHANGELOG_PAGE);
    if (entries.length === 0) break;
    for (const entry of entries) {
      forEachChange(entry.message, decode, (op, row, n) => {
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
        const k = encodeValues(row);
        const e = undo.get(k);
        if (e === undefined) undo.set(k, { row, weight: w });
        else e.weight += w;
      });
      after = entry.epoch;
    }
  }
  const fork = (reader.index as OrderedIndex).fork();
  const changed: Value[][] = [];
  const weights: number[] = [];
  for (const e of undo.values()) {
    if (e.weight === 0) continue;
    changed.push(e.row);
    weights.push(e.weight);
  }
  try {
    fork.apply(changed, weights);
  } catch (error) {
    throw new SluiceError(
      'STATE_ERROR',
      `the changelog of view "${view}" does not lead to its current state`,
      {
        detail: error instanceof Error ? error.message : String(error),
        hint: 'read the current state without asOf',
      },
    );
  }
  return { ...reader, epoch: asOf, index: fork };
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
    else if (t === 'real' || t === 'double precision' || t.startsWith('numeric') || t.startsWith('decimal'))
      decode = (v) => (typeof v === 'string' ? Number(v) : (v as Value));
    else decode = (v) => v as Value;
    out.set(c.name, decode);
  }
  return out;
}

/**
 * Calls `each` for every row change of one stored changelog entry (the compact stored form, or a
 * wire `changes` message stored as is), its values in the view's column order.
 */
function forEachChange(
  message: string,
  decode: Map<string, Decoder>,
  each: (op: string, row: Value[], n: number) => void,
): void {
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
      each(String(c[at]), row, multiplicity.get(i) ?? 1);
    }
    return;
  }
  for (const change of parsed.changes ?? []) {
    const row = columns.map((name) => (decode.get(name) as Decoder)(change.row[name] ?? null));
    each(change.op, row, change.n ?? 1);
  }
}
