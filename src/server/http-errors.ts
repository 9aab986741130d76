// The answers the HTTP layer gives before any route runs — a malformed request, headers too large, a
// request that did not arrive in time, a URL the router cannot decode — in the API's own error shape
// (`{"error": {"code", "message", ...}}`) like every other answer, and the body checks that turn
// text that is not well-formed Unicode into INVALID_TEXT.
import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError } from 'fastify';
import { SluiceError, httpStatusOf, type SourcePosition } from '../common/errors.ts';
import { DEFAULT_SQL_LIMITS } from '../common/limits.ts';
import { describeJsonPath, describeLoneSurrogate, type IllFormedText } from '../common/json-codec.ts';

/** What node's HTTP parser reports on a connection (fastify's `clientErrorHandler` argument). */
export interface ConnectionErrorLike extends Error {
  readonly code?: string;
}

/** A connection-level failure as the error to answer with. */
export function connectionError(error: ConnectionErrorLike): SluiceError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new SluiceError('REQUEST_TIMEOUT', 'the request was not received in time', {
        hint: 'a request must arrive whole within --request-timeout-ms, its headers within --headers-timeout-ms',
      });
    case 'HPE_HEADER_OVERFLOW':
      return new SluiceError(
        'HEADERS_TOO_LARGE',
        `the request line and headers are larger than ${maxHeaderSize} bytes`,
        {
          hint: 'filters and names belong in the URL, data in a JSON body',
        },
      );
    default:
      return new SluiceError('INVALID_REQUEST', 'invalid request: malformed HTTP', {
        detail: error.code ?? error.message,
      });
  }
}

/**
 * Answers a connection-level failure on the raw socket and closes it. Nothing is written when the
 * peer is gone or an answer was already started on the socket.
 */
export function answerClientError(
  error: ConnectionErrorLike,
  socket: Socket,
  count: (code: string) => void,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const started = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && started !== true) {
    const sluiceError = connectionError(error);
    count(sluiceError.code);
    const status = httpStatusOf(sluiceError);
    const body = JSON.stringify({ error: sluiceError.toJSON() });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
        'content-type: application/json; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        'connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Longest path parameter (a table or view name in the URL, decoded, in UTF-16 code units) the
 * router accepts: room for the longest identifier a statement may create, every code point of it
 * outside the BMP.
 */
export const MAX_URL_PARAM_LENGTH = 2 * DEFAULT_SQL_LIMITS.maxIdentifierLength;

/** A router-level failure (fastify's `frameworkErrors`) as the error to answer with. */
export function frameworkError(error: FastifyError): SluiceError {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new SluiceError('INVALID_REQUEST', 'invalid request: the URL is not validly percent-encoded', {
        detail: error.message,
      });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new SluiceError(
        'URI_TOO_LONG',
        `a name in the URL is longer than ${MAX_URL_PARAM_LENGTH} characters`,
      );
    default:
      return new SluiceError('INTERNAL_ERROR', 'internal error', { detail: error.message });
  }
}

/** 1-based line and column (UTF-16 code units, as the SQL parser counts) of `index` in `text`. */
export function positionAt(text: string, index: number): SourcePosition {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: index - lineStart + 1 };
}

/**
 * INVALID_TEXT for a request body holding a lone surrogate. `sqlField`: the body is a statement
 * request and the finding is its `sql` text, so the error points into the SQL.
 */
export function illFormedBodyError(found: IllFormedText, sqlField: boolean): SluiceError {
  const what = describeLoneSurrogate(found.text, found.index);
  if (sqlField) {
    return new SluiceError('INVALID_TEXT', `SQL text is not well-formed Unicode: lone surrogate ${what}`, {
      position: positionAt(found.text, found.index),
      hint: 'a surrogate code point only occurs as half of a pair; send the character itself or its pair',
    });
  }
  const where = `${found.inKey ? 'the key ' : ''}${describeJsonPath(found.path)}`;
  return new SluiceError(
    'INVALID_TEXT',
    `request body holds text that is not well-formed Unicode: lone surrogate ${what} in ${where}`,
    { hint: 'nothing of the request was applied' },
  );
}
