// PDF passwords (pdfOptions.protection) are stored encrypted, like webhook signing secrets
// (secret-box.ts): AES-256-GCM under a key derived from DOCGEN_SECRET_KEY for this purpose
// only, bound to the template (a sealed password copied onto another template's row does not
// open). The repository seals on write and opens on read, so everything above it (the render
// pipeline, previews, the admin plane) sees the passwords it needs and the database never does.
import type { ObjectId } from 'mongodb';
import type { PdfProtection } from '../domain/document-settings.ts';
import type { TemplateVersionContent } from '../domain/template.ts';
import { formatId } from '../domain/ids.ts';
import { decryptSecret, encryptSecret } from '../webhooks/secret-box.ts';

/** How protection is stored: the passwords sealed (`v1.…`), `sealed: true` marking it. */
export type StoredPdfProtection = PdfProtection & { sealed?: true };

const context = (templateId: ObjectId) => formatId('template', templateId);

function seal(password: string, key: Buffer, templateId: ObjectId): string {
  // An empty user password (the PDF opens without one) stays empty: there is nothing to hide.
  return password === '' ? '' : encryptSecret(password, key, context(templateId), 'pdf-password');
}

function open(sealed: string, key: Buffer, templateId: ObjectId): string {
  return sealed === '' ? '' : decryptSecret(sealed, key, context(templateId), 'pdf-password');
}

/** The content as stored: its protection's passwords sealed. */
export function sealContent(
  content: TemplateVersionContent,
  key: Buffer,
  templateId: ObjectId,
): TemplateVersionContent {
  const p = content.pdfOptions?.protection as StoredPdfProtection | undefined;
  if (!p || p.sealed) return content;
  const protection: StoredPdfProtection = {
    ...p,
    userPassword: seal(p.userPassword, key, templateId),
    ownerPassword: seal(p.ownerPassword, key, templateId),
    sealed: true,
  };
  return { ...content, pdfOptions: { ...content.pdfOptions, protection } };
}

/** The content as read: its protection's passwords open. Rows from before sealing read as they are. */
export function openContent(
  content: TemplateVersionContent,
  key: Buffer,
  templateId: ObjectId,
): TemplateVersionContent {
  const p = content.pdfOptions?.protection as StoredPdfProtection | undefined;
  if (!p?.sealed) return content;
  const { sealed: _sealed, ...rest } = p;
  const protection: PdfProtection = {
    ...rest,
    userPassword: open(p.userPassword, key, templateId),
    ownerPassword: open(p.ownerPassword, key, templateId),
  };
  return { ...content, pdfOptions: { ...content.pdfOptions, protection } };
}
