// Metering per tenant (docs/security.md#metering): what a tenant sent and was sent, the state it
// holds and has held over time (byte-hours, integrated at every reading and at least every few
// seconds), and the CPU time of its epochs. Counted in memory from the server's start.
import { stateBytes } from './quotas.ts';
import type { SluiceRuntime } from './runtime.ts';

export interface UsageReport {
  /** Rows ingested through POST /v1/tables/{t}/rows (inserts plus deletes), as applied. */
  readonly rowsIn: number;
  /** Request body bytes of the tenant's requests. */
  readonly bytesIn: number;
  /** Changelog rows its views emitted. */
  readonly rowsOut: number;
  /** Response body bytes of the tenant's HTTP answers. */
  readonly bytesOut: number;
  readonly stateBytes: number;
  readonly stateByteHours: number;
  /** CPU time of its ingest epochs, in ms. */
  readonly cpuMs: number;
  /** Wall-clock ms since which the counts run. */
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
  private readonly since = Date.now();

  constructor(private readonly runtime: SluiceRuntime) {
    this.lastAt = Date.now();
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
