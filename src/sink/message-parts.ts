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

/** The layout of the array under `field` at the top level of a JSON object's text, or null. */
export function arrayLayout(text: string, field: string): ArrayLayout | null {
  const key = `"${field}"`;
  let depth = 0;
  let inString = false;
  let open = -1;
  let start = -1;
  const elements: [number, number][] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      // A key of the top-level object, followed by ':' and the array.
      if (depth === 1 && open < 0 && text.startsWith(key, i) && text.startsWith(':[', i + key.length)) {
        open = i + key.length + 2;
        i = open - 1;
        depth = 2;
        start = open;
        continue;
      }
      inString = true;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (open >= 0 && depth === 1) {
        if (i > start) elements.push([start, i]);
        return { open, close: i, elements };
      }
    } else if (c === 0x2c && open >= 0 && depth === 2) {
      elements.push([start, i]);
      start = i + 1;
    }
  }
  return null;
}

/**
 * The parts of `text` each at most `maxBytes` UTF-8 bytes (with the transport's newline), or
 * `[text]` when it fits or is not a `changes` or `snapshot` message. One element larger than the
 * bound alone is sent in a part of its own, over the bound: a row cannot be cut.
 */
export function messageParts(text: string, maxBytes: number): string[] {
  if (utf8Length(text) + 1 <= maxBytes) return [text];
  const field = text.startsWith('{"type":"changes"')
    ? 'changes'
    : text.startsWith('{"type":"snapshot"')
      ? 'rows'
      : null;
  if (field === null) return [text];
  const layout = arrayLayout(text, field);
  if (layout === null || layout.elements.length < 2) return [text];
  const head = text.slice(0, layout.open);
  const moreTail = '],"more":true}';
  const lastTail = text.slice(layout.close);
  const headBytes = utf8Length(head) + 1;
  const parts: string[] = [];
  let run: string[] = [];
  let runBytes = 0;
  const elementBytes = layout.elements.map(([s, e]) => utf8Length(text.slice(s, e)) + 1);
  const lastTailBytes = utf8Length(lastTail);
  for (let i = 0; i < layout.elements.length; i++) {
    const bytes = elementBytes[i] as number;
    if (run.length > 0 && headBytes + runBytes + bytes + moreTail.length > maxBytes) {
      parts.push(head + run.join(',') + moreTail);
      run = [];
      runBytes = 0;
    }
    const [s, e] = layout.elements[i] as readonly [number, number];
    run.push(text.slice(s, e));
    runBytes += bytes;
  }
  // The last run goes with the message's own tail; when that tail (errors) does not fit beside it,
  // it goes alone after a run marked as not the last.
  if (run.length > 0 && parts.length > 0 && headBytes + runBytes + lastTailBytes > maxBytes) {
    parts.push(head + run.join(',') + moreTail);
    run = [];
  }
  parts.push(head + run.join(',') + lastTail);
  return parts;
}
