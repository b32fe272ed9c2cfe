// A template's page: the editor for a new version (body, CSS, partials, variables, PDF
// options, sample data) beside its live preview, the version history, publish and archive.
// `/templates/new` is the same editor with a name field; saving creates the template.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api } from '../api.ts';
import { useAbilities } from '../session.tsx';
import { ConfirmButton, ErrorMessage, Page, Time, useAction, useLoad } from '../ui.tsx';
import { CodeEditor, type LineDiagnostic } from '../editor/code-editor.tsx';
import { PreviewPane } from '../editor/preview-pane.tsx';
import { DocumentStandardsSection } from '../editor/document-standards-section.tsx';
import { DocumentSection, PartialsSection, PdfOptionsSection, VariablesSection } from '../editor/template-settings.tsx';
import {
  contentFromDraft,
  draftFromContent,
  sameDraft,
  STANDARDS_FIELD,
  starterDraft,
  type Draft,
} from '../editor/template-draft.ts';
import { useLivePreview } from '../editor/use-live-preview.ts';
import {
  TemplateStatus,
  TemplateVersionView,
  type Template,
  type TemplateVersion,
} from '@gen/docgen/admin/v1/template_pb.js';

const NO_DIAGNOSTICS: LineDiagnostic[] = [];

export function TemplateEditorPage() {
  const { params } = useRoute();
  const id = params.id;
  return id ? <ExistingTemplate key={id} id={id} /> : <TemplateEditor />;
}

function ExistingTemplate({ id }: { id: string }) {
  const { query } = useLocation();
  const requested = Number(query.version) || 0;
  const loaded = useLoad(async () => {
    // The history needs only numbers and dates (BASIC leaves out every version's body, CSS,
    // partials and sample data); the version in the editor is fetched whole.
    const [template, list] = await Promise.all([
      api.templates.getTemplate({ id }),
      api.templates.listTemplateVersions({ templateId: id, view: TemplateVersionView.BASIC }),
    ]);
    const versions = [...list.versions].sort((a, b) => b.version - a.version);
    const wanted = requested || template.template!.latestVersion;
    const number = versions.some((v) => v.version === wanted) ? wanted : versions[0]?.version;
    const base =
      number === undefined
        ? undefined
        : (await api.templates.getTemplateVersion({ templateId: id, version: number })).version;
    return { template: template.template!, versions, base };
  }, [id, requested]);
  if (loaded.error && !loaded.data) {
    return (
      <Page title="Template">
        <ErrorMessage error={loaded.error} />
      </Page>
    );
  }
  if (!loaded.data) return <p role="status">Loading template…</p>;
  return (
    <TemplateEditor
      template={loaded.data.template}
      versions={loaded.data.versions}
      base={loaded.data.base}
      reload={loaded.reload}
    />
  );
}

