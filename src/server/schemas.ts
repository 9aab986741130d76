// JSON Schemas of the statement, catalog, ingest and health routes, and the pieces every route's schema
// shares (error body, row, columns, name parameter). With row-read-, changelog- and connector-schemas.ts
// they validate requests and are published as the OpenAPI document (/openapi.json). Rows are open
// objects (column → value) checked by the engine.
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

export const columns = { type: 'array', items: columnInfo } as const;
export const keyColumns = {
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
    appendOnly: {
      type: 'boolean',
      description:
        'Whether it takes inserts only (CREATE TABLE … APPEND ONLY; also a keyless json source and a source errors relation): deletes, updates and inserts replacing a stored key are refused (APPEND_ONLY_TABLE)',
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

export const nameParam = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' } },
} as const;

export const errors = {
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

export const healthRoute = {
  tags: ['operations'],
  summary: 'Liveness',
  response: { 200: { type: 'object', properties: { status: { type: 'string' } } } },
} as const;

export const readyRoute = {
  tags: ['operations'],
  summary: 'Readiness: the journal was replayed and the store is writable',
  response: {
    200: {
      type: 'object',
      properties: {
        status: { type: 'string' },
        epoch: {
          type: 'integer',
          description:
            "The last committed epoch of the caller's tenant; with authentication on, only for a request with a valid bearer token",
        },
      },
    },
    503: errorResponse,
  },
} as const;
