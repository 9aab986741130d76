// The SQL lexer (chevrotain) shared by the statement grammar and the SELECT adapter: PostgreSQL-style
// tokens with 1-based positions in the full submitted text. Comments and whitespace never become tokens.
import { createToken, Lexer, type IToken, type TokenType } from 'chevrotain';
import { parseError, type SluiceError, type SourcePosition } from '../common/errors.ts';

// ── Categories (abstract token types) ────────────────────────────────────────────────────────────
/** Every token: select bodies are taken verbatim as "any token up to the end of the statement". */
export const AnyToken = createToken({ name: 'AnyToken', pattern: Lexer.NA });
/** Every unquoted word, keyword or not (the adapter treats these uniformly). */
export const Word = createToken({ name: 'Word', pattern: Lexer.NA, categories: [AnyToken] });
/** What may name a table, column or type: identifiers, quoted identifiers and non-reserved keywords. */
export const Ident = createToken({ name: 'Ident', pattern: Lexer.NA, categories: [AnyToken] });

// ── Skipped ──────────────────────────────────────────────────────────────────────────────────────
const WhiteSpace = createToken({
  name: 'WhiteSpace',
  pattern: /[ \t\r\n\f\v]+/,
  group: Lexer.SKIPPED,
  line_breaks: true,
});
const LineComment = createToken({ name: 'LineComment', pattern: /--[^\n\r]*/, group: Lexer.SKIPPED });

