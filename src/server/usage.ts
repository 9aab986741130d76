// Metering per tenant (docs/security.md#metering): what a tenant sent and was sent, the state it
// holds and has held over time (byte-hours, integrated at every reading and at least every few
// seconds), and the CPU time of its epochs. Counted in memory and stored in the auth file every few
// seconds and at shutdown, so a restart goes on from the stored counts (a crash loses at most the
// last few seconds of them).
import type { StoredUsage } from '../storage/tenant-store.ts';
import { stateBytes } from './quotas.ts';
import type { SluiceRuntime } from './runtime.ts';

export interface UsageReport {
  /** Rows written (inserts plus deletes, as applied): ingest requests, SQL INSERT/UPDATE/DELETE, Kafka sources. */
  readonly rowsIn: number;
  /** Request body bytes of the tenant's requests. */
  readonly bytesIn: number;
  /** Changelog rows its views emitted. */
  readonly rowsOut: number;
  /** Response body bytes of the tenant's HTTP answers, and the messages of its changelog streams. */
  readonly bytesOut: number;
  readonly stateBytes: number;
  readonly stateByteHours: number;
  /** CPU time of its writes (ingest epochs, SQL scripts, Kafka source batches), in ms. */
  readonly cpuMs: number;
  /** When the counts started (the tenant's first start with metering). */
  readonly since: string;
}

export class TenantUsage {
  rowsIn = 0;
  bytesIn = 0;
  rowsOut = 0;
  bytesOut = 0;
  cpuMicros = 0;
  private byteHours = 0;
  private lastBytes = 0;
  private lastAt: number;
  private readonly since: number;

  constructor(
    private readonly runtime: SluiceRuntime,
    stored: StoredUsage | null = null,
  ) {
    this.lastAt = Date.now();
    this.since = stored?.since ?? this.lastAt;
    if (stored !== null) {
      this.rowsIn = stored.rowsIn;
      this.bytesIn = stored.bytesIn;
      this.rowsOut = stored.rowsOut;
      this.bytesOut = stored.bytesOut;
      this.cpuMicros = stored.cpuMicros;
      this.byteHours = stored.stateByteHours;
    }
  }

  /** The counts to store (state byte-hours integrated up to now). */
  stored(): StoredUsage {
    this.sample();
    return {
      rowsIn: this.rowsIn,
      bytesIn: this.bytesIn,
      rowsOut: this.rowsOut,
      bytesOut: this.bytesOut,
      cpuMicros: this.cpuMicros,
      stateByteHours: this.byteHours,
      since: this.since,
    };
  }

  /** Integrates the state held since the last reading and takes a new one. */
  sample(now = Date.now()): void {
    this.byteHours += (this.lastBytes * Math.max(0, now - this.lastAt)) / 3_600_000;
    this.lastAt = now;
    this.lastBytes = stateBytes(this.runtime);
  }

  report(): UsageReport {
    this.sample();
    return {
      rowsIn: this.rowsIn,
      bytesIn: this.bytesIn,
      rowsOut: this.rowsOut,
      bytesOut: this.bytesOut,
      stateBytes: this.lastBytes,
      stateByteHours: this.byteHours,
      cpuMs: this.cpuMicros / 1000,
      since: new Date(this.since).toISOString(),
    };
  }
}
