// Sources and sinks: which incarnation of each is in the catalog, starting and stopping their runners
// (../connectors.ts) as it changes, and a source batch committed with its positions as one epoch.
import { SluiceError } from '../../common/errors.ts';
import type { SinkReport, SourceReport } from '../connectors.ts';
import type { SinkFeed, WireChange } from '../../sink/kafka-sink.ts';
import type { SourceBatch } from '../../source/kafka/kafka-source-types.ts';
import { storedToWire } from '../../storage/changelog-codec.ts';
import { parseWireForRewrite, stringifyWire } from '../../common/json-codec.ts';
import type { Row } from '../../common/types.ts';
import type { Engine } from '../../index.ts';
import type { SinkInfo } from '../../exec/api.ts';
import type { SkippedRecordRow } from './types.ts';
import { busyMicros } from './commit.ts';
import { RuntimeScripts } from './scripts.ts';

export abstract class RuntimeConnectors extends RuntimeScripts {
  /** Journal offset of the DDL that created each source and sink now in the catalog. */
  private readonly connectorIncarnations = new Map<string, { sql: string; incarnation: number }>();
  private connectorsChanged = false;

  /** Records the incarnation of each new source and sink; a dropped source's positions go. */
  protected trackConnectors(catalog: ReturnType<Engine['catalogDefinitions']>): void {
    const live = new Map<string, string>();
    for (const s of catalog.sources) live.set(s.name, s.sql);
    for (const s of catalog.sinks) live.set(s.name, s.sql);
    for (const [name, known] of this.connectorIncarnations) {
      if (live.get(name) === known.sql) continue;
      this.connectorIncarnations.delete(name);
      this.sourceStore.drop(name, known.incarnation);
      this.connectorsChanged = true;
    }
    for (const [name, sql] of live) {
      if (this.connectorIncarnations.has(name)) continue;
      this.connectorIncarnations.set(name, { sql, incarnation: this.log.lastDdlOffset });
      this.connectorsChanged = true;
    }
  }

  /** Starts and stops connectors after the catalog changed (never during recovery). */
  protected syncConnectors(): void {
    if (!this.connectorsChanged || this.replaying || this.closing || this.connectors === undefined) return;
    this.connectorsChanged = false;
    const catalog = this.engine.catalog();
    this.connectors.sync(
      catalog.sources,
      catalog.sinks,
      (name) => this.connectorIncarnations.get(name)?.incarnation ?? 0,
    );
  }

  protected connectorHost() {
    return {
      applySourceBatch: (source: string, incarnation: number, batch: SourceBatch) =>
        this.applySourceBatch(source, incarnation, batch),
      storedOffsets: (source: string, incarnation: number) => this.sourceStore.offsets(source, incarnation),
      rowCheck: (source: string) => this.engine.sourceRowCheck(source),
      rowTyping: (source: string) => this.engine.sourceRowTyping(source),
      keyIdentity: (source: string) => this.engine.sourceKeyIdentity(source),
      eventTime: (source: string) => this.engine.sourceEventTime(source),
      epochMayPassBound: (source: string, rows: number) => this.engine.sourceEpochMayPassBound(source, rows),
      epochOverBound: (source: string, batch: SourceBatch) =>
        this.engine.sourceEpochOverBound(
          source,
          { insert: batch.upserts as Row[], delete: batch.deletes as Row[] },
          batch.typedUpserts,
        ),
      sinkFeed: (sink: SinkInfo) => this.sinkFeed(sink),
      // Read at each batch: the hooks are set after the runtime opened (and its sources started).
      pacer: {
        wait: (rows: number, bytes: number) => this.hooks.sourcePace?.(rows, bytes) ?? 0,
        bound: () => this.hooks.sourceBatchBound?.() ?? { rows: null, bytes: null },
        stateFull: () => this.hooks.sourceStateFull?.() ?? false,
      },
    };
  }

  /**
   * One source batch as one epoch, committed with the source's positions and skipped records; an
   * empty batch (only tombstones of unknown keys, only skipped records) still records its positions.
   */
  private applySourceBatch(source: string, incarnation: number, batch: SourceBatch): void {
    const started = performance.now();
    try {
      this.writeSourceBatch(source, incarnation, batch);
    } finally {
      this.hooks.epochCpu?.(busyMicros(started));
    }
    const rows =
      batch.upserts.length + (batch.typedUpserts?.length ?? 0) + batch.deletes.length + batch.skipped.length;
    if (rows > 0) this.hooks.rowsWritten?.(rows);
  }

