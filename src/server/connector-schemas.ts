// JSON Schemas of the Kafka connector routes (/v1/sources, /v1/sinks): status, per-partition offsets
// and lag, skipped records. Shared pieces (errors, name parameter) come from schemas.ts.
import { errors, nameParam } from './schemas.ts';

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
    pausedAtStateQuota: {
      type: 'boolean',
      description:
        "Reading is paused because the tenant's state is at or above its stateBytes quota: the batch read is held, the position kept, no record dropped; reading resumes once the state is below it (a DELETE, a DROP, a raised quota)",
    },
    stateQuotaPauses: {
      type: 'integer',
      description: "Times reading paused at the tenant's state quota since the server started",
    },
    splitBatches: {
      type: 'integer',
      description:
        "Batches applied as several epochs because one epoch would have made the views build more rows than the engine's bound (maxEpochJoinRows), since the server started",
    },
    oversizedRecords: {
      type: 'integer',
      description:
        "Records applied alone in an epoch past the engine's bound (one record cannot be cut; a source's data is never dropped), since the server started; each logged with the view",
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
