// A webhook URL's query string may carry the receiver's secret (`?token=…`): members who may
// only look (viewers, editors: no endpoints.manage) see scheme, host, port and path; owners and
// the operator see the whole URL. The audit trail keeps it out too: its records outlive the
// endpoint and its secret's rotation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminInProcess, type AdminInProcess, type SignedInMember } from '../harness/admin-in-process.ts';

let admin: AdminInProcess;
let workspaceId: string;
const members = {} as Record<'owner' | 'editor' | 'viewer', SignedInMember>;
const URL_WITH_SECRET = 'http://127.0.0.1:45999/hooks/docgen?token=s3cr3t-receiver-token#frag';

beforeAll(async () => {
  admin = await startAdminInProcess();
  workspaceId = await admin.workspace('hooks');
  for (const role of ['owner', 'editor', 'viewer'] as const) members[role] = await admin.member(workspaceId, role);
  await admin.clients.webhooks.createWebhookEndpoint(
    { workspaceId, url: URL_WITH_SECRET, events: ['generation.completed'] },
    members.owner.options,
  );
});

afterAll(async () => {
  await admin?.close();
});

const listedUrl = async (options: typeof admin.operator) =>
  (await admin.clients.webhooks.listWebhookEndpoints({ workspaceId }, options)).endpoints.map((e) => e.url);

describe('webhook endpoint URLs', () => {
  it('viewers and editors see them without the query string; owners and the operator whole', async () => {
    for (const role of ['viewer', 'editor'] as const)
      expect(await listedUrl(members[role].options), role).toEqual(['http://127.0.0.1:45999/hooks/docgen?…']);
    expect(await listedUrl(members.owner.options)).toEqual([URL_WITH_SECRET]);
    expect(await listedUrl(admin.operator)).toEqual([URL_WITH_SECRET]);
  });

  it('the audit trail records where, not the secret', async () => {
    const events = (await admin.clients.audit.listAuditEvents({ workspaceId, pageSize: 100 }, members.owner.options))
      .events;
    const created = events.find((e) => e.action === 'webhookEndpoints.create');
    expect(created?.detail).toBe('http://127.0.0.1:45999/hooks/docgen?…');
    expect(events.map((e) => e.detail).join('\n')).not.toContain('s3cr3t');
    // Nor in what tells it in words (the name recorded at the time, the summary).
    expect(created).toMatchObject({
      targetName: 'http://127.0.0.1:45999/hooks/docgen?…',
      summary: 'added the webhook endpoint http://127.0.0.1:45999/hooks/docgen?…',
    });
    expect(JSON.stringify(events.map((e) => [e.facts, e.targetName, e.summary]))).not.toContain('s3cr3t');
  });
});
