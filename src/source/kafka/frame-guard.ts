// Checks the framing of what a broker sends before the Kafka client reads it. Every Kafka response
// is a 4-byte big-endian size followed by that many bytes, the first four of them a correlation id.
// A peer that is not a Kafka broker (or a broken one) can send a size below 4 — on which the client
// library throws inside its socket handler, an uncaught exception that ends the process — or a huge
// size the client would buffer towards. Such a stream is cut with a clear reason instead.

/** Largest response frame accepted (fetch responses are bounded by the fetch size, ~10 MiB). */
export const MAX_FRAME_BYTES = 128 * 1024 * 1024;

export class KafkaFrameGuard {
  private readonly header = Buffer.alloc(4);
  private have = 0;
  private remaining = 0;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Follows the frames in `chunk`: null while they are well-formed, else what is wrong. */
  feed(chunk: Uint8Array): string | null {
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - i);
        this.remaining -= take;
        i += take;
        continue;
      }
      this.header[this.have] = chunk[i] ?? 0;
      this.have += 1;
      i += 1;
      if (this.have < 4) continue;
      this.have = 0;
      const size = this.header.readInt32BE(0);
      if (size < 4 || size > this.maxFrameBytes) {
        return `the answer is not the Kafka protocol (a response frame of ${size} bytes; expected 4 to ${this.maxFrameBytes})`;
      }
      this.remaining = size;
    }
    return null;
  }
}
