// A viewer cannot read a version's PDF passwords (issue 32): GetTemplateVersion and
// ListTemplateVersions answer them empty to members without the right to edit templates;
// editors, owners and the operator get them (they edit and republish the version).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminInProcess, type AdminInProcess, type SignedInMember } from '../harness/admin-in-process.ts';

let admin: AdminInProcess;
let workspaceId: string;
let templateId: string;
const members = {} as Record<'owner' | 'editor' | 'viewer', SignedInMember>;
const protection = {
  userPassword: 'reader-pw-1',
  ownerPassword: 'owner-pw-secret',
  allowPrinting: true,
  allowCopying: false,
  allowModifying: false,
};

beforeAll(async () => {
  admin = await startAdminInProcess();
  workspaceId = await admin.workspace('pdf-passwords');
  for (const role of ['owner', 'editor', 'viewer'] as const) members[role] = await admin.member(workspaceId, role);
  const created = await admin.clients.templates.createTemplate(
    { workspaceId, name: 'protected', content: { body: '<p>x</p>', pdfOptions: { protection } } },
    members.editor.options,
  );
  templateId = created.template!.id;
});

afterAll(async () => {
  await admin?.close();
});

const passwordsSeenBy = async (options: typeof admin.operator) => {
  const one = await admin.clients.templates.getTemplateVersion({ templateId, version: 1 }, options);
  const all = await admin.clients.templates.listTemplateVersions({ templateId }, options);
  return [one.version, ...all.versions].map((v) => {
    const p = v?.content?.pdfOptions?.protection;
    return [p?.userPassword, p?.ownerPassword, p?.allowPrinting];
  });
};

describe('PDF passwords in the admin API', () => {
  it('a viewer gets them empty (the other protection settings as they are)', async () => {
    expect(await passwordsSeenBy(members.viewer.options)).toEqual([
      ['', '', true],
      ['', '', true],
    ]);
  });

  it('editors, owners and the operator get them', async () => {
    for (const options of [members.editor.options, members.owner.options, admin.operator])
      expect(await passwordsSeenBy(options)).toEqual([
        ['reader-pw-1', 'owner-pw-secret', true],
        ['reader-pw-1', 'owner-pw-secret', true],
      ]);
  });
});
