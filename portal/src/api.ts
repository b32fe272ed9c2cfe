// The admin services, called from the browser over Connect with the session cookie
// (same origin, so fetch sends it; the browser adds the Origin header the server checks).
import { createClient, ConnectError, Code, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import type { DescService } from '@bufbuild/protobuf';
import { ApiKeyService } from '@gen/docgen/admin/v1/api_key_pb.js';
import { AssetService } from '@gen/docgen/admin/v1/asset_pb.js';
import { CertificateService } from '@gen/docgen/admin/v1/certificate_pb.js';
import { DeliveryService } from '@gen/docgen/admin/v1/delivery_pb.js';
import { GenerationAdminService } from '@gen/docgen/admin/v1/generation_pb.js';
import { AuditService, MemberService, SessionService } from '@gen/docgen/admin/v1/identity_pb.js';
import { TemplateService } from '@gen/docgen/admin/v1/template_pb.js';
import { WebhookEndpointService } from '@gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { WorkspaceStatsService } from '@gen/docgen/admin/v1/stats_pb.js';

const transport = createConnectTransport({ baseUrl: window.location.origin, useBinaryFormat: true });

function client<T extends DescService>(service: T): Client<T> {
  return createClient(service, transport);
}

export const api = {
  sessions: client(SessionService),
  members: client(MemberService),
  audit: client(AuditService),
  templates: client(TemplateService),
  apiKeys: client(ApiKeyService),
  webhooks: client(WebhookEndpointService),
  deliveries: client(DeliveryService),
  generations: client(GenerationAdminService),
  assets: client(AssetService),
  certificates: client(CertificateService),
  stats: client(WorkspaceStatsService),
};

/**
 * A whole list, read page by page by passing each next_page_token back (at most `maxPages`
 * pages of 100), for screens that show a list at once. `key` names the response's rows.
 */
export interface PageRequest {
  pageSize: number;
  pageToken: string;
}

export async function listAll<R extends { nextPageToken: string }>(
  fetchPage: (page: PageRequest) => Promise<R>,
  key: keyof R,
  maxPages = 10,
): Promise<R> {
  let page = await fetchPage({ pageSize: 100, pageToken: '' });
  const rows = [...(page[key] as unknown[])];
  for (let n = 1; page.nextPageToken && n < maxPages; n++) {
    page = await fetchPage({ pageSize: 100, pageToken: page.nextPageToken });
    rows.push(...(page[key] as unknown[]));
  }
  return { ...page, [key]: rows };
}

/** Called when any call answers Unauthenticated (the session ended): the app shows sign-in. */
let onSignedOut: (() => void) | undefined;
export function setSignedOutHandler(handler: () => void): void {
  onSignedOut = handler;
}

const CODE_WORDS: Partial<Record<Code, string>> = {
  [Code.Unauthenticated]: 'You are not signed in',
  [Code.PermissionDenied]: 'Your role does not allow this',
  [Code.NotFound]: 'Not found',
  [Code.InvalidArgument]: 'Invalid input',
  [Code.FailedPrecondition]: 'Not possible in the current state',
  [Code.AlreadyExists]: 'Already exists',
  [Code.ResourceExhausted]: 'Too many attempts; wait a moment and try again',
  [Code.Unavailable]: 'The server is unavailable; try again',
  [Code.DeadlineExceeded]: 'The server took too long to answer',
  [Code.Unimplemented]: 'This server does not offer this yet',
  [Code.Internal]: 'The server failed to answer',
};

/** Every API error in words: the server's message, or what its code means. */
export function errorText(err: unknown): string {
  if (err instanceof ConnectError) {
    if (err.code === Code.Unauthenticated && onSignedOut) queueMicrotask(onSignedOut);
    const words = CODE_WORDS[err.code] ?? 'Request failed';
    // The server's own words already say what went wrong with a credential.
    if (err.code === Code.Unauthenticated && err.rawMessage) return err.rawMessage;
    return err.rawMessage ? `${words}: ${err.rawMessage}` : `${words}.`;
  }
  if (err instanceof Error)
    return err.message === 'Failed to fetch' ? 'Cannot reach the server; check your connection.' : err.message;
  return String(err);
}

export function isAbort(err: unknown): boolean {
  return err instanceof ConnectError && err.code === Code.Canceled;
}
