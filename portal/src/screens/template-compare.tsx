// Two versions side by side: a source diff (body and CSS) and both rendered with the same
// sample data, so a change in output is the template's doing, not the data's.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { MergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { liquid } from '@codemirror/lang-liquid';
import { css } from '@codemirror/lang-css';
import { json } from '@codemirror/lang-json';
import { tellNextEditor } from '../editor/next-message.ts';
import { api } from '../api.ts';
import { cspNonce } from '../editor/csp-nonce.ts';
import { accessibleHighlighting } from '../editor/highlight.ts';
import { useAbilities } from '../session.tsx';
import { ErrorMessage, Page, useLoad } from '../ui.tsx';
import { PreviewPane } from '../editor/preview-pane.tsx';
import { useLivePreview } from '../editor/use-live-preview.ts';
import { contentFromDraft, draftFromContent } from '../editor/template-draft.ts';
import { TemplateVersionView, type TemplateVersion } from '@gen/docgen/admin/v1/template_pb.js';

function SourceDiff({
  label,
  a,
  b,
  language,
  versionA,
  versionB,
}: {
  label: string;
  a: string;
  b: string;
  language: 'liquid' | 'css' | 'json';
  versionA: number;
  versionB: number;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const side = (name: string) => [
      cspNonce,
      accessibleHighlighting,
      EditorState.readOnly.of(true),
      EditorView.editable.of(false),
      EditorView.lineWrapping,
      language === 'liquid' ? liquid() : language === 'css' ? css() : json(),
      EditorView.contentAttributes.of({ 'aria-label': name }),
    ];
    const view = new MergeView({
      a: { doc: a, extensions: side(`${label} of version ${versionA}`) },
      b: { doc: b, extensions: side(`${label} of version ${versionB}`) },
      parent: host.current!,
      collapseUnchanged: { margin: 3, minSize: 6 },
    });
    return () => view.destroy();
  }, [a, b, language, label, versionA, versionB]);
  return (
    <div class="diff">
      <h3>
        {label}: v{versionA} → v{versionB}
      </h3>
      {a === b ? <p class="muted">No difference.</p> : <div ref={host} />}
    </div>
  );
}

type Part = { label: string; language: 'liquid' | 'css' | 'json'; text: (v: TemplateVersion) => string };

const pretty = (value: unknown) => JSON.stringify(value ?? null, null, 2);

/** Every part of a version, as text to compare: sources, then settings and data as JSON. */
const PARTS: Part[] = [
  { label: 'Body', language: 'liquid', text: (v) => v.content?.body ?? '' },
  { label: 'CSS', language: 'css', text: (v) => v.content?.css ?? '' },
  {
    label: 'Partials',
    language: 'liquid',
    text: (v) =>
      Object.entries(v.content?.partials ?? {})
        .sort(([x], [y]) => x.localeCompare(y))
        .map(([name, source]) => `{% comment %} partial ${name} {% endcomment %}\n${source}`)
        .join('\n'),
  },
  { label: 'Header', language: 'liquid', text: (v) => v.content?.pdfOptions?.headerTemplate ?? '' },
  { label: 'Footer', language: 'liquid', text: (v) => v.content?.pdfOptions?.footerTemplate ?? '' },
  {
    label: 'First page header',
    language: 'liquid',
    text: (v) => v.content?.pdfOptions?.firstPageHeaderTemplate ?? '',
  },
  {
    label: 'First page footer',
    language: 'liquid',
    text: (v) => v.content?.pdfOptions?.firstPageFooterTemplate ?? '',
  },
  {
    label: 'Variables',
    language: 'json',
    text: (v) => pretty(draftFromContent(v.content).variables),
  },
  { label: 'Sample data', language: 'json', text: (v) => pretty(v.content?.sampleData) },
  {
    label: 'PDF options',
    language: 'json',
    text: (v) => {
      const pdf = { ...draftFromContent(v.content).pdf } as Record<string, unknown>;
      for (const k of ['headerTemplate', 'footerTemplate', 'firstPageHeaderTemplate', 'firstPageFooterTemplate'])
        delete pdf[k];
      return pretty(pdf);
    },
  },
  { label: 'Document settings', language: 'json', text: (v) => pretty(draftFromContent(v.content).document) },
];

function VersionPreview({
  version,
  sampleData,
  sampleKey,
  workspaceId,
  allowed,
}: {
  version: TemplateVersion;
  sampleData: Record<string, unknown>;
  sampleKey: string;
  workspaceId: string;
  allowed: boolean;
}) {
  // A stored version is shown as it is: its own problems come back from the preview.
  const content = useMemo(
    () => contentFromDraft(draftFromContent(version.content), { checkSettings: false }).content,
    [version],
  );
  const preview = useLivePreview(
    workspaceId,
    allowed ? content : undefined,
    `${version.templateId}:${version.version}:${sampleKey}`,
    sampleData as never,
    version.templateId,
  );
  return (
    <PreviewPane
      preview={preview}
      label={`Preview of version ${version.version}`}
      blocked={allowed ? undefined : 'Previews are rendered for owners and editors.'}
    />
  );
}

