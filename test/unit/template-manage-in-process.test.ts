// Template management through the admin services in process (createRouterTransport, the real
// routes, gate and handlers on the MongoDB stand-in), issue #31 items 8 and 9: each version's
// author and note, rename, unarchive (owners only), and delete (a never-used template goes,
// a used one is archived), including a generation racing the delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError } from '@connectrpc/connect';
import { parseId } from '../../src/domain/ids.ts';
import {
  DeleteTemplateOutcome,
  TemplateStatus,
  TemplateVersionAuthorKind,
  TemplateVersionView,
} from '../../src/gen/docgen/admin/v1/template_pb.js';
import { startAdminInProcess, type AdminInProcess, type SignedInMember } from '../harness/admin-in-process.ts';
import { rejection } from '../harness/in-process.ts';
import { inProcessCli } from '../harness/admin-cli.ts';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let admin: AdminInProcess;
let ws: string;
const members: Record<'owner' | 'editor' | 'viewer', SignedInMember> = {} as never;

beforeAll(async () => {
  admin = await startAdminInProcess();
  ws = await admin.workspace('Manage');
  for (const role of ['owner', 'editor', 'viewer'] as const)
    members[role] = await admin.member(ws, role, `${role}-manage@example.com`);
});

afterAll(async () => {
  await admin?.close();
});

const connectError = (promise: Promise<unknown>) => rejection(promise, ConnectError);
const content = { body: '<p>{{ name }}</p>', variables: [{ name: 'name' }] };

async function newTemplate(name = 'Invoice', publish = true): Promise<string> {
  const res = await admin.clients.templates.createTemplate({ workspaceId: ws, name, content, publish }, admin.operator);
  return res.template!.id;
}

/** A generation of the template through the public API's service, live or test mode. */
function generate(templateId: string, test = false) {
  const workspace = parseId('workspace', ws)!;
  return admin.stack.generations.create(
    { ...admin.stack.principal(workspace), test },
    { templateId, variables: { name: 'x' }, format: 'pdf' },
  );
}

describe('version author and note', () => {
  it('records the signed-in member or the operator, and the note, in every answer and the history', async () => {
    const editor = members.editor;
    const created = await admin.clients.templates.createTemplate(
      { workspaceId: ws, name: 'Authored', content, note: '  First draft  ' },
      editor.options,
    );
    const id = created.template!.id;
    expect(created.version!.author).toMatchObject({
      kind: TemplateVersionAuthorKind.MEMBER,
      userId: editor.userId,
      email: editor.email,
    });
    expect(created.version!.note).toBe('First draft');
    const v2 = await admin.clients.templates.createTemplateVersion(
      { templateId: id, content, note: 'Totals in bold' },
      admin.operator,
    );
    expect(v2.version!.author?.kind).toBe(TemplateVersionAuthorKind.OPERATOR);
    await admin.clients.templates.createTemplateVersion({ templateId: id, content }, members.owner.options);
    for (const view of [TemplateVersionView.BASIC, TemplateVersionView.FULL]) {
      const list = await admin.clients.templates.listTemplateVersions({ templateId: id, view }, members.viewer.options);
      expect(list.versions.map((v) => [v.version, v.author?.kind, v.author?.email ?? '', v.note])).toEqual([
        [1, TemplateVersionAuthorKind.MEMBER, editor.email, 'First draft'],
        [2, TemplateVersionAuthorKind.OPERATOR, '', 'Totals in bold'],
        [3, TemplateVersionAuthorKind.MEMBER, members.owner.email, ''],
      ]);
    }
    const got = await admin.clients.templates.getTemplateVersion({ templateId: id, version: 2 }, admin.operator);
    expect(got.version!.note).toBe('Totals in bold');
  });

  it('refuses a note over 500 characters, naming the field, and stores nothing', async () => {
    const id = await newTemplate('Noted');
    const err = await connectError(
      admin.clients.templates.createTemplateVersion({ templateId: id, content, note: 'x'.repeat(501) }, admin.operator),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/note: must be at most 500 characters \(it has 501\)/);
    const template = await admin.clients.templates.getTemplate({ id }, admin.operator);
    expect(template.template!.latestVersion).toBe(1);
    const onCreate = await connectError(
      admin.clients.templates.createTemplate(
        { workspaceId: ws, name: 'Too long', content, note: 'y'.repeat(600) },
        admin.operator,
      ),
    );
    expect(onCreate.code).toBe(Code.InvalidArgument);
    const list = await admin.clients.templates.listTemplates({ workspaceId: ws, pageSize: 100 }, admin.operator);
    expect(list.templates.some((t) => t.name === 'Too long')).toBe(false);
  });
});

