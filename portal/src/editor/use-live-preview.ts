// The live preview: after the author pauses (debounce), the unsaved content goes to
// PreviewTemplateContent (rendered on the render role) and CheckTemplateContent (publish
// checks, suggested variables) together. A newer edit aborts the calls still in flight, so
// only the latest content is ever shown.
import { useEffect, useRef, useState } from 'preact/hooks';
import { Code, ConnectError } from '@connectrpc/connect';
import { api, errorText, isAbort } from '../api.ts';
import type { TemplateDiagnostic } from '@gen/docgen/admin/v1/template_pb.js';
import type { ContentInit } from './template-draft.ts';
import { PREVIEW_DEBOUNCE_MS } from './preview-timing.ts';

/** How many times an unavailable renderer is asked again (after 1, 2 and 3 s). */
const PREVIEW_RETRIES = 3;

export interface PreviewState {
  /** The last PDF rendered (kept while later content fails, so its pages can be shown as old). */
  pdf: Uint8Array | undefined;
  /** The content key `pdf` was rendered from. */
  pdfKey: string;
  /** The content key of the latest answer of the preview call (with or without a PDF). */
  resultKey: string;
  /** What the latest preview call said is wrong (errors stop the render). */
  renderDiagnostics: TemplateDiagnostic[];
  /** The preview's and the publish check's findings together. */
  diagnostics: TemplateDiagnostic[];
  suggestedVariables: string[];
  /** Words for a failed call (not a template problem: those are diagnostics). */
  error: string;
  pending: boolean;
  renderMs: number;
  /** Round trip of the preview call. */
  requestMs: number;
  /** When the content last changed (performance.now()), for the latency figure. */
  changedAt: number;
}

export function useLivePreview(
  workspaceId: string,
  content: ContentInit | undefined,
  contentKey: string,
  variables?: ContentInit['sampleData'],
  /** The edited template: its earlier version's PDF passwords are kept (write-only); '' for a new one. */
  templateId = '',
): PreviewState {
  const [state, setState] = useState<PreviewState>({
    pdf: undefined,
    pdfKey: '',
    resultKey: '',
    renderDiagnostics: [],
    diagnostics: [],
    suggestedVariables: [],
    error: '',
    pending: false,
    renderMs: 0,
    requestMs: 0,
    changedAt: 0,
  });
  const latest = useRef<AbortController | null>(null);
  useEffect(() => {
    if (!content) return;
    const changedAt = performance.now();
    setState((s) => ({ ...s, pending: true, changedAt }));
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(() => {
      latest.current?.abort();
      const controller = new AbortController();
      latest.current = controller;
      const signal = controller.signal;
      const sentAt = performance.now();
      // The preview is shown as soon as it arrives; the publish check adds its findings when
      // it answers (it does not hold the pages back).
      let checked: { diagnostics: TemplateDiagnostic[]; suggestedVariables: string[] } | undefined;
      let rendered: TemplateDiagnostic[] = [];
      const merged = () => {
        const seen = new Set<string>();
        return [...rendered, ...(checked?.diagnostics ?? [])].filter((d) => {
          const key = `${d.source}:${d.line}:${d.message}`;
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        });
      };
      // A renderer that is briefly unavailable (restarting, busy) is asked again a few times
      // before the pane says the preview failed: the author should not have to type to retry.
      const ask = (attempt: number): void => {
        api.templates
          .previewTemplateContent({ workspaceId, templateId, content, ...(variables ? { variables } : {}) }, { signal })
          .then(
            (res) => {
              if (signal.aborted) return;
              rendered = res.diagnostics;
              const hasPdf = res.pdf.length > 0;
              setState((s) => ({
                pdf: hasPdf ? res.pdf : s.pdf,
                pdfKey: hasPdf ? contentKey : s.pdfKey,
                resultKey: contentKey,
                renderDiagnostics: res.diagnostics,
                diagnostics: merged(),
                suggestedVariables: checked?.suggestedVariables ?? s.suggestedVariables,
                error: '',
                pending: false,
                renderMs: res.renderMs,
                requestMs: Math.round(performance.now() - sentAt),
                changedAt,
              }));
            },
            (err: unknown) => {
              if (signal.aborted || isAbort(err)) return;
              if (err instanceof ConnectError && err.code === Code.Unavailable && attempt < PREVIEW_RETRIES) {
                retryTimer = setTimeout(() => ask(attempt + 1), 1000 * (attempt + 1));
                return;
              }
              setState((s) => ({ ...s, error: errorText(err), pending: false, resultKey: contentKey }));
            },
          );
      };
      ask(0);
      api.templates.checkTemplateContent({ workspaceId, templateId, content }, { signal }).then(
        (res) => {
          if (signal.aborted) return;
          checked = res;
          setState((s) => ({ ...s, diagnostics: merged(), suggestedVariables: res.suggestedVariables }));
        },
        () => undefined, // the preview's own diagnostics still show; a failed check is not fatal
      );
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      clearTimeout(retryTimer);
    };
    /* eslint-disable-next-line react-hooks/exhaustive-deps -- contentKey stands for content and
       variables (new objects on every render) */
  }, [workspaceId, contentKey, templateId]);
  useEffect(() => () => latest.current?.abort(), []);
  return state;
}
