// Connect handlers of docgen.admin.v1.WebhookEndpointService.
import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { callerHolds } from '../access/authorizer.ts';
import type { WebhookEndpointAdmin } from '../admin/webhook-endpoint-admin.ts';
import type { WebhookTestEvents } from '../admin/webhook-test-event.ts';
import {
  CreateWebhookEndpointResponseSchema,
  DeleteWebhookEndpointResponseSchema,
  ListWebhookEndpointsResponseSchema,
  RotateWebhookEndpointSecretResponseSchema,
  SendTestEventResponseSchema,
  type SendTestEventRequest,
  type SendTestEventResponse,
  type CreateWebhookEndpointRequest,
  type CreateWebhookEndpointResponse,
  type DeleteWebhookEndpointRequest,
  type DeleteWebhookEndpointResponse,
  type ListWebhookEndpointsRequest,
  type ListWebhookEndpointsResponse,
  type RotateWebhookEndpointSecretRequest,
  type RotateWebhookEndpointSecretResponse,
  type WebhookEndpointService,
} from '../gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { shownWebhookUrl } from '../webhooks/address-guard.ts';
import { callerKey } from './admin-access-interceptor.ts';
import { webhookEndpointToProto } from './admin-proto.ts';

export class WebhookEndpointServiceHandler implements ServiceImpl<typeof WebhookEndpointService> {
  private readonly admin: WebhookEndpointAdmin;
  private readonly testEvents: WebhookTestEvents;
  constructor(admin: WebhookEndpointAdmin, testEvents: WebhookTestEvents) {
    this.admin = admin;
    this.testEvents = testEvents;
  }

  async createWebhookEndpoint(req: CreateWebhookEndpointRequest): Promise<CreateWebhookEndpointResponse> {
    const { endpoint, secret } = await this.admin.create({
      workspaceId: req.workspaceId,
      url: req.url,
      events: req.events,
      description: req.description,
      testEvents: req.testEvents,
    });
    return create(CreateWebhookEndpointResponseSchema, { endpoint: webhookEndpointToProto(endpoint), secret });
  }

  async listWebhookEndpoints(
    req: ListWebhookEndpointsRequest,
    ctx: HandlerContext,
  ): Promise<ListWebhookEndpointsResponse> {
    const page = await this.admin.list(req.workspaceId, { pageSize: req.pageSize, pageToken: req.pageToken });
    // A URL's query string and user info may carry the receiver's secret: only those who
    // manage endpoints see them; the others see where deliveries go, not how they get in.
    const whole = callerHolds(ctx.values.get(callerKey), req.workspaceId, 'endpoints.manage');
    return create(ListWebhookEndpointsResponseSchema, {
      endpoints: page.items.map((e) => webhookEndpointToProto(whole ? e : { ...e, url: shownWebhookUrl(e.url) })),
      nextPageToken: page.nextPageToken,
    });
  }

  async deleteWebhookEndpoint(req: DeleteWebhookEndpointRequest): Promise<DeleteWebhookEndpointResponse> {
    await this.admin.delete(req.id);
    return create(DeleteWebhookEndpointResponseSchema, {});
  }

  async rotateWebhookEndpointSecret(
    req: RotateWebhookEndpointSecretRequest,
  ): Promise<RotateWebhookEndpointSecretResponse> {
    const { endpoint, secret } = await this.admin.rotate(req.id);
    return create(RotateWebhookEndpointSecretResponseSchema, { endpoint: webhookEndpointToProto(endpoint), secret });
  }

  async sendTestEvent(req: SendTestEventRequest): Promise<SendTestEventResponse> {
    return create(SendTestEventResponseSchema, await this.testEvents.send(req.id));
  }
}
