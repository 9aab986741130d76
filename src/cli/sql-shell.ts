// `sluice sql`: a SQL shell over the HTTP API (POST /v1/sql). Interactive on a terminal (line
// editing and a bounded, saved history from node:readline; a statement runs when a line ends with
// `;` outside quotes and comments; Ctrl-C clears the statement or cancels the request), or it runs a
// file, standard input or `-c` text without a prompt, stopping at the first error with status 1
// unless --continue. Results print as aligned tables, errors with a caret under their position.
import { createReadStream } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import { StringDecoder } from 'node:string_decoder';
import { parseArgs } from 'node:util';
import {
  ApiClient,
  ClientError,
  MAX_RESPONSE_BYTES,
  type ApiError,
  objectName,
  type StatementResult,
  timeoutOption,
} from './api-client.ts';
import { formatError } from './error-format.ts';
import { HISTORY_SIZE, historyPath, loadHistory, saveHistory } from './history.ts';
import {
  type CompleteStatement,
  type LexState,
  StatementBuffer,
  StatementTooLongError,
} from './statement-buffer.ts';
import { escapeControls, formatTable, rowsFooter, type TableColumn } from './table-format.ts';

export const SQL_USAGE = `Usage: sluice sql [options]

A SQL shell against a running Sluice server. Interactive on a terminal; otherwise it runs standard
input (or -f / -c) without a prompt and exits with status 1 at the first error.

Options:
  --url <url>            the server (env SLUICE_URL; default http://127.0.0.1:8080)
  --token <token>        a bearer token, for a server with authentication (env SLUICE_TOKEN)
  --timeout <seconds>    give up on a statement the server has not answered in this long (env
                         SLUICE_TIMEOUT; default 0 = wait as long as it takes; Ctrl-C cancels too)
  -c, --command <sql>    run this text (statements or one meta-command) and exit; may be repeated
  -f, --file <path>      run the statements of a file (- for standard input) and exit
  --continue             go on after an error (the exit status is still 1 if any statement failed)
  --null <text>          how NULL prints (default NULL)
  -h, --help             show this help

A statement runs when a line ends with ; outside quotes and comments. History is kept in
$SLUICE_HISTORY (empty: none), else ~/.sluice_history (the last ${HISTORY_SIZE} lines).
Meta-commands: \\d [name], \\dt, \\dv, \\?, \\q — see \\? in the shell.
`;

const META_HELP = `Meta-commands (at the start of a line, outside a statement):
  \\d              list tables and materialized views
  \\dt, \\dv        list tables / materialized views only
  \\d <name>       columns, key and definition of a table or view
  \\?              this help
  \\q              quit (also Ctrl-D)
A statement runs when a line ends with ; outside quotes and comments; Ctrl-C clears the statement
being typed, or cancels the one running.
`;

/** Characters one statement (and so one input line) may hold: the server's script limit. */
const MAX_STATEMENT_CHARS = 16 * 1024 * 1024;

export interface ShellStreams {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  readonly errors: NodeJS.WritableStream;
}

export interface ShellOptions {
  readonly client: ApiClient;
  readonly streams: ShellStreams;
  /** What NULL prints as. */
  readonly nullText?: string;
  /** Go on after an error. */
  readonly continueOnError?: boolean;
}

const PROMPTS: Readonly<Record<LexState, string>> = {
  code: 'sluice-> ',
  string: "sluice'> ",
  identifier: 'sluice"> ',
  comment: 'sluice*> ',
};

function strings(x: unknown): string[] {
  return Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : [];
}

function columnsOf(x: unknown): TableColumn[] {
  if (!Array.isArray(x)) return [];
  return x.flatMap((c: unknown) => {
    if (typeof c !== 'object' || c === null) return [];
    const { name, type, nullable } = c as { name?: unknown; type?: unknown; nullable?: unknown };
    return typeof name === 'string'
      ? [{ name, type: typeof type === 'string' ? type : '', nullable: nullable !== false }]
      : [];
  }) as TableColumn[];
}