export function TemplateComparePage() {
  const { params } = useRoute();
  const { query, route } = useLocation();
  const { workspaceId, canEditTemplates } = useAbilities();
  const id = params.id!;
  const loaded = useLoad(async () => {
    // The pickers need only the numbers (BASIC); the two compared versions are fetched whole.
    const [template, versions] = await Promise.all([
      api.templates.getTemplate({ id }),
      api.templates.listTemplateVersions({ templateId: id, view: TemplateVersionView.BASIC }),
    ]);
    return { template: template.template!, versions: [...versions.versions].sort((x, y) => x.version - y.version) };
  }, [id]);
  const versions = loaded.data?.versions ?? [];
  const latest = versions[versions.length - 1]?.version ?? 0;
  const numberA = Number(query.a) || (versions[versions.length - 2]?.version ?? latest);
  const numberB = Number(query.b) || latest;
  const compared = useLoad(async () => {
    const whole = async (n: number) =>
      versions.some((v) => v.version === n)
        ? (await api.templates.getTemplateVersion({ templateId: id, version: n })).version
        : undefined;
    const [a, b] = await Promise.all([whole(numberA), whole(numberB)]);
    return { a, b };
  }, [id, numberA, numberB, versions.length]);
  const a = compared.data?.a?.version === numberA ? compared.data.a : undefined;
  const b = compared.data?.b?.version === numberB ? compared.data.b : undefined;
  const [sampleFrom, setSampleFrom] = useState<'a' | 'b'>('b');
  const sampleData = (sampleFrom === 'a' ? a : b)?.content?.sampleData ?? {};
  const select = (which: 'a' | 'b', value: string) =>
    route(`/templates/${id}/compare?a=${which === 'a' ? value : numberA}&b=${which === 'b' ? value : numberB}`, true);

  return (
    <Page
      title={loaded.data ? `Compare versions of ${loaded.data.template.name}` : 'Compare versions'}
      actions={<a href={`/templates/${id}`}>Back to the editor</a>}
    >
      <ErrorMessage error={loaded.error ?? compared.error} />
      {loaded.data && (
        <>
          <div class="row filters">
            <label class="inline">
              Left version
              <select value={String(numberA)} onChange={(e) => select('a', e.currentTarget.value)}>
                {versions.map((v) => (
                  <option key={v.version} value={String(v.version)}>
                    v{v.version}
                  </option>
                ))}
              </select>
            </label>
            <label class="inline">
              Right version
              <select value={String(numberB)} onChange={(e) => select('b', e.currentTarget.value)}>
                {versions.map((v) => (
                  <option key={v.version} value={String(v.version)}>
                    v{v.version}
                  </option>
                ))}
              </select>
            </label>
            <label class="inline">
              Sample data of
              <select value={sampleFrom} onChange={(e) => setSampleFrom(e.currentTarget.value as 'a' | 'b')}>
                <option value="a">the left version</option>
                <option value="b">the right version</option>
              </select>
            </label>
          </div>
          {a && b ? (
            <>
              {canEditTemplates && a.version !== latest && (
                <p>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => {
                      tellNextEditor({
                        kind: 'ok',
                        text: `Version ${a.version} is in the editor: "Save version" makes it the newest version, "Publish" publishes it.`,
                      });
                      route(`/templates/${id}?version=${a.version}`);
                    }}
                  >
                    Restore v{a.version}
                  </button>
                </p>
              )}
              {PARTS.filter((p) => p.text(a) !== p.text(b)).map((p) => (
                <SourceDiff
                  key={p.label}
                  label={p.label}
                  a={p.text(a)}
                  b={p.text(b)}
                  language={p.language}
                  versionA={a.version}
                  versionB={b.version}
                />
              ))}
              <p class="muted">
                {PARTS.every((p) => p.text(a) !== p.text(b))
                  ? 'Every part differs.'
                  : `Unchanged: ${PARTS.filter((p) => p.text(a) === p.text(b))
                      .map((p) => p.label)
                      .join(', ')}.`}
              </p>
              <h2>Rendered with the same sample data</h2>
              <div class="compare-previews">
                <VersionPreview
                  version={a}
                  sampleData={sampleData}
                  sampleKey={`${sampleFrom}:${numberA}:${numberB}`}
                  workspaceId={workspaceId}
                  allowed={canEditTemplates}
                />
                <VersionPreview
                  version={b}
                  sampleData={sampleData}
                  sampleKey={`${sampleFrom}:${numberA}:${numberB}`}
                  workspaceId={workspaceId}
                  allowed={canEditTemplates}
                />
              </div>
            </>
          ) : compared.loading ? (
            <p role="status">Loading the versions…</p>
          ) : (
            <p>Choose two versions.</p>
          )}
        </>
      )}
    </Page>
  );
}
