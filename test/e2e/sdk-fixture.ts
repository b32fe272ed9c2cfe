// The stack both SDKs are tested against (test/e2e/sdk.test.ts): docgen with the api, render
// and webhooks roles on real NATS, S3 and the Mongo stand-in; a second API process whose
// outputUrls live 3 s (DOCGEN_OUTPUT_URL_TTL_SECONDS); a webhook receiver; a loopback proxy
// that drops the connection after the first attempt of each create has reached docgen; and
// workspaces with the keys and templates the tests need. `fixture` is what the Python tests
// get too, as JSON (sdk/python/tests/test_live.py).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { sampleInvoiceContent } from '../../src/dev/dev-seed.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { postJson, spawnServe, startApiStack, type ApiStack, type ChildApi } from './api-stack.ts';
import { GREETING, SLOW, storeTemplate } from './template-fixtures.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Generations in the "many" workspace: more than one page of the largest page size (100). */
export const MANY = 120;

/**
 * Batches (issue #25) are built on another branch; their SDK tests run where they exist: when
 * the proto of docgen.v1.BatchService (docgen/v1/batch.proto) is there (after the merge), or
 * DOCGEN_TEST_BATCHES=1 says so.
 */
export const BATCHES_EXIST =
  process.env.DOCGEN_TEST_BATCHES === '1' || existsSync(new URL('../../proto/docgen/v1/batch.proto', import.meta.url));

export interface SdkFixture {
  baseUrl: string;
  /** An API process whose outputUrls expire after 3 s (S3 dates have whole seconds: 2 to 3 s in fact). */
  shortTtlUrl: string;
  /** Forwards to baseUrl; cuts the connection after the first attempt of each create reached docgen. */
  proxyUrl: string;
  batches: boolean;
  templates: { greeting: string; slow: string; invoice: string; missingVariable: string };
  keys: {
    /** All scopes, main workspace. */
    main: string;
    /** generations:read only, main workspace. */
    readOnly: string;
    /** 1 request/s, burst 1: the second create in a row is answered 429. */
    limited: string;
    /** Reads the limited key's workspace, unlimited. */
    limitedReader: string;
    /** The "many" workspace: MANY generations. */
    many: string;
    /** A workspace of its own for creates through the proxy. */
    proxied: string;
    /** A test key (`svc_test_…`, all scopes) of the main workspace: its PDFs say TEST. */
    test: string;
  };
  /** Ids of the MANY generations. */
  manyIds: string[];
  /** Templates of the limited and proxied workspaces (greeting). */
  limitedTemplate: string;
  proxiedTemplate: string;
  /** A COMPLETED generation of the main workspace. */
  completedId: string;
  /** A real delivery for completedId, as the receiver got it. */
  delivery: { body: string; headers: Record<string, string>; secret: string; generationId: string };
}

export interface SdkStack {
  stack: ApiStack;
  shortTtl: ChildApi;
  receiver: HttpReceiver;
  proxy: DroppingProxy;
  fixture: SdkFixture;
  close(): Promise<void>;
}

export interface DroppingProxy {
  url: string;
  /** Attempts seen per Idempotency-Key of a create. */
  attempts: Map<string, number>;
  close(): Promise<void>;
}

/**
 * Forwards every request to `target`. The first attempt of each create (by Idempotency-Key)
 * is forwarded and answered by docgen, but the client never sees the answer: its connection
 * is cut, as a network failure after the server did the work would.
 */
