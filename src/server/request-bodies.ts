// How request bodies and query strings are read: the JSON body parser (exact numbers, strict UTF-8,
// well-formed text), the validators of bodies and query strings, and framework errors as SluiceErrors.
import { Ajv } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { SluiceError } from '../common/errors.ts';
import {
  decodeUtf8Strict,
  findIllFormedText,
  invalidUtf8Offset,
  mayHoldLoneSurrogate,
  JsonNumberOutOfRange,
  parseJsonExact,
  stringifyWire,
} from '../common/json-codec.ts';
import { FlatRowArrayReader } from '../common/json-codec-rows.ts';
import { IDEMPOTENCY_HEADER, INGEST_URL, SQL_URL } from './write-routes.ts';
import { bodyHash } from './idempotency-window.ts';
import { illFormedBodyError } from './http-errors.ts';
import { yieldToLoop } from './runtime/base.ts';

/**
 * The most bytes of a flat row body read in one turn of the event loop (then to its row's end):
 * about 3 ms of reading at 50-byte rows on this machine, so a 15 MB body (300,000 rows) is read in
 * some 60 slices between which other requests, ingest and epochs go on, instead of holding the loop
 * ≈ 0.2 s. A body this size or smaller (every usual one) is read at once, as before.
 */
export const BODY_SLICE_BYTES = 256 * 1024;

/** Slices of flat row bodies read so far (a test checks a large body is read in several). */
export const bodySlicesRead = { count: 0 };

/** Where the parser leaves what later hooks need of a body: its size, and an ingest key's body hash. */
export interface BodyRecords {
  readonly bodyLimit: number;
  readonly bodyBytes: WeakMap<FastifyRequest['raw'], number>;
  readonly bodyHashes: WeakMap<FastifyRequest['raw'], string>;
}

export function registerRequestBodies(app: FastifyInstance, records: BodyRecords): void {
  const { bodyLimit, bodyBytes, bodyHashes } = records;
  // Validation: bodies strictly (no coercion: "5" is not a number), query strings with coercion.
  const bodyAjv = new Ajv({
    coerceTypes: false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  const queryAjv = new Ajv({
    coerceTypes: true,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema),
  );
  // Responses: one bigint-aware JSON writer (response schemas document, they do not filter).
  app.setSerializerCompiler(() => (data) => stringifyWire(data));
  app.setSchemaErrorFormatter((errors, dataVar) => {
    const first = errors[0];
    const where = `${dataVar}${first?.instancePath ?? ''}`;
    const message = first === undefined ? `invalid ${dataVar}` : `${where} ${first.message ?? 'is invalid'}`;
    return new SluiceError('INVALID_REQUEST', `invalid request: ${message}`);
  });

  // Bodies are JSON, sent as application/json: a browser page can send text/plain, form and
  // multipart bodies to any site without asking (CORS "simple" requests), so those are refused
  // (415) rather than read as JSON. Parsed exactly (big integers kept); the bytes must be UTF-8 and
  // the text well-formed Unicode (INVALID_TEXT), so what is stored is exactly what was sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      done(unsupportedMediaType(`application/json; charset=${charset}`), undefined);
      return;
    }
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    bodyBytes.set(request.raw, bytes.length);
    if (request.routeOptions.url === INGEST_URL && request.headers[IDEMPOTENCY_HEADER] !== undefined)
      bodyHashes.set(request.raw, bodyHash(bytes));
    // An array of flat rows in ASCII (the usual ingest body) read from its bytes in one pass: the
    // same value JSON.parse gives, with nothing for the checks below to find; anything else takes
    // the general path. A large body is read in slices (nothing applies before it is read whole).
    const reader = new FlatRowArrayReader(bytes);
    const rows = readSlice(reader);
    if (rows === undefined) {
      readRest(reader).then(
        (read) => (read !== null ? done(null, read) : parseGeneral(request, bytes, done)),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error)), undefined),
      );
    } else if (rows !== null) done(null, rows);
    else parseGeneral(request, bytes, done);
  });
}

/** One slice of a flat row body (see FlatRowArrayReader.read for the answer). */
function readSlice(reader: FlatRowArrayReader): Record<string, unknown>[] | null | undefined {
  bodySlicesRead.count++;
  return reader.read(reader.offset + BODY_SLICE_BYTES);
}

