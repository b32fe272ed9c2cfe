// The XMP metadata packet of a conforming PDF (ISO 16684-1 as PDF/A and PDF/UA use it): the
// document information dictionary's fields mirrored exactly (ISO 19005-2 6.6.2.3.1), the
// pdfaid / pdfuaid identification, and the Factur-X properties with the extension schemas
// that PDF/A requires for any property outside its predefined schemas (6.6.2.3.2).

export interface XmpFields {
  title: string;
  author: string;
  subject: string;
  keywords: string;
  creator: string;
  producer: string;
  created: Date;
  modified: Date;
  pdfa?: { part: 2 | 3; conformance: 'B' | 'U' } | undefined;
  pdfua?: boolean | undefined;
  facturX?: { fileName: string; conformanceLevel: string; version: string } | undefined;
}

const FX_NAMESPACE = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';
const PDFUAID_NAMESPACE = 'http://www.aiim.org/pdfua/ns/id/';

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** XMP date: seconds, UTC (the info dictionary gets the same instant, see conformance.ts). */
export const xmpDate = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

interface ExtensionProperty {
  name: string;
  valueType: string;
  category: 'internal' | 'external';
  description: string;
}

function extensionSchema(schema: string, namespace: string, prefix: string, properties: ExtensionProperty[]): string {
  const props = properties
    .map(
      (p) => `<rdf:li rdf:parseType="Resource">
<pdfaProperty:name>${p.name}</pdfaProperty:name>
<pdfaProperty:valueType>${p.valueType}</pdfaProperty:valueType>
<pdfaProperty:category>${p.category}</pdfaProperty:category>
<pdfaProperty:description>${esc(p.description)}</pdfaProperty:description>
</rdf:li>`,
    )
    .join('\n');
  return `<rdf:li rdf:parseType="Resource">
<pdfaSchema:schema>${esc(schema)}</pdfaSchema:schema>
<pdfaSchema:namespaceURI>${namespace}</pdfaSchema:namespaceURI>
<pdfaSchema:prefix>${prefix}</pdfaSchema:prefix>
<pdfaSchema:property><rdf:Seq>
${props}
</rdf:Seq></pdfaSchema:property>
</rdf:li>`;
}

export function xmpPacket(f: XmpFields): string {
  const parts: string[] = [];
  const dc: string[] = ['<dc:format>application/pdf</dc:format>'];
  if (f.title !== '')
    dc.push(`<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${esc(f.title)}</rdf:li></rdf:Alt></dc:title>`);
  if (f.author !== '') dc.push(`<dc:creator><rdf:Seq><rdf:li>${esc(f.author)}</rdf:li></rdf:Seq></dc:creator>`);
  if (f.subject !== '')
    dc.push(
      `<dc:description><rdf:Alt><rdf:li xml:lang="x-default">${esc(f.subject)}</rdf:li></rdf:Alt></dc:description>`,
    );
  parts.push(
    `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">\n${dc.join('\n')}\n</rdf:Description>`,
  );

  const pdf: string[] = [];
  if (f.producer !== '') pdf.push(`<pdf:Producer>${esc(f.producer)}</pdf:Producer>`);
  if (f.keywords !== '') pdf.push(`<pdf:Keywords>${esc(f.keywords)}</pdf:Keywords>`);
  if (pdf.length > 0)
    parts.push(
      `<rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">\n${pdf.join('\n')}\n</rdf:Description>`,
    );

  const xmp = [
    `<xmp:CreateDate>${xmpDate(f.created)}</xmp:CreateDate>`,
    `<xmp:ModifyDate>${xmpDate(f.modified)}</xmp:ModifyDate>`,
  ];
  if (f.creator !== '') xmp.push(`<xmp:CreatorTool>${esc(f.creator)}</xmp:CreatorTool>`);
  parts.push(
    `<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">\n${xmp.join('\n')}\n</rdf:Description>`,
  );

  if (f.pdfa)
    parts.push(`<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">
<pdfaid:part>${f.pdfa.part}</pdfaid:part>
<pdfaid:conformance>${f.pdfa.conformance}</pdfaid:conformance>
</rdf:Description>`);
  if (f.pdfua)
    parts.push(`<rdf:Description rdf:about="" xmlns:pdfuaid="${PDFUAID_NAMESPACE}">
<pdfuaid:part>1</pdfuaid:part>
</rdf:Description>`);
  if (f.facturX)
    parts.push(`<rdf:Description rdf:about="" xmlns:fx="${FX_NAMESPACE}">
<fx:DocumentType>INVOICE</fx:DocumentType>
<fx:DocumentFileName>${esc(f.facturX.fileName)}</fx:DocumentFileName>
<fx:Version>${esc(f.facturX.version)}</fx:Version>
<fx:ConformanceLevel>${esc(f.facturX.conformanceLevel)}</fx:ConformanceLevel>
</rdf:Description>`);

  // PDF/A accepts only predefined schemas or ones it is told about here.
  const schemas: string[] = [];
  if (f.pdfa && f.pdfua)
    schemas.push(
      extensionSchema('PDF/UA identification schema', PDFUAID_NAMESPACE, 'pdfuaid', [
        { name: 'part', valueType: 'Integer', category: 'internal', description: 'PDF/UA version identifier' },
      ]),
    );
  if (f.pdfa && f.facturX)
    schemas.push(
      extensionSchema('Factur-X PDFA Extension Schema', FX_NAMESPACE, 'fx', [
        {
          name: 'DocumentFileName',
          valueType: 'Text',
          category: 'external',
          description: 'The name of the embedded XML document',
        },
        {
          name: 'DocumentType',
          valueType: 'Text',
          category: 'external',
          description: 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER',
        },
        {
          name: 'Version',
          valueType: 'Text',
          category: 'external',
          description: 'The actual version of the standard applying to the embedded XML document',
        },
        {
          name: 'ConformanceLevel',
          valueType: 'Text',
          category: 'external',
          description: 'The conformance level of the embedded XML document',
        },
      ]),
    );
  if (schemas.length > 0)
    parts.push(`<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
<pdfaExtension:schemas><rdf:Bag>
${schemas.join('\n')}
</rdf:Bag></pdfaExtension:schemas>
</rdf:Description>`);

  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
${parts.join('\n')}
</rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;
}
