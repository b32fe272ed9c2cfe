// The editor's secondary sections: partials, declared variables (with suggestions from the
// publish check) and PDF options.
import { useEffect, useRef } from 'preact/hooks';
import { CodeEditor, type LineDiagnostic } from './code-editor.tsx';
import { PAGE_SIZES, type SettingIssue } from '@domain/document-settings';
import { issuesUnder, type Draft, type PdfDraft, type VariableDraft } from './template-draft.ts';
import { DEFAULT_LOCALE, DEFAULT_TIME_ZONE, normalizeLocaleSettings } from '../../../src/domain/locale-settings.ts';
import type { VariableSchema } from '../../../src/domain/variable-schema.ts';
import { schemaType } from '../../../src/domain/variable-types.ts';

type Update = (change: (draft: Draft) => Draft) => void;

export function PartialsSection({
  draft,
  update,
  readOnly,
  diagnosticsFor,
  resetKey,
}: {
  draft: Draft;
  update: Update;
  readOnly: boolean;
  diagnosticsFor: (source: string) => LineDiagnostic[];
  resetKey: number;
}) {
  const setPartial = (index: number, change: Partial<{ name: string; source: string }>) =>
    update((d) => ({ ...d, partials: d.partials.map((p, i) => (i === index ? { ...p, ...change } : p)) }));
  return (
    <details class="section" open={draft.partials.length > 0}>
      <summary>Partials ({draft.partials.length})</summary>
      <p class="muted">Use a partial with {"{% render 'name' %}"}.</p>
      {draft.partials.map((partial, index) => (
        <div class="partial" key={index}>
          <div class="row">
            <label class="inline">
              Partial name
              <input
                type="text"
                value={partial.name}
                readOnly={readOnly}
                onInput={(e) => setPartial(index, { name: e.currentTarget.value })}
              />
            </label>
            {!readOnly && (
              <button
                type="button"
                class="secondary"
                onClick={() => update((d) => ({ ...d, partials: d.partials.filter((_, i) => i !== index) }))}
              >
                Remove partial {partial.name}
              </button>
            )}
          </div>
          <CodeEditor
            resetKey={resetKey}
            label={`Partial ${partial.name || index + 1}`}
            language="liquid"
            value={partial.source}
            readOnly={readOnly}
            minLines={4}
            onChange={(source) => setPartial(index, { source })}
            diagnostics={diagnosticsFor(`partials/${partial.name}`)}
          />
        </div>
      ))}
      {!readOnly && (
        <button
          type="button"
          class="secondary"
          onClick={() =>
            update((d) => ({
              ...d,
              partials: [...d.partials, { name: `partial_${d.partials.length + 1}`, source: '' }],
            }))
          }
        >
          Add partial
        </button>
      )}
    </details>
  );
}

