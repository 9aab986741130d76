// Prometheus metrics for one tenant of a server instance (a registry of its own, so several apps and
// tenants can live in one process, each series labelled with its tenant): epochs, batch latency,
// rows in/out, state size, subscribers, errors. What is not a tenant's (process metrics, errors of
// requests without a tenant) is in ServerWideMetrics; metricsText joins registries for one scrape.
import type { UsageReport } from './usage.ts';
import type { SubscriberBudget } from '../sink/subscriber-budget.ts';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricsSource {
  /** The tenant's meters (usage.ts). */
  usage?(): UsageReport;
  epoch(): number;
  viewStats(): readonly { name: string; rowCount: number; stateBytes: number; subscribers: number }[];
  /** Arrangements joins of several views share (their state is in no view's state bytes). */
  sharedArrangements(): readonly { name: string; users: number; rows: number; stateBytes: number }[];
  /** Inserted rows each watermarked table dropped as late (table-watermark.ts). */
  lateRows?(): readonly { table: string; lateRows: number }[];
  /** EMIT ON WINDOW CLOSE views and the changes to their closed windows they did not apply. */
  closingViews?(): readonly { name: string; ignored: number; allowedLateness: number }[];
  checkpoint(): { readonly epoch: number | null; readonly writerFallback?: string | null };
  /** The subscriber memory budget's account (bytes) and the subscriber count. */
  subscriberMemory(): {
    readonly limit: number;
    readonly used: number;
    readonly live: number;
    readonly closing: number;
    readonly retained: number;
    readonly peak: number;
    readonly subscribers: number;
  };
  recovery(): { readonly ms: number; readonly replayedEntries: number };
  sources(): readonly {
    readonly name: string;
    readonly status: {
      readonly state: string;
      readonly recordsIn: number;
      readonly skipped: number;
      readonly recordsPerSecond: number;
      readonly rateWaits: number;
      readonly oversizedRecords: number;
      readonly pausedAtStateQuota: boolean;
      readonly partitions: readonly { partition: number; next: number; lag: number | null }[];
    };
  }[];
  sinks(): readonly {
    readonly name: string;
    readonly status: {
      readonly state: string;
      readonly epoch: number | null;
      readonly lagEpochs: number | null;
    };
  }[];
}

const CONNECTOR_STATES = ['starting', 'running', 'stalled', 'retrying', 'failed', 'stopped'] as const;

export interface CheckpointMetric {
  readonly full: boolean;
  readonly bytes: number;
  readonly ms: number;
  /** The server thread's share of `ms` (taking the state, encoding its slices). */
  readonly busyMs: number;
  /** The longest slice: the worst stall the checkpoint caused a request. */
  readonly longestSliceMs?: number;
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly batches: Counter<'table'>;
  private readonly rowsIn: Counter<'table'>;
  private readonly rowsOut: Counter<'view'>;
  private readonly batchSeconds: Histogram;
  private readonly errors: Counter<'code'>;
  private readonly slowConsumers: Counter<'view'>;
  private readonly groupCommits: Counter;
  private readonly groupRequests: Counter;
  private readonly checkpoints: Counter<'kind'>;
  private readonly checkpointFailures: Counter;
  private readonly journalBatchesDeleted: Counter;
  private readonly checkpointBytes: Counter;
  private readonly checkpointSeconds: Histogram;
  private readonly checkpointBusySeconds: Histogram;
  private readonly checkpointSliceSeconds: Histogram;
  private readonly readRows: Counter<'kind'>;

