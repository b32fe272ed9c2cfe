// The document settings' one home (src/render/finishing/document-settings.ts): validation names
// each field and what to use, the publish-time refusals of combinations that cannot hold, and
// the conformance list as the CLI reads it.
import { describe, expect, it } from 'vitest';
import {
  documentSettingsConflicts,
  documentSettingsProblems,
  eInvoiceFileName,
  hasDocumentSettings,
  parseConformanceList,
  validateDocumentSettings,
} from '../../src/render/finishing/document-settings.ts';

const base = { encrypted: false, title: 'Invoice {{ number }}', variables: ['invoiceXml'] };

describe('validateDocumentSettings', () => {
  it('accepts absent and complete settings', () => {
    expect(validateDocumentSettings({})).toEqual([]);
    expect(
      validateDocumentSettings({
        conformance: ['PDF/A-3b', 'PDF/UA-1'],
        eInvoice: { standard: 'factur-x', profile: 'EN16931', from: 'invoiceXml' },
        sign: { certificate: 'crt_0123abcd', reason: 'Approved', location: 'Hamburg' },
        stamp: { text: 'DRAFT', opacity: 0.15, angle: 45, firstPageOnly: true },
        outline: true,
        attachments: ['terms.pdf', 'logo.png'],
      }),
    ).toEqual([]);
  });

  it('names each bad field and what to use', () => {
    const problems = validateDocumentSettings({
      conformance: ['PDF/A-1b', 'PDF/A-2b', 'PDF/A-2b'],
      eInvoice: { standard: 'ubl', profile: 'COMFORT', from: '1 bad' },
      sign: { certificate: 'cert-1', reason: 7 },
      stamp: { text: '', opacity: 1.5, angle: 400, firstPageOnly: 'yes' },
      outline: 'yes',
      attachments: ['a.pdf', 'a.pdf'],
    });
    expect(problems).toEqual([
      'conformance "PDF/A-1b" is not supported; use any of PDF/A-2b, PDF/A-2u, PDF/A-3b, PDF/A-3u, PDF/UA-1',
      'conformance lists "PDF/A-2b" twice',
      'eInvoice.standard "ubl" is not supported; use factur-x, zugferd, xrechnung-cii',
      'eInvoice.profile "COMFORT" is not supported; use MINIMUM, BASIC WL, BASIC, EN16931, EXTENDED',
      'eInvoice.from "1 bad" must name a variable (letters, digits, _ or -)',
      'sign.certificate "cert-1" must be a certificate id (crt_…)',
      'sign.reason must be a string',
      'stamp.text must be a non-empty string',
      'stamp.opacity 1.5 is out of range; use a number above 0, up to 1',
      'stamp.angle 400 is out of range; use degrees from -360 to 360',
      'stamp.firstPageOnly must be true or false',
      'outline must be true or false',
      'attachments lists "a.pdf" twice',
    ]);
  });

  it('refuses two PDF/A levels and XRechnung with another profile than EN16931', () => {
    expect(validateDocumentSettings({ conformance: ['PDF/A-2b', 'PDF/A-3u'] })).toEqual([
      'conformance names PDF/A-2b and PDF/A-3u; a PDF conforms to one PDF/A level, pick one',
    ]);
    expect(validateDocumentSettings({ eInvoice: { standard: 'xrechnung-cii', profile: 'BASIC', from: 'x' } })).toEqual([
      'eInvoice.profile must be EN16931 for xrechnung-cii (XRechnung specifies EN 16931), not "BASIC"',
    ]);
  });
});

describe('documentSettingsConflicts (publish-time refusals)', () => {
  it('refuses encryption with PDF/A', () => {
    expect(documentSettingsConflicts({ conformance: ['PDF/A-2b'] }, { ...base, encrypted: true })).toEqual([
      'PDF/A forbids encryption (ISO 19005-2 6.1.3): remove pdfOptions.protection or the PDF/A conformance level',
    ]);
    expect(documentSettingsConflicts({ conformance: ['PDF/UA-1'] }, { ...base, encrypted: true })).toEqual([]);
  });

  it('refuses PDF/UA without a title', () => {
    expect(documentSettingsConflicts({ conformance: ['PDF/UA-1'] }, { ...base, title: '  ' })).toEqual([
      'PDF/UA-1 needs a document title (ISO 14289-1 7.1): set the version title',
    ]);
  });

  it('refuses an e-invoice outside PDF/A-3, and a from that is not declared', () => {
    const eInvoice = { standard: 'factur-x', profile: 'EN16931', from: 'invoiceXml' } as const;
    expect(documentSettingsConflicts({ eInvoice }, base)).toEqual([
      'an e-invoice is embedded in a PDF/A-3 document: add PDF/A-3b (or PDF/A-3u) to conformance',
    ]);
    expect(documentSettingsConflicts({ eInvoice, conformance: ['PDF/A-2b'] }, base)).toHaveLength(1);
    expect(documentSettingsConflicts({ eInvoice, conformance: ['PDF/A-3b'] }, base)).toEqual([]);
    expect(
      documentSettingsConflicts({ eInvoice: { ...eInvoice, from: 'other' }, conformance: ['PDF/A-3u'] }, base),
    ).toEqual(['eInvoice.from names "other", which is not a declared variable']);
  });

  it('refuses attachments under PDF/A-2 and signing with encryption', () => {
    expect(documentSettingsConflicts({ attachments: ['a.pdf'], conformance: ['PDF/A-2u'] }, base)).toEqual([
      'PDF/A-2 accepts only PDF/A files as attachments: use PDF/A-3b or PDF/A-3u to attach files',
    ]);
    expect(documentSettingsConflicts({ sign: { certificate: 'crt_1' } }, { ...base, encrypted: true })).toEqual([
      'signed PDFs cannot be encrypted here (the signature must be the last change): remove one of them',
    ]);
  });

  it('checks the settings before their combinations', () => {
    expect(documentSettingsProblems({ conformance: 'PDF/A-2b' }, { ...base, encrypted: true })).toEqual([
      'conformance must be a list of PDF/A-2b, PDF/A-2u, PDF/A-3b, PDF/A-3u, PDF/UA-1',
    ]);
  });
});

describe('helpers', () => {
  it('reads a conformance list as typed on a command line', () => {
    expect(parseConformanceList('pdf/a-3b, PDF/UA-1,')).toEqual(['PDF/A-3b', 'PDF/UA-1']);
    expect(() => parseConformanceList('PDF/A-3b,PDF/X-4')).toThrow(
      'conformance "PDF/X-4" is not supported; use any of PDF/A-2b, PDF/A-2u, PDF/A-3b, PDF/A-3u, PDF/UA-1',
    );
  });

  it('names the attached XML per standard and knows when nothing is asked', () => {
    expect(eInvoiceFileName('factur-x')).toBe('factur-x.xml');
    expect(eInvoiceFileName('zugferd')).toBe('factur-x.xml');
    expect(eInvoiceFileName('xrechnung-cii')).toBe('xrechnung.xml');
    expect(hasDocumentSettings({})).toBe(false);
    expect(hasDocumentSettings({ conformance: [], attachments: [], outline: false, stamp: null })).toBe(false);
    expect(hasDocumentSettings({ outline: true })).toBe(true);
  });
});