/** Length of a (possibly nested, as in PostgreSQL) block comment at `offset`, or -1 if unterminated. */
function blockCommentLength(text: string, offset: number): number {
  let depth = 0;
  let i = offset;
  while (i < text.length) {
    if (text.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (text.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i - offset;
    } else i++;
  }
  return -1;
}
const BlockComment = createToken({
  name: 'BlockComment',
  pattern: {
    exec: (text, offset) => {
      if (!text.startsWith('/*', offset)) return null;
      const n = blockCommentLength(text, offset);
      return n < 0 ? null : [text.slice(offset, offset + n)];
    },
  },
  group: Lexer.SKIPPED,
  line_breaks: true,
  start_chars_hint: ['/'],
});
/** Matched (and turned into an error) only when the terminated forms above did not match. */
const UnterminatedComment = createToken({
  name: 'UnterminatedComment',
  pattern: /\/\*[^]*/,
  line_breaks: true,
});

// ── Literals and identifiers ─────────────────────────────────────────────────────────────────────
export const StringLit = createToken({
  name: 'StringLit',
  pattern: /'(?:[^']|'')*'/,
  line_breaks: true,
  categories: [AnyToken],
});
const UnterminatedString = createToken({ name: 'UnterminatedString', pattern: /'[^]*/, line_breaks: true });
export const QuotedIdent = createToken({
  name: 'QuotedIdent',
  pattern: /"(?:[^"]|"")*"/,
  line_breaks: true,
  categories: [Ident],
});
const UnterminatedIdent = createToken({ name: 'UnterminatedIdent', pattern: /"[^]*/, line_breaks: true });
export const NumberLit = createToken({
  name: 'NumberLit',
  pattern: /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/,
  categories: [AnyToken],
});
export const Identifier = createToken({
  name: 'Identifier',
  pattern: /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/,
  categories: [Ident, Word],
});

// ── Operators and punctuation ────────────────────────────────────────────────────────────────────
function punct(name: string, pattern: RegExp, label: string): TokenType {
  return createToken({ name, pattern, label, categories: [AnyToken] });
}
// jsonb's operators (PostgreSQL lexes each as one operator token); before `-`, `<`, `>` and OtherOp.
export const ArrowText = punct('ArrowText', /->>/, '->>');
export const Arrow = punct('Arrow', /->/, '->');
export const HashArrowText = punct('HashArrowText', /#>>/, '#>>');
export const HashArrow = punct('HashArrow', /#>/, '#>');
export const HashMinus = punct('HashMinus', /#-/, '#-');
export const AtGt = punct('AtGt', /@>/, '@>');
export const LtAt = punct('LtAt', /<@/, '<@');
export const NotEq = punct('NotEq', /<>|!=/, '<>');
export const LtEq = punct('LtEq', /<=/, '<=');
export const GtEq = punct('GtEq', />=/, '>=');
export const Lt = punct('Lt', /</, '<');
export const Gt = punct('Gt', />/, '>');
export const Eq = punct('Eq', /=/, '=');
export const Concat = punct('Concat', /\|\|/, '||');
export const DoubleColon = punct('DoubleColon', /::/, '::');
export const Plus = punct('Plus', /\+/, '+');
export const Minus = punct('Minus', /-/, '-');
export const Star = punct('Star', /\*/, '*');
export const Slash = punct('Slash', /\//, '/');
export const Percent = punct('Percent', /%/, '%');
/** `^`, PostgreSQL's exponentiation, when it is an operator of its own (not part of a longer one). */
export const Caret = punct('Caret', /\^(?![~!@#^&|`?:])/, '^');
/** Any other PostgreSQL operator characters: lexed so that the error can name the operator. */
export const OtherOp = punct('OtherOp', /[~!@#^&|`?:]+/, 'operator');
export const LParen = punct('LParen', /\(/, '(');
export const RParen = punct('RParen', /\)/, ')');
export const LBracket = punct('LBracket', /\[/, '[');
export const RBracket = punct('RBracket', /]/, ']');
export const Comma = punct('Comma', /,/, ',');
export const Semicolon = punct('Semicolon', /;/, ';');
/** `$$`: the quotes of a SQL function's body, whose tokens are parsed in place (see ddl-function.ts). */
export const DollarQuote = punct('DollarQuote', /\$\$/, '$$');
export const Dot = punct('Dot', /\./, '.');

// ── Keywords ─────────────────────────────────────────────────────────────────────────────────────
// Words are lexed as Identifier and then retyped from this table (one Map lookup per word instead
// of one regex per keyword). Reserved keywords (PostgreSQL's reserved list, roughly) cannot name
// objects; non-reserved ones are also in the Ident category.
const keywordTypes = new Map<string, TokenType>();
function keyword(word: string, reserved: boolean): TokenType {
  const type = createToken({
    name: word,
    pattern: Lexer.NA,
    label: word,
    categories: reserved ? [Word] : [Word, Ident],
  });
  keywordTypes.set(word.toLowerCase(), type);
  return type;
}
const reserved = (word: string): TokenType => keyword(word, true);
const nonReserved = (word: string): TokenType => keyword(word, false);

export const All = reserved('ALL');
/** ARRAY, of `ARRAY[...]` (the statement grammar reads the constructor; a type suffix reads its text). */
export const ArrayKw = reserved('ARRAY');
export const And = reserved('AND');
export const As = reserved('AS');
export const Between = reserved('BETWEEN');
/** `BETWEEN [A]SYMMETRIC` */
export const Asymmetric = reserved('ASYMMETRIC');
export const Symmetric = reserved('SYMMETRIC');
export const Case = reserved('CASE');
export const Cast = reserved('CAST');
export const Check = reserved('CHECK');
export const Collate = reserved('COLLATE');
export const Constraint = reserved('CONSTRAINT');
export const Create = reserved('CREATE');
export const CurrentDate = reserved('CURRENT_DATE');
export const CurrentTime = reserved('CURRENT_TIME');
export const CurrentTimestamp = reserved('CURRENT_TIMESTAMP');
export const Default = reserved('DEFAULT');
export const Distinct = reserved('DISTINCT');
export const Else = reserved('ELSE');
export const End = reserved('END');
export const False = reserved('FALSE');
export const For = reserved('FOR');
export const Foreign = reserved('FOREIGN');
export const From = reserved('FROM');
export const ILike = reserved('ILIKE');
export const In = reserved('IN');
export const Into = reserved('INTO');
export const Is = reserved('IS');
/** `x ISNULL` / `x NOTNULL`, PostgreSQL's spellings of IS [NOT] NULL. */
export const IsNull = reserved('ISNULL');
export const Like = reserved('LIKE');
export const LocalTime = reserved('LOCALTIME');
export const LocalTimestamp = reserved('LOCALTIMESTAMP');
export const Not = reserved('NOT');
export const NotNull = reserved('NOTNULL');
export const Null = reserved('NULL');
export const On = reserved('ON');
/** ONLY, of `APPEND ONLY` (CREATE TABLE); `FROM ONLY t` is refused by the SELECT adapter. */
export const Only = reserved('ONLY');
export const Or = reserved('OR');
/** OVERLAY(s PLACING t FROM n [FOR m]) */
export const Placing = reserved('PLACING');
export const Primary = reserved('PRIMARY');
export const References = reserved('REFERENCES');
export const Returning = reserved('RETURNING');
export const Select = reserved('SELECT');
export const Table = reserved('TABLE');
export const Then = reserved('THEN');
export const True = reserved('TRUE');
export const Unique = reserved('UNIQUE');
export const Using = reserved('USING');
export const When = reserved('WHEN');
export const Where = reserved('WHERE');
export const With = reserved('WITH');
/**
 * Reserved words the statement grammar names by their text only (ANY and SOME before a `(`, TO
 * after SIMILAR): one shared type keeps them out of Ident.
 */
export const OtherReserved = createToken({ name: 'ReservedWord', pattern: Lexer.NA, categories: [Word] });
for (const word of [
  'analyse',
  'analyze',
  'any',
  'asc',
  'both',
  'column',
  'current_catalog',
  'current_role',
  'current_user',
  'deferrable',
  'desc',
  'do',
  'except',
  'fetch',
  'grant',
  'group',
  'having',
  'initially',
  'intersect',
  'lateral',
  'leading',
  'limit',
  'offset',
  'order',
  'session_user',
  'some',
  'to',
  'trailing',
  'union',
  'user',
  'variadic',
  'window',
]) {
  keywordTypes.set(word, OtherReserved);
}

export const Append = nonReserved('APPEND');
export const Cascade = nonReserved('CASCADE');
export const Clock = nonReserved('CLOCK');
export const Conflict = nonReserved('CONFLICT');
export const Dataflow = nonReserved('DATAFLOW');
export const Delete = nonReserved('DELETE');
export const Drop = nonReserved('DROP');
export const Exists = nonReserved('EXISTS');
export const Explain = nonReserved('EXPLAIN');
export const Filter = nonReserved('FILTER');
export const FunctionKw = nonReserved('FUNCTION');
export const Functions = nonReserved('FUNCTIONS');
export const Immutable = nonReserved('IMMUTABLE');
export const Language = nonReserved('LANGUAGE');
export const Replace = nonReserved('REPLACE');
export const Return = nonReserved('RETURN');
export const Returns = nonReserved('RETURNS');
export const If = nonReserved('IF');
export const Insert = nonReserved('INSERT');
export const Key = nonReserved('KEY');
export const Materialized = nonReserved('MATERIALIZED');
export const Over = nonReserved('OVER');
export const Restrict = nonReserved('RESTRICT');
export const SetKw = nonReserved('SET');
export const Show = nonReserved('SHOW');
export const Sink = nonReserved('SINK');
export const Sinks = nonReserved('SINKS');
export const Source = nonReserved('SOURCE');
export const Sources = nonReserved('SOURCES');
export const Tables = nonReserved('TABLES');
export const Update = nonReserved('UPDATE');
export const Values = nonReserved('VALUES');
export const View = nonReserved('VIEW');
export const Watermark = nonReserved('WATERMARK');
export const Watermarks = nonReserved('WATERMARKS');
export const Views = nonReserved('VIEWS');

/** Words that are niladic functions in PostgreSQL (CURRENT_DATE and friends). */
export const niladicTypes: readonly TokenType[] = [
  CurrentDate,
  CurrentTime,
  CurrentTimestamp,
  LocalTime,
  LocalTimestamp,
];

const lexedTypes: TokenType[] = [
  WhiteSpace,
  LineComment,
  BlockComment,
  UnterminatedComment,
  StringLit,
  UnterminatedString,
  QuotedIdent,
  UnterminatedIdent,
  NumberLit,
  Identifier,
  ArrowText,
  Arrow,
  HashArrowText,
  HashArrow,
  HashMinus,
  AtGt,
  LtAt,
  NotEq,
  LtEq,
  GtEq,
  Lt,
  Gt,
  Eq,
  Concat,
  DoubleColon,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Caret,
  OtherOp,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Semicolon,
  DollarQuote,
  Dot,
];

/** The parser's vocabulary: lexed types, keywords and categories. */
export const allTokenTypes: TokenType[] = [
  ...lexedTypes,
  ...new Set(keywordTypes.values()),
  AnyToken,
  Word,
  Ident,
];

const sqlLexer = new Lexer(lexedTypes, { ensureOptimizations: false, positionTracking: 'full' });

// ── Token helpers ────────────────────────────────────────────────────────────────────────────────

export function posOf(token: IToken): SourcePosition {
  return { line: token.startLine ?? 1, column: token.startColumn ?? 1 };
}

/** The position just after `token` (where "end of input" errors point). */
export function endPosOf(token: IToken): SourcePosition {
  return { line: token.endLine ?? 1, column: (token.endColumn ?? 0) + 1 };
}

/** For each `(` of `tokens`, the index of the `)` that closes it; -1 elsewhere (and when unclosed). */
export function closingParens(tokens: readonly IToken[]): Int32Array {
  const closeOf = new Int32Array(tokens.length).fill(-1);
  const stack: number[] = [];
  tokens.forEach((tok, i) => {
    if (tok.tokenType === LParen) stack.push(i);
    else if (tok.tokenType === RParen) {
      const open = stack.pop();
      if (open !== undefined) closeOf[open] = i;
    }
  });
  return closeOf;
}

export function isType(token: IToken | undefined, type: TokenType): boolean {
  if (token === undefined) return false;
  return token.tokenType === type || type.categoryMatchesMap?.[token.tokenTypeIdx] === true;
}

export function isWord(token: IToken | undefined): boolean {
  return isType(token, Word);
}

/** True for an unquoted word whose lowercased text is `word`. */
export function isWordText(token: IToken | undefined, word: string): boolean {
  return token !== undefined && isWord(token) && token.image.toLowerCase() === word;
}

/** The name a token denotes: unquoted words fold to lowercase, quoted identifiers keep their case. */
export function identName(token: IToken): string {
  if (token.tokenType === QuotedIdent) return token.image.slice(1, -1).replace(/""/g, '"');
  return token.image.toLowerCase();
}

/** A string literal's value ('it''s' → it's). */
export function stringValue(token: IToken): string {
  return token.image.slice(1, -1).replace(/''/g, "'");
}

export function syntaxErrorAt(token: IToken): SluiceError {
  return parseError(`syntax error at or near "${token.image}"`, posOf(token));
}

/**
 * Splits `sql` (or its part from `start` to `end`, which begins at `base`) into tokens, throwing
 * PostgreSQL-style SYNTAX_ERRORs for what cannot be a token (unterminated literals and comments,
 * stray characters, digits running into a word). Offsets, lines and columns are those of `sql`.
 * Stops once it has more than `maxTokens` tokens (the caller refuses the statement): a long text
 * is lexed in parts, so a statement far over the limit costs little more than the limit.
 */
export function tokenize(
  sql: string,
  start = 0,
  end = sql.length,
  base: SourcePosition = { line: 1, column: 1 },
  maxTokens = Infinity,
): IToken[] {
  const { tokens, error } = lexUpTo(sql, start, end, base, maxTokens);
  const errorOffset = error?.offset ?? Infinity;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (errorOffset < token.startOffset) break;
    const type = token.tokenType;
    if (type === UnterminatedString) throw parseError('unterminated quoted string', posOf(token));
    if (type === UnterminatedIdent) throw parseError('unterminated quoted identifier', posOf(token));
    if (type === UnterminatedComment) throw parseError('unterminated /* comment', posOf(token));
    if (type === QuotedIdent && token.image.length === 2) {
      throw parseError('zero-length delimited identifier at or near """"', posOf(token));
    }
    if (type === Identifier) {
      const kw = keywordTypes.get(token.image.toLowerCase());
      if (kw !== undefined) {
        token.tokenType = kw;
        token.tokenTypeIdx = kw.tokenTypeIdx!;
      }
    }
    if (type === NumberLit) {
      const next = tokens[i + 1];
      if (next !== undefined && next.startOffset === (token.endOffset ?? -2) + 1 && isWordStart(next)) {
        throw parseError(
          `trailing junk after numeric literal at or near "${token.image}${next.image}"`,
          posOf(token),
        );
      }
    }
  }
  if (error !== undefined) {
    throw parseError(`syntax error at or near "${sql.slice(errorOffset, errorOffset + 1)}"`, error.position);
  }
  return tokens;
}

interface Lexed {
  readonly tokens: IToken[];
  /** The first character that is no token, if any. */
  readonly error?: { readonly offset: number; readonly position: SourcePosition };
}

/**
 * Tokens no other token can run across (they are not inside any longer match: a `+` of an exponent
 * belongs to its number), so lexing can restart just after one. Not `.`, `::`-like runs or
 * operators of variable length.
 */
const PART_BOUNDARIES: ReadonlySet<TokenType> = new Set([
  Comma,
  LParen,
  RParen,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Eq,
  Concat,
]);

/** Texts longer than this are lexed in parts of (at least) this many characters. */
const LEX_PART = 64 * 1024;

function lexPart(sql: string, start: number, end: number, base: SourcePosition): Lexed {
  const whole = start === 0 && end === sql.length;
  const result = sqlLexer.tokenize(whole ? sql : sql.slice(start, end));
  if (!whole) for (const token of result.tokens) shiftToken(token, start, base);
  const first = result.errors[0];
  if (first === undefined) return { tokens: result.tokens };
  const line = first.line ?? 1;
  const column = first.column ?? 1;
  const position = { line: line + base.line - 1, column: line === 1 ? column + base.column - 1 : column };
  return { tokens: result.tokens, error: { offset: first.offset + start, position } };
}

/**
 * The tokens of `start..end`, or more than `maxTokens` of its first ones. A part's end may cut a
 * token (a literal, a comment, `1e5` into `1` and `e`), so each part keeps only the tokens before
 * its last boundary — a token after whitespace or after one of PART_BOUNDARIES, which no token
 * can run across — and the next part starts there: what is kept is what lexing the whole gives.
 */
function lexUpTo(sql: string, start: number, end: number, base: SourcePosition, maxTokens: number): Lexed {
  if (end - start <= LEX_PART || maxTokens === Infinity) return lexPart(sql, start, end, base);
  const tokens: IToken[] = [];
  let from = start;
  let at = base;
  for (let size = LEX_PART; ;) {
    const to = Math.min(end, from + size);
    const part = lexPart(sql, from, to, at);
    let keep = 0;
    if (to < end) {
      for (let i = part.tokens.length - 1; i > 0 && keep === 0; i--) {
        const token = part.tokens[i]!;
        const before = part.tokens[i - 1]!.tokenType;
        const spaced = /\s/.test(sql.charAt(token.startOffset - 1));
        if (spaced || PART_BOUNDARIES.has(before)) keep = i;
      }
      if (part.error !== undefined && part.error.offset < (part.tokens[keep]?.startOffset ?? to)) keep = -1;
    }
    if (to === end || keep < 0) {
      for (const token of part.tokens) tokens.push(token);
      return part.error !== undefined ? { tokens, error: part.error } : { tokens };
    }
    if (keep === 0) {
      size *= 2; // one token (a long literal) or no boundary in the part: take a bigger one
      continue;
    }
    for (let i = 0; i < keep; i++) tokens.push(part.tokens[i]!);
    if (tokens.length > maxTokens) return { tokens };
    const next = part.tokens[keep]!;
    from = next.startOffset;
    at = posOf(next);
    size = LEX_PART;
  }
}

/** Moves a token lexed from a part of the text that begins at `offset`, position `base`. */
function shiftToken(token: IToken, offset: number, base: SourcePosition): void {
  token.startOffset += offset;
  if (token.endOffset !== undefined) token.endOffset += offset;
  if (token.startLine === 1 && token.startColumn !== undefined) token.startColumn += base.column - 1;
  if (token.endLine === 1 && token.endColumn !== undefined) token.endColumn += base.column - 1;
  if (token.startLine !== undefined) token.startLine += base.line - 1;
  if (token.endLine !== undefined) token.endLine += base.line - 1;
}

function isWordStart(token: IToken): boolean {
  return token.tokenType === Identifier || keywordTypes.has(token.image.toLowerCase());
}
