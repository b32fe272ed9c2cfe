// `docgen admin deliveries …`: webhook deliveries, their attempts, redelivery.
import { DeliveryStatus, type Delivery } from '../../gen/docgen/admin/v1/delivery_pb.js';
import { need, page, PAGE_OPTIONS, str, UsageError, type Command } from './command.ts';
import { fields, iso, more, table, time } from './output.ts';

export const deliveryCommands: Command[] = [
  {
    path: ['deliveries', 'list'],
    synopsis:
      '--workspace WS_ID [--generation GEN_ID] [--endpoint WHE_ID] [--status pending|succeeded|dropped] [--page-size N] [--page-token TOKEN]',
    summary: 'List webhook deliveries with their attempts, newest first (--generation or --endpoint alone also works).',
    positionals: [],
    options: {
      workspace: { type: 'string' },
      generation: { type: 'string' },
      endpoint: { type: 'string' },
      status: { type: 'string' },
      ...PAGE_OPTIONS,
    },
    async run({ values, clients, print }) {
      if (values.workspace === undefined && values.generation === undefined && values.endpoint === undefined) {
        throw new UsageError('give --workspace, --generation or --endpoint (or several)');
      }
      const res = await clients.deliveries.listDeliveries({
        workspaceId: values.workspace === undefined ? '' : str(values.workspace),
        generationId: values.generation === undefined ? '' : str(values.generation),
        endpointId: values.endpoint === undefined ? '' : str(values.endpoint),
        status: values.status === undefined ? DeliveryStatus.UNSPECIFIED : statusFlag(str(values.status)),
        ...page(values),
      });
      print(
        { deliveries: res.deliveries.map(deliveryJson), nextPageToken: res.nextPageToken || null },
        table(
          ['ID', 'EVENT', 'GENERATION', 'ENDPOINT', 'STATUS', 'ATTEMPTS', 'LAST RESULT'],
          res.deliveries.map((d) => [
            d.id,
            d.event,
            d.generationId,
            d.endpointId,
            deliveryStatus(d.status),
            String(d.attempts.length),
            lastResult(d),
          ]),
        ) + more(res.nextPageToken),
      );
    },
  },
  {
    path: ['deliveries', 'get'],
    synopsis: 'DLV_ID',
    summary: 'Show a delivery and every attempt.',
    positionals: ['DLV_ID'],
    options: {},
    async run({ args, clients, print }) {
      const d = need((await clients.deliveries.getDelivery({ id: args[0]! })).delivery);
      print(deliveryJson(d), deliveryHuman(d));
    },
  },
  {
    path: ['deliveries', 'redeliver'],
    synopsis: 'DLV_ID',
    summary: 'Start a new round of attempts for a delivery (typically a dropped one).',
    positionals: ['DLV_ID'],
    options: {},
    async run({ args, clients, print }) {
      const d = need((await clients.deliveries.redeliverDelivery({ id: args[0]! })).delivery);
      print(
        deliveryJson(d),
        `Redelivering ${d.id} (${d.event} for ${d.generationId}); status ${deliveryStatus(d.status)}`,
      );
    },
  },
];

const STATUS_FLAGS: Record<string, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  succeeded: DeliveryStatus.SUCCEEDED,
  dropped: DeliveryStatus.DROPPED,
};

function statusFlag(value: string): DeliveryStatus {
  const status = STATUS_FLAGS[value.toLowerCase()];
  if (status === undefined)
    throw new UsageError(`--status ${JSON.stringify(value)}: use pending, succeeded or dropped`);
  return status;
}

function deliveryStatus(s: DeliveryStatus): string {
  return s === DeliveryStatus.PENDING
    ? 'PENDING'
    : s === DeliveryStatus.SUCCEEDED
      ? 'SUCCEEDED'
      : s === DeliveryStatus.DROPPED
        ? 'DROPPED'
        : 'UNSPECIFIED';
}

function deliveryJson(d: Delivery) {
  return {
    id: d.id,
    workspaceId: d.workspaceId,
    endpointId: d.endpointId,
    eventId: d.eventId,
    event: d.event,
    generationId: d.generationId,
    status: deliveryStatus(d.status),
    attempts: d.attempts.map((a) => ({
      number: a.number,
      attemptedAt: iso(a.attemptedAt),
      statusCode: a.statusCode || null,
      error: a.error || null,
      durationMs: a.durationMs,
      responseExcerpt: a.responseExcerpt || null,
    })),
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
    nextAttemptAt: iso(d.nextAttemptAt),
    test: d.test,
  };
}

function lastResult(d: Delivery): string {
  const a = d.attempts[d.attempts.length - 1];
  if (!a) return '-';
  return a.error ? (a.statusCode ? `${a.statusCode} ${a.error}` : a.error) : String(a.statusCode);
}

function deliveryHuman(d: Delivery): string {
  const head = fields([
    ['id', d.id],
    ['event', `${d.event} (${d.eventId})${d.test ? ', test event' : ''}`],
    ['generation', d.generationId],
    ['endpoint', d.endpointId],
    ['status', deliveryStatus(d.status)],
    ['next attempt', time(d.nextAttemptAt)],
    ['created', time(d.createdAt)],
  ]);
  const attempts = table(
    ['#', 'AT', 'STATUS', 'DURATION', 'ERROR', 'RESPONSE'],
    d.attempts.map((a) => [
      String(a.number),
      time(a.attemptedAt),
      a.statusCode ? String(a.statusCode) : '-',
      `${a.durationMs} ms`,
      a.error || '',
      a.responseExcerpt.replace(/\s+/g, ' ').slice(0, 60),
    ]),
  );
  return `${head}\n\n${attempts}`;
}