/** Lines of a stream (LF or CRLF), one line at most `max` characters, read with back-pressure. */
async function* readLines(input: NodeJS.ReadableStream, max: number): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of input) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    let start = 0;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
      const line = pending.slice(start, nl);
      yield line.endsWith('\r') ? line.slice(0, -1) : line;
      start = nl + 1;
    }
    pending = pending.slice(start);
    if (pending.length > max) throw new StatementTooLongError(max);
  }
  pending += decoder.end();
  if (pending !== '') yield pending;
}

/** One shell session: runs statements and meta-commands, prints what they answer. */
export class SqlShell {
  private readonly client: ApiClient;
  private readonly out: NodeJS.WritableStream;
  private readonly err: NodeJS.WritableStream;
  private readonly nullText: string;
  private readonly continueOnError: boolean;
  private readonly input: NodeJS.ReadableStream;
  private running: AbortController | null = null;

  constructor(options: ShellOptions) {
    this.client = options.client;
    this.input = options.streams.input;
    this.out = options.streams.output;
    this.err = options.streams.errors;
    this.nullText = options.nullText ?? 'NULL';
    this.continueOnError = options.continueOnError ?? false;
  }

  private print(lines: readonly string[]): void {
    if (lines.length > 0) this.out.write(lines.join('\n') + '\n');
  }

  private printError(error: ApiError, context: Parameters<typeof formatError>[1]): void {
    this.err.write(formatError(error, context).join('\n') + '\n');
  }

  private clientError(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.err.write(`sluice: ${escapeControls(message)}\n`);
  }

  private resultLines(r: StatementResult): string[] {
    if (r.columns !== undefined && r.rows !== undefined) {
      const columns = columnsOf(r.columns);
      const table = formatTable(columns, r.rows, { nullText: this.nullText });
      // An INSERT, UPDATE or DELETE with RETURNING: its rows, then its tag (as psql prints them)
      if (r.rowCount !== undefined) return [...table, rowsFooter(r.rows.length), '', this.tagLine(r)];
      return [...table, rowsFooter(r.rows.length, r.epoch), ''];
    }
    return [this.tagLine(r)];
  }

  /** A statement's tag: `INSERT t: 2 rows, epoch 7`. */
  private tagLine(r: StatementResult): string {
    let tag = escapeControls(r.statement + (r.object !== undefined ? ` ${r.object}` : ''));
    if (r.rowCount !== undefined) tag += `: ${r.rowCount === 1 ? '1 row' : `${r.rowCount} rows`}`;
    if (r.epoch !== undefined) tag += `${r.rowCount !== undefined ? ',' : ':'} epoch ${r.epoch}`;
    return tag;
  }

  /** Sends one script; prints the results of what ran and the error. True when all of it ran. */
  async runStatement(statement: CompleteStatement, source?: string): Promise<boolean> {
    this.running = new AbortController();
    try {
      const answer = await this.client.sql(statement.text, this.running.signal);
      for (const r of answer.results) this.print(this.resultLines(r));
      if (answer.ok) return true;
      this.printError(answer.error, {
        script: statement.text,
        firstLine: statement.firstLine,
        ...(source === undefined ? {} : { source }),
      });
      return false;
    } catch (error) {
      this.clientError(error);
      return false;
    } finally {
      this.running = null;
    }
  }

  /** Cancels the request in flight, if any (Ctrl-C); true if there was one. */
  cancel(): boolean {
    if (this.running === null) return false;
    this.running.abort();
    return true;
  }

  /** Runs one meta-command line: 'quit' for \q, else whether it succeeded. */
  async meta(line: string): Promise<boolean | 'quit'> {
    const [command = '', ...args] = line.trim().split(/\s+/);
    try {
      switch (command) {
        case '\\q':
        case '\\quit':
          return 'quit';
        case '\\?':
          this.out.write(META_HELP);
          return true;
        case '\\d':
          return args.length === 0 ? await this.list(true, true) : await this.describe(args.join(' '));
        case '\\dt':
          return await this.list(true, false);
        case '\\dv':
          return await this.list(false, true);
        default:
          this.err.write(`sluice: unknown meta-command "${escapeControls(command)}"; \\? lists them\n`);
          return false;
      }
    } catch (error) {
      this.clientError(error);
      return false;
    }
  }

