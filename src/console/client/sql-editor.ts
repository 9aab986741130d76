// A plain textarea made into a SQL editor: line numbers, and an error position marked in place
// (a layer under the transparent textarea mirrors its text and scroll, with the token at
// {line, column} underlined). The textarea stays a real form control: native editing, undo,
// selection and screen-reader support.
import { h } from './dom.ts';

export interface Marked {
  readonly line: number;
  readonly column: number;
}

/** Character offset of a 1-based line/column in text (clamped to the text). */
export function offsetOf(text: string, line: number, column: number): number {
  const lines = text.split('\n');
  let offset = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length - 1); i++) offset += (lines[i] ?? '').length + 1;
  const lineText = lines[Math.min(line - 1, lines.length - 1)] ?? '';
  return offset + Math.max(0, Math.min(column - 1, lineText.length));
}

/** The token starting at `offset`: an identifier/number/quoted string, or one character. */
export function tokenAt(text: string, offset: number): { start: number; end: number } {
  const rest = text.slice(offset);
  const m = /^("(?:[^"]|"")*"|'(?:[^']|'')*'|[A-Za-z_0-9$.]+|\S)/.exec(rest);
  return { start: offset, end: offset + (m?.[0].length ?? 0) };
}

export class SqlEditor {
  readonly element: HTMLElement;
  readonly textarea: HTMLTextAreaElement;
  private readonly mirror: HTMLPreElement;
  private readonly gutter: HTMLElement;
  private mark: Marked | null = null;

  constructor(id: string, label: string, describedBy: string) {
    this.textarea = h('textarea', {
      id,
      spellcheck: 'false',
      autocapitalize: 'off',
      autocomplete: 'off',
      wrap: 'off',
      rows: 10,
      'aria-describedby': describedBy,
      'aria-label': label,
    });
    this.mirror = h('pre', { class: 'editor-mirror', 'aria-hidden': 'true' });
    this.gutter = h('div', { class: 'editor-gutter', 'aria-hidden': 'true' });
    this.element = h(
      'div',
      { class: 'editor' },
      this.gutter,
      h('div', { class: 'editor-area' }, this.mirror, this.textarea),
    );
    this.textarea.addEventListener('input', () => {
      // Editing invalidates the position the server reported.
      this.setMark(null);
    });
    this.textarea.addEventListener('scroll', () => this.syncScroll());
    this.render();
  }

  get value(): string {
    return this.textarea.value;
  }

  set value(text: string) {
    this.textarea.value = text;
    this.setMark(null);
  }

  setMark(mark: Marked | null): void {
    this.mark = mark;
    this.textarea.toggleAttribute('aria-invalid', mark !== null);
    if (mark === null) this.textarea.removeAttribute('aria-invalid');
    else this.textarea.setAttribute('aria-invalid', 'true');
    this.render();
  }

  /** Puts the caret on the marked token (and the editor in view). */
  focusMark(): void {
    const text = this.textarea.value;
    if (this.mark === null) return;
    const t = tokenAt(text, offsetOf(text, this.mark.line, this.mark.column));
    this.textarea.focus();
    this.textarea.setSelectionRange(t.start, Math.max(t.start, t.end));
  }

  private render(): void {
    const text = this.textarea.value;
    const lineCount = text.split('\n').length;
    this.gutter.replaceChildren(
      ...Array.from({ length: Math.max(lineCount, 1) }, (_v, i) =>
        h(
          'span',
          { class: this.mark !== null && this.mark.line === i + 1 ? 'error-line' : '' },
          String(i + 1),
        ),
      ),
    );
    if (this.mark === null) {
      this.mirror.replaceChildren(text + '\n');
    } else {
      const t = tokenAt(text, offsetOf(text, this.mark.line, this.mark.column));
      const token = text.slice(t.start, t.end);
      this.mirror.replaceChildren(
        text.slice(0, t.start),
        h('mark', { class: 'error-mark', 'data-testid': 'error-mark' }, token === '' ? ' ' : token),
        text.slice(t.end) + '\n',
      );
    }
    this.syncScroll();
  }

  /** Re-renders line numbers after programmatic or typed edits. */
  refresh(): void {
    this.render();
  }

  private syncScroll(): void {
    this.mirror.style.transform = `translate(${-this.textarea.scrollLeft}px, ${-this.textarea.scrollTop}px)`;
    this.gutter.style.transform = `translateY(${-this.textarea.scrollTop}px)`;
  }
}
