// A CodeMirror 6 editor as a Preact component: labelled for assistive technology, keyboard
// friendly (Tab is left unbound, so it moves focus on instead of trapping it), and showing
// diagnostics at their line.
import { useEffect, useRef } from 'preact/hooks';
import { basicSetup } from 'codemirror';
import { EditorState, Compartment, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { setDiagnostics, lintGutter, type Diagnostic } from '@codemirror/lint';
import { css } from '@codemirror/lang-css';
import { json } from '@codemirror/lang-json';
import { cspNonce } from './csp-nonce.ts';
import { accessibleHighlighting } from './highlight.ts';
import { liquidWithAssist, type AuthoringVocabulary } from './liquid-assist.ts';

export type EditorLanguage = 'liquid' | 'css' | 'json';

export interface LineDiagnostic {
  line: number;
  column: number;
  message: string;
  severity: 'error' | 'warning';
}

/** The editors on screen by label, so that a message can take the author to a line. */
const editors = new Map<string, EditorView>();

/** Puts the cursor at the start of `line` in the editor labelled `label`, opening its section. */
export function revealLine(label: string, line: number): boolean {
  const view = editors.get(label);
  if (!view) return false;
  for (let el = view.dom.parentElement; el; el = el.parentElement) if (el instanceof HTMLDetailsElement) el.open = true;
  const doc = view.state.doc;
  const target = doc.line(Math.min(Math.max(line, 1), doc.lines));
  view.dispatch({ selection: { anchor: target.from }, scrollIntoView: true });
  view.focus();
  return true;
}

/**
 * The cursor is kept clear of the editor's sticky Save/Publish bar: when typing or a jump to a
 * line scrolls the page, the bar's height counts as out of view at the bottom.
 */
const stickyBarMargin = EditorView.scrollMargins.of((view) => {
  const bar = view.dom.ownerDocument.querySelector('.sticky-actions');
  return bar ? { bottom: bar.getBoundingClientRect().height + 8 } : null;
});

const NO_VOCABULARY: AuthoringVocabulary = { variables: [], sample: undefined };

const LANGUAGES: Record<EditorLanguage, (vocabulary: () => AuthoringVocabulary) => Extension> = {
  liquid: (vocabulary) => liquidWithAssist(vocabulary),
  css: () => css(),
  json: () => json(),
};

export function CodeEditor(props: {
  label: string;
  value: string;
  onChange?: (value: string) => void;
  language: EditorLanguage;
  readOnly?: boolean;
  diagnostics?: LineDiagnostic[];
  minLines?: number;
  describedBy?: string;
  /** Changing it replaces the editor's text with `value` (e.g. another version was loaded). */
  resetKey?: string | number;
  /** The label is shown above the editor unless the surrounding layout already says it. */
  hideLabel?: boolean;
  /** Liquid: what completions offer (declared variables, sample data), read when asked. */
  vocabulary?: () => AuthoringVocabulary;
}) {
  const hostRef = useRef<HTMLDivElement>(null);
  const viewRef = useRef<EditorView | null>(null);
  const readOnlyRef = useRef(new Compartment());
  const onChangeRef = useRef(props.onChange);
  const vocabularyRef = useRef(props.vocabulary);
  // The editor is created once; its update listener and completions call whatever is current.
  useEffect(() => {
    onChangeRef.current = props.onChange;
    vocabularyRef.current = props.vocabulary;
  });

  useEffect(() => {
    const editor = new EditorView({
      parent: hostRef.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          cspNonce,
          accessibleHighlighting,
          basicSetup,
          LANGUAGES[props.language](() => vocabularyRef.current?.() ?? NO_VOCABULARY),
          lintGutter(),
          EditorView.lineWrapping,
          readOnlyRef.current.of([EditorState.readOnly.of(!!props.readOnly), EditorView.editable.of(!props.readOnly)]),
          EditorView.contentAttributes.of({
            'aria-label': props.label,
            ...(props.describedBy ? { 'aria-describedby': props.describedBy } : {}),
          }),
          EditorView.theme({
            '&': { minHeight: `${(props.minLines ?? 6) * 1.45}em` },
            '.cm-scroller': { minHeight: `${(props.minLines ?? 6) * 1.45}em` },
          }),
          stickyBarMargin,
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChangeRef.current?.(update.state.doc.toString());
          }),
        ],
      }),
    });
    viewRef.current = editor;
    editors.set(props.label, editor);
    return () => {
      if (editors.get(props.label) === editor) editors.delete(props.label);
      editor.destroy();
    };
    /* eslint-disable-next-line react-hooks/exhaustive-deps -- the editor is created once; later prop
       changes are applied by the effects below */
  }, []);

  // The editor owns its text while the author types (pushing `value` back in would race the
  // keystrokes); only a new `resetKey` (another version loaded) replaces the document.
  useEffect(() => {
    const editor = viewRef.current;
    if (!editor) return;
    const current = editor.state.doc.toString();
    if (current !== props.value) editor.dispatch({ changes: { from: 0, to: current.length, insert: props.value } });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only a new resetKey replaces the text (see above)
  }, [props.resetKey]);

  useEffect(() => {
    viewRef.current?.dispatch({
      effects: readOnlyRef.current.reconfigure([
        EditorState.readOnly.of(!!props.readOnly),
        EditorView.editable.of(!props.readOnly),
      ]),
    });
  }, [props.readOnly]);

  useEffect(() => {
    const editor = viewRef.current;
    if (!editor) return;
    const doc = editor.state.doc;
    const list: Diagnostic[] = (props.diagnostics ?? []).map((d) => {
      const line = doc.line(Math.min(Math.max(d.line, 1), doc.lines));
      const from = Math.min(line.from + Math.max(d.column - 1, 0), line.to);
      return { from, to: Math.max(from, line.to), severity: d.severity, message: d.message };
    });
    editor.dispatch(setDiagnostics(editor.state, list));
  }, [props.diagnostics]);

  return (
    <div class="code-field">
      {!props.hideLabel && (
        <div class="field-label" aria-hidden="true">
          {props.label}
          {props.readOnly ? ' (read-only)' : ''}
        </div>
      )}
      <div class={`code-editor ${props.readOnly ? 'read-only' : ''}`} ref={hostRef} />
    </div>
  );
}
