// Workspace assets end to end: uploaded through `docgen admin asset …` (the admin API over
// Connect on loopback, real MongoDB stand-in and s3rver), used by a published template with
// `asset_url` in the body, the CSS (@font-face) and the header, and rendered by the real
// engine: the PDF carries the image (pdfimages) and the font (pdffonts) while a loopback
// canary sees no connection. Refusals (SVG with scripts or external references, oversized,
// mislabelled, over quota, name taken, missing at publish or at render) say what is wrong.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Code, ConnectError } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminClients, type AdminClients } from '../../src/cli/admin/admin-client.ts';
import { runAdminCli } from '../../src/cli/admin/run-admin-cli.ts';
import { parseId } from '../../src/domain/ids.ts';
import { createIdentityRepositories } from '../../src/identity/identity.ts';
import { createAssetLoader } from '../../src/render/asset-loader.ts';
import { analyzeTemplate, diagnoseTemplate } from '../../src/render/liquid/analyze-template.ts';
import { GenerationService } from '../../src/generations/generation-service.ts';
import { PageTokens } from '../../src/store/pagination.ts';
import { createRenderEngine, type RenderEngine } from '../../src/render/render-engine.ts';
import { createAdminServices } from '../../src/app/admin-services.ts';
import { registerAdminRoutes } from '../../src/rpc/admin-routes.ts';
import { createObjectStore, type ObjectStore } from '../../src/storage/object-store.ts';
import { ApiKeysRepository } from '../../src/store/api-keys-repository.ts';
import { AssetsRepository } from '../../src/store/assets-repository.ts';
import { CertificatesRepository } from '../../src/store/certificates-repository.ts';
import { DeliveriesRepository } from '../../src/store/deliveries-repository.ts';
import { ensureIndexes } from '../../src/store/documents.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { BatchesRepository } from '../../src/store/batches-repository.ts';
import { StatsRepository } from '../../src/store/stats-repository.ts';
import { RateLimitsRepository } from '../../src/store/rate-limits-repository.ts';
import { TemplatesRepository } from '../../src/store/templates-repository.ts';
import { WebhookEndpointsRepository } from '../../src/store/webhook-endpoints-repository.ts';
import { WorkspacesRepository } from '../../src/store/workspaces-repository.ts';
import { makePng } from '../fixtures/assets/make-png.ts';
import {
  chromiumPath,
  startMongo,
  startS3,
  uniqueRunDir,
  type TestMongo,
  type TestS3,
} from '../harness/dependencies.ts';
import { leftovers, pdfText, startCanary, type Canary } from './render-support.ts';
import { TEMPLATES_TEST_KEY } from '../harness/test-config.ts';

const run = promisify(execFile);
const ADMIN_TOKEN = 'assets-test-operator-token';
const MAX_BYTES = 64 * 1024;
const QUOTA_BYTES = 200 * 1024;
const FONT = join(import.meta.dirname, '../fixtures/assets/docgen-test-sans.woff2');

let mongo: TestMongo;
let s3: TestS3;
let client: MongoClient;
let db: Db;
let objects: ObjectStore;
let engine: RenderEngine;
let profiles: string;
let server: Server;
let url: string;
let admin: AdminClients;
let canary: Canary;
let files: string;

