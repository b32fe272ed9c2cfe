// The "Preview" region: the rendered pages, what state the preview is in, and a download of
// the previewed PDF. `data-preview-count` and `data-latency-ms` (pause → pages on screen)
// let tests and the latency benchmark follow updates.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { PdfView } from './pdf-view.tsx';
import type { PreviewState } from './use-live-preview.ts';

export function PreviewPane({
  preview,
  label = 'Preview',
  blocked,
}: {
  preview: PreviewState;
  label?: string;
  blocked?: string | undefined;
}) {
  const [drawn, setDrawn] = useState({ count: 0, latencyMs: 0, drawMs: 0 });
  const [viewError, setViewError] = useState('');
  const changedAtRef = useRef(preview.changedAt);
  // Read by onDrawn, which fires after the render that showed the new pages.
  useEffect(() => {
    changedAtRef.current = preview.changedAt;
  }, [preview.changedAt]);
  const downloadUrl = useMemo(
    () => (preview.pdf ? URL.createObjectURL(new Blob([preview.pdf.slice()], { type: 'application/pdf' })) : undefined),
    [preview.pdf],
  );
  useEffect(() => () => (downloadUrl ? URL.revokeObjectURL(downloadUrl) : undefined), [downloadUrl]);
  const errors = preview.diagnostics.filter((d) => d.severity !== 'warning');
  let status: string;
  if (blocked) status = blocked;
  else if (preview.error) status = `Preview failed: ${preview.error}`;
  else if (preview.pending) status = 'Updating preview…';
  else if (errors.length > 0 && !preview.pdf)
    status = `Not rendered: ${errors.length} error${errors.length > 1 ? 's' : ''} in the template (shown at their lines).`;
  else if (drawn.count > 0)
    status = `Preview up to date (rendered in ${preview.renderMs} ms, on screen ${drawn.latencyMs} ms after the last edit).`;
  else status = preview.pdf ? 'Drawing preview…' : 'The preview appears here.';
  return (
    <section
      class="preview"
      role="region"
      aria-label={label}
      data-preview-count={drawn.count}
      data-latency-ms={drawn.latencyMs}
      data-request-ms={preview.requestMs}
      data-render-ms={preview.renderMs}
      data-draw-ms={drawn.drawMs}
      aria-busy={preview.pending ? 'true' : 'false'}
    >
      <div class="preview-bar">
        <p class={`preview-status ${preview.error || blocked ? 'error' : ''}`} role="status">
          {status}
        </p>
        {downloadUrl && (
          <a href={downloadUrl} download="preview.pdf">
            Download preview PDF
          </a>
        )}
      </div>
      {viewError && (
        <p class="error" role="alert">
          {viewError}
        </p>
      )}
      <PdfView
        pdf={preview.pdf}
        onDrawn={(drawMs) => {
          setViewError('');
          setDrawn((d) => ({
            count: d.count + 1,
            latencyMs: Math.round(performance.now() - changedAtRef.current),
            drawMs,
          }));
        }}
        onError={setViewError}
      />
    </section>
  );
}