function TemplateEditor({
  template,
  versions = [],
  base,
  reload,
}: {
  template?: Template;
  /** The history: numbers and dates (BASIC). */
  versions?: TemplateVersion[];
  /** The version the editor starts from, whole. */
  base?: TemplateVersion | undefined;
  reload?: () => void;
}) {
  const { workspaceId, canEditTemplates } = useAbilities();
  const { route, query } = useLocation();
  const archived = template?.status === TemplateStatus.ARCHIVED;
  const readOnly = !canEditTemplates || archived;
  const baseDraft = useMemo(() => (base ? draftFromContent(base.content) : starterDraft()), [base]);
  const [draft, setDraft] = useState<Draft>(baseDraft);
  const [name, setName] = useState('');
  const [notice, setNotice] = useState('');
  const action = useAction();
  // Loading another version (or the one just saved) replaces the editors' text: the count
  // tells them so, in the same render as the new draft.
  const [resets, setResets] = useState(0);
  useEffect(() => {
    setDraft(baseDraft);
    setResets((n) => n + 1);
  }, [baseDraft]);

  const built = useMemo(() => contentFromDraft(draft), [draft]);
  const contentKey = useMemo(() => JSON.stringify(built.content ?? null), [built]);
  // Rendering previews is an editor's right (the server refuses viewers): viewers read the source.
  const preview = useLivePreview(
    workspaceId,
    canEditTemplates ? built.content : undefined,
    contentKey,
    undefined,
    template?.id ?? '',
  );
  const changed = !base || !sameDraft(draft, baseDraft);

  // Stable arrays per source: a new array would make every editor re-apply its markers.
  const placed = useMemo(() => {
    const bySource = new Map<string, LineDiagnostic[]>();
    for (const d of preview.diagnostics) {
      if (d.line <= 0) continue;
      const list = bySource.get(d.source) ?? [];
      list.push({
        line: d.line,
        column: d.column,
        message: d.message,
        severity: d.severity === 'warning' ? 'warning' : 'error',
      });
      bySource.set(d.source, list);
    }
    return bySource;
  }, [preview.diagnostics]);
  const diagnosticsFor = (source: string): LineDiagnostic[] => placed.get(source) ?? NO_DIAGNOSTICS;
  const sampleProblem = built.sampleProblem;
  const sampleDiagnostics = useMemo<LineDiagnostic[]>(
    () => (sampleProblem ? [{ ...sampleProblem, severity: 'error' }] : NO_DIAGNOSTICS),
    /* eslint-disable-next-line react-hooks/exhaustive-deps -- keyed on the problem's facts, not its
       object (new every render), so the editor keeps its markers */
    [sampleProblem?.line, sampleProblem?.column, sampleProblem?.message],
  );
  const update = (change: (d: Draft) => Draft) => setDraft((d) => change(d));

  const save = (publish: boolean) =>
    action.run(async () => {
      setNotice('');
      if (!built.content)
        throw new Error(
          'Fix the sample data, variables, document properties or PDF options first (see the messages at the fields).',
        );
      if (!template) {
        if (name.trim() === '') throw new Error('Give the template a name.');
        if (publish) await refuseOnCheckErrors();
        const res = await api.templates.createTemplate({
          workspaceId,
          name: name.trim(),
          content: built.content,
          publish,
        });
        route(`/templates/${res.template!.id}`);
        return;
      }
      if (publish) await refuseOnCheckErrors();
      if (changed) {
        const res = await api.templates.createTemplateVersion({
          templateId: template.id,
          content: built.content,
          publish,
        });
        setNotice(`Saved as version ${res.version!.version}${publish ? ' and published it' : ''}.`);
        // Without ?version the editor follows the latest version, which is now this one.
        if (query.version) route(`/templates/${template.id}`, true);
      } else if (publish && base) {
        await api.templates.publishTemplateVersion({ templateId: template.id, version: base.version });
        setNotice(`Published version ${base.version}.`);
      }
      reload?.();
    });

  const refuseOnCheckErrors = async () => {
    const checked = await api.templates.checkTemplateContent({
      workspaceId,
      templateId: template?.id ?? '',
      content: built.content!,
    });
    const errors = checked.diagnostics.filter((d) => d.severity !== 'warning');
    if (errors.length > 0) {
      throw new Error(
        `Not published: ${errors.map((d) => `${d.source}${d.line ? ` line ${d.line}` : ''}: ${d.message}`).join('; ')}`,
      );
    }
  };

  const archive = () =>
    action.run(async () => {
      await api.templates.archiveTemplate({ id: template!.id });
      setNotice('Archived. Generations of this template are refused from now on.');
      reload?.();
    });

  const title = template ? template.name : 'New template';
  const otherDiagnostics = preview.diagnostics.filter(
    (d) =>
      d.line === 0 ||
      (![
        'body',
        'css',
        'header_template',
        'footer_template',
        'first_page_header_template',
        'first_page_footer_template',
      ].includes(d.source) &&
        !d.source.startsWith('partials/')),
  );
  return (
    <Page
      title={title}
      actions={
        template && (
          <>
            <span class={`badge ${archived ? 'badge-muted' : 'badge-ok'}`}>{archived ? 'Archived' : 'Active'}</span>
            <span class="muted">
              {template.publishedVersion ? `Published: v${template.publishedVersion}` : 'Not published'}
            </span>
            {versions.length > 1 && <a href={`/templates/${template.id}/compare`}>Compare versions</a>}
            {canEditTemplates && !archived && (
              <ConfirmButton
                label="Archive"
                question={`Archive the template “${template.name}”? New generations of it will be refused.`}
                confirmLabel="Archive template"
                onConfirm={archive}
                danger
              />
            )}
          </>
        )
      }
    >
      {template && (
        <p class="muted">
          {readOnly ? 'Viewing' : 'Editing a new version based on'} version {base?.version ?? '—'}. ID{' '}
          <code>{template.id}</code>.
        </p>
      )}
      <div class="editor-layout">
        <div class="editor-fields">
          {!template && (
            <label>
              Template name
              <input type="text" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </label>
          )}
          <CodeEditor
            resetKey={resets}
            label="Template body"
            language="liquid"
            value={draft.body}
            readOnly={readOnly}
            minLines={14}
            onChange={(body) => update((d) => ({ ...d, body }))}
            diagnostics={diagnosticsFor('body')}
          />
          <CodeEditor
            resetKey={resets}
            label="CSS"
            language="css"
            value={draft.css}
            readOnly={readOnly}
            minLines={6}
            onChange={(css) => update((d) => ({ ...d, css }))}
            diagnostics={diagnosticsFor('css')}
          />
          <CodeEditor
            resetKey={resets}
            label="Sample data"
            language="json"
            value={draft.sampleDataText}
            readOnly={readOnly}
            minLines={6}
            onChange={(sampleDataText) => update((d) => ({ ...d, sampleDataText }))}
            diagnostics={sampleDiagnostics}
          />
          {built.sampleProblem && (
            <p class="error" role="alert">
              Line {built.sampleProblem.line}: {built.sampleProblem.message}
            </p>
          )}
          <VariablesSection
            draft={draft}
            update={update}
            readOnly={readOnly}
            suggested={preview.suggestedVariables}
            problems={built.variableProblems}
          />
          <PartialsSection
            resetKey={resets}
            draft={draft}
            update={update}
            readOnly={readOnly}
            diagnosticsFor={diagnosticsFor}
          />
          <DocumentSection
            draft={draft}
            update={update}
            readOnly={readOnly}
            diagnosticsFor={diagnosticsFor}
            issues={built.settingIssues}
          />
          <DocumentStandardsSection
            workspaceId={workspaceId}
            standards={draft.standards}
            set={(change) => update((d) => ({ ...d, standards: { ...d.standards, ...change } }))}
            readOnly={readOnly}
            problems={built.settingIssues.filter((i) => i.field === STANDARDS_FIELD).map((i) => i.issue)}
            variables={draft.variables.map((v) => v.name.trim()).filter(Boolean)}
          />
          <PdfOptionsSection
            resetKey={resets}
            draft={draft}
            update={update}
            readOnly={readOnly}
            diagnosticsFor={diagnosticsFor}
            issues={built.settingIssues}
          />
          {preview.diagnostics.length > 0 && (
            <div class="diagnostics" role="group" aria-label="Problems">
              <h2>Problems</h2>
              <ul>
                {preview.diagnostics.map((d, i) => (
                  <li key={i} class={d.severity === 'warning' ? 'warning' : 'error'}>
                    {d.severity === 'warning' ? 'Warning' : 'Error'} in {d.source}
                    {d.line > 0 ? ` line ${d.line}` : ''}: {d.message}
                  </li>
                ))}
              </ul>
              {otherDiagnostics.length > 0 && (
                <p class="muted">Problems without a line apply to the whole section named.</p>
              )}
            </div>
          )}
          <ErrorMessage error={action.error} />
          {notice && (
            <p class="notice" role="status">
              {notice}
            </p>
          )}
          {!readOnly && (
            <div class="row sticky-actions">
              <button
                type="button"
                class="secondary"
                disabled={action.busy || (!!template && !changed)}
                onClick={() => save(false)}
              >
                {template ? 'Save version' : 'Save draft'}
              </button>
              <button
                type="button"
                disabled={action.busy || (!!template && !changed && base?.version === template.publishedVersion)}
                onClick={() => save(true)}
              >
                Publish
              </button>
            </div>
          )}
        </div>
        <PreviewPane
          preview={preview}
          blocked={
            !canEditTemplates
              ? 'Previews are rendered for owners and editors; your role reads the source.'
              : built.sampleProblem
                ? 'Preview paused: the sample data is not valid JSON.'
                : built.settingIssues.length > 0
                  ? 'Preview paused: a document property or PDF option is not valid (see the message there).'
                  : undefined
          }
        />
      </div>
      {template && <VersionHistory template={template} versions={versions} current={base?.version ?? 0} />}
    </Page>
  );
}

function VersionHistory({
  template,
  versions,
  current,
}: {
  template: Template;
  versions: TemplateVersion[];
  current: number;
}) {
  return (
    <section class="history" aria-labelledby="history-title">
      <h2 id="history-title">Version history</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Created</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {versions.map((v) => (
            <tr key={v.version} aria-current={v.version === current ? 'true' : undefined}>
              <td>v{v.version}</td>
              <td>
                <Time ts={v.createdAt} />
              </td>
              <td>
                {v.version === template.publishedVersion ? (
                  <span class="badge badge-ok">Published</span>
                ) : v.version === current ? (
                  'In the editor'
                ) : (
                  ''
                )}
              </td>
              <td>
                <div class="row">
                  {v.version !== current && (
                    <a href={`/templates/${template.id}?version=${v.version}`}>Open v{v.version}</a>
                  )}
                  {v.version !== current && (
                    <a href={`/templates/${template.id}/compare?a=${v.version}&b=${current}`}>
                      Compare v{v.version} with v{current}
                    </a>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
