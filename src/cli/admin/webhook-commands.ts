// `docgen admin webhook …`: webhook endpoints and their signing secrets.
import type { WebhookEndpoint } from '../../gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { list, need, page, PAGE_OPTIONS, str, type Command } from './command.ts';
import { iso, more, table, time } from './output.ts';

export const webhookCommands: Command[] = [
  {
    path: ['webhook', 'create'],
    synopsis: '--workspace WS_ID --url URL --events EVENT[,EVENT] [--description TEXT] [--test-events]',
    summary:
      'Create a webhook endpoint (--test-events: also the events of test generations); its signing secret is printed once.',
    positionals: [],
    options: {
      workspace: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      'test-events': { type: 'boolean' },
    },
    required: ['workspace', 'url', 'events'],
    async run({ values, clients, print }) {
      const res = await clients.webhooks.createWebhookEndpoint({
        workspaceId: str(values.workspace),
        url: str(values.url),
        events: list(values.events),
        description: values.description === undefined ? '' : str(values.description),
        testEvents: values['test-events'] === true,
      });
      const e = need(res.endpoint);
      print(
        { id: e.id, secret: res.secret },
        `Created webhook endpoint ${e.id} -> ${e.url} (${e.events.join(', ')}${e.testEvents ? ', test events too' : ''})\n\n  ${res.secret}\n\nStore the signing secret now: it is shown only this once.`,
      );
    },
  },
  {
    path: ['webhook', 'list'],
    synopsis: '--workspace WS_ID [--page-size N] [--page-token TOKEN]',
    summary: "List a workspace's webhook endpoints.",
    positionals: [],
    options: { workspace: { type: 'string' }, ...PAGE_OPTIONS },
    required: ['workspace'],
    async run({ values, clients, print }) {
      const res = await clients.webhooks.listWebhookEndpoints({ workspaceId: str(values.workspace), ...page(values) });
      print(
        { endpoints: res.endpoints.map(endpointJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'URL', 'EVENTS', 'TEST EVENTS', 'CREATED', 'SECRET ROTATED'],
          res.endpoints.map((e) => [
            e.id,
            e.url,
            e.events.join(','),
            e.testEvents ? 'yes' : 'no',
            time(e.createdAt),
            time(e.secretRotatedAt),
          ]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['webhook', 'delete'],
    synopsis: 'WHE_ID',
    summary: 'Delete a webhook endpoint (its past deliveries stay readable).',
    positionals: ['WHE_ID'],
    options: {},
    async run({ args, clients, print }) {
      await clients.webhooks.deleteWebhookEndpoint({ id: args[0]! });
      print({ id: args[0]!, deleted: true }, `Deleted webhook endpoint ${args[0]!}`);
    },
  },
  {
    path: ['webhook', 'rotate'],
    synopsis: 'WHE_ID',
    summary: 'Issue a new signing secret; the previous one keeps verifying for 24 h.',
    positionals: ['WHE_ID'],
    options: {},
    async run({ args, clients, print }) {
      const res = await clients.webhooks.rotateWebhookEndpointSecret({ id: args[0]! });
      const e = need(res.endpoint);
      print(
        { id: e.id, secret: res.secret },
        `Rotated the signing secret of ${e.id}\n\n  ${res.secret}\n\nStore it now: it is shown only this once. The previous secret keeps verifying for 24 h.`,
      );
    },
  },
  {
    path: ['webhook', 'test'],
    synopsis: 'WHE_ID',
    summary:
      'Send a signed test event (generation.completed-shaped, "test": true) to the endpoint; it is recorded as a delivery.',
    positionals: ['WHE_ID'],
    options: {},
    async run({ args, clients, print }) {
      const res = await clients.webhooks.sendTestEvent({ id: args[0]! });
      print(
        { deliveryId: res.deliveryId, eventId: res.eventId },
        `Sent test event ${res.eventId} to ${args[0]!} as delivery ${res.deliveryId} (see: docgen admin deliveries get ${res.deliveryId})`,
      );
    },
  },
];

function endpointJson(e: WebhookEndpoint) {
  return {
    id: e.id,
    workspaceId: e.workspaceId,
    url: e.url,
    events: e.events,
    description: e.description,
    createdAt: iso(e.createdAt),
    secretRotatedAt: iso(e.secretRotatedAt),
    testEvents: e.testEvents,
  };
}
