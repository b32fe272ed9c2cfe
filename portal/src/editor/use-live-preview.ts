// The live preview: after the author pauses (debounce), the unsaved content goes to
// PreviewTemplateContent (rendered on the render role) and CheckTemplateContent (publish
// checks, suggested variables) together. A newer edit aborts the calls still in flight, so
// only the latest content is ever shown.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText, isAbort } from '../api.ts';
import type { TemplateDiagnostic } from '@gen/docgen/admin/v1/template_pb.js';
import type { ContentInit } from './template-draft.ts';
import { PREVIEW_DEBOUNCE_MS } from './preview-timing.ts';

export interface PreviewState {
  pdf: Uint8Array | undefined;
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
      api.templates
        .previewTemplateContent({ workspaceId, templateId, content, ...(variables ? { variables } : {}) }, { signal })
        .then(
          (res) => {
            if (signal.aborted) return;
            rendered = res.diagnostics;
            setState((s) => ({
              pdf: res.pdf.length > 0 ? res.pdf : undefined,
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
            setState((s) => ({ ...s, error: errorText(err), pending: false }));
          },
        );
      api.templates.checkTemplateContent({ workspaceId, templateId, content }, { signal }).then(
        (res) => {
          if (signal.aborted) return;
          checked = res;
          setState((s) => ({ ...s, diagnostics: merged(), suggestedVariables: res.suggestedVariables }));
        },
        () => undefined, // the preview's own diagnostics still show; a failed check is not fatal
      );
    }, PREVIEW_DEBOUNCE_MS);
    return () => clearTimeout(timer);
    /* eslint-disable-next-line react-hooks/exhaustive-deps -- contentKey stands for content and
       variables (new objects on every render) */
  }, [workspaceId, contentKey, templateId]);
  useEffect(() => () => latest.current?.abort(), []);
  return state;
}
