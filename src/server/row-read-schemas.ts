// JSON Schemas of the row reads (read-routes.ts): a view's or table's rows one page at a time (filters,
// order, cursors, asOf) and a view's row errors. Shared pieces come from schemas.ts.
import { columns, errorResponse, errors, keyColumns, nameParam, rowSchema } from './schemas.ts';

const filterText =
  'Any other query parameter filters a column (PostgREST style, typed by the column; several on one column are ANDed; NULL matches only is.null): ' +
  '`col=v` or `col=eq.v` (equal), `neq.v`, `gt.v`, `gte.v`, `lt.v`, `lte.v`, `in.(v1,v2,"v,3")`, `is.null`, `not.null`. ' +
  'A value that itself starts with one of these prefixes is matched exactly with `eq.` (`name=eq.gt.5`). ' +
  "A literal that is not a value of the column's type is 400 INVALID_VALUE; a malformed operator 400 INVALID_REQUEST. " +
  'Equality filters on the leading key columns seek straight to their rows; other filters examine at most `--max-scan-rows` rows (default 100000) per page, ' +
  'so a page may end early, even empty, with a `next` cursor to continue from. ';

const orderText =
  '`order=col[.asc|.desc][,col2...]` pages in that order (ties broken by the key), NULLs last ascending and first descending as in PostgreSQL. ' +
  'The key order (the default) costs only the page; any other order reads every row of the filtered range on every page and sorts the matches, ' +
  'so that range may hold at most `--max-scan-rows` rows (400 SCAN_TOO_LARGE beyond: filter on the leading key columns to narrow it). ';

/** A filter on one column: its text, or the same parameter repeated (ANDed). */
export const rowFilter = {
  anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
  description:
    'A filter: `v`, `eq.v`, `neq.v`, `gt.v`, `gte.v`, `lt.v`, `lte.v`, `in.(v1,v2)`, `is.null`, `not.null`',
  examples: ['gt.100', 'in.(1,2,3)', 'not.null'],
} as const;

const pageParams = {
  limit: {
    type: 'integer',
    minimum: 0,
    description: 'At most this many rows (default 1000, at most 10000)',
  },
  offset: { type: 'integer', minimum: 0, description: 'Skip this many matching rows (not with `after`)' },
  after: { type: 'string', description: 'The `next` cursor of the previous page (same filters and order)' },
  order: {
    type: 'string',
    description: 'col[.asc|.desc][,col2...]; default: the key (else all columns) ascending',
    examples: ['total.desc', 'seller_id.asc,total.desc'],
  },
} as const;

/** One page of rows at one epoch: the answer of every row read. */
export const rowPage = {
  type: 'object',
  required: ['epoch', 'columns', 'rows', 'next'],
  properties: {
    epoch: { type: 'integer', description: 'The epoch the page is consistent at (`asOf` when given)' },
    clock: {
      type: 'string',
      description:
        "A view's page: its epoch's logical clock, the now() of temporal filters (a timestamptz); with `asOf`, that past epoch's (absent only when a data file from before it was recorded no longer knows it)",
    },
    watermarks: {
      type: 'object',
      additionalProperties: { type: 'string', nullable: true },
      description:
        "A view's page: the watermark after its epoch (with `asOf`, that past epoch) of each table or source with a WATERMARK the view reads (directly or through views), in its time column's type (null before its first row); absent when it reads none",
    },
    columns,
    key: keyColumns,
    total: {
      type: ['integer', 'null'],
      description:
        'Rows matching the filters. Without filters, or with equality filters on leading key columns only, always counted (from the index, without a scan); with other filters only when at most `--max-scan-rows` rows must be examined, else null',
    },
    rows: { type: 'array', items: rowSchema },
    next: {
      type: ['string', 'null'],
      description: 'Pass as `after` for the next page; null after the last page',
    },
  },
  examples: [
    {
      epoch: 2,
      columns: [
        { name: 'seller_id', type: 'integer' },
        { name: 'total', type: 'bigint' },
      ],
      key: ['seller_id'],
      total: 2,
      rows: [{ seller_id: 11, total: 5 }],
      next: 'eyJrIjpbMTFdLCJkIjoxfQ',
    },
  ],
} as const;

