// The conformance checker: reads the produced PDF back and verifies each requirement of its
// claimed levels that docgen enforces (the list is in docs/templates.md#what-is-checked, with
// the clauses it does not check). A render whose PDF fails one is FAILED (NOT_CONFORMING) with
// the rule named, never delivered silently non-conforming. It only reads: the bytes stay as
// they are (it runs after signing).
import {
  PDFArray,
  PDFBool,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFStream,
  PDFString,
  type PDFObject,
} from 'pdf-lib';
import { pdfaLevel, wantsPdfUa, type ConformanceLevel } from './document-settings.ts';
import { xmpDate } from './xmp.ts';

export interface ConformanceFailure {
  /** The standard and clause, e.g. "ISO 19005-2 6.1.3". */
  rule: string;
  message: string;
}

export interface CheckInput {
  levels: readonly ConformanceLevel[];
  /** The e-invoice's file name, when one was embedded (Factur-X XMP must name it). */
  eInvoiceFileName?: string | undefined;
}

const FORBIDDEN_ACTIONS = new Set([
  'Launch',
  'Sound',
  'Movie',
  'ResetForm',
  'ImportData',
  'JavaScript',
  'Hide',
  'SetOCGState',
  'Rendition',
  'Trans',
  'GoTo3DView',
]);

const name = (o: PDFObject | undefined) => (o instanceof PDFName ? o.decodeText() : undefined);
const text = (o: PDFObject | undefined) =>
  o instanceof PDFString || o instanceof PDFHexString ? o.decodeText() : undefined;

const xmlUnescape = (s: string) =>
  s.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e]!);

/** One simple XMP property's value (our packets and the usual writers' forms). */
function xmpValue(xmp: string, prop: string): string | undefined {
  const element = new RegExp(`<${prop}>\\s*(?:<rdf:(?:Alt|Seq|Bag)>\\s*<rdf:li[^>]*>)?([^<]*)<`).exec(xmp);
  if (element) return xmlUnescape(element[1]!.trim());
  const attribute = new RegExp(`\\s${prop}="([^"]*)"`).exec(xmp);
  return attribute ? xmlUnescape(attribute[1]!) : undefined;
}

function streamBytes(stream: PDFStream): Uint8Array | undefined {
  return stream instanceof PDFRawStream ? stream.contents : undefined;
}

