// The portal's editor and the server accept and refuse the same document settings, from one
// table of cases. Each case is a change to the form of a new template (the portal's draft):
// - the portal's verdict is what its editor shows at the fields (settingIssues);
// - the server's is what saving the content sent over the wire (the proto message, encoded and
//   decoded) and then publishing it would say: normalizeContent, then the publish check of the
//   PDF options.
// Both must name the same fields with the same words, and match the table's expectation.
import { keepPdfPasswords } from '../../src/admin/pdf-password-keep.ts';
import type { TemplateVersionContent } from '../../src/domain/template.ts';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { normalizeContent } from '../../src/admin/template-content.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { MAX_HEADER_FOOTER_BYTES, formatSettingIssue } from '../../src/domain/document-settings.ts';
import { TemplateVersionContentSchema } from '../../src/gen/docgen/admin/v1/template_pb.js';
import { validatePdfOptions } from '../../src/render/pdf-options.ts';
import { contentFromProto } from '../../src/rpc/admin-proto.ts';
import {
  contentFromDraft,
  settingIssues,
  blankDraft,
  type Draft,
  type DocumentDraft,
  type PdfDraft,
} from '../../portal/src/editor/template-draft.ts';

interface Case {
  name: string;
  pdf?: Partial<PdfDraft>;
  document?: Partial<DocumentDraft>;
  /** The fields refused; none: accepted. */
  refused?: string[];
}

const margins = (top: string, right: string, bottom: string, left: string): Partial<PdfDraft> => ({
  marginTop: top,
  marginRight: right,
  marginBottom: bottom,
  marginLeft: left,
});
const protect = (ownerPassword: string, userPassword = ''): Partial<PdfDraft> => ({
  protect: true,
  ownerPassword,
  userPassword,
});

const CASES: Case[] = [
  { name: 'a new template as the editor starts it' },
  { name: 'margins in every unit', pdf: margins('10mm', '0.5in', '1cm', '20px') },
  { name: 'a number without a unit (px), spaces, a leading dot', pdf: margins('12', ' 10 mm ', '.5in', '0') },
  { name: 'no margins (the default, 0)', pdf: margins('', '', '', '') },
  { name: 'a negative margin', pdf: margins('-1mm', '0', '0', '0'), refused: ['pdfOptions.margins.top'] },
  {
    name: 'units Chromium does not take',
    pdf: margins('1em', '10%', 'auto', '1e3mm'),
    refused: [
      'pdfOptions.margins.top',
      'pdfOptions.margins.right',
      'pdfOptions.margins.bottom',
      'pdfOptions.margins.left',
    ],
  },
  { name: 'a page size in another case', pdf: { pageSize: 'letter' } },
  { name: 'every page size', pdf: { pageSize: 'Tabloid' } },
  { name: 'an unknown page size', pdf: { pageSize: 'B5' }, refused: ['pdfOptions.pageSize'] },
  {
    name: 'side margins wider than the paper',
    pdf: margins('0', '5in', '0', '5in'),
    refused: ['pdfOptions.margins'],
  },
  {
    name: 'the same margins on A3 turned to landscape',
    pdf: { ...margins('0', '5in', '0', '5in'), pageSize: 'A3', landscape: true },
  },
  {
    name: 'top and bottom margins taller than A5',
    pdf: { ...margins('110mm', '0', '110mm', '0'), pageSize: 'A5' },
    refused: ['pdfOptions.margins'],
  },
  { name: 'the smallest scale', pdf: { scale: '0.1' } },
  { name: 'the largest scale', pdf: { scale: '2' } },
  { name: 'scale 0 (not set: 100 %)', pdf: { scale: '0' } },
  { name: 'a scale below the range', pdf: { scale: '0.09' }, refused: ['pdfOptions.scale'] },
  { name: 'a scale above the range', pdf: { scale: '2.01' }, refused: ['pdfOptions.scale'] },
  { name: 'page ranges', pdf: { pageRanges: '1-3, 5, 8-' } },
  { name: 'page 0', pdf: { pageRanges: '0-2' }, refused: ['pdfOptions.pageRanges'] },
  { name: 'page ranges with a word', pdf: { pageRanges: '1-2,x' }, refused: ['pdfOptions.pageRanges'] },
  { name: 'a header of exactly 64 KiB', pdf: { headerTemplate: 'a'.repeat(MAX_HEADER_FOOTER_BYTES) } },
  {
    name: 'a footer one byte over 64 KiB',
    pdf: { footerTemplate: 'a'.repeat(MAX_HEADER_FOOTER_BYTES + 1) },
    refused: ['pdfOptions.footerTemplate'],
  },
  {
    // 22,000 characters, but 66,000 bytes of UTF-8: the limit is in bytes, for everyone.
    name: 'a first-page header of CJK text under 64 K characters but over 64 KiB',
    pdf: { firstPageHeaderTemplate: '漢'.repeat(22_000) },
    refused: ['pdfOptions.firstPageHeaderTemplate'],
  },
  { name: 'protection with an owner password', pdf: protect('owner-pass', 'reader') },
  {
    name: 'protection with a short owner password',
    pdf: protect('short'),
    refused: ['pdfOptions.protection.ownerPassword'],
  },
  {
    name: 'protection with the same password twice',
    pdf: protect('same-pass', 'same-pass'),
    refused: ['pdfOptions.protection.userPassword'],
  },
  {
    name: 'protection keeping the earlier passwords (write-only: empty, flags set)',
    pdf: { ...protect(''), ownerPasswordSet: true, userPasswordSet: true },
  },
  {
    name: 'protection with no owner password to keep',
    pdf: { ...protect(''), ownerPasswordSet: false },
    refused: ['pdfOptions.protection.ownerPassword'],
  },
  {
    name: 'a password that is not printable ASCII',
    pdf: protect('pässwort-1'),
    refused: ['pdfOptions.protection.ownerPassword'],
  },
  { name: 'a language tag', document: { language: 'de-CH', title: 'Invoice {{ number }}' } },
  { name: 'not a language tag', document: { language: 'not a language' }, refused: ['metadata.language'] },
  { name: 'a title over 1000 characters', document: { title: 't'.repeat(1001) }, refused: ['title'] },
];

