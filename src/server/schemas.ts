// JSON Schemas of every route's request and response: they validate requests and are published as
// the OpenAPI document (/openapi.json). Rows are open objects (column → value) checked by the engine.
import type { FastifySchema } from 'fastify';
import { IDEMPOTENCY_KEY_PATTERN, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-window.ts';

const errorObject = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'Stable error code (see docs/server.md and docs/errors.md)' },
    message: { type: 'string' },
    detail: { type: 'string' },
    hint: { type: 'string' },
    position: {
      type: 'object',
      properties: { line: { type: 'integer' }, column: { type: 'integer' } },
    },
  },
} as const;

/**
 * Schemas published once, as OpenAPI components, and referenced by the routes' responses
 * (responses are documentation only: the server writes them with its own JSON codec).
 */
export const sharedSchemas = [
  {
    $id: 'SluiceError',
    type: 'object',
    required: ['error'],
    properties: { error: errorObject },
    examples: [
      {
        error: { code: 'UNKNOWN_VIEW', message: 'view "seller_total" does not exist' },
      },
    ],
  },
] as const;

export const errorResponse = { $ref: 'SluiceError#' } as const;

const value = {
  description:
    'A SQL value: null, boolean, number, or string. NUMERIC values are always strings of their exact digits ("0.30"); 64-bit integers beyond ±2^53 are strings (exact); floats NaN/±Infinity are the strings "NaN", "Infinity", "-Infinity"; dates and timestamps are ISO-8601 strings ("YYYY-MM-DD", "YYYY-MM-DD HH:MM:SS[.ffffff]").',
} as const;

export const rowSchema = {
  type: 'object',
  description: 'A row: column name → value',
  additionalProperties: value,
} as const;

const columnInfo = {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string' },
    nullable: { type: 'boolean' },
    default: {
      type: 'string',
      description:
        "A table column's DEFAULT expression as written (absent: the column defaults to NULL); an insert that omits the column gets its value",
    },
  },
} as const;

const columns = { type: 'array', items: columnInfo } as const;
const keyColumns = {
  type: ['array', 'null'],
  items: { type: 'string' },
  description: "The unique key's columns ([] for a one-row view); null when the rows have no unique key",
} as const;

const statementResult = {
  type: 'object',
  required: ['statement'],
  properties: {
    statement: { type: 'string', description: 'e.g. "CREATE MATERIALIZED VIEW", "INSERT", "SELECT"' },
    object: { type: 'string' },
    columns,
    rows: { type: 'array', items: rowSchema },
    rowCount: { type: 'integer' },
    epoch: { type: 'integer' },
    plan: { type: 'string' },
  },
} as const;

