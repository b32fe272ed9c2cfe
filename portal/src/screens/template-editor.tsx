// A template's page: the editor for a new version (body, CSS, partials, variables, PDF
// options, sample data) beside its live preview, the version history (with each version's
// author and note), publish, rename, archive, unarchive and delete.
// `/templates/new` is the same editor with a name field; saving creates the template.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { api } from '../api.ts';
import { useAbilities } from '../session.tsx';
import { ConfirmButton, ErrorMessage, Page, Time, formatTime, useAction, useLoad } from '../ui.tsx';
import { errorText } from '../api.ts';
import { CodeEditor, revealLine, type LineDiagnostic } from '../editor/code-editor.tsx';
import { UnsavedChangesGuard, keepDraft, keptDraft } from '../editor/unsaved-work.tsx';
import { takeNextEditorMessage, tellNextEditor } from '../editor/next-message.ts';
import { PreviewPane } from '../editor/preview-pane.tsx';
import { DocumentStandardsSection } from '../editor/document-standards-section.tsx';
import { DocumentSection, PartialsSection, PdfOptionsSection, VariablesSection } from '../editor/template-settings.tsx';
import {
  contentFromDraft,
  declareSuggested,
  draftFromContent,
  parseJsonObject,
  sameDraft,
  blankDraft,
  STANDARDS_FIELD,
  type Draft,
} from '../editor/template-draft.ts';
import type { AuthoringVocabulary } from '../editor/liquid-assist.ts';
import { useLivePreview } from '../editor/use-live-preview.ts';
import { RenameButton, VersionAuthor } from '../editor/template-manage.tsx';
import { VERSION_NOTE_MAX_LENGTH, versionNoteIssue } from '../../../src/domain/version-note.ts';
import { archivedInsteadOfDeleted } from '../../../src/domain/template-delete.ts';
import {
  DeleteTemplateOutcome,
  TemplateStatus,
  TemplateVersionView,
  type GalleryTemplate,
  type Template,
  type TemplateDiagnostic,
  type TemplateVersion,
} from '@gen/docgen/admin/v1/template_pb.js';

const NO_DIAGNOSTICS: LineDiagnostic[] = [];

export function TemplateEditorPage() {
  const { params } = useRoute();
  const id = params.id;
  return id ? <ExistingTemplate key={id} id={id} /> : <NewTemplate />;
}