/** Every requirement the PDF fails; [] when it holds. */
export async function checkConformance(pdf: Uint8Array, input: CheckInput): Promise<ConformanceFailure[]> {
  const failures: ConformanceFailure[] = [];
  const pdfa = pdfaLevel(input.levels);
  const ua = wantsPdfUa(input.levels);
  const A = pdfa ? `ISO 19005-${pdfa.part}` : '';
  const UA = 'ISO 14289-1';
  const fail = (rule: string, message: string) => failures.push({ rule, message });

  if (pdfa) {
    const head = Buffer.from(pdf.subarray(0, 32));
    const header = /^%PDF-1\.[0-7](\r\n|\r|\n)%/.exec(head.toString('latin1'));
    const comment = header ? head.subarray(header[0].length, header[0].length + 4) : Buffer.alloc(0);
    if (!header || comment.length < 4 || [...comment].some((b) => b <= 127))
      fail(`${A} 6.1.2`, 'the file header must be %PDF-1.n followed by a comment of four bytes above 127');
  }

  const doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  const { catalog, context } = doc;
  const trailer = context.trailerInfo;

  if (pdfa) {
    if (!(trailer.ID instanceof PDFArray) || trailer.ID.size() !== 2)
      fail(`${A} 6.1.3`, 'the trailer has no document /ID (two file identifiers)');
    if (trailer.Encrypt) fail(`${A} 6.1.3`, 'the file is encrypted; PDF/A forbids encryption');
  }

  // Catalog-level properties.
  const metadataStream = catalog.lookupMaybe(PDFName.of('Metadata'), PDFStream);
  let xmp: string | undefined;
  if (metadataStream) {
    const bytes = metadataStream.dict.has(PDFName.of('Filter')) ? undefined : streamBytes(metadataStream);
    if (bytes) xmp = Buffer.from(bytes).toString('utf8');
    else if (pdfa) fail(`${A} 6.6.2.1`, 'the XMP metadata stream must not be compressed');
  }
  if (!xmp) {
    if (pdfa) fail(`${A} 6.6.2.1`, 'the catalog has no XMP metadata stream');
    if (ua) fail(`${UA} 5`, 'the catalog has no XMP metadata stream identifying PDF/UA-1 (pdfuaid:part)');
  } else {
    if (pdfa) {
      if (xmpValue(xmp, 'pdfaid:part') !== String(pdfa.part) || xmpValue(xmp, 'pdfaid:conformance') !== pdfa.letter)
        fail(
          `${A} 6.6.4`,
          `the XMP metadata does not identify the file as PDF/A-${pdfa.part}${pdfa.letter.toLowerCase()}`,
        );
      // The information dictionary and XMP say the same things.
      const pairs: Array<[string, string | undefined, string]> = [
        ['Title', doc.getTitle(), 'dc:title'],
        ['Author', doc.getAuthor(), 'dc:creator'],
        ['Subject', doc.getSubject(), 'dc:description'],
        ['Keywords', doc.getKeywords(), 'pdf:Keywords'],
        ['Creator', doc.getCreator(), 'xmp:CreatorTool'],
        ['Producer', doc.getProducer(), 'pdf:Producer'],
      ];
      for (const [key, info, prop] of pairs) {
        if ((info ?? '') !== (xmpValue(xmp, prop) ?? ''))
          fail(`${A} 6.6.2.3.1`, `the information dictionary's ${key} and the XMP ${prop} differ`);
      }
      const dates: Array<[string, Date | undefined, string]> = [
        ['CreationDate', doc.getCreationDate(), 'xmp:CreateDate'],
        ['ModDate', doc.getModificationDate(), 'xmp:ModifyDate'],
      ];
      for (const [key, info, prop] of dates) {
        const value = xmpValue(xmp, prop);
        if (info && (!value || Date.parse(value) !== info.getTime()))
          fail(`${A} 6.6.2.3.1`, `the information dictionary's ${key} (${xmpDate(info)}) and the XMP ${prop} differ`);
      }
    }
    if (ua && xmpValue(xmp, 'pdfuaid:part') !== '1')
      fail(`${UA} 5`, 'the XMP metadata does not identify the file as PDF/UA-1 (pdfuaid:part 1)');
    if (ua && !xmpValue(xmp, 'dc:title')) fail(`${UA} 7.1`, 'the XMP metadata has no dc:title');
    if (pdfa && ua && !xmp.includes('<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>'))
      fail(`${A} 6.6.2.3.2`, 'the pdfuaid property is used without its PDF/A extension schema');
    if (input.eInvoiceFileName) {
      if (xmpValue(xmp, 'fx:DocumentFileName') !== input.eInvoiceFileName)
        fail('Factur-X 1.0 (XMP)', `fx:DocumentFileName must name the embedded ${input.eInvoiceFileName}`);
      if (pdfa && !xmp.includes('<pdfaSchema:prefix>fx</pdfaSchema:prefix>'))
        fail(`${A} 6.6.2.3.2`, 'the Factur-X properties are used without their PDF/A extension schema');
    }
  }

  if (pdfa) {
    const intents = catalog.lookupMaybe(PDFName.of('OutputIntents'), PDFArray);
    const pdfaIntents = (intents?.asArray() ?? [])
      .map((ref) => context.lookupMaybe(ref, PDFDict))
      .filter((d): d is PDFDict => d !== undefined && name(d.get(PDFName.of('S'))) === 'GTS_PDFA1');
    if (pdfaIntents.length === 0) {
      fail(`${A} 6.2.3`, 'the catalog has no PDF/A output intent (GTS_PDFA1)');
    } else {
      for (const intent of pdfaIntents) {
        const profile = intent.lookupMaybe(PDFName.of('DestOutputProfile'), PDFStream);
        const n = profile?.dict.lookupMaybe(PDFName.of('N'), PDFNumber)?.asNumber();
        if (!profile || n !== 3)
          fail(`${A} 6.2.3`, 'the output intent has no RGB ICC profile (DestOutputProfile with N 3)');
      }
    }
  }

  if (ua) {
    const mark = catalog.lookupMaybe(PDFName.of('MarkInfo'), PDFDict);
    if (mark?.get(PDFName.of('Marked')) !== PDFBool.True)
      fail(`${UA} 7.1`, 'the document is not marked as tagged (/MarkInfo /Marked true)');
    if (!catalog.lookupMaybe(PDFName.of('StructTreeRoot'), PDFDict))
      fail(`${UA} 7.1`, 'the document has no structure tree (/StructTreeRoot)');
    if (!(doc.getTitle() ?? '').trim()) fail(`${UA} 7.1`, 'the document has no title');
    const prefs = catalog.lookupMaybe(PDFName.of('ViewerPreferences'), PDFDict);
    if (prefs?.get(PDFName.of('DisplayDocTitle')) !== PDFBool.True)
      fail(`${UA} 7.1`, 'viewers are not told to show the title (/ViewerPreferences /DisplayDocTitle true)');
    if (!(text(catalog.lookup(PDFName.of('Lang'))) ?? '').trim())
      fail(`${UA} 7.2`, 'the document has no natural language (/Lang in the catalog)');
  }

  // Catalog actions and JavaScript.
  const names = catalog.lookupMaybe(PDFName.of('Names'), PDFDict);
  if (names?.has(PDFName.of('JavaScript'))) fail(pdfa ? `${A} 6.5.1` : `${UA} 7.1`, 'the document carries JavaScript');
  if (pdfa && catalog.has(PDFName.of('AA'))) fail(`${A} 6.5.2`, 'the catalog has additional actions (/AA)');

  // Every object: fonts, streams, actions, XObjects, annotations, embedded files.
  const embeddedFiles: PDFDict[] = [];
  for (const [, object] of context.enumerateIndirectObjects()) {
    const dict = object instanceof PDFStream ? object.dict : object instanceof PDFDict ? object : undefined;
    if (!dict) continue;
    const type = name(dict.get(PDFName.of('Type')));
    const subtype = name(dict.get(PDFName.of('Subtype')));
    if (pdfa && object instanceof PDFStream) {
      for (const key of ['F', 'FFilter', 'FDecodeParms'])
        if (dict.has(PDFName.of(key))) fail(`${A} 6.1.7.1`, `a stream refers to external file data (/${key})`);
    }
    if (type === 'Font' && subtype !== 'Type0') {
      if (subtype !== 'Type3') {
        const descriptor = dict.lookupMaybe(PDFName.of('FontDescriptor'), PDFDict);
        const embedded = ['FontFile', 'FontFile2', 'FontFile3'].some((k) => descriptor?.has(PDFName.of(k)));
        if (!embedded) {
          const font = name(dict.get(PDFName.of('BaseFont'))) ?? 'a font';
          if (pdfa) fail(`${A} 6.2.11.4.1`, `${font} is not embedded`);
          if (ua) fail(`${UA} 7.21.4.1`, `${font} is not embedded`);
        }
      }
    }
    if (type === 'Font' && pdfa?.letter === 'U' && subtype !== 'CIDFontType0' && subtype !== 'CIDFontType2') {
      if (!dict.has(PDFName.of('ToUnicode'))) {
        const font = name(dict.get(PDFName.of('BaseFont'))) ?? 'a Type 3 font';
        fail(`${A} 6.2.11.7`, `${font} has no ToUnicode map (every glyph needs Unicode for level U)`);
      }
    }
    const action = name(dict.get(PDFName.of('S')));
    if (action && (type === 'Action' || dict.has(PDFName.of('Next')) || FORBIDDEN_ACTIONS.has(action))) {
      if (FORBIDDEN_ACTIONS.has(action)) {
        if (pdfa) fail(`${A} 6.5.1`, `the document uses a ${action} action`);
        else if (action === 'JavaScript') fail(`${UA} 7.1`, 'the document carries JavaScript');
      }
    }
    if (pdfa && type === 'XObject' && (dict.has(PDFName.of('Ref')) || dict.has(PDFName.of('OPI'))))
      fail(`${A} 6.2.9`, 'an XObject refers to external content (/Ref or /OPI)');
    if (pdfa && subtype === 'PS') fail(`${A} 6.2.9`, 'the document has a PostScript XObject');
    if (
      type === 'Annot' ||
      (subtype && ['Link', 'Widget', 'Text', 'FreeText', 'Stamp'].includes(subtype) && dict.has(PDFName.of('Rect')))
    ) {
      if (pdfa && subtype !== 'Popup') {
        const flags = dict.lookupMaybe(PDFName.of('F'), PDFNumber)?.asNumber() ?? 0;
        if ((flags & 4) === 0 || (flags & (1 | 2 | 32 | 256)) !== 0)
          fail(`${A} 6.3.2`, `a ${subtype ?? ''} annotation is not printable or is hidden (/F print flag)`);
      }
    }
    if (type === 'Filespec' && dict.has(PDFName.of('EF'))) embeddedFiles.push(dict);
  }

  if (pdfa) {
    const af = catalog.lookupMaybe(PDFName.of('AF'), PDFArray);
    const associated = new Set((af?.asArray() ?? []).map((o) => context.lookup(o)));
    for (const spec of embeddedFiles) {
      const fileName = text(spec.lookup(PDFName.of('UF'))) ?? text(spec.lookup(PDFName.of('F'))) ?? '?';
      if (pdfa.part === 2) {
        fail(`${A} 6.8`, `${fileName} is attached; PDF/A-2 accepts only PDF/A attachments (use PDF/A-3)`);
        continue;
      }
      if (!spec.has(PDFName.of('F')) || !spec.has(PDFName.of('UF')))
        fail(`${A} 6.8`, `the attachment ${fileName} lacks its /F or /UF file name`);
      if (!name(spec.get(PDFName.of('AFRelationship'))))
        fail(`${A} 6.8`, `the attachment ${fileName} has no /AFRelationship`);
      if (!associated.has(spec)) fail(`${A} 6.8`, `the attachment ${fileName} is not in the catalog's /AF`);
      const file = spec.lookupMaybe(PDFName.of('EF'), PDFDict)?.lookupMaybe(PDFName.of('F'), PDFStream);
      if (!file || !name(file.dict.get(PDFName.of('Subtype'))))
        fail(`${A} 6.8`, `the attachment ${fileName} has no MIME type (/Subtype)`);
    }
  }
  if (input.eInvoiceFileName) {
    const found = embeddedFiles.some(
      (spec) => (text(spec.lookup(PDFName.of('UF'))) ?? text(spec.lookup(PDFName.of('F')))) === input.eInvoiceFileName,
    );
    if (!found) fail('Factur-X 1.0', `the e-invoice ${input.eInvoiceFileName} is not attached`);
  }

  if (ua) {
    for (const [i, page] of doc.getPages().entries()) {
      const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray);
      if (annots && annots.size() > 0 && name(page.node.get(PDFName.of('Tabs'))) !== 'S')
        fail(`${UA} 7.18.3`, `page ${i + 1} has annotations but no structure tab order (/Tabs /S)`);
    }
  }
  return failures;
}
