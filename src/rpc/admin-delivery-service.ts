// Connect handlers of docgen.admin.v1.DeliveryService.
import { create } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import type { DeliveryAdmin } from '../admin/delivery-admin.ts';
import type { DeliveryStatus as DeliveryDocStatus } from '../store/documents.ts';
import {
  DeliveryStatus,
  GetDeliveryResponseSchema,
  ListDeliveriesResponseSchema,
  RedeliverDeliveryResponseSchema,
  type DeliveryService,
  type GetDeliveryRequest,
  type GetDeliveryResponse,
  type ListDeliveriesRequest,
  type ListDeliveriesResponse,
  type RedeliverDeliveryRequest,
  type RedeliverDeliveryResponse,
} from '../gen/docgen/admin/v1/delivery_pb.js';
import { deliveryToProto } from './admin-proto.ts';

const DELIVERY_STATUS_FROM_PROTO: Record<DeliveryStatus, DeliveryDocStatus | undefined> = {
  [DeliveryStatus.UNSPECIFIED]: undefined,
  [DeliveryStatus.PENDING]: 'PENDING',
  [DeliveryStatus.SUCCEEDED]: 'SUCCEEDED',
  [DeliveryStatus.DROPPED]: 'DROPPED',
};

export class DeliveryServiceHandler implements ServiceImpl<typeof DeliveryService> {
  private readonly admin: DeliveryAdmin;
  constructor(admin: DeliveryAdmin) {
    this.admin = admin;
  }

  async listDeliveries(req: ListDeliveriesRequest): Promise<ListDeliveriesResponse> {
    const page = await this.admin.list({
      workspaceId: req.workspaceId,
      generationId: req.generationId,
      endpointId: req.endpointId,
      status: DELIVERY_STATUS_FROM_PROTO[req.status],
      pageSize: req.pageSize,
      pageToken: req.pageToken,
    });
    return create(ListDeliveriesResponseSchema, {
      deliveries: page.items.map(deliveryToProto),
      nextPageToken: page.nextPageToken,
    });
  }

  async getDelivery(req: GetDeliveryRequest): Promise<GetDeliveryResponse> {
    return create(GetDeliveryResponseSchema, { delivery: deliveryToProto(await this.admin.get(req.id)) });
  }

  async redeliverDelivery(req: RedeliverDeliveryRequest): Promise<RedeliverDeliveryResponse> {
    return create(RedeliverDeliveryResponseSchema, { delivery: deliveryToProto(await this.admin.redeliver(req.id)) });
  }
}