export function VariablesSection({
  draft,
  update,
  readOnly,
  suggested,
  problems,
  onDeclare,
}: {
  draft: Draft;
  update: Update;
  readOnly: boolean;
  suggested: string[];
  problems: string[];
  /** "Declare suggested variables" (the sample data may change with it). */
  onDeclare: (names: string[]) => void;
}) {
  const setVariable = (index: number, change: Partial<VariableDraft>) =>
    update((d) => ({ ...d, variables: d.variables.map((v, i) => (i === index ? { ...v, ...change } : v)) }));
  const declared = new Set(draft.variables.map((v) => v.name));
  const missing = suggested.filter((name) => !declared.has(name));
  // Opens on a suggestion or a problem and stays open after "Declare suggested variables".
  const section = useOpenOnProblems(missing.length > 0 || problems.length > 0);
  return (
    <details class="section" ref={section}>
      <summary>Declared variables ({draft.variables.length})</summary>
      {missing.length > 0 && (
        <div class="suggestion" role="status">
          <p>
            The template uses {missing.length === 1 ? 'a variable' : 'variables'} it does not declare:{' '}
            <strong>{missing.join(', ')}</strong>.
          </p>
          {!readOnly && (
            <button type="button" onClick={() => onDeclare(missing)}>
              Declare suggested variables
            </button>
          )}
        </div>
      )}
      {problems.map((p) => (
        <p class="error" role="alert" key={p}>
          {p}
        </p>
      ))}
      {draft.variables.length > 0 && (
        <p class="muted">Defaults are plain text (or a number, true or false); lists and objects are JSON.</p>
      )}
      {draft.variables.length > 0 && (
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Required</th>
              <th scope="col">Default</th>
              <th scope="col">Description</th>
              <th scope="col">Type</th>
              {!readOnly && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {draft.variables.map((v, index) => (
              <tr key={index}>
                <td>
                  <input
                    type="text"
                    aria-label={`Variable ${index + 1} name`}
                    value={v.name}
                    readOnly={readOnly}
                    onInput={(e) => setVariable(index, { name: e.currentTarget.value })}
                  />
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`${v.name || `Variable ${index + 1}`} required`}
                    checked={v.required}
                    disabled={readOnly}
                    onChange={(e) => setVariable(index, { required: e.currentTarget.checked })}
                  />
                </td>
                <td>
                  <input
                    type="text"
                    aria-label={`${v.name || `Variable ${index + 1}`} default`}
                    value={v.defaultText}
                    readOnly={readOnly}
                    onInput={(e) => setVariable(index, { defaultText: e.currentTarget.value })}
                  />
                </td>
                <td>
                  <input
                    type="text"
                    aria-label={`${v.name || `Variable ${index + 1}`} description`}
                    value={v.description}
                    readOnly={readOnly}
                    onInput={(e) => setVariable(index, { description: e.currentTarget.value })}
                  />
                </td>
                <td>
                  {/* Typed variables: the schema, as the TypeScript type clients get (set with the CLI's
                      --variables). */}
                  <code class="type">{schemaType(v.schema as VariableSchema | undefined).replace(/\s+/g, ' ')}</code>
                </td>
                {!readOnly && (
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => update((d) => ({ ...d, variables: d.variables.filter((_, i) => i !== index) }))}
                    >
                      Remove {v.name || `variable ${index + 1}`}
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {!readOnly && (
        <button
          type="button"
          class="secondary"
          onClick={() =>
            update((d) => ({
              ...d,
              variables: [...d.variables, { name: '', required: false, defaultText: '', description: '' }],
            }))
          }
        >
          Add variable
        </button>
      )}
    </details>
  );
}

/**
 * Opens the section when it gets a problem to show, and never closes it: the author is fixing
 * something there (an `open` attribute bound to the problems would shut it on the fix).
 */
function useOpenOnProblems(hasProblems: boolean) {
  const ref = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    if (hasProblems && ref.current) ref.current.open = true;
  }, [hasProblems]);
  return ref;
}

/** Problems with settings, in the shared rules' words (document-settings.ts), where they are set. */
function SettingProblems({ problems }: { problems: string[] }) {
  return (
    <>
      {problems.map((p) => (
        <p class="error" role="alert" key={p}>
          {p}
        </p>
      ))}
    </>
  );
}

export function PdfOptionsSection({
  draft,
  update,
  readOnly,
  diagnosticsFor,
  resetKey,
  issues,
}: {
  draft: Draft;
  update: Update;
  readOnly: boolean;
  diagnosticsFor: (source: string) => LineDiagnostic[];
  resetKey: number;
  issues: SettingIssue[];
}) {
  const problems = issuesUnder(issues, 'pdfOptions');
  const section = useOpenOnProblems(problems.length > 0);
  const set = (change: Partial<PdfDraft>) => update((d) => ({ ...d, pdf: { ...d.pdf, ...change } }));
  const margin = (key: 'marginTop' | 'marginRight' | 'marginBottom' | 'marginLeft', label: string) => (
    <label>
      {label}
      <input
        type="text"
        placeholder="e.g. 10mm"
        value={draft.pdf[key]}
        readOnly={readOnly}
        onInput={(e) => set({ [key]: e.currentTarget.value })}
      />
    </label>
  );
  return (
    <details class="section" ref={section}>
      <summary>PDF options</summary>
      <SettingProblems problems={problems} />
      <div class="grid-4">
        <label>
          Page size
          <select
            value={draft.pdf.pageSize}
            disabled={readOnly}
            onChange={(e) => set({ pageSize: e.currentTarget.value })}
          >
            {PAGE_SIZES.map((size) => (
              <option key={size}>{size}</option>
            ))}
          </select>
        </label>
        <label>
          Orientation
          <select
            value={draft.pdf.landscape ? 'landscape' : 'portrait'}
            disabled={readOnly}
            onChange={(e) => set({ landscape: e.currentTarget.value === 'landscape' })}
          >
            <option value="portrait">Portrait</option>
            <option value="landscape">Landscape</option>
          </select>
        </label>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={draft.pdf.printBackground}
            disabled={readOnly}
            onChange={(e) => set({ printBackground: e.currentTarget.checked })}
          />
          Print backgrounds
        </label>
      </div>
      <fieldset class="grid-4">
        <legend>Margins</legend>
        {margin('marginTop', 'Top margin')}
        {margin('marginRight', 'Right margin')}
        {margin('marginBottom', 'Bottom margin')}
        {margin('marginLeft', 'Left margin')}
      </fieldset>
      <p class="muted">
        Header and footer are small HTML documents; elements with the classes pageNumber, totalPages, date and title are
        filled in. Leave a margin for them.
      </p>
      <div class="grid-4">
        <label>
          Scale
          <input
            type="text"
            inputMode="decimal"
            placeholder="1"
            value={draft.pdf.scale}
            readOnly={readOnly}
            onInput={(e) => set({ scale: e.currentTarget.value })}
          />
        </label>
        <label>
          Page ranges
          <input
            type="text"
            placeholder="all, or e.g. 1-3, 5"
            value={draft.pdf.pageRanges}
            readOnly={readOnly}
            onInput={(e) => set({ pageRanges: e.currentTarget.value })}
          />
        </label>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={draft.pdf.preferCssPageSize}
            disabled={readOnly}
            onChange={(e) => set({ preferCssPageSize: e.currentTarget.checked })}
          />
          Paper size from CSS @page
        </label>
      </div>
      <CodeEditor
        resetKey={resetKey}
        label="Header"
        language="liquid"
        minLines={2}
        value={draft.pdf.headerTemplate}
        readOnly={readOnly}
        onChange={(headerTemplate) => set({ headerTemplate })}
        diagnostics={diagnosticsFor('header_template')}
      />
      <CodeEditor
        resetKey={resetKey}
        label="Footer"
        language="liquid"
        minLines={2}
        value={draft.pdf.footerTemplate}
        readOnly={readOnly}
        onChange={(footerTemplate) => set({ footerTemplate })}
        diagnostics={diagnosticsFor('footer_template')}
      />
      <CodeEditor
        resetKey={resetKey}
        label="First page header"
        language="liquid"
        minLines={2}
        value={draft.pdf.firstPageHeaderTemplate}
        readOnly={readOnly}
        onChange={(firstPageHeaderTemplate) => set({ firstPageHeaderTemplate })}
        diagnostics={diagnosticsFor('first_page_header_template')}
      />
      <CodeEditor
        resetKey={resetKey}
        label="First page footer"
        language="liquid"
        minLines={2}
        value={draft.pdf.firstPageFooterTemplate}
        readOnly={readOnly}
        onChange={(firstPageFooterTemplate) => set({ firstPageFooterTemplate })}
        diagnostics={diagnosticsFor('first_page_footer_template')}
      />
      <fieldset>
        <legend>Protection</legend>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={draft.pdf.protect}
            disabled={readOnly}
            onChange={(e) => set({ protect: e.currentTarget.checked })}
          />
          Encrypt the PDF (AES-256)
        </label>
        {draft.pdf.protect && (
          <div class="grid-4">
            <label>
              Open password
              <input
                type="text"
                autoComplete="off"
                placeholder={draft.pdf.userPasswordSet ? 'Set — type to change' : 'none'}
                value={draft.pdf.userPassword}
                readOnly={readOnly}
                onInput={(e) => set({ userPassword: e.currentTarget.value })}
              />
            </label>
            {draft.pdf.hadUserPassword && (
              <label class="checkbox">
                <input
                  type="checkbox"
                  checked={!draft.pdf.userPasswordSet}
                  disabled={readOnly}
                  onChange={(e) => set({ userPasswordSet: !e.currentTarget.checked, userPassword: '' })}
                />
                Remove password
              </label>
            )}
            <label>
              Owner password
              <input
                type="text"
                autoComplete="off"
                placeholder={draft.pdf.ownerPasswordSet ? 'Set — type to change' : ''}
                value={draft.pdf.ownerPassword}
                readOnly={readOnly}
                onInput={(e) => set({ ownerPassword: e.currentTarget.value })}
              />
            </label>
            {(['allowPrinting', 'allowCopying', 'allowModifying'] as const).map((key) => (
              <label class="checkbox" key={key}>
                <input
                  type="checkbox"
                  checked={draft.pdf[key]}
                  disabled={readOnly}
                  onChange={(e) => set({ [key]: e.currentTarget.checked })}
                />
                {key === 'allowPrinting'
                  ? 'Allow printing'
                  : key === 'allowCopying'
                    ? 'Allow copying'
                    : 'Allow changes'}
              </label>
            ))}
          </div>
        )}
      </fieldset>
    </details>
  );
}

export function DocumentSection({
  draft,
  update,
  readOnly,
  diagnosticsFor,
  issues,
}: {
  draft: Draft;
  update: Update;
  readOnly: boolean;
  diagnosticsFor: (source: string) => LineDiagnostic[];
  issues: SettingIssue[];
}) {
  const problems = issuesUnder(issues, 'title', 'metadata');
  const set = (change: Partial<Draft['document']>) => update((d) => ({ ...d, document: { ...d.document, ...change } }));
  const field = (key: keyof Draft['document'], label: string, placeholder = '') => (
    <label>
      {label}
      <input
        type="text"
        placeholder={placeholder}
        value={draft.document[key]}
        readOnly={readOnly}
        onInput={(e) => set({ [key]: e.currentTarget.value })}
      />
    </label>
  );
  const titleProblems = diagnosticsFor('title');
  // The rule the server applies (src/domain/locale-settings.ts), checked as the author types.
  const localeProblems = normalizeLocaleSettings({
    locale: draft.document.locale.trim(),
    timeZone: draft.document.timeZone.trim(),
  }).issues;
  const section = useOpenOnProblems(titleProblems.length > 0 || problems.length > 0 || localeProblems.length > 0);
  return (
    <details class="section" ref={section}>
      <summary>Document properties</summary>
      <SettingProblems problems={problems} />
      <div class="grid-2">
        {field('title', 'Document title', 'Liquid, e.g. Invoice {{ number }}; empty: the template name')}
        {field('language', 'Language', 'e.g. de, ja-JP')}
        {field('author', 'Author')}
        {field('subject', 'Subject')}
        {field('keywords', 'Keywords', 'comma-separated')}
        {field('locale', 'Locale of money, numbers and dates', `e.g. de-DE; empty: ${DEFAULT_LOCALE}`)}
        {field('timeZone', 'Time zone of dates', `e.g. Europe/Berlin; empty: ${DEFAULT_TIME_ZONE}`)}
      </div>
      {titleProblems.map((p) => (
        <p class="error" role="alert" key={p.message}>
          Title: {p.message}
        </p>
      ))}
      {localeProblems.map((p) => (
        <p class="error" role="alert" key={p.field}>
          {p.field === 'locale' ? 'Locale' : 'Time zone'}: {p.issue}
        </p>
      ))}
    </details>
  );
}
