// The settings panel's "Document standards" section (docs/templates.md#document-standards):
// conformance levels, the e-invoice, the signature certificate, the stamp, the outline and
// attachments. Self-contained: its draft and checks are document-standards-draft.ts; the editor
// holds the draft as `draft.standards` and renders this section.
import { useEffect, useRef } from 'preact/hooks';
import {
  CONFORMANCE_LEVELS,
  E_INVOICE_PROFILES,
  E_INVOICE_STANDARDS,
  STAMP_DEFAULTS,
} from '../../../src/render/finishing/document-settings.ts';
import { api, listAll, type PageRequest } from '../api.ts';
import { useLoad } from '../ui.tsx';
import type { StandardsDraft } from './document-standards-draft.ts';

/** Opens the section when it gets a problem to show, and never closes it (the author is fixing it). */
function useOpenOnProblems(hasProblems: boolean) {
  const ref = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    if (hasProblems && ref.current) ref.current.open = true;
  }, [hasProblems]);
  return ref;
}

export function DocumentStandardsSection({
  workspaceId,
  standards,
  set,
  readOnly,
  problems,
  variables,
}: {
  workspaceId: string;
  standards: StandardsDraft;
  set: (change: Partial<StandardsDraft>) => void;
  readOnly: boolean;
  problems: string[];
  /** Declared variable names, offered for the e-invoice's `from`. */
  variables: string[];
}) {
  const section = useOpenOnProblems(problems.length > 0);
  const certificates = useLoad(
    () => listAll((page: PageRequest) => api.certificates.listCertificates({ workspaceId, ...page }), 'certificates'),
    [workspaceId],
  );
  const s = standards;
  const toggleLevel = (level: string, on: boolean) =>
    set({
      conformance: on ? [...s.conformance.filter((l) => l !== level), level] : s.conformance.filter((l) => l !== level),
    });
  const known = certificates.data?.certificates ?? [];
  return (
    <details class="section" ref={section}>
      <summary>Document standards</summary>
      {problems.map((p) => (
        <p class="error" role="alert" key={p}>
          {p}
        </p>
      ))}
      <fieldset>
        <legend>Conformance</legend>
        <div class="grid-4">
          {CONFORMANCE_LEVELS.map((level) => (
            <label class="checkbox" key={level}>
              <input
                type="checkbox"
                checked={s.conformance.includes(level)}
                disabled={readOnly}
                onChange={(e) => toggleLevel(level, e.currentTarget.checked)}
              />
              {level}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>E-invoice</legend>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={s.eInvoice}
            disabled={readOnly}
            onChange={(e) => set({ eInvoice: e.currentTarget.checked })}
          />
          Embed an e-invoice (needs PDF/A-3b or PDF/A-3u)
        </label>
        {s.eInvoice && (
          <div class="grid-4">
            <label>
              E-invoice standard
              <select
                value={s.eInvoiceStandard}
                disabled={readOnly}
                onChange={(e) => set({ eInvoiceStandard: e.currentTarget.value })}
              >
                {E_INVOICE_STANDARDS.map((v) => (
                  <option key={v}>{v}</option>
                ))}
              </select>
            </label>
            <label>
              E-invoice profile
              <select
                value={s.eInvoiceProfile}
                disabled={readOnly}
                onChange={(e) => set({ eInvoiceProfile: e.currentTarget.value })}
              >
                {E_INVOICE_PROFILES.map((v) => (
                  <option key={v}>{v}</option>
                ))}
              </select>
            </label>
            <label>
              E-invoice data variable
              <select
                value={s.eInvoiceFrom}
                disabled={readOnly}
                onChange={(e) => set({ eInvoiceFrom: e.currentTarget.value })}
              >
                <option value="">choose a variable</option>
                {[...new Set([...variables, s.eInvoiceFrom].filter(Boolean))].map((v) => (
                  <option key={v}>{v}</option>
                ))}
              </select>
            </label>
          </div>
        )}
      </fieldset>
      <fieldset>
        <legend>Signature</legend>
        <div class="grid-4">
          <label>
            Signature certificate
            <select
              value={s.signCertificate}
              disabled={readOnly}
              onChange={(e) => set({ signCertificate: e.currentTarget.value })}
            >
              <option value="">not signed</option>
              {known.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} ({c.subject})
                </option>
              ))}
              {s.signCertificate !== '' && !known.some((c) => c.id === s.signCertificate) && (
                <option value={s.signCertificate}>{s.signCertificate} (not in this workspace)</option>
              )}
            </select>
          </label>
          {s.signCertificate !== '' && (
            <>
              <label>
                Signature reason
                <input
                  type="text"
                  value={s.signReason}
                  readOnly={readOnly}
                  onInput={(e) => set({ signReason: e.currentTarget.value })}
                />
              </label>
              <label>
                Signature location
                <input
                  type="text"
                  value={s.signLocation}
                  readOnly={readOnly}
                  onInput={(e) => set({ signLocation: e.currentTarget.value })}
                />
              </label>
            </>
          )}
        </div>
        {known.length === 0 && certificates.data && (
          <p class="muted">
            No certificates yet: upload one under <a href="/certificates">Certificates</a>.
          </p>
        )}
      </fieldset>
      <fieldset>
        <legend>Stamp</legend>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={s.stamp}
            disabled={readOnly}
            onChange={(e) => set({ stamp: e.currentTarget.checked })}
          />
          Stamp a line of text over the pages
        </label>
        {s.stamp && (
          <div class="grid-4">
            <label>
              Stamp text
              <input
                type="text"
                value={s.stampText}
                readOnly={readOnly}
                onInput={(e) => set({ stampText: e.currentTarget.value })}
              />
            </label>
            <label>
              Stamp opacity
              <input
                type="text"
                inputMode="decimal"
                placeholder={`0 to 1; empty: ${STAMP_DEFAULTS.opacity}`}
                value={s.stampOpacity}
                readOnly={readOnly}
                onInput={(e) => set({ stampOpacity: e.currentTarget.value })}
              />
            </label>
            <label>
              Stamp angle
              <input
                type="text"
                inputMode="decimal"
                placeholder={`degrees; empty: ${STAMP_DEFAULTS.angle}`}
                value={s.stampAngle}
                readOnly={readOnly}
                onInput={(e) => set({ stampAngle: e.currentTarget.value })}
              />
            </label>
            <label class="checkbox">
              <input
                type="checkbox"
                checked={s.stampFirstPageOnly}
                disabled={readOnly}
                onChange={(e) => set({ stampFirstPageOnly: e.currentTarget.checked })}
              />
              First page only
            </label>
          </div>
        )}
      </fieldset>
      <div class="grid-2">
        <label class="checkbox">
          <input
            type="checkbox"
            checked={s.outline}
            disabled={readOnly}
            onChange={(e) => set({ outline: e.currentTarget.checked })}
          />
          Outline (bookmarks from the headings)
        </label>
        <label>
          Attachments
          <input
            type="text"
            placeholder="asset names, e.g. terms.pdf, logo.png"
            value={s.attachments}
            readOnly={readOnly}
            onInput={(e) => set({ attachments: e.currentTarget.value })}
          />
        </label>
      </div>
    </details>
  );
}