const tableInfo = {
  type: 'object',
  required: ['name', 'columns'],
  properties: {
    name: { type: 'string' },
    columns,
    key: { ...keyColumns, description: 'Primary key columns, or null for a table without one' },
    unique: {
      type: 'array',
      description:
        'UNIQUE constraints besides the primary key: no two rows share non-NULL values of the columns (UNIQUE_VIOLATION)',
      items: {
        type: 'object',
        required: ['name', 'columns'],
        properties: {
          name: { type: 'string', description: 'e.g. "orders_ref_key"' },
          columns: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    watermark: {
      type: 'object',
      description:
        "The table's watermark (WATERMARK FOR … AS …): the latest time inserted minus the delay, never going back; rows inserted below it are late, dropped and counted",
      required: ['column', 'expression', 'watermark', 'lateRows'],
      properties: {
        column: { type: 'string' },
        expression: { type: 'string', description: 'e.g. "ts - INTERVAL \'5\' SECOND"' },
        watermark: {
          type: ['string', 'null'],
          description: "In the column's type; null before the first row",
        },
        lateRows: { type: 'integer', description: 'Inserted rows dropped as late' },
      },
    },
    sql: { type: 'string' },
    rowCount: { type: 'integer' },
    stateBytes: {
      type: 'integer',
      description: 'Approximate heap bytes of its rows (the row count times the estimated size of a sample)',
    },
    dependents: {
      type: 'array',
      items: { type: 'string' },
      description: 'Views that read this table directly',
    },
  },
} as const;

const viewInfo = {
  type: 'object',
  required: ['name', 'columns'],
  properties: {
    name: { type: 'string' },
    columns,
    key: keyColumns,
    sql: { type: 'string', description: 'The definition' },
    epoch: { type: 'integer', description: 'The epoch the figures are taken at' },
    clock: {
      type: 'string',
      description: "That epoch's logical clock, the now() of temporal filters (a timestamptz)",
    },
    watermarks: {
      type: 'object',
      additionalProperties: { type: 'string', nullable: true },
      description:
        "The watermark after that epoch of each table or source with a WATERMARK the view reads (directly or through views), in its time column's type; null before its first row. Absent when it reads none",
    },
    windowClose: {
      type: 'object',
      required: ['allowedLateness', 'closedThrough', 'ignoredChanges'],
      properties: {
        allowedLateness: {
          type: 'string',
          description: 'ALLOWED LATENESS: how long a window stays open after the watermark reaches its end',
        },
        closedThrough: {
          type: 'string',
          nullable: true,
          description:
            'The watermark its windows are closed through, in the time column type; null before the first',
        },
        ignoredChanges: { type: 'integer', description: 'Changes to windows it had closed, not applied' },
      },
      description: 'Only for an EMIT ON WINDOW CLOSE view: its late-change policy and how far it has closed',
    },
    rowCount: { type: 'integer' },
    stateBytes: { type: 'integer', description: 'Approximate operator state size' },
    dependsOn: { type: 'array', items: { type: 'string' } },
    subscribers: { type: 'integer' },
    errors: { type: 'integer', description: 'Row errors the view currently holds' },
  },
} as const;

const nameParam = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' } },
} as const;

const errors = {
  400: errorResponse,
  404: errorResponse,
  500: errorResponse,
} as const;

/** What request admission (request-guard.ts) answers before a state-changing route runs. */
const admissionErrors = {
  403: {
    ...errorResponse,
    description:
      'FORBIDDEN_ORIGIN (sent by a web page of an origin that is not allowed) or FORBIDDEN_HOST (a Host that is not a name of this server)',
  },
  415: { ...errorResponse, description: 'UNSUPPORTED_MEDIA_TYPE: the body must be sent as application/json' },
} as const;

/** What authentication and a tenant's quotas answer a write (docs/security.md). */
const writeAccessErrors = {
  401: { ...errorResponse, description: 'UNAUTHENTICATED: no token, or an unknown or revoked one' },
  403: {
    ...errorResponse,
    description:
      'FORBIDDEN (the role may not do it; for a script: a statement above the role, nothing run), QUOTA_EXCEEDED (a size quota of the tenant: objects, connectors, state bytes; nothing applied), FORBIDDEN_ORIGIN (sent by a web page of an origin that is not allowed) or FORBIDDEN_HOST (a Host that is not a name of this server)',
  },
  429: {
    ...errorResponse,
    description:
      "RATE_LIMITED: the tenant's ingest rate (ingestRowsPerSecond, ingestBytesPerSecond) is used up; nothing was applied. Ingest, and /v1/sql scripts with INSERT, UPDATE or DELETE (refused whole before any statement runs), share the rate",
    headers: {
      'retry-after': { type: 'integer', description: 'Seconds to wait before sending again' },
    },
  },
} as const;

export const sqlRoute = {
  tags: ['statements'],
  summary: 'Run SQL statements in order, stopping at the first error',
  description:
    'A plain SELECT is computed once over its inputs at one epoch, in slices between which other requests go on. LIMIT without ORDER BY stops early; ORDER BY ... LIMIT k keeps only the best k rows. A result of more than `--max-result-rows` rows (default 10000) or `--max-result-bytes` bytes (default 8 MiB) fails with RESULT_TOO_LARGE.',
  body: {
    type: 'object',
    required: ['sql'],
    additionalProperties: false,
    properties: { sql: { type: 'string', description: 'One or more statements separated by ";"' } },
    examples: [
      {
        sql: 'CREATE TABLE orders (order_id BIGINT PRIMARY KEY, seller_id INT NOT NULL, amount INT NOT NULL); INSERT INTO orders VALUES (1, 11, 5)',
      },
      { sql: 'SELECT seller_id, total FROM seller_totals ORDER BY total DESC LIMIT 10' },
    ],
  },
  response: {
    200: {
      type: 'object',
      required: ['results'],
      properties: { results: { type: 'array', items: statementResult } },
      examples: [
        {
          results: [
            { statement: 'CREATE TABLE', object: 'orders' },
            { statement: 'INSERT', object: 'orders', rowCount: 1, epoch: 1 },
          ],
        },
      ],
    },
    400: {
      type: 'object',
      examples: [
        {
          error: {
            code: 'UNKNOWN_COLUMN',
            message: 'column "amout" does not exist in table "orders"',
            position: { line: 1, column: 8 },
          },
          results: [],
        },
      ],
      required: ['error', 'results'],
      properties: {
        error: errorObject,
        results: {
          type: 'array',
          items: statementResult,
          description: 'Results of the statements before the failed one (they took effect)',
        },
      },
    },
    ...writeAccessErrors,
    413: errorResponse,
    415: admissionErrors[415],
    500: errorResponse,
  },
} as const;

export const listTablesRoute = {
  tags: ['catalog'],
  summary: 'List tables',
  response: {
    200: {
      type: 'object',
      required: ['tables'],
      properties: { tables: { type: 'array', items: tableInfo } },
    },
  },
} as const;

export const getTableRoute = {
  tags: ['catalog'],
  summary: 'One table',
  params: nameParam,
  response: { 200: tableInfo, ...errors },
} as const;

export const ingestRoute = {
  tags: ['tables'],
  summary: 'Ingest one batch of rows into a table (one epoch, atomic, durable before the answer)',
  params: nameParam,
  headers: {
    type: 'object',
    properties: {
      'idempotency-key': {
        type: 'string',
        minLength: 1,
        maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
        pattern: IDEMPOTENCY_KEY_PATTERN,
        description:
          'A key the client chooses per batch (e.g. a UUID; 1–255 printable ASCII characters). A retry with the same key and the same body gets the first answer (same epoch, header Idempotent-Replayed: true) and applies nothing — also across restarts and crashes; the same key with another body or table is 409 IDEMPOTENCY_KEY_REUSED. Keys are remembered for the idempotency window (default 24 h, 100,000 keys; see docs/server.md).',
      },
    },
  },
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      wait: {
        type: 'boolean',
        description:
          'Answer only once the epoch is reflected in every view (every answer already means that: it is sent after the durable commit and the publication of the epoch)',
      },
    },
  },
  body: {
    description:
      'Either an array of rows (all inserts) or {"insert": [...], "delete": [...]}. A delete names the full row (removes one copy) or only the primary key; an insert on an existing primary key replaces the row.',
    oneOf: [
      { type: 'array', items: rowSchema },
      {
        type: 'object',
        additionalProperties: false,
        properties: {
          insert: { type: 'array', items: rowSchema },
          delete: { type: 'array', items: rowSchema },
        },
      },
    ],
    examples: [
      [
        { order_id: 1, seller_id: 11, amount: 5 },
        { order_id: 2, seller_id: 12, amount: 40 },
      ],
      { insert: [{ order_id: 3, seller_id: 11, amount: 7 }], delete: [{ order_id: 2 }] },
    ],
  },
  response: {
    200: {
      type: 'object',
      required: ['accepted', 'epoch'],
      properties: { accepted: { type: 'integer' }, epoch: { type: 'integer' } },
      examples: [{ accepted: 2, epoch: 3 }],
      headers: {
        'idempotent-replayed': {
          type: 'string',
          enum: ['true'],
          description:
            'Present when this answer is the one a request with the same Idempotency-Key got before: nothing was applied now',
        },
      },
    },
    ...errors,
    ...admissionErrors,
    ...writeAccessErrors,
    409: {
      ...errorResponse,
      description:
        'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was already used for a different request (another body or table)',
    },
    413: errorResponse,
  },
} as const;