export async function startDroppingProxy(target: string): Promise<DroppingProxy> {
  const attempts = new Map<string, number>();
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = req.method === 'POST' ? String(req.headers['idempotency-key'] ?? '') : '';
      const attempt = key === '' ? 0 : (attempts.get(key) ?? 0) + 1;
      if (key !== '') attempts.set(key, attempt);
      const forwarded = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
          agent: false,
        },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            if (attempt === 1) {
              req.socket.destroy(); // docgen did the work; the client learns nothing
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(body));
          });
        },
      );
      forwarded.on('error', () => req.socket.destroy());
      forwarded.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function startSdkStack(): Promise<SdkStack> {
  const receiver = await startHttpReceiver({ defaultAnswer: { status: 204 } });
  const stack = await startApiStack({
    env: {
      DOCGEN_ROLES: 'api,render,webhooks',
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_RENDER_CONCURRENCY: '2',
      // The slow template loops until the Liquid time-out stops it.
      DOCGEN_LIQUID_TIMEOUT_MS: '4000',
    },
  });
  const opened: { close(): Promise<unknown> }[] = [];
  try {
    const [shortTtl, proxy] = await Promise.all([
      spawnServe(stack.deps, 'api', { DOCGEN_OUTPUT_URL_TTL_SECONDS: '3' }),
      startDroppingProxy(stack.baseUrl),
    ]);
    opened.push({ close: () => shortTtl.proc.stop(5_000) }, proxy);

    const main = await stack.workspace('sdk main');
    const [mainKey, readOnly, testKey] = await Promise.all([
      stack.key(main),
      stack.key(main, ['generations:read']),
      stack.key(main, undefined, undefined, 'test'),
    ]);
    const [greeting, slow, invoice, missingVariable] = await Promise.all([
      storeTemplate(stack.app, main, GREETING, 'Greeting'),
      storeTemplate(stack.app, main, SLOW, 'Slow'),
      storeTemplate(stack.app, main, sampleInvoiceContent(), 'Invoice'),
      storeTemplate(stack.app, main, {
        body: '<p>{{ customer }}</p>',
        variables: [{ name: 'customer', required: true, description: '' }],
      }),
    ]);
    const endpoint = await stack.admin.webhooks.createWebhookEndpoint({
      workspaceId: main,
      url: receiver.url,
      events: ['generation.completed', 'generation.failed'],
    });

    const limitedWs = await stack.workspace('sdk limited');
    const [limited, limitedReader] = await Promise.all([
      stack.key(limitedWs, ['generations:trigger'], { perSecond: 1, burst: 1 }),
      stack.key(limitedWs, ['generations:read']),
    ]);
    const limitedTemplate = await storeTemplate(stack.app, limitedWs, GREETING);
    const proxiedWs = await stack.workspace('sdk proxied');
    const proxied = await stack.key(proxiedWs);
    const proxiedTemplate = await storeTemplate(stack.app, proxiedWs, GREETING);

    // MANY generations of a template id that names nothing: each fails at once, no browser.
    const manyWs = await stack.workspace('sdk many');
    const many = await stack.key(manyWs);
    const manyIds: string[] = [];
    for (let i = 0; i < MANY; i += 20) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(20, MANY - i) }, (_, j) =>
          postJson(stack.baseUrl, many.secret, { templateId: 'tpl_0123456789abcdef01234567', variables: { n: i + j } }),
        ),
      );
      for (const a of answers) {
        if (a.status !== 201) throw new Error(`create in the many workspace: ${a.status} ${a.text}`);
        manyIds.push(a.body.id as string);
      }
    }

    // A completed generation (this also starts the browser before anything is timed) and its delivery.
    const done = await postJson(
      stack.baseUrl,
      mainKey.secret,
      { templateId: greeting, variables: { name: 'Webhook' } },
      { Prefer: 'wait=30' },
    );
    if (done.body?.status !== 'COMPLETED') throw new Error(`warm-up render: ${done.text}`);
    const delivered = await pollUntil(
      async () => receiver.requests.find((r) => r.text().includes(done.body.id as string)),
      (r) => r !== undefined,
      { timeoutMs: 30_000, description: 'the webhook delivery of the warm-up generation' },
    );
    const headers: Record<string, string> = {};
    for (let i = 0; i < delivered!.rawHeaders.length; i += 2)
      headers[delivered!.rawHeaders[i]!] = delivered!.rawHeaders[i + 1]!;

    const fixture: SdkFixture = {
      baseUrl: stack.baseUrl,
      shortTtlUrl: shortTtl.baseUrl,
      proxyUrl: proxy.url,
      batches: BATCHES_EXIST,
      templates: { greeting, slow, invoice, missingVariable },
      keys: {
        main: mainKey.secret,
        readOnly: readOnly.secret,
        limited: limited.secret,
        limitedReader: limitedReader.secret,
        many: many.secret,
        proxied: proxied.secret,
        test: testKey.secret,
      },
      manyIds,
      limitedTemplate,
      proxiedTemplate,
      completedId: done.body.id as string,
      delivery: {
        body: delivered!.text(),
        headers,
        secret: endpoint.secret,
        generationId: done.body.id as string,
      },
    };
    return {
      stack,
      shortTtl,
      receiver,
      proxy,
      fixture,
      async close() {
        for (const o of opened.reverse()) await o.close().catch(() => {});
        await stack.close();
        await receiver.close();
      },
    };
  } catch (err) {
    for (const o of opened.reverse()) await o.close().catch(() => {});
    await stack.close();
    await receiver.close();
    throw err;
  }
}

/** A fresh API key secret of the right shape that no workspace has. */
export function unknownKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `svc_live_${Array.from(randomBytes(40), (b) => alphabet[b % 62]).join('')}`;
}
