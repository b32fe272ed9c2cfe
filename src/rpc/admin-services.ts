// Registers the docgen.admin.v1 services on a router. The composition root calls this for
// the ADMIN listener only; the public listener never gets these routes.
import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import { createAdminPlane, type AdminPlane, type AdminPlaneDeps } from '../admin/admin-plane.ts';
import { ApiKeyService } from '../gen/docgen/admin/v1/api_key_pb.js';
import { AssetService } from '../gen/docgen/admin/v1/asset_pb.js';
import { DeliveryService } from '../gen/docgen/admin/v1/delivery_pb.js';
import { TemplateService } from '../gen/docgen/admin/v1/template_pb.js';
import { WebhookEndpointService } from '../gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceService } from '../gen/docgen/admin/v1/workspace_pb.js';
import { adminAuthInterceptor } from './admin-auth.ts';
import { ApiKeyServiceHandler } from './admin-api-key-service.ts';
import { AssetServiceHandler } from './admin-asset-service.ts';
import { DeliveryServiceHandler } from './admin-delivery-service.ts';
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
}

/** Registers the five admin services behind the admin token; returns the domain services. */
export function registerAdminServices(router: ConnectRouter, deps: AdminServicesDeps): AdminPlane {
  const plane = createAdminPlane(deps);
  const options = { interceptors: [...(deps.interceptors ?? []), adminAuthInterceptor(deps.adminToken)] };
  const onInternal = deps.onInternal;
  router.service(WorkspaceService, mapErrors(new WorkspaceServiceHandler(plane.workspaces), onInternal), options);
  router.service(ApiKeyService, mapErrors(new ApiKeyServiceHandler(plane.apiKeys), onInternal), options);
  router.service(TemplateService, mapErrors(new TemplateServiceHandler(plane.templates), onInternal), options);
  router.service(WebhookEndpointService, mapErrors(new WebhookEndpointServiceHandler(plane.webhookEndpoints), onInternal), options);
  router.service(DeliveryService, mapErrors(new DeliveryServiceHandler(plane.deliveries), onInternal), options);
  if (plane.assets) router.service(AssetService, mapErrors(new AssetServiceHandler(plane.assets), onInternal), options);
  return plane;
}
