// The Connect handler of docgen.v1.GenerationService through createRouterTransport: proto in,
// the shared pipeline (real PublicApi and GenerationService on the MongoDB stand-in), proto
// and error codes out. No HTTP server, no NATS: the render-job queue is in memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError, createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import type { ObjectId } from 'mongodb';
import { DocumentFormat, GenerationService, GenerationStatus } from '../../src/gen/docgen/v1/generation_pb.js';
import { ERROR_CODE_HEADER, mapErrors } from '../../src/rpc/connect-errors.ts';
import { GenerationHandler } from '../../src/rpc/generation-handler.ts';
import { rejection, startInProcessStack, type InProcessStack } from '../harness/in-process.ts';

let stack: InProcessStack;
let client: Client<typeof GenerationService>;
let workspaceId: ObjectId;
let templateId: string;
let key: string;
const internal: unknown[] = [];

beforeAll(async () => {
  stack = await startInProcessStack();
  const transport = createRouterTransport(({ service }) => {
    service(
      GenerationService,
      mapErrors(new GenerationHandler(stack.api), (cause) => internal.push(cause)),
    );
  });
  client = createClient(GenerationService, transport);
  workspaceId = await stack.workspace();
  templateId = await stack.template(workspaceId, { name: 'Receipt' });
  key = (await stack.apiKey(workspaceId, ['generations:trigger', 'generations:read'])).secret;
});

afterAll(async () => {
  await stack?.close();
});

const auth = (secret = key) => ({ headers: { authorization: `Bearer ${secret}` } });

const connectError = (promise: Promise<unknown>) => rejection(promise, ConnectError);

describe('GenerationService over Connect', () => {
  it('creates, reads and lists, with the proto shapes and RateLimit headers', async () => {
    let headers: Headers | undefined;
    const created = await client.createGeneration(
      { templateId, variables: { name: 'Ada', total: 4.5 } },
      { ...auth(), onHeader: (h) => (headers = h) },
    );
    const g = created.generation!;
    expect(g).toMatchObject({
      templateId,
      templateName: 'Receipt',
      status: GenerationStatus.PENDING,
      format: DocumentFormat.PDF,
      templateVersion: 0,
    });
    expect(g.data).toEqual({ name: 'Ada', total: 4.5 });
    expect(g.outputUrl).toBeUndefined();
    expect(headers?.get('ratelimit-limit')).toBe('40');
    expect(stack.jobs.published).toContain(g.id);

    const read = await client.getGeneration({ id: g.id }, auth());
    expect(read.generation?.id).toBe(g.id);
    const list = await client.listGenerations({ pageSize: 10 }, auth());
    expect(list.generations.map((x) => x.id)).toContain(g.id);
    expect(list.nextPageToken).toBe('');
  });

  it('maps the 401 cases to unauthenticated and keeps them apart in docgen-error-code', async () => {
    const missing = await connectError(client.getGeneration({ id: 'gen_000000000000000000000000' }));
    expect(missing.code).toBe(Code.Unauthenticated);
    expect(missing.metadata.get(ERROR_CODE_HEADER)).toBe('UNAUTHORIZED');
    const unknown = await connectError(
      client.getGeneration({ id: 'gen_000000000000000000000000' }, auth(`svc_live_${'Z'.repeat(40)}`)),
    );
    expect(unknown.code).toBe(Code.Unauthenticated);
    expect(unknown.metadata.get(ERROR_CODE_HEADER)).toBe('API_KEY_INVALID');
  });

  it('maps scope, not-found and validation errors', async () => {
    const readOnly = (await stack.apiKey(workspaceId, ['generations:read'])).secret;
    const forbidden = await connectError(client.createGeneration({ templateId }, auth(readOnly)));
    expect(forbidden.code).toBe(Code.PermissionDenied);
    expect(forbidden.metadata.get(ERROR_CODE_HEADER)).toBe('FORBIDDEN');

    const notFound = await connectError(client.getGeneration({ id: 'gen_000000000000000000000000' }, auth()));
    expect(notFound.code).toBe(Code.NotFound);

    const invalid = await connectError(client.createGeneration({ templateId: '' }, auth()));
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(invalid.metadata.get(ERROR_CODE_HEADER)).toBe('VALIDATION_ERROR');
    expect(invalid.rawMessage).toContain('templateId');

    const badStatus = await connectError(client.listGenerations({ status: 99 as GenerationStatus }, auth()));
    expect(badStatus.code).toBe(Code.InvalidArgument);
  });

  it('honours idempotency-key metadata', async () => {
    const headers = { ...auth().headers, 'idempotency-key': 'connect-1' };
    const first = await client.createGeneration({ templateId, variables: { n: 1 } }, { headers });
    const again = await client.createGeneration({ templateId, variables: { n: 1 } }, { headers });
    expect(again.generation?.id).toBe(first.generation?.id);
    const reused = await connectError(client.createGeneration({ templateId, variables: { n: 2 } }, { headers }));
    expect(reused.code).toBe(Code.InvalidArgument);
    expect(reused.metadata.get(ERROR_CODE_HEADER)).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('a rate-limited key gets resource_exhausted with retry-after', async () => {
    const slow = (await stack.apiKey(workspaceId, ['generations:read'], { perSecond: 0.01, burst: 1 })).secret;
    await client.listGenerations({}, auth(slow));
    const limited = await connectError(client.listGenerations({}, auth(slow)));
    expect(limited.code).toBe(Code.ResourceExhausted);
    expect(Number(limited.metadata.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(internal).toEqual([]);
  });
});
