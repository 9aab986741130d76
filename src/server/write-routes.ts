// The writes of the HTTP API (docs/server.md): POST /v1/sql runs a script of statements, POST
// /v1/tables/{name}/rows ingests a batch (with an optional Idempotency-Key). Both check the tenant's
// quotas and rates before the engine does any work, so a refused request has no effect.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SluiceError, httpStatusOf } from '../common/errors.ts';
import type { Row } from '../common/types.ts';
import type { TableChanges } from '../exec/api.ts';
import type { SqlLimits } from '../common/limits.ts';
import { isRowObject } from '../common/json-codec.ts';
import { idempotencyKeyOf, invalidKey, requestFingerprint } from './idempotency-window.ts';
import { checkScript as checkQuotasOfScript, checkState, scriptFootprint } from './quotas.ts';
import { TEMPORARY_VIEW_PREFIX } from './query-subscriptions.ts';
import { rowsWritten } from './runtime/scripts.ts';
import { writeInsertsAhead } from './ingest-ahead.ts';
import type { Tenant } from './tenants.ts';
import * as S from './schemas.ts';

export const INGEST_URL = '/v1/tables/:name/rows';
export const SQL_URL = '/v1/sql';
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** What the write routes take from the app (app.ts). */
export interface WriteRouteHooks {
  /** The tenant a request acts for (set by the auth hook). */
  readonly tenantOf: (request: FastifyRequest) => Tenant;
  /** The SQL limits a script's quota footprint is measured with. */
  readonly limits: () => SqlLimits;
  /** The request body's size in bytes, as parsed. */
  readonly bodyBytes: (request: FastifyRequest) => number;
  /** A keyed ingest request's body hash, taken from the exact bytes as parsed. */
  readonly bodyHash: (request: FastifyRequest) => string | undefined;
  readonly countError: (request: FastifyRequest, code: string) => void;
  readonly sendError: (
    reply: FastifyReply,
    error: SluiceError,
    extra?: Record<string, unknown>,
  ) => FastifyReply;
  readonly toSluiceError: (error: unknown) => SluiceError;
}