export const listViewsRoute = {
  tags: ['catalog'],
  summary: 'List materialized views',
  response: {
    200: { type: 'object', required: ['views'], properties: { views: { type: 'array', items: viewInfo } } },
  },
} as const;

export const getViewRoute = {
  tags: ['catalog'],
  summary: 'One materialized view: definition, columns, key, epoch, row count, state size',
  params: nameParam,
  response: { 200: viewInfo, ...errors },
} as const;

// ---- reads of rows: views (also at an earlier epoch), tables, a view's row errors (read-routes.ts) ----

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

const subscribeQuery = {
  type: 'object',
  properties: {
    snapshot: { type: 'string', description: '"true" (default without resumeFrom) or "false"' },
    resumeFrom: {
      type: 'string',
      description: 'An epoch the client has fully applied; changes after it follow',
    },
  },
} as const;

const subscribeDescription = `Messages (one per WebSocket frame / NDJSON line):
- {"type":"subscribed","view","epoch","clock","watermarks"?,"snapshot","columns","key"} — "epoch" is the epoch the stream continues from (resumeFrom, or the snapshot's epoch); "clock" and "watermarks" are that epoch's, as in its changes message
- {"type":"snapshot","epoch","clock","watermarks"?,"rows":[...],"more":bool} … {"type":"snapshot_end","epoch","rows":n}
- {"type":"changes","epoch","positions","clock","watermarks"?,changes:[{"op":"+I"|"-D"|"-U"|"+U","row":{...},"n"?:k}],"errors"?:[{"op":"+E"|"-E","error":{code,message,row,epoch,count}}]} — one per epoch that changed the view; "clock" is the epoch's logical clock (a timestamptz), "watermarks" the watermark after it of each table or source with a WATERMARK the view reads, in its time column's type (null before its first row; absent when it reads none; a resumed changelog replays the same values)
- {"type":"progress","epoch"} — while idle; every epoch up to it has been delivered
- {"type":"error","code","message","epoch"?} then close (4400 invalid request, 4404 unknown view, 4409 RESUME_TOO_OLD, 4410 VIEW_DROPPED, 4429 SLOW_CONSUMER with "epoch" = last epoch delivered, 4503 TOO_MANY_SUBSCRIBERS, 4500 internal, 1001 shutting down)
Snapshots are streamed from a frozen version of the view's index as the client takes them; all subscribers share one memory budget (--subscriber-memory): past it, the subscriber furthest behind is closed with SLOW_CONSUMER. Subscriber counts are capped (--max-subscribers, --max-subscribers-per-view).`;

