// Collects input lines into statements: a statement is complete when a line ends with `;` outside
// quotes, quoted identifiers and comments (as in psql). The lexical state carries across lines, so a
// `;` inside a multi-line string or block comment does not end anything. Bounded: past `maxChars`
// the buffer refuses more text instead of growing.

/** Where the scanner stands at the end of the text so far (the shell's prompt shows it). */
export type LexState = 'code' | 'string' | 'identifier' | 'comment';

export interface CompleteStatement {
  /** The lines of the statement(s), joined with `\n`: sent as one script. */
  readonly text: string;
  /** 1-based number of its first line in the input. */
  readonly firstLine: number;
}

export class StatementTooLongError extends Error {
  constructor(readonly limit: number) {
    super(`statement longer than ${limit} characters (the server's script limit); it was discarded`);
  }
}

export class StatementBuffer {
  private lines: string[] = [];
  private chars = 0;
  private lex: LexState = 'code';
  private depth = 0; // nesting of block comments (PostgreSQL nests them)
  private content = false; // anything but blanks, comments and semicolons seen
  private firstLine = 0;

  constructor(private readonly maxChars = 16 * 1024 * 1024) {}

  get state(): LexState {
    return this.lex;
  }

  /** Whether a statement has been started (the prompt then shows a continuation). */
  get pending(): boolean {
    return this.lines.length > 0;
  }

  clear(): void {
    this.lines = [];
    this.chars = 0;
    this.lex = 'code';
    this.depth = 0;
    this.content = false;
  }

  /**
   * Adds input line number `lineNo`; returns the complete statement text when this line ends one,
   * `null` while it goes on or when what ended held nothing to run (only blanks, comments and `;`).
   */
  push(line: string, lineNo: number): CompleteStatement | null {
    if (this.chars + line.length + 1 > this.maxChars) {
      this.clear();
      throw new StatementTooLongError(this.maxChars);
    }
    if (this.lines.length === 0) this.firstLine = lineNo;
    this.lines.push(line);
    this.chars += line.length + 1;
    if (!this.scan(line)) return null;
    const done = { text: this.lines.join('\n'), firstLine: this.firstLine };
    const runnable = this.content;
    this.clear();
    return runnable ? done : null;
  }

  /** The unfinished text at end of input, if it holds anything to run (psql runs it too). */
  rest(): CompleteStatement | null {
    const done = this.content ? { text: this.lines.join('\n'), firstLine: this.firstLine } : null;
    this.clear();
    return done;
  }

  /** Scans one line, updating the state; true when it ends with `;` in code. */
  private scan(line: string): boolean {
    let last = ''; // the last significant character of this line in code
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      const next = line[i + 1];
      switch (this.lex) {
        case 'code':
          if (c === '-' && next === '-') return last === ';';
          if (c === '/' && next === '*') {
            this.lex = 'comment';
            this.depth = 1;
            i++;
          } else if (c === "'") {
            this.lex = 'string';
            this.content = true;
            last = c;
          } else if (c === '"') {
            this.lex = 'identifier';
            this.content = true;
            last = c;
          } else if (c !== ' ' && c !== '\t' && c !== '\r' && c !== '\f') {
            if (c !== ';') this.content = true;
            last = c ?? '';
          }
          break;
        case 'string':
        case 'identifier': {
          const quote = this.lex === 'string' ? "'" : '"';
          if (c === quote) {
            if (next === quote)
              i++; // a doubled quote stands for itself
            else this.lex = 'code';
          }
          last = quote;
          break;
        }
        case 'comment':
          if (c === '/' && next === '*') {
            this.depth++;
            i++;
          } else if (c === '*' && next === '/') {
            i++;
            if (--this.depth === 0) this.lex = 'code';
          }
          break;
      }
    }
    return this.lex === 'code' && last === ';';
  }
}