  constructor(source: MetricsSource, options: { tenant: string }) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ tenant: options.tenant });
    new Gauge({
      name: 'sluice_epoch',
      help: 'Current epoch (number of batches applied since the data directory was created)',
      registers,
      collect() {
        this.set(source.epoch());
      },
    });
    this.batches = new Counter({
      name: 'sluice_batches_total',
      help: 'Batches applied (one epoch each), by table',
      labelNames: ['table'],
      registers,
    });
    this.rowsIn = new Counter({
      name: 'sluice_rows_in_total',
      help: 'Rows ingested (inserts plus deletes), by table',
      labelNames: ['table'],
      registers,
    });
    this.rowsOut = new Counter({
      name: 'sluice_view_changes_out_total',
      help: 'Changelog rows emitted, by view',
      labelNames: ['view'],
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'sluice_batch_duration_seconds',
      help: 'Time to log durably, apply and publish one batch',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.errors = new Counter({
      name: 'sluice_errors_total',
      help: 'Errors answered to clients, by code',
      labelNames: ['code'],
      registers,
    });
    this.slowConsumers = new Counter({
      name: 'sluice_slow_consumer_disconnects_total',
      help: 'Subscribers closed with SLOW_CONSUMER, by view',
      labelNames: ['view'],
      registers,
    });
    this.groupCommits = new Counter({
      name: 'sluice_ingest_commits_total',
      help: 'Durable commits (fsync) of groups of ingest requests',
      registers,
    });
    this.groupRequests = new Counter({
      name: 'sluice_ingest_committed_requests_total',
      help: 'Ingest requests committed in groups (divided by sluice_ingest_commits_total: the group size)',
      registers,
    });
    this.checkpoints = new Counter({
      name: 'sluice_checkpoints_total',
      help: 'Checkpoints written, by kind (full or incremental)',
      labelNames: ['kind'],
      registers,
    });
    this.checkpointFailures = new Counter({
      name: 'sluice_checkpoint_failures_total',
      help: 'Checkpoint writes that failed (the previous checkpoint was kept)',
      registers,
    });
    this.journalBatchesDeleted = new Counter({
      name: 'sluice_journal_batches_deleted_total',
      help: 'Journal table batches deleted by journal retention (older than it, and covered by a checkpoint)',
      registers,
    });
    this.checkpointBytes = new Counter({
      name: 'sluice_checkpoint_written_bytes_total',
      help: 'Characters of state keys and values written by checkpoints',
      registers,
    });
    this.checkpointSeconds = new Histogram({
      name: 'sluice_checkpoint_duration_seconds',
      help: 'Wall time to write one checkpoint, from taking the state to the commit (requests are served meanwhile, between its slices)',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.checkpointBusySeconds = new Histogram({
      name: 'sluice_checkpoint_thread_busy_seconds',
      help: "Of one checkpoint's duration, the time the server's thread spent on it (taking the state and encoding it)",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.checkpointSliceSeconds = new Histogram({
      name: 'sluice_checkpoint_longest_slice_seconds',
      help: "One checkpoint's longest uninterrupted slice on the server's thread: the longest a request waited for it",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    new Gauge({
      name: 'sluice_checkpoint_epoch',
      help: 'Epoch of the last checkpoint written or recovered from (-1: none)',
      registers,
      collect() {
        this.set(source.checkpoint().epoch ?? -1);
      },
    });
    new Gauge({
      name: 'sluice_checkpoint_writer_fallback',
      help: 'Whether checkpoints are written on the main thread because the writer thread kept dying (1) or by the writer thread (0)',
      registers,
      collect() {
        this.set(source.checkpoint().writerFallback == null ? 0 : 1);
      },
    });
    new Gauge({
      name: 'sluice_recovery_seconds',
      help: 'Time the last start took to recover the state (checkpoint load plus journal replay)',
      registers,
      collect() {
        this.set(source.recovery().ms / 1000);
      },
    });
    new Gauge({
      name: 'sluice_recovery_replayed_entries',
      help: 'Journal entries the last start replayed',
      registers,
      collect() {
        this.set(source.recovery().replayedEntries);
      },
    });
    const gauge = <L extends string>(
      name: string,
      help: string,
      labelNames: readonly L[],
      fill: (set: (labels: Record<L, string | number>, value: number) => void) => void,
    ) =>
      new Gauge<L>({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          fill((labels, value) => this.set(labels, value));
        },
      });
    gauge('sluice_source_state', 'Kafka source state (1 for the current one)', ['source', 'state'], (set) => {
      for (const s of source.sources())
        for (const state of CONNECTOR_STATES)
          set({ source: s.name, state }, s.status.state === state ? 1 : 0);
    });
    gauge(
      'sluice_source_records_read',
      'Kafka records applied since the server started',
      ['source'],
      (set) => {
        for (const s of source.sources()) set({ source: s.name }, s.status.recordsIn);
      },
    );
    gauge('sluice_source_records_per_second', 'Kafka records applied per second', ['source'], (set) => {
      for (const s of source.sources()) set({ source: s.name }, s.status.recordsPerSecond);
    });
    gauge(
      'sluice_source_skipped_records',
      'Kafka records skipped by on_error = skip since start',
      ['source'],
      (set) => {
        for (const s of source.sources()) set({ source: s.name }, s.status.skipped);
      },
    );
    gauge(
      'sluice_source_rate_waits',
      "Times a Kafka source's batch waited for its tenant's ingest rate since start (reading paused meanwhile)",
      ['source'],
      (set) => {
        for (const s of source.sources()) set({ source: s.name }, s.status.rateWaits);
      },
    );
    gauge(
      'sluice_source_oversized_records',
      "Kafka records applied alone in an epoch past the engine's row bound since start (one record cannot be cut)",
      ['source'],
      (set) => {
        for (const s of source.sources()) set({ source: s.name }, s.status.oversizedRecords);
      },
    );
    gauge(
      'sluice_source_paused_state_quota',
      "1 while a Kafka source's reading is paused because its tenant's state is at its stateBytes quota",
      ['source'],
      (set) => {
        for (const s of source.sources()) set({ source: s.name }, s.status.pausedAtStateQuota ? 1 : 0);
      },
    );
    gauge(
      'sluice_source_next_offset',
      'Next Kafka offset to apply, by partition',
      ['source', 'partition'],
      (set) => {
        for (const s of source.sources())
          for (const p of s.status.partitions) set({ source: s.name, partition: p.partition }, p.next);
      },
    );
    gauge(
      'sluice_source_lag',
      'Kafka records not yet applied, by partition',
      ['source', 'partition'],
      (set) => {
        for (const s of source.sources())
          for (const p of s.status.partitions)
            if (p.lag !== null) set({ source: s.name, partition: p.partition }, p.lag);
      },
    );
    gauge('sluice_sink_state', 'Kafka sink state (1 for the current one)', ['sink', 'state'], (set) => {
      for (const s of source.sinks())
        for (const state of CONNECTOR_STATES) set({ sink: s.name, state }, s.status.state === state ? 1 : 0);
    });
    gauge(
      'sluice_sink_epoch',
      'Last epoch a Kafka sink committed to its topic (-1: none)',
      ['sink'],
      (set) => {
        for (const s of source.sinks()) set({ sink: s.name }, s.status.epoch ?? -1);
      },
    );
    gauge(
      'sluice_sink_lag_epochs',
      'Epochs committed but not yet written by a Kafka sink',
      ['sink'],
      (set) => {
        for (const s of source.sinks())
          if (s.status.lagEpochs !== null) set({ sink: s.name }, s.status.lagEpochs);
      },
    );
    const viewGauge = (
      name: string,
      help: string,
      pick: (s: ReturnType<MetricsSource['viewStats']>[number]) => number,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['view'],
        registers,
        collect() {
          this.reset();
          for (const s of source.viewStats()) this.set({ view: s.name }, pick(s));
        },
      });
    viewGauge('sluice_view_rows', 'Rows in each view', (s) => s.rowCount);
    viewGauge('sluice_view_state_bytes', 'Approximate operator state size of each view', (s) => s.stateBytes);
    viewGauge('sluice_subscribers', 'Changelog subscribers connected, by view', (s) => s.subscribers);
    for (const [name, help, pick] of [
      ['sluice_shared_arrangement_rows', 'Rows held by each arrangement that joins share', 'rows'],
      [
        'sluice_shared_arrangement_state_bytes',
        'Approximate state size of each arrangement that joins share (counted in no view)',
        'stateBytes',
      ],
      ['sluice_shared_arrangement_users', 'Joins (of all views) probing each shared arrangement', 'users'],
    ] as const) {
      new Gauge({
        name,
        help,
        labelNames: ['arrangement'],
        registers,
        collect() {
          this.reset();
          for (const a of source.sharedArrangements()) this.set({ arrangement: a.name }, a[pick]);
        },
      });
    }
    const lateRows = source.lateRows;
    if (lateRows !== undefined) {
      new Counter({
        name: 'sluice_table_late_rows_total',
        help: 'Inserted rows dropped because their time was below the table watermark, by table',
        labelNames: ['table'],
        registers,
        collect() {
          this.reset();
          for (const t of lateRows()) this.inc({ table: t.table }, t.lateRows);
        },
      });
    }
    const closingViews = source.closingViews;
    if (closingViews !== undefined) {
      new Counter({
        name: 'sluice_view_closed_window_changes_total',
        help: 'Changes to windows an EMIT ON WINDOW CLOSE view had already emitted (not applied), by view',
        labelNames: ['view'],
        registers,
        collect() {
          this.reset();
          for (const v of closingViews()) this.inc({ view: v.name }, v.ignored);
        },
      });
      new Gauge({
        name: 'sluice_view_allowed_lateness_seconds',
        help: 'How long an EMIT ON WINDOW CLOSE view keeps a window open after the watermark reaches its end (ALLOWED LATENESS), by view',
        labelNames: ['view'],
        registers,
        collect() {
          this.reset();
          for (const v of closingViews()) this.set({ view: v.name }, v.allowedLateness / 1_000_000);
        },
      });
    }
    gauge(
      'sluice_subscriber_memory_bytes',
      "The tenant's share of the server's subscriber memory budget: the budget's limit (for all tenants together), what the tenant's subscribers hold (used = live + closing + retained), bytes queued by its live subscribers, by its subscribers being closed (freed within the close grace), kept alive by its open snapshots, and the peak of used",
      ['kind'],
      (set) => {
        const m = source.subscriberMemory();
        set({ kind: 'limit' }, m.limit);
        set({ kind: 'used' }, m.used);
        set({ kind: 'live' }, m.live);
        set({ kind: 'closing' }, m.closing);
        set({ kind: 'retained' }, m.retained);
        set({ kind: 'peak' }, m.peak);
      },
    );
    gauge(
      'sluice_subscribers_total_connected',
      'Changelog subscribers, starting or live, in all',
      [],
      (set) => set({}, source.subscriberMemory().subscribers),
    );
    const usage = source.usage;
    if (usage !== undefined) {
      const meter = (name: string, help: string, read: (u: UsageReport) => number): void => {
        new Counter({
          name,
          help,
          registers,
          collect() {
            this.reset();
            this.inc(read(usage()));
          },
        });
      };
      meter('sluice_tenant_rows_in_total', 'Rows the tenant ingested', (u) => u.rowsIn);
      meter('sluice_tenant_rows_out_total', "Changelog rows the tenant's views emitted", (u) => u.rowsOut);
      meter('sluice_tenant_bytes_in_total', "Request body bytes of the tenant's requests", (u) => u.bytesIn);
      meter(
        'sluice_tenant_bytes_out_total',
        "Response body bytes of the tenant's answers",
        (u) => u.bytesOut,
      );
      meter(
        'sluice_tenant_epoch_cpu_seconds_total',
        "CPU time of the tenant's ingest epochs",
        (u) => u.cpuMs / 1000,
      );
      meter(
        'sluice_tenant_state_byte_hours_total',
        'State held over time, in byte-hours',
        (u) => u.stateByteHours,
      );
    }
    this.readRows = new Counter({
      name: 'sluice_read_rows_examined_total',
      help: 'Rows examined by reads: REST view pages (kind "page"), ad-hoc SELECT inputs (kind "select") and the table rows UPDATE/DELETE look at (kind "dml")',
      labelNames: ['kind'],
      registers,
    });
    for (const kind of ['page', 'select', 'dml'] as const) this.readRows.inc({ kind }, 0);
  }

  rowsExamined(kind: 'page' | 'select' | 'dml', rows: number): void {
    this.readRows.inc({ kind }, rows);
  }

  batchApplied(table: string, rows: number, seconds: number): void {
    this.batches.inc({ table });
    this.rowsIn.inc({ table }, rows);
    this.batchSeconds.observe(seconds);
  }

  groupCommitted(requests: number): void {
    this.groupCommits.inc();
    this.groupRequests.inc(requests);
  }

  checkpointWritten(stats: CheckpointMetric): void {
    this.checkpoints.inc({ kind: stats.full ? 'full' : 'incremental' });
    this.checkpointBytes.inc(stats.bytes);
    this.checkpointSeconds.observe(stats.ms / 1000);
    this.checkpointBusySeconds.observe(stats.busyMs / 1000);
    // A checkpoint written at once (shutdown, the fallback) is one slice as long as its busy time.
    this.checkpointSliceSeconds.observe((stats.longestSliceMs ?? stats.busyMs) / 1000);
  }

  checkpointFailed(): void {
    this.checkpointFailures.inc();
  }

  journalTrimmed(batches: number): void {
    this.journalBatchesDeleted.inc(batches);
  }

  viewChanges(view: string, rows: number): void {
    this.rowsOut.inc({ view }, rows);
  }

  error(code: string): void {
    this.errors.inc({ code });
  }

  slowConsumer(view: string): void {
    this.slowConsumers.inc({ view });
  }
}

/** What belongs to no tenant: process metrics, and errors answered before a tenant was known. */
export class ServerWideMetrics {
  readonly registry = new Registry();
  private readonly errors: Counter<'code'>;

  constructor(options: { processMetrics: boolean; subscriberBudget?: SubscriberBudget }) {
    // prom-client's standard names (process_*, nodejs_*), unprefixed: what Node.js dashboards query.
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    const budget = options.subscriberBudget;
    if (budget !== undefined) {
      new Gauge({
        name: 'sluice_server_subscriber_memory_bytes',
        help: "The server's one subscriber memory budget, shared by every tenant: its limit, what is accounted against it (queued, reserved and retained bytes of all tenants' subscribers), and the peak of that",
        labelNames: ['kind'],
        registers: [this.registry],
        collect() {
          this.set({ kind: 'limit' }, budget.limit);
          this.set({ kind: 'used' }, budget.used());
          this.set({ kind: 'peak' }, budget.peak);
        },
      });
    }
    this.errors = new Counter({
      name: 'sluice_errors_total',
      help: 'Errors answered to clients, by code',
      labelNames: ['code'],
      registers: [this.registry],
    });
  }

  error(code: string): void {
    this.errors.inc({ code });
  }
}

/** One Prometheus text of several registries (series of the same name merged, told apart by labels). */
export async function metricsText(registries: readonly Registry[]): Promise<string> {
  if (registries.length === 1) return (registries[0] as Registry).metrics();
  const merged = AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON())));
  return merged.metrics();
}
