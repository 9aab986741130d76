// Doc tests, reading: a markdown document's fenced code blocks with their kinds and doc-test markers,
// a shell block's steps (a `wscat` command parsed into what it sends and expects), and how a block's
// shown output is matched (doc-run.ts runs them; the conventions are in test/docs/README.md).

export type BlockKind = 'shell' | 'js' | 'ts' | 'sql';

export type Directive =
  { readonly kind: 'skip'; readonly reason: string } | { readonly kind: 'subscriber-output' };

export interface Block {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly kind: BlockKind | null;
  readonly body: readonly string[];
  readonly directive: Directive | null;
}

export interface ParsedDocument {
  readonly file: string;
  readonly blocks: readonly Block[];
  /** Problems of the markdown itself (an unrunnable block not marked, a marker without a reason…). */
  readonly errors: readonly string[];
}

const LANGUAGES: Readonly<Record<string, BlockKind>> = {
  sh: 'shell',
  bash: 'shell',
  shell: 'shell',
  js: 'js',
  javascript: 'js',
  mjs: 'js',
  ts: 'ts',
  typescript: 'ts',
  sql: 'sql',
};

const MARKER = /^\s*<!--\s*doc-test:(.*?)-->\s*$/;

function parseDirective(text: string): Directive | string {
  const skip = /^skip\b\s*(.*)$/s.exec(text);
  if (skip !== null) {
    const reason = /^\((.*)\)$/s.exec((skip[1] ?? '').trim());
    const why = reason?.[1]?.trim() ?? '';
    if (why === '') return 'a skip needs its reason in parentheses: <!-- doc-test: skip (why) -->';
    return { kind: 'skip', reason: why };
  }
  if (text === 'subscriber output') return { kind: 'subscriber-output' };
  return `unknown doc-test marker "${text}" (known: "skip (reason)", "subscriber output")`;
}

/** The fenced code blocks of `markdown`, each with the doc-test marker written right before it. */
export function extractBlocks(file: string, markdown: string): ParsedDocument {
  const lines = markdown.split(/\r?\n/);
  const blocks: Block[] = [];
  const errors: string[] = [];
  let pending: { line: number; text: string } | null = null;
  const orphan = (p: { line: number }): void => {
    errors.push(`${file}:${p.line}: a doc-test marker must come right before a code fence`);
  };
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    const open = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/.exec(text);
    if (open !== null) {
      const indent = (open[1] ?? '').length;
      const fence = open[2] ?? '```';
      const lang = (open[3] ?? '').toLowerCase();
      const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length && !close.test(lines[j] ?? ''); j++) {
        const l = lines[j] ?? '';
        body.push(l.slice(Math.min(indent, l.length - l.trimStart().length)));
      }
      if (j === lines.length) errors.push(`${file}:${i + 1}: code fence is never closed`);
      let directive: Directive | null = null;
      if (pending !== null) {
        const parsed = parseDirective(pending.text.trim());
        if (typeof parsed === 'string') errors.push(`${file}:${pending.line}: ${parsed}`);
        else directive = parsed;
        pending = null;
      }
      const kind = LANGUAGES[lang] ?? null;
      if (kind === null && directive === null) {
        errors.push(
          `${file}:${i + 1}: a \`${lang === '' ? '(no language)' : lang}\` block cannot run; ` +
            'mark it <!-- doc-test: skip (why) --> or give it a runnable language (sh, js, ts, sql)',
        );
      }
      blocks.push({ file, line: i + 1, lang, kind, body, directive });
      i = j;
      continue;
    }
    const marker = MARKER.exec(text);
    if (marker !== null) {
      if (pending !== null) orphan(pending);
      pending = { line: i + 1, text: marker[1] ?? '' };
      continue;
    }
    if (/^\s*<!--\s*doc-test/.test(text)) {
      errors.push(`${file}:${i + 1}: a doc-test marker is one line: <!-- doc-test: ... -->`);
    }
    if (text.trim() !== '' && pending !== null) {
      orphan(pending);
      pending = null;
    }
  }
  if (pending !== null) orphan(pending);
  return { file, blocks, errors };
}

// ---- expected output ------------------------------------------------------------------------------

function normalize(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/^\n+/, '')
    .trimEnd();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `actual` is the output `expected` shows, where `...` stands for anything (also nothing). */
export function outputMatches(expected: readonly string[], actual: string): boolean {
  const pattern = normalize(expected.join('\n')).split('...').map(escapeRegExp).join('[\\s\\S]*?');
  return new RegExp(`^${pattern}$`).test(normalize(actual));
}

