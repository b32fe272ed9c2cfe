// The rule that tells an audit event in words (src/domain/audit-words.ts): what the portal's
// audit log, `docgen admin audit list` and ListAuditEvents' `summary` say. Events with facts
// read as sentences; older events without them degrade to their detail and the target's id,
// never to an RPC's or an operation's name.
import { describe, expect, it } from 'vitest';
import { ADMIN_OPERATIONS } from '../../src/access/admin-operations.ts';
import {
  AUDIT_ACTIONS,
  auditActionOf,
  auditActorInWords,
  auditEventInWords,
  type AuditEventToTell,
} from '../../src/domain/audit-words.ts';
import { legacyAuditActions } from '../../src/rpc/admin-rpc-map.ts';

const TPL = 'tpl_6b015ddab829bbb049865179';
const USR = 'usr_6b1c0a2fb829bbb04986517f';
const KEY = 'key_6b1c0a2fb829bbb049865100';

const tell = (e: Partial<AuditEventToTell> & { action: string }) =>
  auditEventInWords({ targetId: '', detail: '', facts: {}, targetName: '', ...e });

describe('an audit event in words', () => {
  it('publishing: the version and the template name at the time, the template as the link', () => {
    const words = tell({
      action: 'templates.publish',
      targetId: TPL,
      facts: { version: '3', templateName: 'Invoice' },
      targetName: 'Invoice',
    });
    expect(words.text).toBe('published version 3 of Invoice');
    expect(words.parts).toEqual(['published version 3 of ', { text: 'Invoice', targetId: TPL, kind: 'template' }]);
  });

  it('says the other actions as sentences', () => {
    expect(
      tell({ action: 'members.invite', targetId: USR, facts: { email: 'bob@example.com', role: 'editor' } }).text,
    ).toBe('invited bob@example.com as editor');
    expect(
      tell({ action: 'members.updateRole', targetId: USR, targetName: 'bob@example.com', facts: { role: 'viewer' } })
        .text,
    ).toBe('changed the role of bob@example.com to viewer');
    expect(tell({ action: 'apiKeys.revoke', targetId: KEY, targetName: 'CI (svc_live_ab12…)' }).text).toBe(
      'revoked the API key CI (svc_live_ab12…)',
    );
    expect(
      tell({
        action: 'templates.addVersion',
        targetId: TPL,
        targetName: 'Invoice',
        facts: { version: '4', published: 'true' },
      }).text,
    ).toBe('saved version 4 of Invoice and published it');
    expect(tell({ action: 'members.revokePendingInvitation', facts: { email: 'x@y.example' } }).text).toBe(
      'withdrew the invitation of x@y.example',
    );
    expect(tell({ action: 'sessions.signIn', targetId: USR }).text).toBe('signed in');
  });

  it('older events without facts: the version and role from their detail, the id when no name is known', () => {
    expect(tell({ action: 'templates.publish', targetId: TPL, detail: 'version 2' }).text).toBe(
      `published version 2 of the template ${TPL}`,
    );
    expect(tell({ action: 'members.invite', targetId: USR, detail: 'ann@example.com as role owner' }).text).toBe(
      'invited ann@example.com as owner',
    );
    expect(tell({ action: 'members.updateRole', targetId: USR, detail: 'role editor' }).text).toBe(
      `changed the role of the account ${USR} to editor`,
    );
    expect(tell({ action: 'apiKeys.revoke', targetId: KEY }).text).toBe(`revoked the API key ${KEY}`);
  });

  it("older events' RPC names are told as their operation; an unknown action still reads as words", () => {
    const legacy = legacyAuditActions();
    expect(auditActionOf('TemplateService.PublishTemplateVersion', legacy)).toBe('templates.publish');
    expect(auditActionOf('MemberService.UpdateMemberRole', legacy)).toBe('members.updateRole');
    // Not in the map (an RPC since renamed): its method name in words, not the RPC.
    const unknown = tell({ action: 'TemplateService.RenameTemplate', targetId: TPL, targetName: 'Invoice' });
    expect(unknown.text).toBe('rename template Invoice');
    expect(tell({ action: 'templates.duplicate', targetId: TPL, targetName: 'Invoice' }).text).toBe(
      'duplicate (templates) Invoice',
    );
  });

  it('every audited operation has words and a label, and none reads as its name', () => {
    const changing = Object.entries(ADMIN_OPERATIONS)
      .filter(([, policy]) => policy.changes)
      .map(([name]) => name)
      .sort();
    // Every audited operation has its words (the rule may know some a parallel branch adds).
    expect(changing.filter((action) => !Object.hasOwn(AUDIT_ACTIONS, action))).toEqual([]);
    for (const action of Object.keys(AUDIT_ACTIONS)) {
      const text = tell({ action, targetId: TPL, targetName: 'Thing' }).text;
      expect(text, action).not.toContain(action);
      expect(text, action).not.toMatch(/Service|[a-z][A-Z]/);
    }
  });

  it('names the person who acted', () => {
    expect(auditActorInWords({ id: USR, email: 'ada@example.com', displayName: 'Ada Lovelace' })).toBe(
      'Ada Lovelace (ada@example.com)',
    );
    expect(auditActorInWords({ id: USR, email: 'ada@example.com', displayName: '' })).toBe('ada@example.com');
    expect(auditActorInWords({ id: 'operator', email: '', displayName: '' })).toBe('The operator (admin token)');
    expect(auditActorInWords({ id: USR, email: '', displayName: '' })).toBe(`account ${USR} (removed)`);
  });
});