  private async list(tables: boolean, views: boolean): Promise<boolean> {
    const rows: Record<string, unknown>[] = [];
    for (const [kind, path, field] of [
      ['table', '/v1/tables', 'tables'],
      ['view', '/v1/views', 'views'],
    ] as const) {
      if (kind === 'table' ? !tables : !views) continue;
      const answer = await this.client.get(path);
      if (!answer.ok) {
        this.printError(answer.error, null);
        return false;
      }
      const items = answer.body[field];
      for (const item of Array.isArray(items) ? (items as Record<string, unknown>[]) : []) {
        rows.push({
          name: item.name,
          kind: kind === 'view' ? 'materialized view' : 'table',
          rows: item.rowCount ?? null,
        });
      }
    }
    const columns = [
      { name: 'name', type: 'text' },
      { name: 'kind', type: 'text' },
      { name: 'rows', type: 'bigint' },
    ];
    this.print([...formatTable(columns, rows, { nullText: this.nullText }), rowsFooter(rows.length), '']);
    return true;
  }

  private async describe(raw: string): Promise<boolean> {
    const name = objectName(raw);
    const path = encodeURIComponent(name);
    const table = await this.client.get(`/v1/tables/${path}`);
    const found = table.ok ? table : await this.client.get(`/v1/views/${path}`);
    if (!found.ok) {
      this.printError({ code: 'UNKNOWN_TABLE', message: `relation "${name}" does not exist` }, null);
      return false;
    }
    const body = found.body;
    const columns = columnsOf(body.columns) as (TableColumn & { nullable?: boolean })[];
    const key = strings(body.key);
    const lines = [
      `${table.ok ? 'Table' : 'Materialized view'} "${escapeControls(name)}"`,
      ...formatTable(
        [
          { name: 'column', type: 'text' },
          { name: 'type', type: 'text' },
          { name: 'nullable', type: 'text' },
        ],
        columns.map((c) => ({
          column: c.name,
          type: c.type,
          nullable: c.nullable === false ? 'not null' : '',
        })),
      ),
    ];
    lines.push(
      `${table.ok ? 'Primary key' : 'Key'}: ${key.length > 0 ? key.map(escapeControls).join(', ') : 'none (a multiset)'}`,
    );
    const related = strings(table.ok ? body.dependents : body.dependsOn);
    if (related.length > 0)
      lines.push(`${table.ok ? 'Read by' : 'Reads'}: ${related.map(escapeControls).join(', ')}`);
    const facts = [
      typeof body.rowCount === 'number' ? `${body.rowCount} ${body.rowCount === 1 ? 'row' : 'rows'}` : '',
      typeof body.epoch === 'number' ? `epoch ${body.epoch}` : '',
    ].filter((s) => s !== '');
    if (facts.length > 0) lines.push(facts.join(', '));
    if (typeof body.sql === 'string') lines.push(`Definition: ${escapeControls(body.sql)}`);
    this.print([...lines, '']);
    return true;
  }

  /** Runs `-c` text: a meta-command or statements. True when it succeeded. */
  async runCommand(text: string): Promise<boolean> {
    if (text.trim().startsWith('\\')) return (await this.meta(text)) !== false;
    if (text.trim() === '') return true;
    return this.runStatement({ text, firstLine: 1 });
  }

  /**
   * Runs a script without a prompt (a file or standard input). Returns the exit status: 0, or 1
   * after an error (at the first one unless --continue).
   */
  async runScript(input: NodeJS.ReadableStream, source: string): Promise<number> {
    const buffer = new StatementBuffer(MAX_STATEMENT_CHARS);
    let failed = false;
    let lineNo = 0;
    try {
      for await (const line of readLines(input, MAX_STATEMENT_CHARS)) {
        lineNo++;
        let ok = true;
        if (!buffer.pending && line.trim().startsWith('\\')) {
          const done = await this.meta(line);
          if (done === 'quit') break;
          ok = done;
        } else {
          const statement = buffer.push(line, lineNo);
          if (statement !== null) ok = await this.runStatement(statement, source);
        }
        if (!ok) {
          failed = true;
          if (!this.continueOnError) return 1;
        }
      }
      const rest = buffer.rest();
      if (rest !== null && !(await this.runStatement(rest, source))) failed = true;
    } catch (error) {
      this.clientError(
        error instanceof StatementTooLongError ? `${source}:${lineNo + 1}: ${error.message}` : error,
      );
      return 1;
    }
    return failed ? 1 : 0;
  }

