// PDF passwords are write-only (issue 32): every answer carries them empty, for every role
// (viewers, editors, owners, the operator), with userPasswordSet/ownerPasswordSet saying which
// are set. A new version sent with the flags and empty passwords keeps the previous version's.
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseId } from '../../src/domain/ids.ts';
import { inProcessCli } from '../harness/admin-cli.ts';
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
  // The create answer itself carries no password.
  expect(created.version?.content?.pdfOptions?.protection).toMatchObject({
    userPassword: '',
    ownerPassword: '',
    userPasswordSet: true,
    ownerPasswordSet: true,
  });
});

afterAll(async () => {
  await admin?.close();
});

const protectionSeenBy = async (options: typeof admin.operator, version = 1) => {
  const one = await admin.clients.templates.getTemplateVersion({ templateId, version }, options);
  const all = await admin.clients.templates.listTemplateVersions({ templateId }, options);
  return [one.version, ...all.versions.filter((v) => v.version === version)].map((v) => {
    const p = v?.content?.pdfOptions?.protection;
    return [p?.userPassword, p?.ownerPassword, p?.userPasswordSet, p?.ownerPasswordSet, p?.allowPrinting];
  });
};

/** The stored (opened) protection of a version, as the renderer gets it. */
const stored = async (version: number) =>
  (await admin.repositories.templates.getVersion(parseId('template', templateId)!, version))?.content.pdfOptions
    .protection;

describe('PDF passwords in the admin API', () => {
  it('no role reads them, owners and the operator included; the flags say they are set', async () => {
    for (const options of [members.viewer.options, members.editor.options, members.owner.options, admin.operator])
      expect(await protectionSeenBy(options)).toEqual([
        ['', '', true, true, true],
        ['', '', true, true, true],
      ]);
  });

  it('a version sent with the flags and empty passwords keeps the earlier passwords', async () => {
    const kept = { ...protection, userPassword: '', ownerPassword: '', userPasswordSet: true, ownerPasswordSet: true };
    const answer = await admin.clients.templates.createTemplateVersion(
      { templateId, content: { body: '<p>y</p>', pdfOptions: { protection: kept } } },
      members.owner.options,
    );
    expect(answer.version?.version).toBe(2);
    expect(answer.version?.content?.pdfOptions?.protection?.ownerPassword).toBe('');
    expect(await stored(2)).toMatchObject({ userPassword: 'reader-pw-1', ownerPassword: 'owner-pw-secret' });
    expect(await protectionSeenBy(members.owner.options, 2)).toEqual([
      ['', '', true, true, true],
      ['', '', true, true, true],
    ]);
  });

  it('an empty password with its flag false is none; a typed one replaces the earlier', async () => {
    const changed = { ...protection, userPassword: '', ownerPassword: 'new-owner-pw', ownerPasswordSet: true };
    await admin.clients.templates.createTemplateVersion(
      { templateId, content: { body: '<p>z</p>', pdfOptions: { protection: changed } } },
      members.editor.options,
    );
    expect(await stored(3)).toMatchObject({ userPassword: '', ownerPassword: 'new-owner-pw' });
    expect(await protectionSeenBy(members.editor.options, 3)).toEqual([
      ['', '', false, true, true],
      ['', '', false, true, true],
    ]);
  });

  it('a flag with no earlier password to keep is refused, naming the field', async () => {
    const flagsOnly = { ...protection, userPassword: '', ownerPassword: '', ownerPasswordSet: true };
    const err = await admin.clients.templates
      .createTemplate(
        { workspaceId, name: 'fresh', content: { body: '<p>x</p>', pdfOptions: { protection: flagsOnly } } },
        members.editor.options,
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((err as ConnectError).rawMessage).toMatch(
      /pdfOptions\.protection\.ownerPassword: ownerPasswordSet asks to keep/,
    );
  });

  it("checking unsaved content keeps the edited template's passwords (and refuses without one)", async () => {
    const flagsOnly = { ...protection, userPassword: '', ownerPassword: '', ownerPasswordSet: true };
    const content = { body: '<p>x</p>', pdfOptions: { protection: flagsOnly } };
    const edited = await admin.clients.templates.checkTemplateContent(
      { workspaceId, templateId, content },
      members.editor.options,
    );
    expect(edited.diagnostics).toEqual([]);
    const fresh = await admin.clients.templates.checkTemplateContent({ workspaceId, content }, members.editor.options);
    expect(fresh.diagnostics.map((d) => d.message)).toEqual([
      expect.stringMatching(/^pdfOptions\.protection\.ownerPassword: ownerPasswordSet asks to keep/),
    ]);
  });

  it('the CLI prints whether each is set, never a password', async () => {
    const { cli } = inProcessCli({ clients: () => admin.operatorClients });
    const shown = await cli('template', 'version', 'get', templateId, '--version', '3');
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toMatch(/protection: +open password not set, owner password set/);
    const first = await cli('template', 'version', 'get', templateId, '--version', '1', '--json');
    expect(first.stdout).not.toContain('owner-pw-secret');
    expect(JSON.parse(first.stdout).content.pdfOptions.protection).toMatchObject({
      userPassword: '',
      ownerPassword: '',
      userPasswordSet: true,
      ownerPasswordSet: true,
    });
  });
});
