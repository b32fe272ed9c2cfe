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
  /** When the content last changed (performance.now()), for the latency figure. */
  changedAt: number;
}

export function useLivePreview(workspaceId: string, content: ContentInit | undefined, contentKey: string, variables?: ContentInit['sampleData']): PreviewState {
  const [state, setState] = useState<PreviewState>({ pdf: undefined, diagnostics: [], suggestedVariables: [], error: '', pending: false, renderMs: 0, changedAt: 0 });
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
      const preview = api.templates.previewTemplateContent({ workspaceId, content, ...(variables ? { variables } : {}) }, { signal });
      const check = api.templates.checkTemplateContent({ workspaceId, content }, { signal }).catch((err: unknown) => {
        if (isAbort(err)) throw err;
        return undefined; // the preview's own diagnostics still show; a failed check is not fatal
      });
      Promise.all([preview, check]).then(
        ([rendered, checked]) => {
          if (signal.aborted) return;
          const seen = new Set<string>();
          const diagnostics = [...rendered.diagnostics, ...(checked?.diagnostics ?? [])].filter((d) => {
            const key = `${d.source}:${d.line}:${d.message}`;
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          });
          setState({
            pdf: rendered.pdf.length > 0 ? rendered.pdf : undefined,
            diagnostics,
            suggestedVariables: checked?.suggestedVariables ?? [],
            error: '',
            pending: false,
            renderMs: rendered.renderMs,
            changedAt,
          });
        },
        (err: unknown) => {
          if (signal.aborted || isAbort(err)) return;
          setState((s) => ({ ...s, error: errorText(err), pending: false }));
        },
      );
    }, PREVIEW_DEBOUNCE_MS);
    return () => clearTimeout(timer);
    // contentKey stands for content and variables (new objects on every render).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [workspaceId, contentKey]);
  useEffect(() => () => latest.current?.abort(), []);
  return state;
}
