// The catalog's listings over REST: tables, Kafka sources and sinks, and views, each as a list and
// one by name (rows and changelogs are read-routes.ts and subscribe-routes.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SluiceError } from '../common/errors.ts';
import { formatMicros } from '../common/time/instant-micros.ts';
import type { TableInfo, ViewInfo } from '../index.ts';
import type { SluiceRuntime } from './runtime.ts';
import { windowCloseInfo } from '../exec/watermark-statements.ts';
import type { SinkReport, SourceReport } from './connectors.ts';
import * as C from './connector-schemas.ts';
import * as S from './schemas.ts';

export function registerCatalogRoutes(
  app: FastifyInstance,
  rt: (request: FastifyRequest) => SluiceRuntime,
): void {
  app.get('/v1/tables', { schema: S.listTablesRoute }, async (request) => ({
    tables: rt(request).engine.catalog().tables.map(tableJson),
  }));

  // A Kafka source is a relation too: its rows are read at /v1/tables/{name}/rows, so its entry is
  // answered here in the tables' shape (its connector's status is GET /v1/sources/{name}). The list
  // keeps tables only, as before; sources are listed by GET /v1/sources.
  app.get<{ Params: { name: string } }>('/v1/tables/:name', { schema: S.getTableRoute }, async (request) => {
    const catalog = rt(request).engine.catalog();
    const name = request.params.name;
    const relation: TableInfo | undefined =
      catalog.tables.find((t) => t.name === name) ?? catalog.sources.find((s) => s.name === name);
    if (relation === undefined) throw new SluiceError('UNKNOWN_TABLE', `table "${name}" does not exist`);
    return tableJson(relation);
  });

  // ---- Kafka sources and sinks -----------------------------------------------------------------

  const sourceJson = (r: SourceReport): Record<string, unknown> => ({
    name: r.name,
    topic: r.topic,
    format: r.format,
    onError: r.onError,
    ...r.status,
  });
  const sinkJson = (r: SinkReport): Record<string, unknown> => ({
    name: r.name,
    view: r.view,
    topic: r.topic,
    format: r.format,
    ...r.status,
  });
  app.get('/v1/sources', { schema: C.listSourcesRoute }, async (request) => ({
    sources: rt(request).sourceReports().map(sourceJson),
  }));
  app.get<{ Params: { name: string } }>(
    '/v1/sources/:name',
    { schema: C.getSourceRoute },
    async (request) => {
      const report = rt(request)
        .sourceReports()
        .find((r) => r.name === request.params.name);
      if (report === undefined)
        throw new SluiceError('UNKNOWN_TABLE', `source "${request.params.name}" does not exist`);
      return sourceJson(report);
    },
  );
  app.get<{ Params: { name: string }; Querystring: { after: number; limit: number } }>(
    '/v1/sources/:name/errors',
    { schema: C.sourceErrorsRoute },
    async (request) => ({
      errors: rt(request).skippedRecords(request.params.name, request.query.after, request.query.limit),
    }),
  );
  app.get('/v1/sinks', { schema: C.listSinksRoute }, async (request) => ({
    sinks: rt(request).sinkReports().map(sinkJson),
  }));
  app.get<{ Params: { name: string } }>('/v1/sinks/:name', { schema: C.getSinkRoute }, async (request) => {
    const report = rt(request)
      .sinkReports()
      .find((r) => r.name === request.params.name);
    if (report === undefined)
      throw new SluiceError('UNKNOWN_TABLE', `sink "${request.params.name}" does not exist`);
    return sinkJson(report);
  });

  // ---- views ---------------------------------------------------------------------------------

  // Epochs applied but not yet committed are committed first, so the figures are of `epoch`.
  app.get('/v1/views', { schema: S.listViewsRoute }, async (request) => {
    const runtime = rt(request);
    runtime.flush();
    return { views: runtime.engine.catalog().views.map((v) => viewJson(runtime, v)) };
  });

  app.get<{ Params: { name: string } }>('/v1/views/:name', { schema: S.getViewRoute }, async (request) => {
    const runtime = rt(request);
    runtime.flush();
    const view = runtime.engine.catalog().views.find((v) => v.name === request.params.name);
    if (view === undefined)
      throw new SluiceError('UNKNOWN_VIEW', `view "${request.params.name}" does not exist`);
    return viewJson(runtime, view);
  });

  function viewJson(runtime: SluiceRuntime, v: ViewInfo): Record<string, unknown> {
    const watermarks = runtime.engine.viewWatermarks(v.name);
    const windowClose = windowCloseInfo(runtime.engine.closingViews(), v.name);
    return {
      name: v.name,
      columns: v.columns,
      key: v.key,
      sql: v.sql,
      epoch: runtime.committedEpoch,
      clock: formatMicros(runtime.committedClock),
      ...(watermarks !== null ? { watermarks } : {}),
      ...(windowClose !== null ? { windowClose } : {}),
      rowCount: v.rowCount,
      stateBytes: v.stateBytes,
      dependsOn: v.dependsOn,
      subscribers: runtime.subscriberCount(v.name),
      errors: v.errorCount,
    };
  }
}

function tableJson(t: TableInfo): Record<string, unknown> {
  return {
    name: t.name,
    columns: t.columns,
    key: t.primaryKey,
    unique: t.unique ?? [],
    ...(t.watermark !== undefined ? { watermark: t.watermark } : {}),
    appendOnly: t.appendOnly === true,
    sql: t.sql,
    rowCount: t.rowCount,
    stateBytes: t.stateBytes,
    dependents: t.dependents,
  };
}
