// PDF passwords are stored encrypted (AES-256-GCM under DOCGEN_SECRET_KEY, bound to the
// template): the database row holds neither password, the repository hands the renderer the
// real ones, and the PDF printed from the stored version opens with them (qpdf, pdftotext).
// They are write-only in the admin API: a version sent with only the *PasswordSet flags keeps
// the earlier passwords, and its PDF (and a preview of such unsaved content) opens with them.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonString } from '@bufbuild/protobuf';
import { createRouterTransport } from '@connectrpc/connect';
import { ObjectId } from 'mongodb';
import { TemplateAdmin } from '../../src/admin/template-admin.ts';
import { adminClientsOn } from '../../src/cli/admin/admin-client.ts';
import { formatId } from '../../src/domain/ids.ts';
import { CreateTemplateVersionResponseSchema, TemplateService } from '../../src/gen/docgen/admin/v1/template_pb.js';
import { analyzeTemplate, diagnoseTemplate } from '../../src/render/liquid/analyze-template.ts';
import { TemplateServiceHandler } from '../../src/rpc/admin-template-service.ts';
import { mapErrors } from '../../src/rpc/connect-errors.ts';
import { WorkspacesRepository } from '../../src/store/workspaces-repository.ts';
import { GenerationsRepository } from '../../src/store/generations-repository.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import type { TemplateVersionContent } from '../../src/domain/template.ts';
import { createRenderEngine, type RenderEngine } from '../../src/render/render-engine.ts';
import { COLLECTIONS } from '../../src/store/documents.ts';
import { connectMongo, type MongoConnection } from '../../src/store/mongo.ts';
import { TemplatesRepository } from '../../src/store/templates-repository.ts';
import { startMongo, uniqueRunDir, type TestMongo } from '../harness/dependencies.ts';
import { renderEngineTestConfig, testPageTokens } from '../harness/test-config.ts';

const USER = 'open-sesame-42';
const OWNER = '-owner-lifts-all';
const KEY = randomBytes(32);
let mongo: TestMongo;
let conn: MongoConnection;
let engine: RenderEngine;
let dir: string;

beforeAll(async () => {
  mongo = await startMongo();
  conn = await connectMongo({ url: mongo.url, database: mongo.database });
  engine = await createRenderEngine(renderEngineTestConfig({ concurrency: 1, userDataDir: uniqueRunDir('pdf-pw') }));
  dir = mkdtempSync(join(tmpdir(), 'pdf-pw-'));
}, 120_000);