describe('rename', () => {
  it('renames with the rules of create, audited; viewers are refused', async () => {
    const id = await newTemplate('Old name');
    const res = await admin.clients.templates.renameTemplate({ id, name: '  New name ' }, members.editor.options);
    expect(res.template!.name).toBe('New name');
    expect((await admin.clients.templates.getTemplate({ id }, admin.operator)).template!.name).toBe('New name');
    const empty = await connectError(admin.clients.templates.renameTemplate({ id, name: '  ' }, admin.operator));
    expect(empty.code).toBe(Code.InvalidArgument);
    expect(empty.rawMessage).toMatch(/name: is required/);
    const long = await connectError(
      admin.clients.templates.renameTemplate({ id, name: 'n'.repeat(201) }, admin.operator),
    );
    expect(long.code).toBe(Code.InvalidArgument);
    const viewer = await connectError(
      admin.clients.templates.renameTemplate({ id, name: 'V' }, members.viewer.options),
    );
    expect(viewer.code).toBe(Code.PermissionDenied);
    const events = (await admin.clients.audit.listAuditEvents({ workspaceId: ws, pageSize: 100 }, admin.operator))
      .events;
    expect(events.filter((e) => e.targetId === id && e.action === 'templates.rename').map((e) => e.detail)).toEqual([
      'to "New name"',
    ]);
    // New generations carry the new name.
    const generation = await generate(id);
    expect(generation.templateId).toBe(id);
  });
});

describe('unarchive', () => {
  it('owners and the operator unarchive; editors and viewers are refused', async () => {
    const id = await newTemplate('Comes back');
    await admin.clients.templates.archiveTemplate({ id }, members.editor.options);
    for (const who of ['editor', 'viewer'] as const) {
      const err = await connectError(admin.clients.templates.unarchiveTemplate({ id }, members[who].options));
      expect(err.code, who).toBe(Code.PermissionDenied);
    }
    const res = await admin.clients.templates.unarchiveTemplate({ id }, members.owner.options);
    expect(res.template!.status).toBe(TemplateStatus.ACTIVE);
    // Active again: it takes versions.
    await admin.clients.templates.createTemplateVersion({ templateId: id, content }, members.editor.options);
    await admin.clients.templates.archiveTemplate({ id }, admin.operator);
    expect((await admin.clients.templates.unarchiveTemplate({ id }, admin.operator)).template!.status).toBe(
      TemplateStatus.ACTIVE,
    );
  });
});