function draftFor(c: Case): Draft {
  const draft = blankDraft();
  return { ...draft, pdf: { ...draft.pdf, ...c.pdf }, document: { ...draft.document, ...c.document } };
}

const EARLIER = {
  pdfOptions: {
    protection: {
      userPassword: 'earlier-open',
      ownerPassword: 'earlier-owner',
      allowPrinting: true,
      allowCopying: true,
      allowModifying: true,
    },
  },
} as TemplateVersionContent;

/** What the server says about the draft's content: saving it, then publishing it. */
function serverIssues(draft: Draft): string[] {
  const sent = contentFromDraft(draft, { checkSettings: false }).content;
  expect(sent).toBeDefined();
  const wire = toBinary(TemplateVersionContentSchema, create(TemplateVersionContentSchema, sent));
  const received = contentFromProto(fromBinary(TemplateVersionContentSchema, wire));
  let stored;
  try {
    // Saved as a new version of a template whose earlier version has both passwords (kept by the flags).
    stored = normalizeContent(keepPdfPasswords(received, EARLIER));
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return err.details.map((d) => `${d.field.replace(/^content\./, '')}: ${d.issue}`);
  }
  return validatePdfOptions(stored.pdfOptions);
}

describe('document settings: the portal and the server agree', () => {
  for (const c of CASES) {
    it(c.refused ? `refuses ${c.name}` : `accepts ${c.name}`, () => {
      const draft = draftFor(c);
      const portal = settingIssues(draft);
      expect(portal.map((i) => i.field).sort()).toEqual([...(c.refused ?? [])].sort());
      expect(serverIssues(draft).sort()).toEqual(portal.map(formatSettingIssue).sort());
      // The editor does not send what it refuses.
      expect(contentFromDraft(draft).content === undefined).toBe(c.refused !== undefined);
    });
  }

  it('refuses a scale that is not a number, naming what was typed', () => {
    const draft = draftFor({ name: '', pdf: { scale: 'big' } });
    expect(settingIssues(draft).map(formatSettingIssue)).toEqual([
      'pdfOptions.scale: "big" is not a number; use 0.1 to 2',
    ]);
  });
});
