// JSON Schemas of the changelog routes (WebSocket /subscribe and NDJSON /changes) of views, queries and
// tables, with the message formats they stream. Shared pieces come from schemas.ts.
import type { FastifySchema } from 'fastify';
import { errorResponse, nameParam } from './schemas.ts';

const subscribeQuery = {
  type: 'object',
  properties: {
    snapshot: { type: 'string', description: '"true" (default without resumeFrom) or "false"' },
    resumeFrom: {
      type: 'string',
      description: 'An epoch the client has fully applied; changes after it follow',
    },
    maxMessageBytes: {
      type: 'string',
      description:
        'Opt-in bound on one message (at least 4096): a larger changes message or snapshot chunk comes in parts, "more":true on all but the last; an epoch is applied when its last part arrived. Absent: one changes message per epoch',
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