export const subscribeRoute = {
  tags: ['changelogs'],
  summary: "Subscribe to a view's changelog (WebSocket)",
  description: subscribeDescription,
  params: nameParam,
  querystring: subscribeQuery,
} as const;

export const changesRoute = {
  tags: ['changelogs'],
  summary: "A view's changelog as NDJSON (same messages and parameters as /subscribe)",
  description: `${subscribeDescription}\nErrors found before streaming starts are HTTP errors (404 unknown view, 410 RESUME_TOO_OLD, 400 invalid parameters, 503 TOO_MANY_SUBSCRIBERS with Retry-After).`,
  params: nameParam,
  querystring: subscribeQuery,
  response: { 400: errorResponse, 404: errorResponse, 410: errorResponse, 503: errorResponse },
} as const;

const querySubscribeQuery = {
  type: 'object',
  required: ['sql'],
  properties: {
    sql: {
      type: 'string',
      description: 'One SELECT (or `SUBSCRIBE (SELECT …)`); the same text shares one temporary view',
      examples: ['SUBSCRIBE (SELECT seller_id, COUNT(*) AS n FROM orders GROUP BY seller_id)'],
    },
    ...subscribeQuery.properties,
  },
} as const;

const temporaryViewNote = `Served by a temporary materialized view named sluice_sub_<hash of the query> (its name is the "view" of the subscribed message), created on the first subscription and dropped once it has had no subscriber for --query-subscription-linger-ms; until then, and across a restart, a client resumes with the same request and resumeFrom=<epoch>.`;

/** The schemas of one changelog's two routes (WebSocket and NDJSON). */
export interface ChangelogSchemas {
  readonly subscribe: FastifySchema;
  readonly changes: FastifySchema;
}

export const viewChangelog: ChangelogSchemas = { subscribe: subscribeRoute, changes: changesRoute };

export const queryChangelog: ChangelogSchemas = {
  subscribe: {
    tags: ['changelogs'],
    summary: "Subscribe to a query's changelog (WebSocket): SUBSCRIBE",
    description: `${temporaryViewNote}\n\n${subscribeDescription}`,
    querystring: querySubscribeQuery,
  },
  changes: {
    tags: ['changelogs'],
    summary: "A query's changelog as NDJSON (same messages and parameters as /v1/subscribe)",
    description: `${temporaryViewNote}\n\n${subscribeDescription}\nErrors found before streaming starts are HTTP errors (400 for a query that does not parse or bind, with its position; 503 TOO_MANY_SUBSCRIBERS).`,
    querystring: querySubscribeQuery,
    response: { 400: errorResponse, 404: errorResponse, 410: errorResponse, 503: errorResponse },
  },
};

export const tableChangelog: ChangelogSchemas = {
  subscribe: {
    tags: ['changelogs'],
    summary: "Subscribe to a table's changes (WebSocket): SELECT * FROM the table",
    description: `${temporaryViewNote}\n\n${subscribeDescription}`,
    params: nameParam,
    querystring: subscribeQuery,
  },
  changes: {
    tags: ['changelogs'],
    summary: "A table's changes as NDJSON (same messages and parameters as /subscribe)",
    description: `${temporaryViewNote}\n\n${subscribeDescription}`,
    params: nameParam,
    querystring: subscribeQuery,
    response: { 400: errorResponse, 404: errorResponse, 410: errorResponse, 503: errorResponse },
  },
};

