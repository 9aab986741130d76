// Doc tests, running: a document's blocks in order against one real Sluice server, shell blocks in
// bash (a `wscat` command driven by a `ws` client), JS/TS blocks in node, SQL blocks through
// POST /v1/sql, each block's output compared with what the document shows (test/docs/README.md).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import {
  type Block,
  type ParsedDocument,
  type ShellStep,
  type WscatCommand,
  outputMatches,
  shellSteps,
} from './doc-blocks.ts';

export interface Target {
  /** The server's port: the documented `localhost:8080` and `127.0.0.1:8080` become this one. */
  readonly port: number;
}

export interface RunOptions {
  /** The repository: JS/TS blocks are written under its .tmp/ so its packages resolve. */
  readonly repo: string;
  /** Where shell blocks run (their working directory). */
  readonly workDir: string;
  readonly timeoutMs?: number;
}

export type BlockStatus = 'passed' | 'failed' | 'skipped' | 'not run';

export interface BlockOutcome {
  readonly block: Block;
  readonly status: BlockStatus;
  readonly detail: string;
}

export interface DocumentReport {
  readonly file: string;
  readonly errors: readonly string[];
  readonly outcomes: readonly BlockOutcome[];
}

export function substitute(text: string, target: Target): string {
  return text.replace(/\b(localhost|127\.0\.0\.1):8080\b/g, `$1:${target.port}`);
}

class BlockFailure extends Error {}

function fail(block: Block, line: number, message: string): never {
  throw new BlockFailure(`${block.file}:${line}: ${message}`);
}

function shown(label: string, text: string): string {
  const t = text.length > 4000 ? `${text.slice(0, 4000)}\n[… ${text.length - 4000} more characters]` : text;
  return `\n--- ${label} ---\n${t}`;
}

/** The WebSocket subscription a wscat step opened; it stays open for later "subscriber output". */
class Subscription {
  private readonly queue: string[] = [];
  private wake: (() => void) | null = null;
  private closed: string | null = null;

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.queue.push(String(data));
      this.wake?.();
    });
    socket.on('error', () => undefined); // a failed socket also closes, which is what is reported
    socket.on('close', (code, reason) => {
      this.closed = `closed with code ${code}${reason.length > 0 ? ` (${String(reason)})` : ''}`;
      this.wake?.();
    });
  }

  /** The next message matching `pattern`; an unmatched `progress` heartbeat in between is passed over. */
  async expect(pattern: string, timeoutMs: number): Promise<{ ok: true } | { ok: false; why: string }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = this.queue.shift();
      if (message !== undefined) {
        if (outputMatches([pattern], message)) return { ok: true };
        if (isProgress(message)) continue; // heartbeats mark idle time, which no document can predict
        return {
          ok: false,
          why: `expected the message${shown('expected', pattern)}${shown('received', message)}`,
        };
      }
      if (this.closed !== null)
        return { ok: false, why: `the socket ${this.closed} before${shown('expected', pattern)}` };
      const left = deadline - Date.now();
      if (left <= 0)
        return { ok: false, why: `no message within ${timeoutMs} ms${shown('expected', pattern)}` };
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  close(): void {
    this.socket.terminate();
  }
}

function isProgress(message: string): boolean {
  try {
    return (JSON.parse(message) as { type?: unknown }).type === 'progress';
  } catch {
    return false;
  }
}

interface ProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly matchedEarly: boolean;
  readonly timedOut: boolean;
}

/**
 * Runs a process to its end, or — when `expected` is given — until its stdout shows all of it (a
 * subscriber never exits by itself), then stops it. Bounded by `timeoutMs`.
 */
function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd: string; input?: string; timeoutMs: number; expected?: readonly string[] },
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let matchedEarly = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!matchedEarly && options.expected !== undefined && outputMatches(options.expected, stdout)) {
        matchedEarly = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(options.input ?? '');
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, matchedEarly, timedOut });
    });
  });
}

