// Composes the admin listener's services from repositories and collaborators: the admin plane
// (src/admin), identity (src/identity), authentication of the operator token and portal
// sessions (src/auth), and access control with its audit trail (src/access). Transport-free:
// the Connect routes over these are src/rpc/admin-routes.ts.
import { AdminGate } from '../access/admin-gate.ts';
import { AuditLog } from '../access/audit-log.ts';
import { Authorizer } from '../access/authorizer.ts';
import { auditApiKeyName } from '../domain/audit-words.ts';
import { createAdminPlane, type AdminPlaneDeps } from '../admin/admin-plane.ts';
import { AdminAuthentication, SessionAuthenticator } from '../auth/authentication.ts';
import { createIdentity, type IdentityRepositories } from '../identity/identity.ts';
import type { SignInLimits } from '../identity/sign-in-limiter.ts';
import { legacyAuditActions } from '../rpc/admin-rpc-map.ts';
import type { AdminServices } from '../rpc/admin-routes.ts';
import { PageTokens } from '../store/pagination.ts';
import type { RateLimitsRepository } from '../store/rate-limits-repository.ts';
import { shownWebhookUrl } from '../webhooks/address-guard.ts';

export interface AdminServicesDeps extends Omit<AdminPlaneDeps, 'pageTokens'> {
  /** config.adminToken; empty accepts no token. */
  adminToken: string;
  /** People, sessions and the audit trail. */
  identity: {
    repositories: IdentityRepositories;
    /** The sign-in limiter's buckets live with the API-key rate limits. */
    rateLimits: RateLimitsRepository;
    /** DOCGEN_PORTAL_BASE_URL, or the admin listener's own address. */
    portalBaseUrl: () => string;
    signInLimits?: Partial<SignInLimits> | undefined;
    onAuditError?: ((err: unknown) => void) | undefined;
  };
}

export function createAdminServices(deps: AdminServicesDeps): AdminServices {
  // One signing key for every list's page tokens (src/store/pagination.ts).
  const pageTokens = new PageTokens(deps.secretKey);
  const plane = createAdminPlane({ ...deps, users: deps.users ?? deps.identity.repositories.users, pageTokens });
  const { repositories } = deps;
  const people = deps.identity.repositories;
  const identity = createIdentity({
    repositories: people,
    workspaces: repositories.workspaces,
    rateLimits: deps.identity.rateLimits,
    portalBaseUrl: deps.identity.portalBaseUrl,
    signInLimits: deps.identity.signInLimits,
    pageTokens,
  });
  const audit = new AuditLog({
    events: people.auditEvents,
    workspaces: repositories.workspaces,
    users: people.users,
    // Names of objects an event did not record one for; the endpoint's URL without its query.
    currentName: async (kind, id) => {
      if (kind === 'template') return (await repositories.templates.get(id))?.name;
      if (kind === 'webhookEndpoint') {
        const endpoint = await repositories.webhookEndpoints.get(id);
        return endpoint ? shownWebhookUrl(endpoint.url) : undefined;
      }
      if (kind === 'apiKey') {
        const key = await repositories.apiKeys.get(id);
        return key ? auditApiKeyName(key.name, key.prefix) : undefined;
      }
      return undefined;
    },
    pageTokens,
    legacyActions: legacyAuditActions(),
  });
  const gate = new AdminGate({
    authentication: new AdminAuthentication({
      adminToken: deps.adminToken,
      sessions: new SessionAuthenticator(people),
      portalBaseUrl: deps.identity.portalBaseUrl,
    }),
    // The workspace of each kind of object a call may name.
    authorizer: new Authorizer({
      template: (id) => repositories.templates.get(id),
      apiKey: (id) => repositories.apiKeys.get(id),
      webhookEndpoint: (id) => repositories.webhookEndpoints.get(id),
      delivery: (id) => repositories.deliveries.get(id),
      generation: (id) => repositories.generations.get(id),
      asset: async (id) => (deps.assets ? deps.assets.repository.get(id) : null),
      certificate: (id) => repositories.certificates.get(id),
    }),
    audit,
    onAuditError: deps.identity.onAuditError,
  });
  return { plane, identity, audit, gate };
}
