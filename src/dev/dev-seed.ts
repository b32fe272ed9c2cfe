// The sample invoice (the gallery's invoice, src/gallery/invoice/: also the benchmarks' and
// tests' fixture) and the first-start data for `docgen dev`: a workspace, an API key with both
// scopes, the sample invoice template with its sample data, published, and the same invoice as
// an e-invoice ("E-invoice (Factur-X EN 16931)": PDF/A-3b, the EN 16931 data embedded as
// factur-x.xml, an outline), published too. Kept in
// ./.docgen/dev-seed.json so later starts print the same ids and key. (The key is on disk here
// only because this is a local sandbox; the database holds just its hash, as everywhere.)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ObjectId } from 'mongodb';
import type { App } from '../app/build-app.ts';
import { displayPrefix, generateApiKey, hashApiKey, SCOPES } from '../auth/api-keys.ts';
import { formatId, parseId } from '../domain/ids.ts';
import type { JsonObject, TemplateVersionContent } from '../domain/template.ts';
import { galleryTemplate } from '../gallery/gallery.ts';
import { normalizeContent, type TemplateContentInput } from '../admin/template-content.ts';

export interface DevSeed {
  workspaceId: string;
  apiKey: string;
  templateId: string;
  sampleVariables: JsonObject;
  /** "E-invoice (Factur-X EN 16931)" (absent in seeds written before it existed: added then). */
  eInvoiceTemplateId?: string;
}

export const E_INVOICE_TEMPLATE_NAME = 'E-invoice (Factur-X EN 16931)';

/**
 * The sample invoice as a Factur-X EN 16931 e-invoice: the same page, in PDF/A-3b with an
 * outline, and the invoice's EN 16931 data (variable `eInvoice`: an invoice object in the JSON
 * model, docs/templates.md#e-invoice-factur-x-zugferd-xrechnung) converted to CII and embedded as factur-x.xml.
 */
export function sampleEInvoiceContent(): TemplateVersionContent {
  const invoice = sampleInvoiceContent();
  const eInvoice = JSON.parse(readFileSync(new URL('./e-invoice-sample.json', import.meta.url), 'utf8')) as JsonObject;
  return normalizeContent({
    ...invoice,
    variables: [
      ...invoice.variables,
      {
        name: 'eInvoice',
        required: true,
        description:
          'The invoice as EN 16931 data: CII XML, or an invoice object in the JSON model (docs/templates.md#e-invoice-factur-x-zugferd-xrechnung)',
      },
    ],
    sampleData: { ...invoice.sampleData, eInvoice },
    conformance: ['PDF/A-3b'],
    eInvoice: { standard: 'factur-x', profile: 'EN16931', from: 'eInvoice' },
    outline: true,
  } as TemplateContentInput);
}

/** The gallery's invoice: `docgen dev`'s sample template, with its sample data. */
export function sampleInvoiceContent(): TemplateVersionContent {
  return galleryTemplate('invoice')!.content;
}

/** The sample invoice's variables (its sample data). */
export function sampleInvoiceValues(): JsonObject {
  return structuredClone(sampleInvoiceContent().sampleData!);
}

export async function seedDevData(app: App, file: string): Promise<DevSeed> {
  const { repositories } = app.infrastructure;
  if (existsSync(file)) {
    const seed = JSON.parse(readFileSync(file, 'utf8')) as DevSeed;
    const workspaceId = parseId('workspace', seed.workspaceId);
    if (workspaceId && (await repositories.workspaces.get(workspaceId))) {
      if (!seed.eInvoiceTemplateId) {
        seed.eInvoiceTemplateId = await publishEInvoiceTemplate(app, workspaceId);
        writeFileSync(file, JSON.stringify(seed, null, 2), { mode: 0o600 });
      }
      return seed;
    }
  }
  const workspace = await repositories.workspaces.create('Dev workspace');
  const apiKey = generateApiKey();
  await repositories.apiKeys.insert({
    _id: new ObjectId(),
    workspaceId: workspace._id,
    name: 'dev key',
    scopes: [...SCOPES],
    hash: hashApiKey(apiKey),
    prefix: displayPrefix(apiKey),
    createdAt: new Date(),
    lastUsedAt: null,
    revokedAt: null,
    rateLimitPerSecond: null,
    rateLimitBurst: null,
  });
  const { template } = await repositories.templates.create(
    workspace._id,
    'Sample invoice',
    sampleInvoiceContent(),
    SEEDED_VERSION,
  );
  await repositories.templates.publish(template._id, 1);
  const seed: DevSeed = {
    workspaceId: formatId('workspace', workspace._id),
    apiKey,
    templateId: formatId('template', template._id),
    sampleVariables: sampleInvoiceValues(),
    eInvoiceTemplateId: await publishEInvoiceTemplate(app, workspace._id),
  };
  writeFileSync(file, JSON.stringify(seed, null, 2), { mode: 0o600 });
  return seed;
}

/** The seed is automation: its versions' author is the operator (docs/interface.md#templates). */
const SEEDED_VERSION = { author: { kind: 'operator' }, note: 'Seeded by docgen dev' } as const;

async function publishEInvoiceTemplate(app: App, workspaceId: ObjectId): Promise<string> {
  const { templates } = app.infrastructure.repositories;
  const { template } = await templates.create(
    workspaceId,
    E_INVOICE_TEMPLATE_NAME,
    sampleEInvoiceContent(),
    SEEDED_VERSION,
  );
  await templates.publish(template._id, 1);
  return formatId('template', template._id);
}
