// The closed set of Sluice errors. Every error a user can see has a stable `code`; the HTTP status
// follows from the error's class in exactly one place (`httpStatusOf`). Messages follow PostgreSQL's
// style: lowercase, no trailing period, identifiers quoted, the object kind named.

export interface SourcePosition {
  /** 1-based line in the submitted SQL text. */
  readonly line: number;
  /** 1-based column in the submitted SQL text. */
  readonly column: number;
}

export interface ErrorOptions {
  readonly detail?: string;
  readonly hint?: string;
  readonly position?: SourcePosition;
}

/** Every stable error code, with the class it belongs to. Documented in docs/errors.md. */
export const ErrorCodes = {
  SYNTAX_ERROR: 'parse',
  INVALID_TEXT: 'parse',
  // What one script may ask of the SQL front end (src/common/limits.ts).
  SCRIPT_TOO_LARGE: 'parse',
  STATEMENT_TOO_LARGE: 'parse',
  TOO_MANY_ITEMS: 'parse',
  NAME_TOO_LONG: 'parse',
  NESTING_TOO_DEEP: 'parse',
  UNKNOWN_TABLE: 'plan',
  UNKNOWN_VIEW: 'plan',
  UNKNOWN_OBJECT: 'plan',
  UNKNOWN_COLUMN: 'plan',
  UNKNOWN_FUNCTION: 'plan',
  UNKNOWN_TYPE: 'plan',
  AMBIGUOUS_COLUMN: 'plan',
  DUPLICATE_ALIAS: 'plan',
  DUPLICATE_OBJECT: 'plan',
  RESERVED_NAME: 'plan',
  DUPLICATE_COLUMN: 'plan',
  TYPE_MISMATCH: 'plan',
  GROUPING_ERROR: 'plan',
  INVALID_AGGREGATE: 'plan',
  WRONG_OBJECT_KIND: 'plan',
  DEPENDENT_OBJECTS: 'plan',
  INVALID_DEFINITION: 'plan',
  INVALID_OPTION: 'plan',
  FORBIDDEN_BROKER: 'plan',
  NOT_SUPPORTED: 'not-supported',
  NOT_NULL_VIOLATION: 'execution',
  INVALID_VALUE: 'execution',
  ROW_NOT_FOUND: 'execution',
  UNIQUE_VIOLATION: 'execution',
  SERIALIZATION_FAILURE: 'execution',
  APPEND_ONLY_TABLE: 'execution',
  DIVISION_BY_ZERO: 'execution',
  NUMERIC_OVERFLOW: 'execution',
  INVALID_CAST: 'execution',
  STRING_TOO_LONG: 'execution',
  ARRAY_TOO_LARGE: 'execution',
  INVALID_REGEX: 'execution',
  VIEW_ERROR: 'execution',
  CARDINALITY_VIOLATION: 'execution',
  STATE_ERROR: 'state',
  CONNECTOR_ERROR: 'connector',
  INTERNAL_ERROR: 'internal',
  // Server (HTTP / WebSocket) errors.
  INVALID_JSON: 'parse',
  INVALID_REQUEST: 'parse',
  PAYLOAD_TOO_LARGE: 'execution',
  NOT_FOUND: 'plan',
  RESUME_TOO_OLD: 'execution',
  SLOW_CONSUMER: 'execution',
  VIEW_DROPPED: 'execution',
  UNAVAILABLE: 'state',
  UNSUPPORTED_MEDIA_TYPE: 'parse',
  FORBIDDEN_ORIGIN: 'execution',
  FORBIDDEN_HOST: 'execution',
  REQUEST_TIMEOUT: 'execution',
  URI_TOO_LONG: 'parse',
  HEADERS_TOO_LARGE: 'parse',
  // Bounds on what one request or client may take.
  RESULT_TOO_LARGE: 'execution',
  SCAN_TOO_LARGE: 'execution',
  EPOCH_TOO_LARGE: 'execution',
  VIEW_TOO_LARGE: 'execution',
  AS_OF_TOO_OLD: 'execution',
  TOO_MANY_SUBSCRIBERS: 'execution',
  // Idempotent ingest (the Idempotency-Key header).
  BAD_IDEMPOTENCY_KEY: 'parse',
  IDEMPOTENCY_KEY_REUSED: 'execution',
  // Authentication and roles (docs/security.md).
  UNAUTHENTICATED: 'execution',
  FORBIDDEN: 'execution',
  // Tenants and their quotas (docs/security.md).
  TENANT_EXISTS: 'execution',
  QUOTA_EXCEEDED: 'execution',
  RATE_LIMITED: 'execution',
} as const;

