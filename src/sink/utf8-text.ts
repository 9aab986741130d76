// A message's UTF-8 bytes and length, worked out once for every subscriber it goes to: a feed hands
// one epoch's text to each of its subscribers in turn, and each needs its byte length (budget, buffer
// bound, metering: three or four asks per subscriber) and the WebSocket its bytes. The last text
// measured and the last encoded are remembered until the end of the tick.

/** Texts shorter than this are measured as they come (a control message; no cache needed). */
const CACHED_FROM = 1024;

let cachedText: string | null = null;
let cachedBytes: Buffer | null = null;
let measuredText: string | null = null;
let measuredLength = 0;
let forgetQueued = false;

/** The UTF-8 bytes of `text`; the same Buffer for the same text within a tick. Not to be changed. */
export function utf8Bytes(text: string): Buffer {
  if (text === cachedText && cachedBytes !== null) return cachedBytes;
  // A text whose UTF-8 length is its length is ASCII (any other code unit takes more bytes than
  // units), and then its latin1 bytes are its UTF-8 bytes: a copy, with no encoder to run.
  const ascii = text === measuredText && measuredLength === text.length;
  const bytes = Buffer.from(text, ascii ? 'latin1' : 'utf8');
  if (text.length >= CACHED_FROM) {
    // Dropped at the end of the tick: the cache never holds a message past its publication.
    forgetAtTickEnd();
    cachedText = text;
    cachedBytes = bytes;
  }
  return bytes;
}

/**
 * The UTF-8 length of `text`: the length of its bytes once encoded, else measured (nothing
 * allocated) and, for a long text, remembered: the first subscriber of an epoch asks three times
 * before its bytes are encoded, and each measure of a 45 KB message reads all of it.
 */
export function utf8Length(text: string): number {
  if (text === cachedText && cachedBytes !== null) return cachedBytes.length;
  if (text === measuredText) return measuredLength;
  const length = Buffer.byteLength(text, 'utf8');
  if (text.length >= CACHED_FROM) {
    forgetAtTickEnd();
    measuredText = text;
    measuredLength = length;
  }
  return length;
}

function forgetAtTickEnd(): void {
  if (forgetQueued) return;
  forgetQueued = true;
  process.nextTick(forget);
}

function forget(): void {
  forgetQueued = false;
  cachedText = null;
  cachedBytes = null;
  measuredText = null;
  measuredLength = 0;
}