/** "New template": a blank page, or a template of the starter gallery (`?from=invoice`). */
function NewTemplate() {
  const { query } = useLocation();
  const from = query.from ?? '';
  const gallery = useLoad(() => api.templates.listGalleryTemplates({}), []);
  const chosen = gallery.data?.templates.find((t) => t.name === from);
  // One starting draft per choice: a new object would make the editor start over.
  const start = useMemo(() => (chosen ? draftFromContent(chosen.content) : blankDraft()), [chosen]);
  if (from && !chosen && !gallery.error && !gallery.data) return <p role="status">Loading the gallery…</p>;
  return (
    <TemplateEditor
      key={chosen ? chosen.name : 'blank'}
      start={start}
      startName={chosen?.title ?? ''}
      startKey={chosen ? chosen.name : 'blank'}
      gallery={gallery.data?.templates ?? []}
    />
  );
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

/** The editors' labels by diagnostic source, for links from a message to a line. */
const EDITOR_LABELS: Record<string, string> = {
  body: 'Template body',
  css: 'CSS',
  header_template: 'Header',
  footer_template: 'Footer',
  first_page_header_template: 'First page header',
  first_page_footer_template: 'First page footer',
};
const editorLabel = (source: string) =>
  EDITOR_LABELS[source] ?? (source.startsWith('partials/') ? `Partial ${source.slice('partials/'.length)}` : '');

/** A problem in words, with a link to its line when it has one. */
function DiagnosticText({ d }: { d: TemplateDiagnostic }) {
  const label = editorLabel(d.source);
  const place = `${d.source}${d.line > 0 ? ` line ${d.line}` : ''}`;
  return (
    <>
      {d.line > 0 && label ? (
        <button type="button" class="link-button" onClick={() => revealLine(label, d.line)}>
          {place}
        </button>
      ) : (
        place
      )}
      : {d.message}
    </>
  );
}

/** A publish refused by the checks: its reasons, each linked to its line. */
class Refusal extends Error {
  constructor(
    readonly title: string,
    readonly reasons: TemplateDiagnostic[],
  ) {
    super(`${title}: ${reasons.map((d) => `${d.source}${d.line ? ` line ${d.line}` : ''}: ${d.message}`).join('; ')}`);
  }
}

/** What the editor tells the author after an action; stays until dismissed or superseded. */
interface EditorMessage {
  kind: 'ok' | 'error';
  text: string;
  reasons?: TemplateDiagnostic[];
}

function Messages({ message, onDismiss }: { message: EditorMessage | undefined; onDismiss: () => void }) {
  // A new message is brought into view: the author may have clicked Publish far down the page.
  const host = useRef<HTMLDivElement>(null);
  // Keyed on the words: the message object is new on every render.
  const text = message?.text;
  useEffect(() => {
    if (text) host.current?.scrollIntoView({ block: 'nearest' });
  }, [text]);
  return (
    <div class="editor-messages" aria-live="polite" ref={host}>
      {message && (
        <div
          class={`editor-message ${message.kind === 'ok' ? 'notice' : 'error'}`}
          role={message.kind === 'ok' ? 'status' : 'alert'}
        >
          <div>
            <p class="message-text">{message.text}</p>
            {message.reasons && message.reasons.length > 0 && (
              <ul>
                {message.reasons.map((d, i) => (
                  <li key={i}>
                    {d.severity === 'warning' ? 'Warning: ' : ''}
                    <DiagnosticText d={d} />
                  </li>
                ))}
              </ul>
            )}
          </div>
          <button type="button" class="secondary small" onClick={onDismiss}>
            Dismiss
          </button>
        </div>
      )}
    </div>
  );
}

function TemplateEditor({
  template,
  versions = [],
  base,
  reload,
  start,
  startName = '',
  startKey = 'blank',
  gallery = [],
}: {
  template?: Template;
  /** The history: numbers and dates (BASIC). */
  versions?: TemplateVersion[];
  /** The version the editor starts from, whole. */
  base?: TemplateVersion | undefined;
  reload?: () => void;
  /** A new template: what it starts from (blank or a gallery template), its suggested name. */
  start?: Draft;
  startName?: string;
  startKey?: string;
  gallery?: GalleryTemplate[];
}) {
  const { workspaceId, canEditTemplates, isOwner } = useAbilities();
  const { route, query } = useLocation();
  // The note saved with the next version (shown in the history).
  const [note, setNote] = useState('');
  const archived = template?.status === TemplateStatus.ARCHIVED;
  const readOnly = !canEditTemplates || archived;
  const baseDraft = useMemo(() => (base ? draftFromContent(base.content) : (start ?? blankDraft())), [base, start]);
  const baseVersion = base?.version ?? 0;
  // The draft is kept in this browser until saved: per template, or per starting point of a new one.
  const storageKey = `${workspaceId}:${template ? template.id : `new:${startKey}`}`;
  const [restored, setRestored] = useState(() => (readOnly ? undefined : keptDraft(storageKey, baseVersion)));
  const [draft, setDraft] = useState<Draft>(() => restored?.draft ?? baseDraft);
  const [name, setName] = useState(() => restored?.name ?? startName);
  const [message, setMessage] = useState<EditorMessage | undefined>(() => takeNextEditorMessage());
  const action = useAction();
  // Loading another version (or the one just saved) replaces the editors' text: the count
  // tells them so, in the same render as the new draft.
  const [resets, setResets] = useState(0);
  // The draft on screen, and what the last save sent (with the version it became): a save's
  // answer and the saved version arrive while the author may be typing on.
  const draftRef = useRef(draft);
  useEffect(() => {
    draftRef.current = draft;
  }, [draft]);
  const savedRef = useRef<{ version: number; draft: Draft } | undefined>(undefined);
  const appliedBaseRef = useRef(baseDraft);
  useEffect(() => {
    if (appliedBaseRef.current === baseDraft) return;
    appliedBaseRef.current = baseDraft;
    const saved = savedRef.current;
    savedRef.current = undefined;
    if (saved && base?.version === saved.version && draftRef.current !== saved.draft) {
      // Keystrokes typed after Save: the saved version is the new base and they stay, as unsaved
      // changes on it (kept in this browser against the new base by the effect below).
      setRestored(undefined);
      return;
    }
    const kept = readOnly ? undefined : keptDraft(storageKey, baseVersion);
    setRestored(kept);
    setDraft(kept?.draft ?? baseDraft);
    setResets((n) => n + 1);
    /* eslint-disable-next-line react-hooks/exhaustive-deps -- a new base (another version, the one
       just saved) is what replaces the draft */
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
  const changed = !sameDraft(draft, baseDraft);
  // The draft just saved is not unsaved work, even before the saved version comes back as the base.
  const [savedDraft, setSavedDraft] = useState<Draft | undefined>(undefined);
  const dirty = !readOnly && draft !== savedDraft && (changed || (!template && name.trim() !== startName.trim()));

  // Kept locally while unsaved; a saved draft is forgotten (and not written back by a late render).
  const createdRef = useRef(false);
  useEffect(() => {
    if (readOnly || savedDraft === draft || createdRef.current) return;
    keepDraft(storageKey, dirty ? { base: baseVersion, draft, name, savedAt: Date.now() } : undefined);
  }, [draft, name, dirty, readOnly, storageKey, baseVersion, savedDraft]);
  const discard = () => {
    keepDraft(storageKey, undefined);
    setRestored(undefined);
    setDraft(baseDraft);
    setName(startName);
    setResets((n) => n + 1);
  };

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
  // Completions read the draft as it is when they are asked for (the editors are created once).
  const sample = useMemo(() => parseJsonObject(draft.sampleDataText, 'Sample data').value, [draft.sampleDataText]);
  const vocabularyRef = useRef<AuthoringVocabulary>({ variables: [], sample: undefined });
  useEffect(() => {
    vocabularyRef.current = { variables: draft.variables, sample };
  }, [draft.variables, sample]);
  const vocabulary = useCallback(() => vocabularyRef.current, []);

  const cannotSend = built.sampleProblem
    ? 'the sample data is not valid JSON (see the message at it)'
    : built.settingIssues.length > 0
      ? 'a document property or PDF option is not valid (see the message there)'
      : built.variableProblems.length > 0
        ? `the draft cannot be sent: ${built.variableProblems[0]}`
        : '';

  const save = (publish: boolean) =>
    action.run(async () => {
      setMessage(undefined);
      if (!built.content) throw new Error(`Not saved: ${cannotSend}.`);
      const noteIssue = versionNoteIssue(note);
      if (noteIssue) throw new Error(`Not saved: the version note ${noteIssue}.`);
      const saving = draft;
      if (!template) {
        if (name.trim() === '') throw new Error('Give the template a name.');
        if (publish) await refuseOnCheckErrors();
        const res = await api.templates.createTemplate({
          workspaceId,
          name: name.trim(),
          content: built.content,
          publish,
          note,
        });
        setSavedDraft(saving);
        keepDraft(storageKey, undefined);
        // Keystrokes typed while the template was being created go with it, as unsaved changes on
        // version 1 (and not back under this new template's starting point).
        createdRef.current = true;
        if (draftRef.current !== saving)
          keepDraft(`${workspaceId}:${res.template!.id}`, {
            base: 1,
            draft: draftRef.current,
            name: name.trim(),
            savedAt: Date.now(),
          });
        tellNextEditor({
          kind: 'ok',
          text: publish ? 'Created the template and published version 1.' : 'Created the template as version 1.',
        });
        route(`/templates/${res.template!.id}`);
        return;
      }
      if (publish) await refuseOnCheckErrors();
      // An older version saved as it is becomes the newest (a restore).
      const restoring = !!base && base.version !== template.latestVersion;
      if (changed || restoring) {
        const res = await api.templates.createTemplateVersion({
          templateId: template.id,
          content: built.content,
          publish,
          note,
        });
        savedRef.current = { version: res.version!.version, draft: saving };
        setNote('');
        setSavedDraft(saving);
        keepDraft(storageKey, undefined);
        setMessage({
          kind: 'ok',
          text: `Saved as version ${res.version!.version}${publish ? ' and published it' : ''}.`,
        });
        // Without ?version the editor follows the latest version, which is now this one.
        if (query.version) route(`/templates/${template.id}`, true);
      } else if (publish && base) {
        await api.templates.publishTemplateVersion({ templateId: template.id, version: base.version });
        setMessage({ kind: 'ok', text: `Published version ${base.version}.` });
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
    if (errors.length > 0)
      throw new Refusal(`Not published: ${errors.length === 1 ? '1 problem' : `${errors.length} problems`}`, errors);
  };

  // "Check": the publish checks and the sample data against the variables' schemas, on demand.
  const check = () =>
    action.run(async () => {
      setMessage(undefined);
      if (!built.content) throw new Error(`Not checked: ${cannotSend}.`);
      const checked = await api.templates.checkTemplateContent({ workspaceId, content: built.content });
      const found = checked.diagnostics;
      setMessage(
        found.length === 0
          ? { kind: 'ok', text: 'Check passed: no problems, and the sample data fits the variables.' }
          : {
              kind: found.some((d) => d.severity !== 'warning') ? 'error' : 'ok',
              text: `Check found ${found.length === 1 ? '1 problem' : `${found.length} problems`}:`,
              reasons: found,
            },
      );
    });

  const duplicate = () =>
    action.run(async () => {
      const content = built.content ?? contentFromDraft(baseDraft).content;
      if (!template || !content) return;
      const copy = `Copy of ${template.name}`;
      const res = await api.templates.createTemplate({ workspaceId, name: copy, content, publish: false });
      tellNextEditor({ kind: 'ok', text: `Duplicated “${template.name}” as “${copy}” (version 1, not published).` });
      route(`/templates/${res.template!.id}`);
    });

  const publishVersion = (version: number) =>
    action.run(async () => {
      setMessage(undefined);
      await api.templates.publishTemplateVersion({ templateId: template!.id, version });
      setMessage({ kind: 'ok', text: `Published version ${version}.` });
      reload?.();
    });

  const archive = () =>
    action.run(async () => {
      await api.templates.archiveTemplate({ id: template!.id });
      setMessage({ kind: 'ok', text: 'Archived. Generations of this template are refused from now on.' });
      reload?.();
    });

  const rename = (name: string) =>
    action.run(async () => {
      setMessage(undefined);
      const res = await api.templates.renameTemplate({ id: template!.id, name });
      setMessage({ kind: 'ok', text: `Renamed to “${res.template!.name}”.` });
      reload?.();
    });

  const unarchive = () =>
    action.run(async () => {
      await api.templates.unarchiveTemplate({ id: template!.id });
      setMessage({ kind: 'ok', text: 'Unarchived. Generations of this template are accepted again.' });
      reload?.();
    });

  const remove = () =>
    action.run(async () => {
      setMessage(undefined);
      const res = await api.templates.deleteTemplate({ id: template!.id });
      if (res.outcome === DeleteTemplateOutcome.DELETED) {
        keepDraft(storageKey, undefined);
        tellNextEditor({ kind: 'ok', text: `Deleted the template “${template!.name}” and its versions.` });
        route('/templates');
        return;
      }
      setMessage({ kind: 'ok', text: archivedInsteadOfDeleted(template!.name, Number(res.generationCount)) });
      reload?.();
    });

  const shownMessage: EditorMessage | undefined = action.error
    ? action.error instanceof Refusal
      ? { kind: 'error', text: action.error.title, reasons: action.error.reasons }
      : { kind: 'error', text: errorText(action.error) }
    : message;

  const title = template ? template.name : 'New template';
  const otherDiagnostics = preview.diagnostics.filter((d) => d.line === 0 || !editorLabel(d.source));
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
            {canEditTemplates && (
              <button type="button" class="secondary" disabled={action.busy} onClick={duplicate}>
                Duplicate
              </button>
            )}
            {canEditTemplates && <RenameButton name={template.name} onRename={rename} />}
            {canEditTemplates && !archived && (
              <ConfirmButton
                label="Archive"
                question={`Archive the template “${template.name}”? New generations of it will be refused.`}
                confirmLabel="Archive template"
                onConfirm={archive}
                danger
              />
            )}
            {isOwner && archived && (
              <button type="button" class="secondary" disabled={action.busy} onClick={unarchive}>
                Unarchive
              </button>
            )}
            {canEditTemplates && (
              <ConfirmButton
                label="Delete"
                question={`Delete the template “${template.name}” and all its versions? If generations have used it, it is archived instead.`}
                confirmLabel="Delete template"
                onConfirm={remove}
                danger
              />
            )}
          </>
        )
      }
    >
      <Messages
        message={shownMessage}
        onDismiss={() => {
          action.clear();
          setMessage(undefined);
        }}
      />
      {restored && dirty && (
        <div class="notice editor-message" role="status">
          <p class="message-text">
            Your unsaved changes from {formatTime(timestampFromMs(restored.savedAt))} were restored (kept in this
            browser until you save).
          </p>
          <button type="button" class="secondary small" onClick={discard}>
            Discard changes
          </button>
        </div>
      )}
      {template && (
        <p class="muted">
          {readOnly ? 'Viewing' : 'Editing a new version based on'} version {base?.version ?? '—'}. ID{' '}
          <code>{template.id}</code>.
        </p>
      )}
      {!template && (
        <nav class="start-from" aria-label="Start from">
          <span>Start from:</span>
          <a href="/templates/new" aria-current={startKey === 'blank' ? 'page' : undefined}>
            Blank page
          </a>
          {gallery.map((g) => (
            <a
              key={g.name}
              href={`/templates/new?from=${encodeURIComponent(g.name)}`}
              title={g.description}
              aria-current={startKey === g.name ? 'page' : undefined}
            >
              {g.title}
            </a>
          ))}
        </nav>
      )}
      <UnsavedChangesGuard dirty={dirty} onDiscard={() => keepDraft(storageKey, undefined)} />
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
            vocabulary={vocabulary}
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
            onDeclare={(names) => {
              setDraft((d) => declareSuggested(d, names));
              setResets((n) => n + 1);
            }}
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
                    {d.severity === 'warning' ? 'Warning' : 'Error'} in <DiagnosticText d={d} />
                  </li>
                ))}
              </ul>
              {otherDiagnostics.length > 0 && (
                <p class="muted">Problems without a line apply to the whole section named.</p>
              )}
            </div>
          )}
          {!readOnly && (
            <div class="row sticky-actions">
              <label class="inline version-note">
                Version note
                <input
                  type="text"
                  value={note}
                  maxLength={VERSION_NOTE_MAX_LENGTH}
                  placeholder="Optional: what changed"
                  onInput={(e) => setNote(e.currentTarget.value)}
                />
              </label>
              <button type="button" class="secondary" disabled={action.busy} onClick={check}>
                Check
              </button>
              <button
                type="button"
                class="secondary"
                disabled={action.busy || (!!template && !changed && base?.version === template.latestVersion)}
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
          currentKey={contentKey}
          blocked={
            !canEditTemplates
              ? 'Previews are rendered for owners and editors; your role reads the source.'
              : cannotSend || undefined
          }
        />
      </div>
      {template && (
        <VersionHistory
          template={template}
          versions={versions}
          current={base?.version ?? 0}
          onPublish={readOnly ? undefined : publishVersion}
        />
      )}
    </Page>
  );
}

function timestampFromMs(ms: number) {
  return timestampFromDate(new Date(ms));
}

function VersionHistory({
  template,
  versions,
  current,
  onPublish,
}: {
  template: Template;
  versions: TemplateVersion[];
  current: number;
  /** Publishing from the history, for those who may. */
  onPublish?: ((version: number) => void) | undefined;
}) {
  return (
    <section class="history" aria-labelledby="history-title">
      <h2 id="history-title">Version history</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Created</th>
            <th scope="col">Author</th>
            <th scope="col">Note</th>
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
                <VersionAuthor author={v.author} />
              </td>
              <td class="version-note-text">{v.note}</td>
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
                  {onPublish && v.version !== template.publishedVersion && (
                    <button type="button" class="secondary small" onClick={() => onPublish(v.version)}>
                      Publish v{v.version}
                    </button>
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