const STEP_MARK = `\u001e doc-test step ${process.pid}-${Math.random().toString(36).slice(2)}`;

async function runBash(block: Block, steps: readonly ShellStep[], target: Target, options: RunOptions) {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const script = ['exec 2>&1', 'set -e'];
  for (const step of steps) {
    script.push(...step.command.map((l) => substitute(l, target)));
    script.push(`printf '\\n%s\\n' '${STEP_MARK}'`);
  }
  const r = await runProcess('bash', ['--noprofile', '--norc', '-s'], {
    cwd: options.workDir,
    input: `${script.join('\n')}\n`,
    timeoutMs,
  });
  const outputs = r.stdout.split(`\n${STEP_MARK}\n`);
  const finished = outputs.length - 1;
  for (let k = 0; k < steps.length; k++) {
    const step = steps[k] as ShellStep;
    const output = outputs[k] ?? '';
    if (k >= finished) {
      const why = r.timedOut ? `did not finish within ${timeoutMs} ms` : `exited with status ${r.code}`;
      fail(
        block,
        step.line,
        `the command ${why}${shown('command', step.command.join('\n'))}${shown('output', output)}`,
      );
    }
    if (
      step.expected.length > 0 &&
      !outputMatches(
        step.expected.map((l) => substitute(l, target)),
        output,
      )
    ) {
      fail(
        block,
        step.line,
        `the output differs from the one shown${shown('command', step.command.join('\n'))}` +
          `${shown('shown', step.expected.join('\n'))}${shown('actual', output)}`,
      );
    }
  }
}

async function openSubscription(
  block: Block,
  step: ShellStep,
  wscat: WscatCommand,
  target: Target,
): Promise<Subscription> {
  const url = substitute(wscat.url, target);
  const socket = new WebSocket(url, { headers: wscat.headers });
  // Listening from the start: the server's first messages can arrive with the upgrade answer.
  const subscription = new Subscription(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  }).catch((err: unknown) =>
    fail(block, step.line, `wscat could not connect to ${url}: ${err instanceof Error ? err.message : err}`),
  );
  return subscription;
}