describe('delete', () => {
  it('deletes a never-used template with its versions (active or archived)', async () => {
    const id = await newTemplate('Never used');
    await admin.clients.templates.createTemplateVersion({ templateId: id, content }, admin.operator);
    const res = await admin.clients.templates.deleteTemplate({ id }, members.editor.options);
    expect(res.outcome).toBe(DeleteTemplateOutcome.DELETED);
    expect(res.template).toBeUndefined();
    expect((await connectError(admin.clients.templates.getTemplate({ id }, admin.operator))).code).toBe(Code.NotFound);
    const versions = await admin.stack.repositories.templates.listVersions(parseId('template', id)!);
    expect(versions).toEqual([]);
    const again = await connectError(admin.clients.templates.deleteTemplate({ id }, admin.operator));
    expect(again.code).toBe(Code.NotFound);
    // A generation naming it now is as for an unknown template: no template id kept.
    const late = await generate(id);
    const row = await admin.stack.repositories.generations.get(parseId('generation', late.id)!);
    expect(row!.templateId).toBeNull();

    const archivedFirst = await newTemplate('Archived, never used');
    await admin.clients.templates.archiveTemplate({ id: archivedFirst }, admin.operator);
    const gone = await admin.clients.templates.deleteTemplate({ id: archivedFirst }, admin.operator);
    expect(gone.outcome).toBe(DeleteTemplateOutcome.DELETED);
  });

  it('archives a template used in live or in test mode instead, saying how many generations it has', async () => {
    const live = await newTemplate('Used live');
    for (let i = 0; i < 3; i++) await generate(live);
    const res = await admin.clients.templates.deleteTemplate({ id: live }, members.editor.options);
    expect(res.outcome).toBe(DeleteTemplateOutcome.ARCHIVED);
    expect(res.template!.status).toBe(TemplateStatus.ARCHIVED);
    expect(res.generationCount).toBe(3n);
    expect((await admin.clients.templates.getTemplate({ id: live }, admin.operator)).template!.status).toBe(
      TemplateStatus.ARCHIVED,
    );
    const test = await newTemplate('Used in test mode');
    await generate(test, true);
    const testRes = await admin.clients.templates.deleteTemplate({ id: test }, admin.operator);
    expect([testRes.outcome, testRes.generationCount]).toEqual([DeleteTemplateOutcome.ARCHIVED, 1n]);
    const events = (await admin.clients.audit.listAuditEvents({ workspaceId: ws, pageSize: 100 }, admin.operator))
      .events;
    expect(events.find((e) => e.targetId === live && e.action === 'templates.delete')?.detail).toBe(
      'archived instead: used by generations',
    );
  });

  it('a template whose generations were stored before usage was recorded is archived too', async () => {
    const id = await newTemplate('Used long ago');
    await generate(id);
    // As stored before #31: the template row without usedAt.
    const db = admin.stack.repositories.templates as unknown as {
      templates: { updateOne: (...a: unknown[]) => Promise<unknown> };
    };
    await db.templates.updateOne({ _id: parseId('template', id)! }, { $unset: { usedAt: '' } });
    const res = await admin.clients.templates.deleteTemplate({ id }, admin.operator);
    expect([res.outcome, res.generationCount]).toEqual([DeleteTemplateOutcome.ARCHIVED, 1n]);
  });

  it('a generation racing the delete either keeps the template (archived) or names no template', async () => {
    for (let round = 0; round < 8; round++) {
      const id = await newTemplate(`Race ${round}`);
      const [deleted, generation] = await Promise.all([
        admin.clients.templates.deleteTemplate({ id }, admin.operator),
        generate(id),
      ]);
      const row = await admin.stack.repositories.generations.get(parseId('generation', generation.id)!);
      if (deleted.outcome === DeleteTemplateOutcome.DELETED) {
        // The generation fails as for an unknown template, and names none.
        expect(row!.templateId).toBeNull();
        expect((await connectError(admin.clients.templates.getTemplate({ id }, admin.operator))).code).toBe(
          Code.NotFound,
        );
      } else {
        expect(deleted.outcome).toBe(DeleteTemplateOutcome.ARCHIVED);
        expect(row!.templateId?.toHexString()).toBe(parseId('template', id)!.toHexString());
      }
    }
  });

  it('each interleaving of the handshake: marked deleting first, or marked used first', async () => {
    const templates = admin.stack.repositories.templates;
    // The delete marks first (and is cut off there): generations and versions treat the
    // template as being deleted, and calling DeleteTemplate again finishes the delete.
    const first = await newTemplate('Delete wins');
    const firstId = parseId('template', first)!;
    expect(await templates.beginDelete(firstId)).not.toBeNull();
    expect(await templates.markUsed(firstId)).toBe(false);
    const refused = await generate(first);
    expect((await admin.stack.repositories.generations.get(parseId('generation', refused.id)!))!.templateId).toBeNull();
    const addVersion = await connectError(
      admin.clients.templates.createTemplateVersion({ templateId: first, content }, admin.operator),
    );
    expect([addVersion.code, addVersion.rawMessage]).toEqual([
      Code.FailedPrecondition,
      `Template ${first} is being deleted; it takes no new versions`,
    ]);
    expect((await admin.clients.templates.deleteTemplate({ id: first }, admin.operator)).outcome).toBe(
      DeleteTemplateOutcome.DELETED,
    );

    // A generation marks first: the delete cannot mark, and archives (no generation stored yet).
    const second = await newTemplate('Generation wins');
    const secondId = parseId('template', second)!;
    expect(await templates.markUsed(secondId)).toBe(true);
    expect(await templates.beginDelete(secondId)).toBeNull();
    const res = await admin.clients.templates.deleteTemplate({ id: second }, admin.operator);
    expect([res.outcome, res.generationCount]).toEqual([DeleteTemplateOutcome.ARCHIVED, 0n]);
  });

  it('a batch counts as use; one naming a deleted template is refused, naming the item', async () => {
    const workspace = parseId('workspace', ws)!;
    const principal = admin.stack.principal(workspace);
    const batched = await newTemplate('Batched');
    await admin.stack.batches.create(principal, {
      items: [{ templateId: batched, variables: { name: 'a' }, format: 'pdf' }],
      merge: false,
      itemEvents: true,
    });
    const kept = await admin.clients.templates.deleteTemplate({ id: batched }, admin.operator);
    expect([kept.outcome, kept.generationCount]).toEqual([DeleteTemplateOutcome.ARCHIVED, 1n]);

    const gone = await newTemplate('Gone before the batch');
    await admin.clients.templates.deleteTemplate({ id: gone }, admin.operator);
    const refused = await rejection(
      admin.stack.batches.create(principal, {
        items: [{ templateId: gone, variables: {}, format: 'pdf' }],
        merge: false,
        itemEvents: true,
      }),
      Error,
    );
    expect(refused.message + JSON.stringify((refused as { details?: unknown }).details)).toContain(
      'items[0].templateId',
    );
  });

  it('viewers may not delete', async () => {
    const id = await newTemplate('Kept');
    const err = await connectError(admin.clients.templates.deleteTemplate({ id }, members.viewer.options));
    expect(err.code).toBe(Code.PermissionDenied);
    expect(admin.internal).toEqual([]);
  });
});

