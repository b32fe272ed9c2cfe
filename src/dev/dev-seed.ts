// The sample invoice (the gallery's invoice, src/gallery/invoice/: also the benchmarks' and
// tests' fixture) and the first-start data for `docgen dev`: a workspace, an API key with both
// scopes and the sample invoice template with its sample data, published. Kept in
// ./.docgen/dev-seed.json so later starts print the same ids and key. (The key is on disk here
// only because this is a local sandbox; the database holds just its hash, as everywhere.)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ObjectId } from 'mongodb';
import type { App } from '../app/build-app.ts';
import { displayPrefix, generateApiKey, hashApiKey, SCOPES } from '../auth/api-keys.ts';
import { formatId, parseId } from '../domain/ids.ts';
import type { JsonObject, TemplateVersionContent } from '../domain/template.ts';
import { galleryTemplate } from '../gallery/gallery.ts';

export interface DevSeed {
  workspaceId: string;
  apiKey: string;
  templateId: string;
  sampleVariables: JsonObject;
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
    if (workspaceId && (await repositories.workspaces.get(workspaceId))) return seed;
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
  const { template } = await repositories.templates.create(workspace._id, 'Sample invoice', sampleInvoiceContent());
  await repositories.templates.publish(template._id, 1);
  const seed: DevSeed = {
    workspaceId: formatId('workspace', workspace._id),
    apiKey,
    templateId: formatId('template', template._id),
    sampleVariables: sampleInvoiceValues(),
  };
  writeFileSync(file, JSON.stringify(seed, null, 2), { mode: 0o600 });
  return seed;
}
