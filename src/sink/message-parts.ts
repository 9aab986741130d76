// Splitting one wire message into parts no larger than a subscriber's byte bound (the opt-in
// `maxMessageBytes` subscribe parameter). A `changes` message carries one epoch, and a 1M-row epoch
// was one 47.7 MB frame: a client with a bounded frame size could not read it. Split, each part is
// the message's head (type, epoch, positions, clock, watermarks) with a run of its `changes`; all
// but the last carry `"more":true`, and the last keeps the rest of the message (its `errors`). A
// `snapshot` chunk is split the same way over its `rows` (its last part keeps its own `more`).
// The split works on the text (no parse and re-encode: values keep their exact wire form).
import { utf8Length } from './utf8-text.ts';

/** Where a top-level array field's elements lie in a message's text. */
interface ArrayLayout {
  /** Index just after the field's `[`. */
  readonly open: number;
  /** Index of the field's `]`. */
  readonly close: number;
  /** [start, end) of each element. */
  readonly elements: readonly (readonly [number, number])[];
}

/** Told of each element: its [start, end) in the text and the UTF-8 bytes before each. */
type OnElement = (start: number, end: number, startByte: number, endByte: number) => void;

/**
 * Walks the array under `field` at the top level of a JSON object's text, telling `onElement` of
 * each element; returns where the array opens and closes, or null. One pass over the characters,
 * counting UTF-8 bytes as it goes and allocating nothing per element (a 1M-change epoch is tens of
 * megabytes: slicing and measuring each element apart took seconds, most of it garbage).
 */
function scanArray(
  text: string,
  field: string,
  onElement: OnElement,
): { open: number; close: number } | null {
  const key = `"${field}"`;
  let depth = 0;
  let inString = false;
  let open = -1;
  let start = -1;
  let startByte = 0;
  /** UTF-8 bytes of text[0, i). */
  let b = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) {
        // A backslash and the character it escapes (both ASCII in JSON text).
        b += 2;
        i++;
      } else {
        b += c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3;
        if (c === 0x22) inString = false;
      }
      continue;
    }
    if (c === 0x22) {
      // A key of the top-level object, followed by ':' and the array (all ASCII).
      if (depth === 1 && open < 0 && text.startsWith(key, i) && text.startsWith(':[', i + key.length)) {
        open = i + key.length + 2;
        b += open - i;
        i = open - 1;
        depth = 2;
        start = open;
        startByte = b;
        continue;
      }
      b++;
      inString = true;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (open >= 0 && depth === 1) {
        if (i > start) onElement(start, i, startByte, b);
        return { open, close: i };
      }
    } else if (c === 0x2c && open >= 0 && depth === 2) {
      onElement(start, i, startByte, b);
      start = i + 1;
      startByte = b + 1;
    }
    // Outside strings JSON is ASCII (whitespace, punctuation, numbers, literals).
    b++;
  }
  return null;
}

/** The layout of the array under `field` at the top level of a JSON object's text, or null. */
export function arrayLayout(text: string, field: string): ArrayLayout | null {
  const elements: [number, number][] = [];
  const found = scanArray(text, field, (start, end) => elements.push([start, end]));
  return found === null ? null : { ...found, elements };
}

/**
 * The parts of `text` each at most `maxBytes` UTF-8 bytes (with the transport's newline), or
 * `[text]` when it fits or is not a `changes` or `snapshot` message. One element larger than the
 * bound alone is sent in a part of its own, over the bound: a row cannot be cut. A part's run of
 * elements is one slice of the text (they lie side by side, commas included), cut during the scan.
 */
export function messageParts(text: string, maxBytes: number): string[] {
  if (utf8Length(text) + 1 <= maxBytes) return [text];
  // The subscribers of a view are written the same message text in one turn: those asking the same
  // bound share one split (a 1M-change epoch takes about a second to split). Kept until the turn
  // ends, so the message is not held past its writes.
  if (lastSplit !== null && lastSplit.text === text && lastSplit.maxBytes === maxBytes)
    return lastSplit.parts;
  const parts = splitMessage(text, maxBytes);
  if (parts.length > 1) {
    if (lastSplit === null) setImmediate(forgetLastSplit);
    lastSplit = { text, maxBytes, parts };
    splitStats.splits++;
  }
  return parts;
}

/** Splits made (not shared from the same turn's split): counted for tests. */
export const splitStats = { splits: 0 };

let lastSplit: { readonly text: string; readonly maxBytes: number; readonly parts: string[] } | null = null;

function forgetLastSplit(): void {
  lastSplit = null;
}

function splitMessage(text: string, maxBytes: number): string[] {
  const field = text.startsWith('{"type":"changes"')
    ? 'changes'
    : text.startsWith('{"type":"snapshot"')
      ? 'rows'
      : null;
  if (field === null) return [text];
  const moreTail = '],"more":true}';
  const cuts: number[] = []; // [start, end) of each run but the last, in characters
  let headBytes = -1;
  let runStart = -1;
  let runStartByte = 0;
  let prevEnd = -1;
  let count = 0;
  const found = scanArray(text, field, (start, end, startByte, endByte) => {
    count++;
    if (runStart < 0) {
      // The head is the text before the first element (all ASCII up to there but for strings in
      // positions and watermarks, hence measured by bytes, not characters).
      headBytes = startByte + 1;
      runStart = start;
      runStartByte = startByte;
    } else if (headBytes + endByte - runStartByte + moreTail.length > maxBytes) {
      cuts.push(runStart, prevEnd);
      runStart = start;
      runStartByte = startByte;
    }
    prevEnd = end;
  });
  if (found === null || count < 2) return [text];
  const head = text.slice(0, found.open);
  const lastTail = text.slice(found.close);
  const parts: string[] = [];
  for (let i = 0; i < cuts.length; i += 2) parts.push(head + text.slice(cuts[i], cuts[i + 1]) + moreTail);
  const lastRun = text.slice(runStart, prevEnd);
  // The last run goes with the message's own tail; when that tail (errors) does not fit beside it,
  // it goes alone after a run marked as not the last.
  if (parts.length > 0 && utf8Length(head) + 1 + utf8Length(lastRun) + utf8Length(lastTail) > maxBytes) {
    parts.push(head + lastRun + moreTail, head + lastTail);
  } else parts.push(head + lastRun + lastTail);
  return parts;
}
