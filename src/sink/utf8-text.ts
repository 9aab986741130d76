// A message's UTF-8 bytes, encoded once for every subscriber it goes to: a feed hands one epoch's
// text to each of its subscribers in turn, and each needs its byte length (budget, buffer bound,
// metering) and the WebSocket its bytes. The last text encoded is remembered until the end of the tick.

/** Texts shorter than this are measured as they come (a control message; no cache needed). */
const CACHED_FROM = 1024;

let cachedText: string | null = null;
let cachedBytes: Buffer | null = null;

/** The UTF-8 bytes of `text`; the same Buffer for the same text within a tick. Not to be changed. */
export function utf8Bytes(text: string): Buffer {
  if (text === cachedText && cachedBytes !== null) return cachedBytes;
  const bytes = Buffer.from(text, 'utf8');
  if (text.length >= CACHED_FROM) {
    // Dropped at the end of the tick: the cache never holds a message past its publication.
    if (cachedText === null) process.nextTick(forget);
    cachedText = text;
    cachedBytes = bytes;
  }
  return bytes;
}

/** The UTF-8 length of `text`: the length of its bytes once encoded, else measured (nothing allocated). */
export function utf8Length(text: string): number {
  if (text === cachedText && cachedBytes !== null) return cachedBytes.length;
  return Buffer.byteLength(text, 'utf8');
}

function forget(): void {
  cachedText = null;
  cachedBytes = null;
}
