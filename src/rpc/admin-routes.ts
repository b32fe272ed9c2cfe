// The docgen.admin.v1 routes: one handler class per service over the admin services, every
// call through the access interceptor. The admin listener registers them (src/app); the
// public listener never does.
import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import type { AdminGate } from '../access/admin-gate.ts';
import type { AuditLog } from '../access/audit-log.ts';
import type { AdminPlane } from '../admin/admin-plane.ts';
import { ApiKeyService } from '../gen/docgen/admin/v1/api_key_pb.js';
import { AssetService } from '../gen/docgen/admin/v1/asset_pb.js';
import { CertificateService } from '../gen/docgen/admin/v1/certificate_pb.js';
import { DeliveryService } from '../gen/docgen/admin/v1/delivery_pb.js';
import { GenerationAdminService } from '../gen/docgen/admin/v1/generation_pb.js';
import { AuditService, MemberService, SessionService, UserService } from '../gen/docgen/admin/v1/identity_pb.js';
import { TemplateService } from '../gen/docgen/admin/v1/template_pb.js';
import { WebhookEndpointService } from '../gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceStatsService } from '../gen/docgen/admin/v1/stats_pb.js';
import { WorkspaceService } from '../gen/docgen/admin/v1/workspace_pb.js';
import type { Identity } from '../identity/identity.ts';
import { adminAccessInterceptor } from './admin-access-interceptor.ts';
import { ApiKeyServiceHandler } from './admin-api-key-service.ts';
import { AssetServiceHandler } from './admin-asset-service.ts';
import { CertificateServiceHandler } from './admin-certificate-service.ts';
import { DeliveryServiceHandler } from './admin-delivery-service.ts';
import { GenerationAdminServiceHandler } from './admin-generation-service.ts';
import {
  AuditServiceHandler,
  MemberServiceHandler,
  SessionServiceHandler,
  UserServiceHandler,
} from './admin-identity-services.ts';
import { TemplateServiceHandler } from './admin-template-service.ts';
import { WebhookEndpointServiceHandler } from './admin-webhook-endpoint-service.ts';
import { WorkspaceServiceHandler } from './admin-workspace-service.ts';
import { WorkspaceStatsServiceHandler } from './admin-stats-service.ts';
import { mapErrors } from './connect-errors.ts';

/** What the admin routes serve (src/app/admin-services.ts builds it). */
export interface AdminServices {
  plane: AdminPlane;
  identity: Identity;
  audit: AuditLog;
  gate: AdminGate;
}

export interface AdminRoutesOptions {
  /** Told about unexpected errors (answered as INTERNAL without details): log them. */
  onInternal?: ((cause: unknown) => void) | undefined;
  /**
   * Extra interceptors (logging, metrics), outside the access check so they see refusals too.
   * Per-service options replace router-level ones in connect-es, hence this parameter.
   */
  interceptors?: Interceptor[] | undefined;
}

export function registerAdminRoutes(
  router: ConnectRouter,
  services: AdminServices,
  options: AdminRoutesOptions = {},
): void {
  const { plane, identity, audit, gate } = services;
  const { onInternal } = options;
  const serviceOptions = {
    interceptors: [...(options.interceptors ?? []), adminAccessInterceptor(gate, onInternal)],
  };
  router.service(
    WorkspaceService,
    mapErrors(new WorkspaceServiceHandler(plane.workspaces), onInternal),
    serviceOptions,
  );
  router.service(ApiKeyService, mapErrors(new ApiKeyServiceHandler(plane.apiKeys), onInternal), serviceOptions);
  router.service(TemplateService, mapErrors(new TemplateServiceHandler(plane.templates), onInternal), serviceOptions);
  router.service(
    WebhookEndpointService,
    mapErrors(new WebhookEndpointServiceHandler(plane.webhookEndpoints, plane.webhookTestEvents), onInternal),
    serviceOptions,
  );
  router.service(DeliveryService, mapErrors(new DeliveryServiceHandler(plane.deliveries), onInternal), serviceOptions);
  if (plane.assets)
    router.service(AssetService, mapErrors(new AssetServiceHandler(plane.assets), onInternal), serviceOptions);
  router.service(
    CertificateService,
    mapErrors(new CertificateServiceHandler(plane.certificates), onInternal),
    serviceOptions,
  );
  router.service(
    GenerationAdminService,
    mapErrors(new GenerationAdminServiceHandler(plane.generations), onInternal),
    serviceOptions,
  );
  router.service(
    WorkspaceStatsService,
    mapErrors(new WorkspaceStatsServiceHandler(plane.stats), onInternal),
    serviceOptions,
  );
  router.service(SessionService, mapErrors(new SessionServiceHandler(identity), onInternal), serviceOptions);
  router.service(UserService, mapErrors(new UserServiceHandler(identity), onInternal), serviceOptions);
  router.service(MemberService, mapErrors(new MemberServiceHandler(identity), onInternal), serviceOptions);
  router.service(AuditService, mapErrors(new AuditServiceHandler(audit), onInternal), serviceOptions);
}