/** The rest of a flat row body, a slice per turn of the event loop. */
async function readRest(reader: FlatRowArrayReader): Promise<Record<string, unknown>[] | null> {
  for (;;) {
    await yieldToLoop();
    const rows = readSlice(reader);
    if (rows !== undefined) return rows;
  }
}

/**
 * A body the flat row reader does not take: strict UTF-8, JSON.parse with exact numbers, and
 * well-formed text, each refusal a SluiceError.
 */
function parseGeneral(
  request: FastifyRequest,
  bytes: Buffer,
  done: (error: Error | null, value?: unknown) => void,
): void {
  const text = decodeUtf8Strict(bytes);
  if (text === null) {
    done(
      new SluiceError('INVALID_TEXT', 'request body is not valid UTF-8', {
        detail: `invalid byte sequence at byte ${invalidUtf8Offset(bytes)}`,
      }),
      undefined,
    );
    return;
  }
  if (text.trim() === '') {
    done(new SluiceError('INVALID_JSON', 'request body is empty, expected JSON'), undefined);
    return;
  }
  let value: unknown;
  try {
    value = parseJsonExact(text);
  } catch (error) {
    if (error instanceof JsonNumberOutOfRange) {
      done(numberOutOfRange(error, request), undefined);
      return;
    }
    done(
      new SluiceError('INVALID_JSON', 'request body is not valid JSON', {
        detail: error instanceof Error ? error.message : String(error),
      }),
      undefined,
    );
    return;
  }
  const found = mayHoldLoneSurrogate(text) ? findIllFormedText(value) : null;
  if (found !== null) {
    const sqlField =
      request.routeOptions.url === SQL_URL &&
      !found.inKey &&
      found.path.length === 1 &&
      found.path[0] === 'sql';
    done(illFormedBodyError(found, sqlField), undefined);
    return;
  }
  done(null, value);
}

/**
 * A body's number beyond a double (1e400), as the table's write path worded it when such a number
 * reached it as Infinity: in an ingest body, the column, table and row; elsewhere, the JSON path.
 */
function numberOutOfRange(error: JsonNumberOutOfRange, request: FastifyRequest): SluiceError {
  const table = (request.params as { name?: unknown } | undefined)?.name;
  const path = error.path;
  const inRows = path[0] === 'insert' || path[0] === 'delete' ? 1 : 0;
  const row = path[inRows];
  const field = error.columnAt(inRows + 1);
  if (
    request.routeOptions.url !== INGEST_URL ||
    typeof table !== 'string' ||
    typeof row !== 'number' ||
    field === null
  ) {
    return error;
  }
  const within = field.within !== null ? ` at ${field.within} of its value` : '';
  return new SluiceError(
    'INVALID_VALUE',
    `invalid value for column "${field.column}" of table "${table}": ${error.message}`,
    { detail: `in ${inRows === 1 ? String(path[0]) : 'insert'} row ${row + 1}${within}` },
  );
}

function unsupportedMediaType(contentType: string | undefined): SluiceError {
  return new SluiceError(
    'UNSUPPORTED_MEDIA_TYPE',
    contentType === undefined || contentType === ''
      ? 'request body has no content type; expected application/json'
      : `unsupported content type "${contentType.slice(0, 100)}"; expected application/json`,
    { hint: "send the body with the header 'content-type: application/json'" },
  );
}

export function toSluiceError(error: unknown, request?: FastifyRequest): SluiceError {
  if (error instanceof SluiceError) return error;
  const e = error as Partial<FastifyError> & { message?: string };
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return unsupportedMediaType(request?.headers['content-type']);
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new SluiceError('PAYLOAD_TOO_LARGE', 'request body is larger than the configured limit', {
      hint: 'split the batch or raise --body-limit',
    });
  }
  if (e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new SluiceError('INVALID_JSON', 'request body is empty, expected JSON');
  if (e.validation !== undefined)
    return new SluiceError('INVALID_REQUEST', `invalid request: ${e.message ?? ''}`);
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new SluiceError('INVALID_REQUEST', `invalid request: ${e.message ?? 'bad request'}`);
  }
  return new SluiceError('INTERNAL_ERROR', 'internal error', { detail: e.message ?? String(error) });
}