describe('docgen admin template (CLI, with the operator token)', () => {
  it('--note, the author in version list, rename, unarchive, delete', async () => {
    const { cli, json } = inProcessCli({ clients: () => admin.operatorClients });
    const body = join(await mkdtemp(join(tmpdir(), 'docgen-manage-')), 'body.liquid');
    await writeFile(body, '<p>Hi</p>');
    const id = (
      await json(
        'template',
        'create',
        '--workspace',
        ws,
        '--name',
        'From CLI',
        '--file',
        body,
        '--note',
        'v1 by script',
      )
    ).id as string;
    await json('template', 'version', 'add', id, '--file', body, '--note', 'second');
    const list = await json('template', 'version', 'list', id);
    expect((list.versions as Array<Record<string, unknown>>).map((v) => [v.version, v.author, v.note])).toEqual([
      [1, { kind: 'operator' }, 'v1 by script'],
      [2, { kind: 'operator' }, 'second'],
    ]);
    const table = await cli('template', 'version', 'list', id);
    expect(table.stdout).toMatch(/AUTHOR\s+NOTE/);
    expect(table.stdout).toMatch(/operator \(automation\)\s+second/);
    const tooLong = await cli('template', 'version', 'add', id, '--file', body, '--note', 'z'.repeat(501));
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.stderr).toMatch(/--note must be at most 500 characters \(it has 501\)/);

    expect((await json('template', 'rename', id, '--name', 'Renamed by CLI')).name).toBe('Renamed by CLI');
    await json('template', 'archive', id);
    expect((await json('template', 'unarchive', id)).status).toBe('ACTIVE');
    expect(await json('template', 'delete', id)).toEqual({ id, outcome: 'deleted' });

    const used = await newTemplate('Used by CLI');
    await generate(used);
    const archived = await cli('template', 'delete', used);
    expect(archived.code).toBe(0);
    expect(archived.stdout).toContain('Used by CLI has 1 generation, so it was archived instead of deleted.');
  });
});