export function registerWriteRoutes(app: FastifyInstance, hooks: WriteRouteHooks): void {
  app.post<{ Body: { sql: string } }>(SQL_URL, { schema: S.sqlRoute }, async (request, reply) => {
    if (request.headers[IDEMPOTENCY_HEADER] !== undefined) {
      // A script commits slice by slice, so no one transaction could hold its key (docs/server.md).
      const error = new SluiceError('NOT_SUPPORTED', 'Idempotency-Key on POST /v1/sql is not supported', {
        hint: 'send the rows through POST /v1/tables/{name}/rows with the key, or drop the header',
      });
      hooks.countError(request, error.code);
      return reply.code(400).send({ error: error.toJSON(), results: [] });
    }
    const tenant = hooks.tenantOf(request);
    // Size quotas before anything runs: a script that would pass one is refused whole.
    const footprint = await scriptFootprint(request.body.sql, hooks.limits());
    const refused = footprint === null ? null : checkQuotasOfScript(tenant.runtime, tenant.quotas, footprint);
    if (refused !== null) {
      hooks.countError(request, refused.code);
      return reply.code(httpStatusOf(refused)).send({ error: refused.toJSON(), results: [] });
    }
    // DML counts against the ingest rates like ingest does: refused whole, before any statement runs.
    const reservedRows = footprint === null ? 0 : footprint.dmlRows + footprint.dmlUnknown;
    if (reservedRows > 0 && footprint !== null) {
      const limited = tenant.limiter.admitScript(tenant.quotas, footprint, hooks.bodyBytes(request));
      if (limited !== null) return hooks.sendError(reply, limited, { results: [] });
    }
    // A client gone before its answer (the response closed unfinished) stops its script.
    let gone = false;
    const onClose = (): void => {
      if (!reply.raw.writableFinished) gone = true;
    };
    reply.raw.on('close', onClose);
    // Again when its turn comes: scripts run one at a time, so those queued before it (each admitted
    // against the same count) may have created objects meanwhile; without this, concurrent scripts
    // that yield between slices took a tenant with an objects quota of 8 to 35 tables.
    let refusedAtTurn: SluiceError | null = null;
    const admitAtTurn = (): SluiceError | null =>
      (refusedAtTurn =
        footprint === null ? null : checkQuotasOfScript(tenant.runtime, tenant.quotas, footprint));
    const outcome = await tenant.runtime
      .executeSql(request.body.sql, { reservedPrefix: TEMPORARY_VIEW_PREFIX }, () => gone, admitAtTurn)
      .finally(() => reply.raw.off('close', onClose));
    if (reservedRows > 0) tenant.limiter.settle(tenant.quotas, reservedRows, rowsWritten(outcome.results));
    if (outcome.error !== undefined) {
      const error = outcome.error instanceof SluiceError ? outcome.error : hooks.toSluiceError(outcome.error);
      // API.md: a failed script is a 400 (server-side failures keep their 5xx); a quota refused at
      // its turn answers as one refused at the door (403, nothing run).
      const status = httpStatusOf(error) >= 500 || error === refusedAtTurn ? httpStatusOf(error) : 400;
      hooks.countError(request, error.code);
      return reply.code(status).send({ error: error.toJSON(), results: outcome.results });
    }
    return { results: outcome.results };
  });

  app.post<{ Params: { name: string }; Body: unknown; Querystring: { wait?: boolean } }>(
    INGEST_URL,
    {
      schema: S.ingestRoute,
      schemaErrorFormatter: (_errors, dataVar) =>
        dataVar === 'headers'
          ? invalidKey('it is empty, too long or holds a character that is not printable ASCII')
          : new SluiceError(
              'INVALID_REQUEST',
              'invalid request: the body must be an array of row objects or {"insert": [rows], "delete": [rows]}',
            ),
    },
    async (request, reply) => {
      const tenant = hooks.tenantOf(request);
      const runtime = tenant.runtime;
      const key = idempotencyKeyOf(request.raw.headersDistinct[IDEMPOTENCY_HEADER]);
      const changes = toChanges(request.body);
      // Quotas at the door: a refused batch costs its tenant no engine work and the others nothing.
      const overState = (changes.insert?.length ?? 0) > 0 ? checkState(runtime, tenant.quotas) : null;
      if (overState !== null) throw overState;
      const rows = (changes.insert?.length ?? 0) + (changes.delete?.length ?? 0);
      const limited = tenant.limiter.admit(tenant.quotas, rows, hooks.bodyBytes(request));
      if (limited !== null) return hooks.sendError(reply, limited);
      // Applied at once (a bad batch is rejected here with no effect), answered once the group
      // commit holding it is durable and its epoch was published to every subscriber, so
      // `wait=true` needs nothing more.
      // A large batch's journal text is written first, in slices between which other requests go on.
      const ahead = await writeInsertsAhead(runtime.engine, request.params.name, changes);
      // Its text was written over several turns, in which other requests may have been applied: the
      // state quota again, as the batch is applied in this block (8 concurrent 20,000-row batches
      // were all applied to a tenant whose quota the first one passed: 24.5 MB against 257 kB).
      const overStateNow = ahead !== undefined ? checkState(runtime, tenant.quotas) : null;
      if (overStateNow !== null) {
        tenant.limiter.settle(tenant.quotas, rows, 0);
        throw overStateNow;
      }
      if (key === null) return runtime.ingestGrouped(request.params.name, changes, undefined, ahead);
      const hash = hooks.bodyHash(request);
      if (hash === undefined)
        throw new SluiceError('INTERNAL_ERROR', 'the body of a keyed request was not hashed');
      // A known key answers as it did the first time and applies nothing (docs/server.md).
      const outcome = await runtime.ingestIdempotent(
        request.params.name,
        changes,
        { key, fingerprint: requestFingerprint(request.params.name, hash) },
        ahead,
      );
      if (outcome.replayed) reply.header('idempotent-replayed', 'true');
      return outcome.answer;
    },
  );
}

/** The ingest body as engine changes; each row an object (nested values only a jsonb column takes). */
function toChanges(body: unknown): TableChanges {
  const check = (rows: unknown, what: string): Row[] => {
    if (!Array.isArray(rows))
      throw new SluiceError('INVALID_REQUEST', `invalid request: "${what}" must be an array of rows`);
    rows.forEach((row: unknown, i) => {
      if (!isRowObject(row)) {
        throw new SluiceError('INVALID_VALUE', `${what} row ${i + 1} is not an object of column values`, {
          hint: 'a row is {"column": value, ...}; a value is null, a boolean, a number or a string (any JSON value for a jsonb column)',
        });
      }
    });
    return rows as Row[];
  };
  if (Array.isArray(body)) return { insert: check(body, 'insert') };
  const obj = body as { insert?: unknown; delete?: unknown };
  return {
    ...(obj.insert !== undefined ? { insert: check(obj.insert, 'insert') } : {}),
    ...(obj.delete !== undefined ? { delete: check(obj.delete, 'delete') } : {}),
  };
}
