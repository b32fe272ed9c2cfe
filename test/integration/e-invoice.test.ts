// The e-invoice step on its own (src/render/finishing/e-invoice.ts), with Debian's xmllint and
// the Factur-X XSDs: per profile the right schema, /AFRelationship and XMP conformance level;
// what it refuses, naming the rule and the element.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/template.ts';
import type { EInvoiceSettings } from '../../src/render/finishing/document-settings.ts';
import { prepareEInvoice } from '../../src/render/finishing/e-invoice.ts';
import { RenderError } from '../../src/render/render-error.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/e-invoice/${name}`, import.meta.url), 'utf8');
const MINIMUM = fixture('minimum.cii.xml');
const EN16931 = fixture('sample-invoice.cii.xml');
const OBJECT = JSON.parse(fixture('sample-invoice.json')) as JsonObject;

const settings = (profile: EInvoiceSettings['profile'], standard: EInvoiceSettings['standard'] = 'factur-x') =>
  ({ standard, profile, from: 'invoice' }) as EInvoiceSettings;

async function refusal(promise: Promise<unknown>): Promise<RenderError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RenderError);
  return err as RenderError;
}

describe('prepareEInvoice', () => {
  it('takes a MINIMUM invoice as Data (not a full invoice) and an EN16931 one as Alternative', async () => {
    const minimum = await prepareEInvoice(settings('MINIMUM'), { invoice: MINIMUM });
    expect(minimum).toMatchObject({ fileName: 'factur-x.xml', relationship: 'Data', conformanceLevel: 'MINIMUM' });
    expect(minimum.xml.toString('utf8')).toBe(MINIMUM);
    const full = await prepareEInvoice(settings('EN16931', 'zugferd'), { invoice: EN16931 });
    expect(full).toMatchObject({ fileName: 'factur-x.xml', relationship: 'Alternative', conformanceLevel: 'EN 16931' });
  });

  it("checks against the profile's own schema and guideline id", async () => {
    const tooSmall = await refusal(prepareEInvoice(settings('EN16931'), { invoice: MINIMUM }));
    expect(tooSmall.code).toBe('INVALID_E_INVOICE');
    expect(tooSmall.message).toContain('rule Factur-X 1.07.3 EN16931 XSD');
    expect(tooSmall.message).toContain('Expected is ( IncludedSupplyChainTradeLineItem )');
    expect(tooSmall.message).toMatch(/\(line \d+\)/);

    const otherProfile = await refusal(prepareEInvoice(settings('EXTENDED'), { invoice: EN16931 }));
    expect(otherProfile.message).toContain(
      'rule BT-24 (specification identifier): element GuidelineSpecifiedDocumentContextParameter/ID is "urn:cen.eu:en16931:2017"; the factur-x EXTENDED profile needs "urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended"',
    );
    const notXrechnung = await refusal(prepareEInvoice(settings('EN16931', 'xrechnung-cii'), { invoice: EN16931 }));
    expect(notXrechnung.message).toContain('rule BT-24');
  });

  it('refuses a DOCTYPE, malformed XML, an object for a profile it cannot convert to, and a wrong type', async () => {
    const doctype = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${MINIMUM.slice(MINIMUM.indexOf('<rsm:'))}`;
    expect((await refusal(prepareEInvoice(settings('MINIMUM'), { invoice: doctype }))).message).toContain(
      'a DOCTYPE is not allowed in an e-invoice',
    );
    const truncated = await refusal(prepareEInvoice(settings('MINIMUM'), { invoice: MINIMUM.slice(0, 400) }));
    expect(truncated.code).toBe('INVALID_E_INVOICE');
    expect(truncated.message).toMatch(/rule Factur-X 1\.07\.3 MINIMUM XSD: parser error/);
    expect((await refusal(prepareEInvoice(settings('BASIC'), { invoice: OBJECT }))).message).toContain(
      'an invoice object converts to EN 16931 or XRechnung CII; for the BASIC profile pass the CII XML as a string',
    );
    expect((await refusal(prepareEInvoice(settings('BASIC'), { invoice: 42 }))).message).toContain(
      'it must hold the CII XML as a string or an invoice object',
    );
  });
});