const pageDescription =
  'Rows are ordered by the key (or all columns) and read from an ordered index, never copied: a page costs its own size. ' +
  'A page holds `limit` rows (default 1000, at most 10000, and at most about 8 MiB of JSON: settings `--default-page-rows`, `--max-result-rows`, `--max-result-bytes`); ' +
  'the next page is `after=<next>` (a key cursor: rows changed between pages show as of the later page; none is skipped or repeated). ' +
  '`offset` also works (a position, found without scanning when no filter is given). ' +
  filterText +
  orderText;

export const viewRowsRoute = {
  tags: ['views'],
  summary: "One page of a view's rows at one consistent epoch (the current one, or `asOf`)",
  description:
    pageDescription +
    '`asOf=e` reads the view as it was at epoch e (e within the changelog retention, at or after the view was created): the current state with the stored changes after e undone, ' +
    'at most `--max-scan-rows` changed rows (400 SCAN_TOO_LARGE beyond); every page of the same `asOf` is at that epoch, so a client holding changelog position e reads state consistent with it. ' +
    'An epoch after the current one is 400 INVALID_REQUEST, one before the retention 410 AS_OF_TOO_OLD. ' +
    '`limit`, `offset`, `after`, `order` and `asOf` are reserved parameter names.',
  params: nameParam,
  querystring: {
    type: 'object',
    properties: {
      ...pageParams,
      asOf: {
        type: 'string',
        pattern: '^[0-9]{1,15}$',
        description: 'Read the view at this epoch (see above)',
        examples: ['1042'],
      },
    },
    additionalProperties: rowFilter,
  },
  response: { 200: rowPage, 410: errorResponse, ...errors },
} as const;

export const tableRowsRoute = {
  tags: ['tables'],
  summary: "One page of a table's or source's rows at one consistent epoch",
  description:
    'The same paging, cursor, filters and order as view rows, over the rows a table (or a Kafka source, or its `<source>_errors` relation) holds now. ' +
    pageDescription +
    '`limit`, `offset`, `after`, `order` and `asOf` are reserved parameter names (`asOf` is for views only).',
  params: nameParam,
  querystring: {
    type: 'object',
    properties: pageParams,
    additionalProperties: rowFilter,
  },
  response: { 200: rowPage, ...errors },
} as const;

/** A row error a view holds (API.md: code, message, the offending row, the epoch it appeared in). */
export const viewRowError = {
  type: 'object',
  required: ['code', 'message', 'row', 'epoch', 'count'],
  properties: {
    code: { type: 'string', description: 'The error code (docs/errors.md), e.g. DIVISION_BY_ZERO' },
    message: { type: 'string' },
    row: {
      ...rowSchema,
      description: "The input row (of the view's direct input) that caused it, or the group key",
    },
    epoch: { type: 'integer', description: 'The epoch in which the error first appeared' },
    count: { type: 'integer', description: 'How many input rows currently cause it' },
  },
  examples: [
    {
      code: 'DIVISION_BY_ZERO',
      message: 'division by zero',
      row: { order_id: 7, amount: 5, qty: 0 },
      epoch: 12,
      count: 1,
    },
  ],
} as const;

export const viewErrorsRoute = {
  tags: ['views'],
  summary: 'The row errors a view holds, one page at one epoch',
  description:
    'A view holding row errors refuses reads with VIEW_ERROR; this lists the errors themselves (in the order they appeared) so they can be fixed. ' +
    'An empty list when there are none. Pages by position: `limit` (default 1000, at most 10000) and `offset=<next>`; an error retracted between pages moves the later ones up by one.',
  params: nameParam,
  querystring: {
    type: 'object',
    properties: {
      limit: {
        type: 'integer',
        minimum: 0,
        description: 'At most this many errors (default 1000, at most 10000)',
      },
      offset: {
        type: 'integer',
        minimum: 0,
        default: 0,
        description: 'Skip this many errors (the `next` of the previous page)',
      },
    },
    additionalProperties: false,
  },
  response: {
    200: {
      type: 'object',
      required: ['view', 'epoch', 'total', 'errors', 'next'],
      properties: {
        view: { type: 'string' },
        epoch: { type: 'integer', description: 'The epoch the list is consistent at' },
        total: { type: 'integer', description: 'Errors the view holds' },
        errors: { type: 'array', items: viewRowError },
        next: {
          type: ['integer', 'null'],
          description: 'Pass as `offset` for the next page; null after the last',
        },
      },
    },
    ...errors,
  },
} as const;
