// The SQL editor: a CodeMirror 6 view with SQL highlighting (Sluice's words added to the PostgreSQL
// dialect; tokens carry stable `tok-*` classes styled by console.css), line numbers, undo, and an
// error position marked in place: the token at {line, column} underlined, its line number flagged,
// the content aria-invalid. Editing clears the mark, since the position belonged to the text that ran.
import { syntaxHighlighting } from '@codemirror/language';
import { PostgreSQL, SQLDialect } from '@codemirror/lang-sql';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import {
  Annotation,
  EditorState,
  Prec,
  RangeSet,
  StateEffect,
  StateField,
  type Range,
} from '@codemirror/state';
import {
  Decoration,
  EditorView,
  GutterMarker,
  WidgetType,
  drawSelection,
  gutterLineClass,
  highlightActiveLine,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { classHighlighter } from '@lezer/highlight';

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

/** Sluice's statements (CREATE SOURCE/SINK … KAFKA, EXPLAIN DATAFLOW) on top of PostgreSQL's words. */
const SLUICE_SQL = SQLDialect.define({
  ...PostgreSQL.spec,
  keywords: `${PostgreSQL.spec.keywords ?? ''} sink kafka dataflow`,
});

interface ErrorMark {
  readonly from: number;
  readonly to: number;
  readonly lineStart: number;
}

const setError = StateEffect.define<ErrorMark | null>();
/** Marks a change made by the page (a recalled or loaded text), not typed by the user. */
const byPage = Annotation.define<boolean>();

class ErrorLine extends GutterMarker {
  override elementClass = 'error-line';
}
const errorLine = new ErrorLine();

/** Where the reported token is empty (the end of the text), a one-space mark shows the place. */
class EmptyMark extends WidgetType {
  toDOM(): HTMLElement {
    const span = document.createElement('span');
    span.className = 'error-mark';
    span.setAttribute('data-testid', 'error-mark');
    span.textContent = ' ';
    return span;
  }
  override eq(): boolean {
    return true;
  }
}

const errorField = StateField.define<ErrorMark | null>({
  create: () => null,
  update(value, tr) {
    for (const e of tr.effects) if (e.is(setError)) return e.value;
    return tr.docChanged ? null : value;
  },
  provide: (field) => [
    EditorView.decorations.from(field, (m) => {
      if (m === null) return Decoration.none;
      const marks: Range<Decoration>[] = [Decoration.line({ class: 'cm-error-line' }).range(m.lineStart)];
      marks.push(
        m.to > m.from
          ? Decoration.mark({
              class: 'error-mark',
              attributes: { 'data-testid': 'error-mark' },
            }).range(m.from, m.to)
          : Decoration.widget({ widget: new EmptyMark(), side: 1 }).range(m.from),
      );
      return Decoration.set(marks, true);
    }),
    gutterLineClass.from(field, (m) =>
      m === null ? RangeSet.empty : RangeSet.of([errorLine.range(m.lineStart)]),
    ),
    EditorView.contentAttributes.from(field, (m): Record<string, string> =>
      m === null ? {} : { 'aria-invalid': 'true' },
    ),
  ],
});

export interface SqlEditorOptions {
  readonly id: string;
  readonly labelledBy: string;
  readonly describedBy: string;
  /** Ctrl/Cmd+Enter. */
  readonly run: () => void;
  /** Ctrl/Cmd+Up (older) and Ctrl/Cmd+Down (newer): true when the key was used. */
  readonly recall: (direction: 'older' | 'newer') => boolean;
  /** Any change of the text; `typed` is false for changes the page made (value set). */
  readonly changed?: (typed: boolean) => void;
}

export class SqlEditor {
  readonly element: HTMLElement;
  readonly view: EditorView;

  constructor(options: SqlEditorOptions) {
    this.element = document.createElement('div');
    this.element.className = 'editor';
    this.view = new EditorView({
      parent: this.element,
      state: EditorState.create({
        doc: '',
        extensions: [
          Prec.highest(
            keymap.of([
              {
                key: 'Mod-Enter',
                run: () => {
                  options.run();
                  return true;
                },
              },
              { key: 'Mod-ArrowUp', run: () => options.recall('older') },
              { key: 'Mod-ArrowDown', run: () => options.recall('newer') },
            ]),
          ),
          lineNumbers(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          EditorState.tabSize.of(2),
          // The page's CSP admits <style> elements with this response's nonce only.
          EditorView.cspNonce.of(document.querySelector<HTMLScriptElement>('script[nonce]')?.nonce ?? ''),
          SLUICE_SQL.language,
          syntaxHighlighting(classHighlighter),
          errorField,
          keymap.of([...defaultKeymap, ...historyKeymap]),
          EditorView.contentAttributes.of({
            id: options.id,
            'aria-labelledby': options.labelledBy,
            'aria-describedby': options.describedBy,
            'aria-multiline': 'true',
          }),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            options.changed?.(!update.transactions.some((tr) => tr.annotation(byPage) === true));
          }),
        ],
      }),
    });
  }

  get value(): string {
    return this.view.state.doc.toString();
  }

  /** Replaces the text (undoable), caret at the end; clears the error mark. */
  set value(text: string) {
    this.view.dispatch({
      changes: { from: 0, to: this.view.state.doc.length, insert: text },
      selection: { anchor: text.length },
      annotations: byPage.of(true),
      scrollIntoView: true,
    });
  }

  focus(): void {
    this.view.focus();
  }

  /** Marks the token at a server-reported position (null: clears the mark). */
  setMark(mark: Marked | null): void {
    if (mark === null) {
      this.view.dispatch({ effects: setError.of(null) });
      return;
    }
    const text = this.value;
    const t = tokenAt(text, offsetOf(text, mark.line, mark.column));
    const lineStart = this.view.state.doc.lineAt(t.start).from;
    this.view.dispatch({
      effects: [setError.of({ from: t.start, to: t.end, lineStart }), EditorView.scrollIntoView(t.start)],
    });
  }

  /** Selects the marked token and focuses the editor. */
  focusMark(): void {
    const m = this.view.state.field(errorField);
    if (m === null) return;
    this.view.dispatch({ selection: { anchor: m.from, head: m.to }, scrollIntoView: true });
    this.view.focus();
  }
}
