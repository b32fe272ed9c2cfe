// `docgen dev` lets its user into the portal: the dev workspace gets an owner,
// dev@docgen.local. Until that person has set a password, every start issues a fresh
// invitation link (the banner prints it); afterwards the banner says whom to sign in as.
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { MemberRole, UserService } from '../gen/docgen/admin/v1/identity_pb.js';

export const DEV_PORTAL_EMAIL = 'dev@docgen.local';

export interface DevPortalAccess {
  portalUrl: string;
  email: string;
  /** Set when the dev owner still has to choose a password. */
  inviteUrl: string | undefined;
}

export async function devPortalAccess(adminPort: number, adminToken: string, workspaceId: string): Promise<DevPortalAccess> {
  const portalUrl = `http://127.0.0.1:${adminPort}`;
  const transport = createConnectTransport({
    baseUrl: portalUrl,
    httpVersion: '1.1',
    interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${adminToken}`), next(req))],
  });
  const users = createClient(UserService, transport);
  const existing = (await users.listUsers({ workspaceId, pageSize: 100 })).users.find((u) => u.email === DEV_PORTAL_EMAIL);
  if (existing?.hasPassword) return { portalUrl, email: DEV_PORTAL_EMAIL, inviteUrl: undefined };
  const invited = await users.inviteUser({ workspaceId, email: DEV_PORTAL_EMAIL, role: MemberRole.OWNER, displayName: 'Dev Owner' });
  return { portalUrl, email: DEV_PORTAL_EMAIL, inviteUrl: invited.inviteUrl };
}
