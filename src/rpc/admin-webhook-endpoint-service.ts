// Connect handlers of docgen.admin.v1.WebhookEndpointService.
import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
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

  async listWebhookEndpoints(req: ListWebhookEndpointsRequest): Promise<ListWebhookEndpointsResponse> {
    const page = await this.admin.list(req.workspaceId, { pageSize: req.pageSize, pageToken: req.pageToken });
    return create(ListWebhookEndpointsResponseSchema, {
      endpoints: page.items.map(webhookEndpointToProto),
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