beforeAll(async () => {
  [mongo, s3, canary] = await Promise.all([startMongo(), startS3(), startCanary()]);
  client = new MongoClient(mongo.url);
  db = client.db(mongo.database);
  await ensureIndexes(db);
  objects = createObjectStore({
    endpoint: new URL(s3.endpoint),
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    bucket: s3.bucket,
    region: s3.region,
  });
  const assets = new AssetsRepository(db);
  profiles = uniqueRunDir('chromium-assets');
  files = uniqueRunDir('asset-files');
  await mkdir(files, { recursive: true });
  engine = await createRenderEngine(
    {
      chromiumPath: chromiumPath(),
      noSandbox: true,
      concurrency: 1,
      timeoutMs: 20_000,
      liquidTimeoutMs: 2_000,
      liquidMemoryMb: 64,
      browserRecycleAfterRenders: 1000,
      browserMaxRssMb: 4096,
      maxAttempts: 3,
      userDataDir: profiles,
    },
    { assets: createAssetLoader({ assets, objects }) },
  );
  const repositories = {
    workspaces: new WorkspacesRepository(db),
    apiKeys: new ApiKeysRepository(db),
    templates: new TemplatesRepository(db, TEMPLATES_TEST_KEY),
    webhookEndpoints: new WebhookEndpointsRepository(db),
    deliveries: new DeliveriesRepository(db),
    generations: new GenerationsRepository(db),
    certificates: new CertificatesRepository(db),
    stats: new StatsRepository(db),
    batches: new BatchesRepository(db),
  };
  const generationService = new GenerationService({
    generations: repositories.generations,
    templates: repositories.templates,
    jobs: { publishRenderJob: async () => {} },
    urls: objects,
    pageTokens: new PageTokens(Buffer.alloc(32, 7)),
  });
  const services = createAdminServices({
    repositories,
    secretKey: Buffer.alloc(32, 7),
    allowInsecureWebhookUrls: true,
    adminToken: ADMIN_TOKEN,
    analyzeTemplate,
    diagnoseTemplate,
    generationService,
    objects,
    renderPreview: async (content, variables, options) => {
      const started = Date.now();
      return {
        pdf: (await engine.renderer.render(content, variables, options)).pdf,
        renderMs: Date.now() - started,
      };
    },
    enqueueDelivery: async () => {},
    assets: { repository: assets, objects, maxBytes: MAX_BYTES, workspaceQuotaBytes: QUOTA_BYTES },
    identity: {
      repositories: createIdentityRepositories(db),
      rateLimits: new RateLimitsRepository(db),
      portalBaseUrl: () => 'http://127.0.0.1:8081',
    },
  });
  const handler = connectNodeAdapter({
    routes: (router) => {
      registerAdminRoutes(router, services, {
        onInternal: (cause) => console.error('admin test server: internal error', cause),
      });
    },
    readMaxBytes: 16 * 1024 * 1024,
  });
  server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  admin = createAdminClients(url, { token: ADMIN_TOKEN });
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await engine?.close();
  await canary?.close();
  await client?.close();
  await Promise.allSettled([mongo?.stop(), s3?.stop()]);
  expect(leftovers({ dir: profiles })).toEqual([]);
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runAdminCli(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: { DOCGEN_ADMIN_URL: url, DOCGEN_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  return { code, stdout, stderr };
}

async function upload(
  workspace: string,
  name: string,
  bytes: Buffer,
  as?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const path = join(files, name);
  await writeFile(path, bytes);
  return cli(['asset', 'upload', '--workspace', workspace, '--file', path, ...(as ? ['--name', as] : []), '--json']);
}

async function workspace(name: string): Promise<string> {
  return (await admin.workspaces.createWorkspace({ name })).workspace!.id;
}

async function pdfTool(tool: string, pdf: Buffer, ...args: string[]): Promise<string> {
  const path = join(files, `${tool}-${Date.now()}-${Math.random().toString(36).slice(2)}.pdf`);
  await writeFile(path, pdf);
  return (await run(tool, [...args, path], { encoding: 'utf8' })).stdout;
}

async function refusal(promise: Promise<unknown>): Promise<ConnectError> {
  const err = await promise.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

const LOGO = makePng(40, 20);

describe('workspace assets', () => {
  it('a PNG logo and a WOFF2 font uploaded with the CLI appear in the PDF, and the page makes no network request', async () => {
    const ws = await workspace('assets');
    const logo = await upload(ws, 'logo.png', LOGO);
    expect(logo.stderr).toBe('');
    expect(logo.code).toBe(0);
    const logoJson = JSON.parse(logo.stdout) as { id: string; name: string; contentType: string };
    expect(logoJson).toMatchObject({ name: 'logo.png', contentType: 'image/png' });
    expect(logoJson.id).toMatch(/^ast_[0-9a-f]{24}$/);
    const font = await upload(ws, 'brand.woff2', await readFile(FONT), 'brand-sans.woff2');
    expect(JSON.parse(font.stdout)).toMatchObject({
      name: 'brand-sans.woff2',
      contentType: 'font/woff2',
      kind: 'font',
    });

    const listed = JSON.parse((await cli(['asset', 'list', '--workspace', ws, '--json'])).stdout) as {
      assets: Array<{ name: string }>;
      usedBytes: number;
      quotaBytes: number;
    };
    expect(listed.assets.map((a) => a.name)).toEqual(['brand-sans.woff2', 'logo.png']);
    expect(listed.quotaBytes).toBe(QUOTA_BYTES);
    expect(listed.usedBytes).toBeGreaterThan(LOGO.length);

    const canaryUrl = `http://127.0.0.1:${canary.port}`;
    const before = canary.connections;
    const created = await admin.templates.createTemplate({
      workspaceId: ws,
      name: 'Branded letter',
      publish: true,
      content: {
        body: `<img class="logo" src="{{ 'logo.png' | asset_url }}"><p class="brand">Brand Letter {{ number }}</p>
<img src="{{ tracking }}/tracking.png"><link rel="stylesheet" href="{{ tracking }}/x.css">`,
        css: `@font-face { font-family: "Brand"; src: url({{ 'brand-sans.woff2' | asset_url }}) format("woff2"); }
.brand { font-family: "Brand"; font-size: 18pt; }
.logo { width: 40px; height: 20px; }
.header-logo { height: 8mm; }`,
        // The outside URLs come in a variable: publishing refuses literal ones at their line,
        // so only the renderer's own wall can stop these.
        variables: [
          { name: 'number', required: true, description: '' },
          { name: 'tracking', required: true, description: '' },
        ],
        pdfOptions: {
          pageSize: 'A4',
          margins: { top: '20mm', bottom: '15mm', left: '10mm', right: '10mm' },
          printBackground: true,
          headerTemplate: `<div style="font-size:8pt;width:100%;padding-left:10mm"><img class="header-logo" src="{{ 'logo.png' | asset_url }}"> <span class="brand">Header {{ number }}</span></div>`,
        },
      },
    });
    expect(created.template!.publishedVersion).toBe(1);
    const { pdf } = await admin.templates.previewTemplateVersion({
      templateId: created.template!.id,
      version: 0,
      variables: { number: 'N-1', tracking: canaryUrl },
    });
    const buffer = Buffer.from(pdf);

    const images = await pdfTool('pdfimages', buffer, '-list');
    // The body's logo and the header's (inlined as a data: URL), both 40x20.
    const logos = images.split('\n').filter((line) => /^\s*1\s+\d+\s+image\s+40\s+20\s/.test(line));
    expect(logos.length, images).toBeGreaterThanOrEqual(2);
    const fonts = await pdfTool('pdffonts', buffer);
    expect(fonts).toMatch(/\+DocgenTestSans/);
    const text = await pdfText(buffer);
    expect(text).toContain('Brand Letter N-1');
    expect(text).toContain('Header N-1');
    expect(canary.connections - before, canary.seen.join(', ')).toBe(0);
  });

  it('takes the title, metadata and the newer PDF options from the CLI', async () => {
    const ws = await workspace('cli-settings');
    const body = join(files, 'settings-body.liquid');
    await writeFile(body, '<p>Hello {{ n }}</p>');
    const pdfOptions = JSON.stringify({
      scale: 0.9,
      pageRanges: '1',
      preferCssPageSize: true,
      firstPageFooterTemplate: '<div>first</div>',
      protection: { ownerPassword: 'owner-secret', allowPrinting: true },
    });
    const created = await cli([
      'template',
      'create',
      '--workspace',
      ws,
      '--name',
      'Settings',
      '--file',
      body,
      '--title',
      'Doc {{ n }}',
      '--metadata',
      '{"author": "Acme", "keywords": "a, b", "language": "fr"}',
      '--pdf-options',
      pdfOptions,
      '--json',
    ]);
    expect(created.stderr).toBe('');
    const { id } = JSON.parse(created.stdout) as { id: string };
    const shown = JSON.parse((await cli(['template', 'version', 'get', id, '--version', '1', '--json'])).stdout) as {
      content: Record<string, unknown>;
    };
    expect(shown.content).toMatchObject({
      title: 'Doc {{ n }}',
      metadata: { author: 'Acme', subject: '', keywords: 'a, b', language: 'fr' },
      pdfOptions: {
        scale: 0.9,
        pageRanges: '1',
        preferCssPageSize: true,
        firstPageFooterTemplate: '<div>first</div>',
        protection: {
          ownerPassword: '',
          ownerPasswordSet: true,
          userPassword: '',
          userPasswordSet: false,
          allowPrinting: true,
          allowCopying: false,
        },
      },
    });
    const bad = await cli([
      'template',
      'create',
      '--workspace',
      ws,
      '--name',
      'Bad',
      '--file',
      body,
      '--pdf-options',
      '{"protection": {"ownerPasword": "x"}}',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown protection field "ownerPasword"');
  });

  it('sanitises an SVG with a script and refuses one with an external reference', async () => {
    const ws = await workspace('svg');
    const scripted = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="30" height="30" onload="fetch('http://127.0.0.1:${canary.port}/')"><script>alert(1)</script><rect width="30" height="30" fill="#0a0"/></svg>`;
    const ok = await upload(ws, 'mark.svg', Buffer.from(scripted));
    expect(ok.code, ok.stderr).toBe(0);
    const uploaded = JSON.parse(ok.stdout) as { warnings: string[]; sizeBytes: number };
    expect(uploaded.warnings).toEqual(
      expect.arrayContaining(['removed <script>', 'removed attribute onload from <svg>']),
    );
    const stored = await objects.getObject(
      (await new AssetsRepository(db).findByName(parseId('workspace', ws)!, 'mark.svg'))!.key,
    );
    expect(stored.toString('utf8')).not.toMatch(/script|onload/i);
    expect(stored.toString('utf8')).toContain('<rect');

    const external = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="http://127.0.0.1:${canary.port}/x.png" width="5" height="5"/></svg>`;
    const refused = await upload(ws, 'external.svg', Buffer.from(external));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /external\.svg references content outside itself \(image xlink:href="http:\/\/127\.0\.0\.1:\d+\/x\.png"\)/,
    );
    const cssImport = `<svg xmlns="http://www.w3.org/2000/svg"><style>@import url("http://127.0.0.1:${canary.port}/a.css");</style><rect width="1" height="1"/></svg>`;
    expect((await upload(ws, 'import.svg', Buffer.from(cssImport))).stderr).toMatch(
      /import\.svg references content outside itself/,
    );
  });

  it('refuses oversized, mislabelled and unknown files, names already taken, and uploads past the quota', async () => {
    const ws = await workspace('limits');
    const big = makePng(160, 160, { noise: true }); // ~77 KB > 64 KiB
    const tooBig = await refusal(admin.assets.uploadAsset({ workspaceId: ws, name: 'big.png', content: big }));
    expect(tooBig.code).toBe(Code.InvalidArgument);
    expect(tooBig.rawMessage).toContain(`big.png is ${big.length} bytes; assets may be at most ${MAX_BYTES} bytes`);

    const mislabelled = await upload(ws, 'photo.jpg', LOGO);
    expect(mislabelled.code).toBe(1);
    expect(mislabelled.stderr).toContain(
      'photo.jpg is named as a JPEG image but its content is: PNG image (image/png); rename it to .png',
    );
    const fontAsImage = await refusal(
      admin.assets.uploadAsset({ workspaceId: ws, name: 'logo.png', content: await readFile(FONT) }),
    );
    expect(fontAsImage.rawMessage).toContain('logo.png is named as a PNG image but its content is: WOFF2 font');
    const text = await refusal(
      admin.assets.uploadAsset({ workspaceId: ws, name: 'notes.png', content: Buffer.from('just some text') }),
    );
    expect(text.rawMessage).toContain('notes.png is not a file type docgen recognises');
    const exe = await refusal(admin.assets.uploadAsset({ workspaceId: ws, name: 'tool.exe', content: LOGO }));
    expect(exe.rawMessage).toContain('the extension is not one of a supported type');

    await admin.assets.uploadAsset({ workspaceId: ws, name: 'a.png', content: LOGO });
    const taken = await refusal(admin.assets.uploadAsset({ workspaceId: ws, name: 'a.png', content: LOGO }));
    expect(taken.code).toBe(Code.AlreadyExists);

    const chunk = makePng(140, 140, { noise: true }); // ~59 KB
    expect(chunk.length).toBeLessThan(MAX_BYTES);
    for (const name of ['q1.png', 'q2.png', 'q3.png'])
      await admin.assets.uploadAsset({ workspaceId: ws, name, content: chunk });
    const over = await refusal(admin.assets.uploadAsset({ workspaceId: ws, name: 'q4.png', content: chunk }));
    expect(over.code).toBe(Code.FailedPrecondition);
    expect(over.rawMessage).toContain(`its quota is ${QUOTA_BYTES} bytes`);
  });

  it('refuses to publish a version whose asset is missing, and a deleted asset fails the render naming it', async () => {
    const ws = await workspace('missing');
    const err = await refusal(
      admin.templates.createTemplate({
        workspaceId: ws,
        name: 'Needs a logo',
        publish: true,
        content: { body: `<img src="{{ 'missing-logo.png' | asset_url }}">` },
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toContain('asset "missing-logo.png" is used but the workspace has no asset of that name');
    const check = await admin.templates.checkTemplateContent({
      workspaceId: ws,
      content: { body: `<img src="{{ 'missing-logo.png' | asset_url }}">` },
    });
    expect(check.diagnostics.map((d) => [d.severity, d.message])).toContainEqual([
      'error',
      expect.stringContaining('asset "missing-logo.png" is used but'),
    ]);

    const uploaded = JSON.parse((await upload(ws, 'seal.png', LOGO)).stdout) as { id: string };
    const created = await admin.templates.createTemplate({
      workspaceId: ws,
      name: 'Sealed',
      publish: true,
      content: { body: `<img src="{{ 'seal.png' | asset_url }}">` },
    });
    const templateId = created.template!.id;
    expect((await admin.templates.previewTemplateVersion({ templateId, version: 0 })).pdf.length).toBeGreaterThan(0);
    const deleted = await cli(['asset', 'delete', uploaded.id, '--json']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const failed = await refusal(admin.templates.previewTemplateVersion({ templateId, version: 0 }));
    expect(failed.rawMessage).toContain('The template uses asset "seal.png", which the workspace does not have');
    // Another workspace's asset of the same name is not this workspace's.
    const other = await workspace('other');
    await upload(other, 'seal.png', LOGO);
    expect((await refusal(admin.templates.previewTemplateVersion({ templateId, version: 0 }))).rawMessage).toContain(
      'seal.png',
    );
  });
});
