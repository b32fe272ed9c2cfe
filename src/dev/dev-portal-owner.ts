// `docgen dev`'s person: an owner of the sample workspace, so the portal can be tried at once.
// Each start issues a fresh single-use invitation link while the owner has no password yet
// (the previous link stops working); once the password is set, the banner says to sign in.
import type { App } from '../app/build-app.ts';
import { portalBaseUrl } from '../app/admin-listener.ts';
import { People } from '../identity/people.ts';
import { PageTokens } from '../store/pagination.ts';

export const DEV_OWNER_EMAIL = 'owner@example.com';

export interface DevOwner {
  email: string;
  userId: string;
  /** '' when the owner already set a password. */
  inviteUrl: string;
  portalUrl: string;
}

export async function devOwnerInvitation(app: App, workspaceId: string): Promise<DevOwner> {
  const { repositories } = app.infrastructure;
  const portalUrl = portalBaseUrl(app.config, app.adminPort);
  const people = new People({
    ...repositories.identity,
    workspaces: repositories.workspaces,
    portalBaseUrl: () => portalUrl,
    pageTokens: new PageTokens(app.config.secretKey),
  });
  const { member, invitation } = await people.invite({
    workspaceId,
    email: DEV_OWNER_EMAIL,
    role: 'owner',
    displayName: 'Dev owner',
  });
  return { email: DEV_OWNER_EMAIL, userId: member.user.id, inviteUrl: invitation.url, portalUrl };
}
