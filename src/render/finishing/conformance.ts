// The conformance stage: what PDF/A-2/-3 (ISO 19005-2/-3) and PDF/UA-1 (ISO 14289-1) need that
// Chromium's print does not give (Chromium gives the tagged structure, /MarkInfo, /Lang, the
// title and embedded fonts, all left as they are): XMP metadata mirroring the information
// dictionary, an sRGB output intent, a document /ID, printable annotations, DisplayDocTitle and
// tab order. The checker (conformance-check.ts) then verifies the produced bytes.
import { createHash, randomBytes } from 'node:crypto';
import { PDFArray, PDFBool, PDFDict, PDFHexString, PDFName, PDFNumber, PDFString, type PDFDocument } from 'pdf-lib';
import { hostFile } from './host-files.ts';
import { pdfaLevel, wantsPdfUa, type ConformanceLevel } from './document-settings.ts';
import type { EInvoiceFile } from './e-invoice.ts';
import { xmpPacket } from './xmp.ts';

/** Debian's icc-profiles-free: sRGB IEC 61966-2.1 (ICC v2, zlib licence). */
export const SRGB_PROFILE_PATH = '/usr/share/color/icc/sRGB.icc';
const SRGB_CONDITION = 'sRGB IEC61966-2.1';

const srgbProfile = () => hostFile(SRGB_PROFILE_PATH, 'PDF/A needs the sRGB ICC profile', 'icc-profiles-free');

/** Whole seconds: the information dictionary's dates carry no fractions, XMP must say the same. */
const seconds = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);

export interface ConformanceInput {
  levels: readonly ConformanceLevel[];
  eInvoice?: EInvoiceFile | undefined;
  now: Date;
}

/** Makes the document carry what its levels require; the checker verifies the result. */
export function makeConforming(doc: PDFDocument, input: ConformanceInput): void {
  const pdfa = pdfaLevel(input.levels);
  const ua = wantsPdfUa(input.levels);
  const { context, catalog } = doc;

  const created = seconds(doc.getCreationDate() ?? input.now);
  const modified = seconds(doc.getModificationDate() ?? created);
  doc.setCreationDate(created);
  doc.setModificationDate(modified);
  const xmp = xmpPacket({
    title: doc.getTitle() ?? '',
    author: doc.getAuthor() ?? '',
    subject: doc.getSubject() ?? '',
    keywords: doc.getKeywords() ?? '',
    creator: doc.getCreator() ?? '',
    producer: doc.getProducer() ?? '',
    created,
    modified,
    pdfa: pdfa ? { part: pdfa.part, conformance: pdfa.letter } : undefined,
    pdfua: ua,
    facturX: input.eInvoice && {
      fileName: input.eInvoice.fileName,
      conformanceLevel: input.eInvoice.conformanceLevel,
      version: input.eInvoice.version,
    },
  });
  // Uncompressed, so that archives and indexers can read it without a PDF parser.
  const metadata = context.stream(Buffer.from(xmp, 'utf8'), { Type: 'Metadata', Subtype: 'XML' });
  catalog.set(PDFName.of('Metadata'), context.register(metadata));

  if (!context.trailerInfo.ID) {
    const id = PDFHexString.of(
      createHash('md5').update(randomBytes(16)).update(String(input.now.getTime())).digest('hex'),
    );
    context.trailerInfo.ID = context.obj([id, id]);
  }

  if (pdfa) {
    const profile = context.flateStream(srgbProfile(), { N: 3 });
    const intent = context.obj({
      Type: 'OutputIntent',
      S: 'GTS_PDFA1',
      OutputConditionIdentifier: PDFString.of(SRGB_CONDITION),
      Info: PDFString.of(SRGB_CONDITION),
      RegistryName: PDFString.of('http://www.color.org'),
      DestOutputProfile: context.register(profile),
    });
    catalog.set(PDFName.of('OutputIntents'), context.obj([context.register(intent)]));
  }

  for (const page of doc.getPages()) {
    const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray);
    if (!annots || annots.size() === 0) continue;
    if (pdfa) {
      // Printable, and not hidden/invisible/no-view: the print flag set, those cleared.
      for (let i = 0; i < annots.size(); i++) {
        const annot = annots.lookupMaybe(i, PDFDict);
        if (!annot) continue;
        const flags = annot.lookupMaybe(PDFName.of('F'), PDFNumber)?.asNumber() ?? 0;
        annot.set(PDFName.of('F'), PDFNumber.of((flags | 4) & ~(1 | 2 | 32 | 256)));
      }
    }
    // PDF/UA 7.18.3: pages with annotations are navigated in structure order.
    if (ua) page.node.set(PDFName.of('Tabs'), PDFName.of('S'));
  }

  if (ua) {
    const prefs = catalog.lookupMaybe(PDFName.of('ViewerPreferences'), PDFDict) ?? context.obj({});
    prefs.set(PDFName.of('DisplayDocTitle'), PDFBool.True);
    catalog.set(PDFName.of('ViewerPreferences'), prefs);
    const mark = catalog.lookupMaybe(PDFName.of('MarkInfo'), PDFDict) ?? context.obj({});
    mark.set(PDFName.of('Marked'), PDFBool.True);
    catalog.set(PDFName.of('MarkInfo'), mark);
  }
}
