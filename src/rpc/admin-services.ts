// Registers the docgen.admin.v1 services on a router. The composition root calls this for
// the ADMIN listener only; the public listener never gets these routes.
import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import { createAdminPlane, type AdminPlane, type AdminPlaneDeps } from '../admin/admin-plane.ts';
import { ApiKeyService } from '../gen/docgen/admin/v1/api_key_pb.js';
import { AssetService } from '../gen/docgen/admin/v1/asset_pb.js';
import { DeliveryService } from '../gen/docgen/admin/v1/delivery_pb.js';
import { GenerationAdminService } from '../gen/docgen/admin/v1/generation_pb.js';
import { TemplateService } from '../gen/docgen/admin/v1/template_pb.js';
import { WebhookEndpointService } from '../gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceService } from '../gen/docgen/admin/v1/workspace_pb.js';
import { AuditService, MemberService, SessionService, UserService } from '../gen/docgen/admin/v1/identity_pb.js';
import { createIdentity, type Identity, type IdentityRepositories } from '../identity/identity.ts';
import type { SignInLimits } from '../identity/sign-in-limiter.ts';
import type { RateLimitsRepository } from '../store/rate-limits-repository.ts';
import { adminAccessInterceptor } from './admin-access.ts';
import {
  AuditServiceHandler,
  MemberServiceHandler,
  SessionServiceHandler,
  UserServiceHandler,
} from './admin-identity-services.ts';
import { ApiKeyServiceHandler } from './admin-api-key-service.ts';
import { AssetServiceHandler } from './admin-asset-service.ts';
import { DeliveryServiceHandler } from './admin-delivery-service.ts';
import { GenerationAdminServiceHandler } from './admin-generation-service.ts';
import { TemplateServiceHandler } from './admin-template-service.ts';
import { WebhookEndpointServiceHandler } from './admin-webhook-endpoint-service.ts';
import { WorkspaceServiceHandler } from './admin-workspace-service.ts';
import { mapErrors } from './connect-errors.ts';

export interface AdminServicesDeps extends AdminPlaneDeps {
  /** config.adminToken; empty refuses every call. */
  adminToken: string;
  /** Told about unexpected errors (answered as INTERNAL without details): log them. */
  onInternal?: ((cause: unknown) => void) | undefined;
  /**
   * Extra interceptors (logging, metrics), outside the token check so they see refusals too.
   * Per-service options replace router-level ones in connect-es, hence this parameter.
   */
  interceptors?: Interceptor[] | undefined;
  /** People, sessions and the audit trail (src/identity). */
  identity: {
    repositories: IdentityRepositories;
    /** The sign-in limiter's buckets live with the API-key rate limits. */
    rateLimits: RateLimitsRepository;
    /** DOCGEN_PORTAL_BASE_URL, or the admin listener's own address. */
    portalBaseUrl: () => string;
    signInLimits?: SignInLimits | undefined;
    onAuditError?: ((err: unknown) => void) | undefined;
  };
}

/**
 * Registers every admin service behind the access interceptor (operator token or session,
 * checked against src/identity/admin-policy.ts); returns the domain services.
 */
export function registerAdminServices(
  router: ConnectRouter,
  deps: AdminServicesDeps,
): AdminPlane & { identity: Identity } {
  const plane = createAdminPlane(deps);
  const { repositories } = deps;
  const identity = createIdentity({
    repositories: deps.identity.repositories,
    workspaces: repositories.workspaces,
    rateLimits: deps.identity.rateLimits,
    portalBaseUrl: deps.identity.portalBaseUrl,
    signInLimits: deps.identity.signInLimits,
    lookups: {
      template: (id) => repositories.templates.get(id),
      apiKey: (id) => repositories.apiKeys.get(id),
      webhookEndpoint: (id) => repositories.webhookEndpoints.get(id),
      delivery: (id) => repositories.deliveries.get(id),
      generation: (id) => repositories.generations.get(id),
      asset: async (id) => (deps.assets ? deps.assets.repository.get(id) : null),
    },
  });
  const access = adminAccessInterceptor({
    adminToken: deps.adminToken,
    identity,
    onAuditError: deps.identity.onAuditError,
    onInternal: deps.onInternal,
  });
  const options = { interceptors: [...(deps.interceptors ?? []), access] };
  const onInternal = deps.onInternal;
  router.service(WorkspaceService, mapErrors(new WorkspaceServiceHandler(plane.workspaces), onInternal), options);
  router.service(ApiKeyService, mapErrors(new ApiKeyServiceHandler(plane.apiKeys), onInternal), options);
  router.service(TemplateService, mapErrors(new TemplateServiceHandler(plane.templates), onInternal), options);
  router.service(
    WebhookEndpointService,
    mapErrors(new WebhookEndpointServiceHandler(plane.webhookEndpoints, plane.webhookTestEvents), onInternal),
    options,
  );
  router.service(DeliveryService, mapErrors(new DeliveryServiceHandler(plane.deliveries), onInternal), options);
  if (plane.assets) router.service(AssetService, mapErrors(new AssetServiceHandler(plane.assets), onInternal), options);
  router.service(
    GenerationAdminService,
    mapErrors(new GenerationAdminServiceHandler(plane.generations), onInternal),
    options,
  );
  router.service(SessionService, mapErrors(new SessionServiceHandler(identity), onInternal), options);
  router.service(UserService, mapErrors(new UserServiceHandler(identity), onInternal), options);
  router.service(MemberService, mapErrors(new MemberServiceHandler(identity), onInternal), options);
  router.service(AuditService, mapErrors(new AuditServiceHandler(identity), onInternal), options);
  return { ...plane, identity };
}