export type ErrorCode = keyof typeof ErrorCodes;
export type ErrorClass = (typeof ErrorCodes)[ErrorCode];

export class SluiceError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | undefined;
  readonly hint: string | undefined;
  readonly position: SourcePosition | undefined;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message);
    this.name = 'SluiceError';
    this.code = code;
    this.detail = options.detail;
    this.hint = options.hint;
    this.position = options.position;
  }

  get errorClass(): ErrorClass {
    return ErrorCodes[this.code];
  }

  /** The JSON shape of the API's `error` object. */
  toJSON(): {
    code: ErrorCode;
    message: string;
    detail?: string;
    hint?: string;
    position?: SourcePosition;
  } {
    return {
      code: this.code,
      message: this.message,
      ...(this.detail !== undefined ? { detail: this.detail } : {}),
      ...(this.hint !== undefined ? { hint: this.hint } : {}),
      ...(this.position !== undefined ? { position: this.position } : {}),
    };
  }

  /** A copy of this error that points at `position` unless it already points somewhere. */
  at(position: SourcePosition | undefined): SluiceError {
    if (this.position !== undefined || position === undefined) return this;
    return new SluiceError(this.code, this.message, { detail: this.detail, hint: this.hint, position });
  }
}

/** A stored code (from a checkpoint or a row error) as an ErrorCode; unknown ones are internal. */
export function knownErrorCode(code: string): ErrorCode {
  return code in ErrorCodes ? (code as ErrorCode) : 'INTERNAL_ERROR';
}

export function parseError(message: string, position: SourcePosition, hint?: string): SluiceError {
  return new SluiceError('SYNTAX_ERROR', message, { position, ...(hint !== undefined ? { hint } : {}) });
}

export function notSupported(construct: string, position?: SourcePosition, hint?: string): SluiceError {
  return new SluiceError('NOT_SUPPORTED', `${construct} is not supported`, {
    ...(position !== undefined ? { position } : {}),
    ...(hint !== undefined ? { hint } : {}),
  });
}

export function internalError(message: string): SluiceError {
  return new SluiceError('INTERNAL_ERROR', message);
}

/** The one place where an error class becomes an HTTP status. */
export function httpStatusOf(error: SluiceError): number {
  if (error.code === 'UNKNOWN_TABLE' || error.code === 'UNKNOWN_VIEW' || error.code === 'UNKNOWN_OBJECT') {
    return 404;
  }
  if (
    error.code === 'DUPLICATE_OBJECT' ||
    error.code === 'IDEMPOTENCY_KEY_REUSED' ||
    error.code === 'SERIALIZATION_FAILURE' ||
    error.code === 'TENANT_EXISTS'
  )
    return 409;
  if (error.code === 'NOT_FOUND') return 404;
  if (error.code === 'PAYLOAD_TOO_LARGE') return 413;
  if (error.code === 'UNSUPPORTED_MEDIA_TYPE') return 415;
  if (
    error.code === 'FORBIDDEN_ORIGIN' ||
    error.code === 'FORBIDDEN_HOST' ||
    error.code === 'FORBIDDEN' ||
    error.code === 'QUOTA_EXCEEDED'
  )
    return 403;
  if (error.code === 'UNAUTHENTICATED') return 401;
  if (error.code === 'RATE_LIMITED') return 429;
  if (error.code === 'REQUEST_TIMEOUT') return 408;
  if (error.code === 'URI_TOO_LONG') return 414;
  if (error.code === 'HEADERS_TOO_LARGE') return 431;
  if (error.code === 'RESUME_TOO_OLD' || error.code === 'VIEW_DROPPED' || error.code === 'AS_OF_TOO_OLD')
    return 410;
  if (error.code === 'UNAVAILABLE' || error.code === 'TOO_MANY_SUBSCRIBERS') return 503;
  switch (error.errorClass) {
    case 'parse':
    case 'plan':
    case 'not-supported':
    case 'execution':
      return 400;
    case 'connector':
      return 502;
    case 'state':
    case 'internal':
      return 500;
  }
}

export function quoteIdent(name: string): string {
  return `"${name}"`;
}