export const healthRoute = {
  tags: ['operations'],
  summary: 'Liveness',
  response: { 200: { type: 'object', properties: { status: { type: 'string' } } } },
} as const;

export const readyRoute = {
  tags: ['operations'],
  summary: 'Readiness: the journal was replayed and the store is writable',
  response: {
    200: { type: 'object', properties: { status: { type: 'string' }, epoch: { type: 'integer' } } },
    503: errorResponse,
  },
} as const;

// ---- Kafka sources and sinks ----------------------------------------------------------------

const connectorError = {
  type: ['object', 'null'],
  description: 'Why the connector is retrying or stopped (null while it runs)',
  properties: {
    message: { type: 'string' },
    topic: { type: 'string' },
    partition: { type: 'integer' },
    offset: { type: 'integer' },
    reason: { type: 'string' },
    at: { type: 'string' },
  },
} as const;

const sourceStatus = {
  type: 'object',
  required: ['name', 'topic', 'format', 'onError', 'state'],
  properties: {
    name: { type: 'string' },
    topic: { type: 'string' },
    format: { type: 'string' },
    onError: { type: 'string' },
    state: { type: 'string', enum: ['starting', 'running', 'stalled', 'retrying', 'failed', 'stopped'] },
    error: connectorError,
    partitions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          partition: { type: 'integer' },
          next: {
            type: 'integer',
            description: 'Next offset to apply: every record before it is in the state',
          },
          high: { type: ['integer', 'null'], description: 'Log end offset last seen' },
          lag: { type: ['integer', 'null'] },
        },
      },
    },
    recordsIn: { type: 'integer' },
    lastFetchAgoMs: { type: ['integer', 'null'], description: 'Since the broker last answered a fetch' },
    recordsPerSecond: { type: 'number' },
    batches: { type: 'integer' },
    skipped: { type: 'integer', description: 'Records skipped by on_error = skip since the server started' },
    retries: { type: 'integer' },
    rateWaits: {
      type: 'integer',
      description:
        "Times a batch waited for the tenant's ingest rate (ingestRowsPerSecond, ingestBytesPerSecond): reading pauses meanwhile, no record is dropped",
    },
  },
} as const;

const sinkStatus = {
  type: 'object',
  required: ['name', 'view', 'topic', 'format', 'state'],
  properties: {
    name: { type: 'string' },
    view: { type: 'string' },
    topic: { type: 'string' },
    format: { type: 'string' },
    state: { type: 'string', enum: ['starting', 'running', 'stalled', 'retrying', 'failed', 'stopped'] },
    error: connectorError,
    epoch: { type: ['integer', 'null'], description: 'Last epoch committed to the topic' },
    lagEpochs: { type: ['integer', 'null'] },
    messages: { type: 'integer' },
    transactions: { type: 'integer' },
    retries: { type: 'integer' },
  },
} as const;

export const listSourcesRoute = {
  tags: ['connectors'],
  summary: 'Kafka sources with their status: per-partition offsets and lag, records/s, errors',
  response: {
    200: {
      type: 'object',
      required: ['sources'],
      properties: { sources: { type: 'array', items: sourceStatus } },
    },
  },
} as const;

export const getSourceRoute = {
  tags: ['connectors'],
  summary: "One Kafka source's status",
  params: nameParam,
  response: { 200: sourceStatus, ...errors },
} as const;

export const sourceErrorsRoute = {
  tags: ['connectors'],
  summary: 'Records a source skipped (on_error = skip): the rows of its errors relation <source>_errors',
  params: nameParam,
  querystring: {
    type: 'object',
    properties: {
      after: {
        type: 'integer',
        minimum: 0,
        default: 0,
        description: 'Return records with id > after (ids are positions in <source>_errors, from 1)',
      },
      limit: { type: 'integer', minimum: 1, maximum: 10000, default: 1000 },
    },
    additionalProperties: false,
  },
  response: {
    200: {
      type: 'object',
      required: ['errors'],
      properties: {
        errors: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'integer' },
              topic: { type: 'string' },
              partition: { type: 'integer' },
              offset: { type: 'integer' },
              reason: { type: 'string' },
              raw: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
    ...errors,
  },
} as const;

export const listSinksRoute = {
  tags: ['connectors'],
  summary: 'Kafka sinks with their status: last epoch written, lag in epochs, messages',
  response: {
    200: { type: 'object', required: ['sinks'], properties: { sinks: { type: 'array', items: sinkStatus } } },
  },
} as const;

export const getSinkRoute = {
  tags: ['connectors'],
  summary: "One Kafka sink's status",
  params: nameParam,
  response: { 200: sinkStatus, ...errors },
} as const;