// ---- shell blocks -----------------------------------------------------------------------------------

export type WsAction = { readonly kind: 'expect' | 'send'; readonly text: string };

export interface WscatCommand {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface ShellStep {
  /** 1-based line in the document of the step's first command line. */
  readonly line: number;
  readonly command: string[];
  readonly expected: string[];
  /** A `wscat` command: driven by a ws client, its `#` lines the messages received, `>` lines sent. */
  readonly isWscat: boolean;
  wscat: WscatCommand | null;
  readonly actions: WsAction[];
}

/** Splits a command line into words as the shell would for plain quoting ('…', "…", \x). */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated ' in: ${text}`);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let part = '';
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && j + 1 < text.length && '"\\$`'.includes(text[j + 1] as string)) j++;
        part += text[j];
      }
      if (j >= text.length) throw new Error(`unterminated " in: ${text}`);
      word = (word ?? '') + part;
      i = j;
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i];
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === '#' && word === null) {
      break; // a comment to the end of the line
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

const WSCAT = /^\s*(?:npx\s+(?:\S+\s+)*?)?wscat(?:\s|$)/;

function parseWscat(command: string): WscatCommand | string {
  const words = shellWords(command);
  let i = 0;
  if (words[0] === 'npx') {
    i = 1;
    let yes = false;
    for (; i < words.length && words[i] !== 'wscat'; i++) {
      if (words[i] === '--yes' || words[i] === '-y') yes = true;
    }
    // Without --yes, npx stops to ask before it fetches a package it has not installed.
    if (!yes) return '`npx wscat` asks before installing wscat: write `npx --yes wscat`';
  }
  i++; // wscat
  let url: string | null = null;
  const headers: Record<string, string> = {};
  for (; i < words.length; i++) {
    const w = words[i] as string;
    const value = words[i + 1];
    if ((w === '-c' || w === '--connect') && value !== undefined) {
      url = value;
      i++;
    } else if ((w === '-H' || w === '--header') && value !== undefined) {
      const colon = value.indexOf(':');
      if (colon <= 0) return `wscat header without a name: ${value}`;
      headers[value.slice(0, colon).trim()] = value.slice(colon + 1).trim();
      i++;
    } else {
      return `wscat option "${w}" is not understood by the doc test (it knows -c URL and -H header)`;
    }
  }
  if (url === null) return 'wscat needs -c URL';
  return { url, headers };
}

/**
 * A shell block's steps: command lines (with `\` continuations), each followed by the lines the
 * terminal shows, written `# output` at column 0. A `#` comment at the start of a block or after a
 * blank line is prose. For a wscat step, `# ` lines are messages received and `> ` lines sent.
 */
export function shellSteps(block: Block): { steps: ShellStep[]; errors: string[] } {
  const steps: ShellStep[] = [];
  const errors: string[] = [];
  let current: ShellStep | null = null;
  let state: 'none' | 'command' | 'output' = 'none';
  let continued = false;
  block.body.forEach((text, index) => {
    const line = block.line + 1 + index;
    if (text.trim() === '') {
      state = 'none';
      continued = false;
      return;
    }
    if (continued && current !== null) {
      current.command.push(text);
      continued = text.endsWith('\\');
      return;
    }
    if (text.startsWith('#') && current !== null && state !== 'none') {
      const shown = text.replace(/^# ?/, '');
      current.expected.push(shown);
      current.actions.push({ kind: 'expect', text: shown });
      state = 'output';
      return;
    }
    if (text.startsWith('#')) return; // prose
    if (text.startsWith('> ') && current?.isWscat === true && state !== 'none') {
      current.actions.push({ kind: 'send', text: text.slice(2) });
      state = 'output';
      return;
    }
    const isWscat = WSCAT.test(text);
    if (current === null || state !== 'command' || isWscat || current.isWscat) {
      current = { line, command: [], expected: [], isWscat, wscat: null, actions: [] };
      steps.push(current);
    }
    current.command.push(text);
    continued = text.endsWith('\\');
    state = 'command';
  });
  for (const step of steps) if (step.isWscat) resolveWscat(step, errors, block);
  return { steps, errors };
}

function resolveWscat(step: ShellStep, errors: string[], block: Block): void {
  const command = step.command.map((l) => l.replace(/\\$/, '')).join(' ');
  try {
    const parsed = parseWscat(command);
    if (typeof parsed === 'string') errors.push(`${block.file}:${step.line}: ${parsed}`);
    else step.wscat = parsed;
  } catch (err) {
    errors.push(`${block.file}:${step.line}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
