// A statement error as the shell prints it: code and message, the statement's line with a caret
// under the reported column (measured in terminal columns, so it stays under the right character
// after wide or combined characters), then detail and hint. Long lines are cut to a window around
// the caret.
import type { ApiError } from './api-client.ts';
import { displayWidth, escapeControls } from './table-format.ts';

export interface ErrorContext {
  /** The script that was sent (positions are relative to it). */
  readonly script: string;
  /** The input line the script started on (1 for `-c` and the interactive shell). */
  readonly firstLine: number;
  /** A file name to show (`q.sql:12: …`); absent: `LINE 2: …`, the line within the statement. */
  readonly source?: string;
}

const WINDOW = 72; // characters of a long line shown around the caret

/** Echoable text: tabs as one blank (so the caret lines up), other controls escaped. */
function echo(text: string): string {
  return escapeControls(text.replace(/\t/g, ' '));
}

export function formatError(error: ApiError, context: ErrorContext | null): string[] {
  const out = [`ERROR ${error.code}: ${escapeControls(error.message)}`];
  const position = error.position;
  if (context !== null && position !== undefined) {
    const line = context.script.split('\n')[position.line - 1];
    if (line !== undefined && position.column >= 1) {
      const label =
        context.source === undefined
          ? `LINE ${position.line}: `
          : `${context.source}:${context.firstLine + position.line - 1}: `;
      // Columns count UTF-16 code units from 1; one past the end points after the last character.
      let at = Math.min(position.column - 1, line.length);
      let start = 0;
      let end = line.length;
      if (line.length > WINDOW) {
        start = Math.max(0, Math.min(at - WINDOW / 2, line.length - WINDOW));
        end = Math.min(line.length, start + WINDOW);
        if (/[\udc00-\udfff]/.test(line[start] ?? '')) start++; // never split a surrogate pair
        if (/[\ud800-\udbff]/.test(line[end - 1] ?? '')) end--;
        at = Math.max(at, start);
      }
      const lead = start > 0 ? '...' : '';
      const tail = end < line.length ? '...' : '';
      const before = lead + echo(line.slice(start, at));
      out.push(`${label}${before}${echo(line.slice(at, end))}${tail}`);
      out.push(' '.repeat(displayWidth(label) + displayWidth(before)) + '^');
    }
  }
  if (error.detail !== undefined) out.push(`DETAIL: ${escapeControls(error.detail)}`);
  if (error.hint !== undefined) out.push(`HINT: ${escapeControls(error.hint)}`);
  return out;
}
