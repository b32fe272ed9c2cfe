// PDF passwords are write-only (docs/templates.md#print-options): answers never carry them, only
// whether each is set. A write that wants to keep one sends it empty with its `*PasswordSet` flag
// true; the password then comes from the template's previous version (the published one, else the
// latest). Empty with the flag false means no password.
import { validationError } from '../domain/errors.ts';
import type { PdfProtection } from '../domain/document-settings.ts';
import type { TemplateVersionContent } from '../domain/template.ts';
import type { TemplateContentInput } from './template-content.ts';

/** Whether each password is set, as carried next to the (empty) passwords on the wire. */
export interface PdfPasswordFlags {
  userPasswordSet?: boolean | undefined;
  ownerPasswordSet?: boolean | undefined;
}

const FIELDS = [
  ['userPassword', 'userPasswordSet'],
  ['ownerPassword', 'ownerPasswordSet'],
] as const;

/**
 * The input with every kept password filled in from `previous` (the content of the version the
 * flags refer to; undefined: the template has none, or there is no template). Flags are dropped.
 */
export function keepPdfPasswords(
  input: TemplateContentInput | undefined,
  previous: TemplateVersionContent | undefined,
): TemplateContentInput | undefined {
  const given = input?.pdfOptions?.protection;
  if (!input || typeof given !== 'object' || given === null) return input;
  const { userPasswordSet, ownerPasswordSet, ...rest } = given as Record<string, unknown> & PdfPasswordFlags;
  const flags: PdfPasswordFlags = { userPasswordSet, ownerPasswordSet };
  const protection: Record<string, unknown> = { ...rest };
  const before: PdfProtection | undefined = previous?.pdfOptions?.protection;
  for (const [field, flag] of FIELDS) {
    if (!flags[flag] || (typeof protection[field] === 'string' && protection[field] !== '')) continue;
    const kept = before?.[field] ?? '';
    if (kept === '') {
      const issue = `${flag} asks to keep the earlier version's ${field}, but there is none to keep; type a password or clear ${flag}`;
      throw validationError(
        [{ field: `pdfOptions.protection.${field}`, issue }],
        `pdfOptions.protection.${field}: ${issue}`,
      );
    }
    protection[field] = kept;
  }
  return { ...input, pdfOptions: { ...input.pdfOptions, protection } };
}

/** Protection as answered: passwords empty, flags saying which are set. */
export function writeOnlyProtection(p: PdfProtection): PdfProtection & Required<PdfPasswordFlags> {
  return {
    ...p,
    userPassword: '',
    ownerPassword: '',
    userPasswordSet: p.userPassword !== '',
    ownerPasswordSet: p.ownerPassword !== '',
  };
}