afterAll(async () => {
  await engine?.close();
  await conn?.close();
  await mongo?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const content: TemplateVersionContent = {
  body: '<p>Protected statement</p>',
  css: '',
  partials: {},
  variables: [],
  pdfOptions: {
    ...DEFAULT_PDF_OPTIONS,
    protection: {
      userPassword: USER,
      ownerPassword: OWNER,
      allowPrinting: true,
      allowCopying: false,
      allowModifying: false,
    },
  },
};

describe('PDF passwords at rest', () => {
  it('are sealed in the database, open for the renderer, and the PDF opens with them', async () => {
    const templates = new TemplatesRepository(conn.db, KEY);
    const { template } = await templates.create(new ObjectId(), 'protected', content);
    const added = await templates.addVersion(template._id, content);
    expect(added?.version).toBe(2);

    const rows = await conn.db.collection(COLLECTIONS.templateVersions).find({ templateId: template._id }).toArray();
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const stored = JSON.stringify(row);
      expect(stored).not.toContain(USER);
      expect(stored).not.toContain(OWNER);
      expect(row.content.pdfOptions.protection).toMatchObject({
        sealed: true,
        ownerPassword: expect.stringMatching(/^v1\./),
      });
    }

    const version = await templates.getVersion(template._id, 2);
    expect(version?.content.pdfOptions.protection).toEqual(content.pdfOptions.protection);
    const listed = await templates.listVersions(template._id, 'basic');
    expect(listed.map((v) => v.content.pdfOptions.protection?.ownerPassword)).toEqual([OWNER, OWNER]);

    const { pdf } = await engine.renderer.render(version!.content, {});
    const file = join(dir, 'protected.pdf');
    writeFileSync(file, pdf);
    expect(spawnSync('pdftotext', [file, '-'], { encoding: 'utf8' }).stderr).toMatch(/Incorrect password/i);
    expect(execFileSync('pdftotext', ['-upw', USER, file, '-'], { encoding: 'utf8' })).toContain('Protected statement');
    expect(execFileSync('qpdf', [`--password=${OWNER}`, '--show-encryption', file], { encoding: 'utf8' })).toMatch(
      /owner password/i,
    );
  });

  it('do not open under another DOCGEN_SECRET_KEY, nor when copied onto another template', async () => {
    const templates = new TemplatesRepository(conn.db, KEY);
    const { template } = await templates.create(new ObjectId(), 'one', content);
    const other = await templates.create(new ObjectId(), 'two', { ...content, pdfOptions: DEFAULT_PDF_OPTIONS });
    await expect(new TemplatesRepository(conn.db, randomBytes(32)).getVersion(template._id, 1)).rejects.toThrow(
      /A PDF password cannot be decrypted: authentication failed/,
    );
    const versions = conn.db.collection(COLLECTIONS.templateVersions);
    const sealed = (await versions.findOne({ templateId: template._id }))!.content.pdfOptions.protection;
    await versions.updateOne({ templateId: other.template._id }, { $set: { 'content.pdfOptions.protection': sealed } });
    await expect(templates.getVersion(other.template._id, 1)).rejects.toThrow(/A PDF password cannot be decrypted/);
  });

  it('kept through the write-only flags: the new version and a preview of unsaved content open with them', async () => {
    const templates = new TemplatesRepository(conn.db, KEY);
    const workspaces = new WorkspacesRepository(conn.db);
    const workspaceId = formatId('workspace', (await workspaces.create('pdf-pw'))._id);
    const admin = new TemplateAdmin({
      workspaces,
      templates,
      analyzeTemplate,
      diagnoseTemplate,
      renderPreview: async (c, variables) => ({ pdf: (await engine.renderer.render(c, variables)).pdf, renderMs: 0 }),
      generations: new GenerationsRepository(conn.db),
      pageTokens: testPageTokens(),
    });
    const client = adminClientsOn(
      createRouterTransport(({ service }) => service(TemplateService, mapErrors(new TemplateServiceHandler(admin)))),
    ).templates;
    const created = await client.createTemplate({
      workspaceId,
      name: 'kept',
      content: { body: content.body, pdfOptions: { protection: content.pdfOptions.protection } },
      publish: true,
    });
    const templateId = created.template!.id;
    const flagsOnly = {
      userPassword: '',
      ownerPassword: '',
      userPasswordSet: true,
      ownerPasswordSet: true,
      allowPrinting: true,
    };
    const added = await client.createTemplateVersion({
      templateId,
      content: { body: '<p>Second statement</p>', pdfOptions: { protection: flagsOnly } },
    });
    const answered = toJsonString(CreateTemplateVersionResponseSchema, added);
    expect(answered).not.toContain(USER);
    expect(answered).not.toContain(OWNER);
    expect(added.version?.content?.pdfOptions?.protection).toMatchObject({
      userPassword: '',
      userPasswordSet: true,
      ownerPasswordSet: true,
    });

    const opensWithOldPassword = (pdf: Uint8Array, name: string, text: string) => {
      const file = join(dir, name);
      writeFileSync(file, pdf);
      expect(spawnSync('pdftotext', [file, '-'], { encoding: 'utf8' }).stderr).toMatch(/Incorrect password/i);
      expect(execFileSync('pdftotext', ['-upw', USER, file, '-'], { encoding: 'utf8' })).toContain(text);
      expect(execFileSync('qpdf', [`--password=${OWNER}`, '--show-encryption', file], { encoding: 'utf8' })).toMatch(
        /owner password/i,
      );
    };
    const stored = await client.previewTemplateVersion({ templateId, version: 2 });
    opensWithOldPassword(stored.pdf, 'kept.pdf', 'Second statement');

    const unsaved = await client.previewTemplateContent({
      workspaceId,
      templateId,
      content: { body: '<p>Draft statement</p>', pdfOptions: { protection: flagsOnly } },
    });
    expect(unsaved.diagnostics).toEqual([]);
    opensWithOldPassword(unsaved.pdf, 'draft.pdf', 'Draft statement');
  }, 120_000);
});