  private writeSourceBatch(source: string, incarnation: number, batch: SourceBatch): void {
    // Group-committed (commit.ts): the batch and its positions share one transaction, whichever it is.
    this.writeGrouped(() => {
      if (this.connectorIncarnations.get(source)?.incarnation !== incarnation) {
        throw new SluiceError('UNKNOWN_TABLE', `source "${source}" was dropped`);
      }
      const typed = batch.typedUpserts;
      if (typed !== undefined && (typed.length > 0 || batch.deletes.length > 0)) {
        // The decoder typed each row with the source's own typing: the engine takes them as they are.
        this.engine.applyChanges(
          source,
          { delete: batch.deletes as Row[] },
          {
            fromSource: true,
            positions: { [source]: batch.positions },
            ignoreMissingDeletes: true,
            typedInserts: typed,
          },
        );
      } else if (batch.upserts.length > 0 || batch.deletes.length > 0) {
        this.engine.applyChanges(
          source,
          // Each row was checked by the decoder with the source's own validation; the engine checks again.
          { insert: batch.upserts as Row[], delete: batch.deletes as Row[] },
          { fromSource: true, positions: { [source]: batch.positions }, ignoreMissingDeletes: true },
        );
      }
      // Skipped records become rows of the source's errors relation (an epoch of their own, in the
      // same transaction), so views and ad-hoc SELECTs can read them.
      const errorsRelation = `${source}_errors`;
      if (batch.skipped.length > 0 && this.engine.writtenByConnector(errorsRelation)) {
        this.engine.applyChanges(
          errorsRelation,
          {
            insert: batch.skipped.map((r) => ({
              topic: r.topic,
              kafka_partition: r.partition,
              kafka_offset: r.offset,
              reason: r.reason,
              raw: r.raw,
            })),
          },
          { fromSource: true, positions: { [source]: batch.positions } },
        );
      }
      this.store.begin();
      const next = new Map<number, number>();
      for (const [p, range] of Object.entries(batch.positions.partitions)) next.set(Number(p), range.next);
      this.sourceStore.saveOffsets(source, incarnation, next);
    });
  }

  private sinkFeed(sink: SinkInfo): SinkFeed {
    const view = sink.view;
    return {
      key: () => this.feeds.get(view)?.key ?? null,
      committedEpoch: () => this.committedEpoch,
      horizon: () => this.changelog.info(view)?.horizon ?? this.committedEpoch,
      read: (after, upTo, limit) =>
        this.changelog.read(view, after, upTo, limit).map((c) => ({
          epoch: c.epoch,
          changes: (parseWireForRewrite(storedToWire(c.epoch, c.message)) as { changes: WireChange[] })
            .changes,
        })),
      snapshot: () => {
        this.flush();
        const snap = this.engine.viewSnapshot(view);
        // Wire JSON values (bigints as strings), as in the changelog.
        const rows = parseWireForRewrite(stringifyWire(snap.rows)) as Record<string, unknown>[];
        return { epoch: snap.epoch, rows };
      },
    };
  }

  sourceReports(): SourceReport[] {
    return this.connectors.sourceReports();
  }

  sinkReports(): SinkReport[] {
    return this.connectors.sinkReports();
  }

  /** Records a source skipped (on_error = 'skip'), oldest first, after the record id `afterId`. */
  skippedRecords(source: string, afterId: number, limit: number): SkippedRecordRow[] {
    if (!this.connectorIncarnations.has(source) || !this.engine.writtenByConnector(source)) {
      throw new SluiceError('UNKNOWN_TABLE', `source "${source}" does not exist`);
    }
    // The errors relation is the one store of skipped records; it only grows, in arrival order, so
    // a record's id is its position in it.
    const relation = `${source}_errors`;
    if (!this.engine.writtenByConnector(relation)) return [];
    return this.engine.tableRowsRange(relation, afterId, afterId + limit).map((r, i) => ({
      id: afterId + i + 1,
      topic: String(r.topic),
      partition: Number(r.kafka_partition),
      offset: Number(r.kafka_offset),
      reason: String(r.reason),
      raw: r.raw === null ? null : String(r.raw),
    }));
  }
}