  /** The interactive loop on a terminal; resolves when the user quits (\q or Ctrl-D). */
  async interactive(historyFile: string | null, terminal = true): Promise<number> {
    const rl: Interface = createInterface({
      input: this.input,
      output: this.out,
      terminal,
      history: historyFile === null ? [] : loadHistory(historyFile),
      historySize: HISTORY_SIZE,
      removeHistoryDuplicates: true,
      prompt: 'sluice=> ',
    });
    if (historyFile !== null) {
      rl.on('history', (entries: string[]) => {
        try {
          saveHistory(historyFile, entries);
        } catch (error) {
          this.clientError(
            `cannot save the history to ${historyFile}: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      });
    }
    const buffer = new StatementBuffer(MAX_STATEMENT_CHARS);
    rl.on('SIGINT', () => {
      if (this.cancel()) return; // the answer (cancelled) re-prompts
      buffer.clear();
      rl.write(null, { ctrl: true, name: 'e' });
      rl.write(null, { ctrl: true, name: 'u' });
      this.out.write('^C\n');
      rl.setPrompt('sluice=> ');
      rl.prompt();
    });
    this.out.write(`sluice sql: ${this.client.base} — \\? for help, \\q to quit\n`);
    rl.prompt();
    let lineNo = 0;
    for await (const line of rl) {
      lineNo++;
      if (!buffer.pending && line.trim().startsWith('\\')) {
        if ((await this.meta(line)) === 'quit') break;
      } else {
        try {
          const statement = buffer.push(line, lineNo);
          if (statement !== null) await this.runStatement({ text: statement.text, firstLine: 1 });
        } catch (error) {
          this.clientError(error);
        }
      }
      rl.setPrompt(buffer.pending ? PROMPTS[buffer.state] : 'sluice=> ');
      rl.prompt();
    }
    rl.close();
    return 0;
  }
}

function usageError(message: string): number {
  process.stderr.write(`sluice sql: ${message}\n\n${SQL_USAGE}`);
  return 2;
}

/** `sluice sql …`: returns the exit status. */
export async function sqlMain(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        timeout: { type: 'string' },
        command: { type: 'string', short: 'c', multiple: true },
        file: { type: 'string', short: 'f' },
        continue: { type: 'boolean' },
        null: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  const { values } = parsed;
  if (values.help === true) {
    process.stdout.write(SQL_USAGE);
    return 0;
  }
  if (values.command !== undefined && values.file !== undefined) return usageError('give -c or -f, not both');
  let client: ApiClient;
  try {
    client = new ApiClient(
      values.url ?? (process.env.SLUICE_URL || 'http://127.0.0.1:8080'),
      values.token ?? process.env.SLUICE_TOKEN ?? null,
      MAX_RESPONSE_BYTES,
      timeoutOption(values.timeout),
    );
  } catch (error) {
    return usageError(error instanceof ClientError ? error.message : String(error));
  }
  const shell = new SqlShell({
    client,
    streams: { input: process.stdin, output: process.stdout, errors: process.stderr },
    continueOnError: values.continue === true,
    ...(values.null === undefined ? {} : { nullText: values.null }),
  });
  if (values.command !== undefined) {
    let failed = false;
    for (const text of values.command) {
      if (await shell.runCommand(text)) continue;
      failed = true;
      if (values.continue !== true) break;
    }
    return failed ? 1 : 0;
  }
  if (values.file !== undefined && values.file !== '-') {
    const file = createReadStream(values.file);
    const opened = await new Promise<Error | null>((resolve) => {
      file.once('open', () => resolve(null));
      file.once('error', (error) => resolve(error));
    });
    if (opened !== null) {
      process.stderr.write(`sluice sql: cannot read ${values.file}: ${opened.message}\n`);
      return 1;
    }
    return shell.runScript(file, values.file);
  }
  if (values.file === undefined && process.stdin.isTTY === true) {
    return shell.interactive(historyPath());
  }
  return shell.runScript(process.stdin, '<stdin>');
}