/** Runs the blocks of `doc` in order against the server at `target`; stops at the first failure. */
export async function runDocument(
  doc: ParsedDocument,
  target: Target,
  options: RunOptions,
): Promise<DocumentReport> {
  const outcomes: BlockOutcome[] = [];
  const errors = [...doc.errors];
  const stepsOf = new Map<Block, ShellStep[]>();
  for (const block of doc.blocks) {
    if (block.kind !== 'shell' || block.directive !== null) continue;
    const parsed = shellSteps(block);
    stepsOf.set(block, parsed.steps);
    errors.push(...parsed.errors);
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  let subscription: Subscription | null = null;
  let failed = errors.length > 0;
  // JS/TS blocks are written inside the repository (under its ignored .tmp/) so their imports resolve.
  let scratch: string | null = null;
  const scratchDir = (): string => {
    if (scratch === null) {
      mkdirSync(join(options.repo, '.tmp'), { recursive: true });
      scratch = mkdtempSync(join(options.repo, '.tmp', 'doc-blocks-'));
    }
    return scratch;
  };
  try {
    for (const block of doc.blocks) {
      if (block.directive?.kind === 'skip') {
        outcomes.push({ block, status: 'skipped', detail: block.directive.reason });
        continue;
      }
      if (failed) {
        outcomes.push({ block, status: 'not run', detail: 'after an earlier failure' });
        continue;
      }
      try {
        if (block.directive?.kind === 'subscriber-output') {
          if (subscription === null)
            fail(block, block.line, 'subscriber output, but no wscat block opened a subscription');
          for (const [index, text] of block.body.entries()) {
            if (text.trim() === '') continue;
            const r = await subscription.expect(substitute(text, target), timeoutMs);
            if (!r.ok) fail(block, block.line + 1 + index, r.why);
          }
        } else if (block.kind === 'shell') {
          const steps = stepsOf.get(block) ?? [];
          for (let k = 0; k < steps.length;) {
            const step = steps[k] as ShellStep;
            if (step.wscat !== null) {
              subscription?.close();
              subscription = await openSubscription(block, step, step.wscat, target);
              for (const action of step.actions) {
                if (action.kind === 'send') subscription.socket.send(action.text);
                else {
                  const r = await subscription.expect(substitute(action.text, target), timeoutMs);
                  if (!r.ok) fail(block, step.line, r.why);
                }
              }
              k++;
              continue;
            }
            // Consecutive plain steps share one bash process (a function defined first is there later).
            let end = k;
            while (end < steps.length && !(steps[end] as ShellStep).isWscat) end++;
            await runBash(block, steps.slice(k, end), target, options);
            k = end;
          }
        } else if (block.kind === 'sql') {
          const res = await fetch(`http://127.0.0.1:${target.port}/v1/sql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sql: block.body.join('\n') }),
          });
          const text = await res.text();
          if (res.status !== 200)
            fail(block, block.line, `POST /v1/sql answered ${res.status}${shown('body', text)}`);
        } else if (block.kind === 'js' || block.kind === 'ts') {
          await runProgram(block, target, options, scratchDir());
        }
        outcomes.push({ block, status: 'passed', detail: '' });
      } catch (err) {
        if (!(err instanceof BlockFailure)) throw err;
        failed = true;
        outcomes.push({ block, status: 'failed', detail: err.message });
      }
    }
  } finally {
    (subscription as Subscription | null)?.close();
    if (scratch !== null) rmSync(scratch, { recursive: true, force: true });
  }
  return { file: doc.file, errors, outcomes };
}

/** A JS/TS block's expected output: the comment lines after a trailing `// prints:` line. */
export function programOutput(body: readonly string[]): string[] | null {
  let end = body.length;
  while (end > 0 && (body[end - 1] ?? '').trim() === '') end--;
  let start = end;
  while (start > 0 && (body[start - 1] ?? '').startsWith('//')) start--;
  const comments = body.slice(start, end);
  const at = comments.findIndex((l) => l.trim() === '// prints:');
  if (at < 0) return null;
  return comments.slice(at + 1).map((l) => l.replace(/^\/\/ ?/, ''));
}

let programs = 0;

async function runProgram(block: Block, target: Target, options: RunOptions, scratch: string): Promise<void> {
  const timeoutMs = (options.timeoutMs ?? 60_000) * 2; // compiling the engine's sources takes a while
  const file = join(scratch, `block-${++programs}-line-${block.line}.${block.kind === 'ts' ? 'ts' : 'mjs'}`);
  writeFileSync(file, `${substitute(block.body.join('\n'), target)}\n`);
  const expected = programOutput(block.body)?.map((l) => substitute(l, target));
  const preload = join(options.repo, 'test', 'docs', 'sluice-from-src.mjs');
  const r = await runProcess(process.execPath, ['--import', 'tsx', '--import', preload, file], {
    cwd: scratch,
    timeoutMs,
    ...(expected === undefined ? {} : { expected }),
  });
  if (r.matchedEarly) return;
  const streams = `${shown('stdout', r.stdout)}${shown('stderr', r.stderr)}`;
  if (r.timedOut) fail(block, block.line, `the program did not finish within ${timeoutMs} ms${streams}`);
  if (r.code !== 0) fail(block, block.line, `the program exited with status ${r.code}${streams}`);
  if (expected !== undefined && !outputMatches(expected, r.stdout)) {
    fail(
      block,
      block.line,
      `the program printed other output than shown${shown('shown', expected.join('\n'))}${streams}`,
    );
  }
}

/** Every problem of a report, one message each (empty when the document ran as written). */
export function problems(report: DocumentReport): string[] {
  return [...report.errors, ...report.outcomes.filter((o) => o.status === 'failed').map((o) => o.detail)];
}
