// (CJK glyphs need fonts-noto-cjk, which the container image has and CI does not, so the
// non-Latin check here is Cyrillic.)
// The render pipeline as a client sees it, through the REST API: a published invoice renders
// and its PDF text shows the values literally; every permanent failure cause ends FAILED with
// a message naming the problem; and when the render process is SIGKILLed mid-render, or
// nats-server is killed and restarted, every generation still ends in exactly one final
// state, with one stored object and one webhook event.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleInvoiceContent, sampleInvoiceValues } from '../../src/dev/dev-seed.ts';
import { parseId } from '../../src/domain/ids.ts';
import { type JsonObject, type TemplateVersionContent } from '../../src/domain/template.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { WebhookEndpointService } from '../../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { outputKeyFor } from '../../src/render/render-pipeline.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { spawnDocgen, type DocgenProcess } from '../harness/spawn-docgen.ts';
import { request, startApiStack, type ApiStack } from './api-stack.ts';

interface GenerationJson {
  id: string;
  status: string;
  outputUrl: string | null;
  error: string | null;
}

let stack: ApiStack;
let key: string;
let workspaceId: string;
let receiver: HttpReceiver;

/** Stores a version straight through the repository (publish checks are the admin's job). */
async function template(
  content: Partial<TemplateVersionContent>,
  options: { publish?: boolean; archive?: boolean } = {},
): Promise<string> {
  const { templates } = stack.app.infrastructure.repositories;
  const full: TemplateVersionContent = {
    body: '',
    css: '',
    partials: {},
    variables: [],
    pdfOptions: DEFAULT_PDF_OPTIONS,
    ...content,
  };
  const { template } = await templates.create(
    parseId('workspace', workspaceId)!,
    `t-${Math.random().toString(36).slice(2, 8)}`,
    full,
  );
  if (options.publish !== false) await templates.publish(template._id, 1);
  if (options.archive) await templates.archive(template._id);
  return `tpl_${template._id.toHexString()}`;
}

async function create(templateId: string, variables: JsonObject = {}): Promise<GenerationJson> {
  const res = await request(stack.baseUrl, {
    method: 'POST',
    path: '/v1/generations',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ templateId, variables }),
  });
  expect(res.status, res.text).toBe(201);
  return res.body as GenerationJson;
}

async function get(id: string): Promise<GenerationJson> {
  const res = await request(stack.baseUrl, {
    path: `/v1/generations/${id}`,
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.status, res.text).toBe(200);
  return res.body as GenerationJson;
}

function waitFinal(id: string, timeoutMs = 30_000): Promise<GenerationJson> {
  return pollUntil(
    () => get(id),
    (g) => g.status === 'COMPLETED' || g.status === 'FAILED',
    {
      timeoutMs,
      intervalMs: 150,
      description: `generation ${id} to reach a final state`,
    },
  );
}

async function pdfText(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/pdf');
  const file = path.join(uniqueRunDir('pdf'), 'out.pdf');
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
}

/** Deliveries the receiver got per generation and event. */
function eventsByGeneration(): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  for (const r of receiver.requests) {
    const body = r.json() as { event: string; payload: { generationId: string } };
    seen.set(body.payload.generationId, [...(seen.get(body.payload.generationId) ?? []), body.event]);
  }
  return seen;
}

beforeAll(async () => {
  receiver = await startHttpReceiver({ defaultAnswer: { status: 204 } });
  stack = await startApiStack({
    natsControl: true, // one test kills nats-server
    env: {
      DOCGEN_ROLES: 'api,render,webhooks',
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_RENDER_TIMEOUT_MS: '8000',
      DOCGEN_RENDER_CONCURRENCY: '2',
    },
  });
  workspaceId = await stack.workspace('render e2e');
  key = (await stack.key(workspaceId)).secret;
  const transport = createConnectTransport({
    baseUrl: `http://127.0.0.1:${stack.app.adminPort}`,
    httpVersion: '1.1',
    interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${stack.deps.adminToken}`), next(req))],
  });
  await createClient(WebhookEndpointService, transport).createWebhookEndpoint({
    workspaceId,
    url: receiver.url,
    events: ['generation.completed', 'generation.failed'],
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

describe('render pipeline end to end', () => {
  it('renders the published invoice; the PDF shows <, & and non-Latin text literally', async () => {
    const templateId = await template(sampleInvoiceContent());
    const values = sampleInvoiceValues();
    const created = await create(templateId, { ...values, reference: 'PO <7781> & "co"' });
    expect(created.status).toBe('PENDING');
    const done = await waitFinal(created.id);
    expect(done.status, done.error ?? '').toBe('COMPLETED');
    const text = await pdfText(done.outputUrl!);
    expect(text).toContain('PO <7781> & "co"');
    expect(text).toContain('Müller & Söhne KG');
    expect(text).toContain('INV-2026-00042');
    expect(text).toContain('Привет');
    expect(text).not.toContain('&lt;');
    expect(text).not.toContain('&amp;');
    await pollUntil(
      async () => eventsByGeneration().get(created.id),
      (e) => e?.length === 1,
      { timeoutMs: 10_000, description: 'completed event' },
    );
    expect(eventsByGeneration().get(created.id)).toEqual(['generation.completed']);
  });

  it('fails each permanent cause at once, with a message that names the problem', async () => {
    const greeting: Partial<TemplateVersionContent> = {
      body: '<p>Hello {{ name }}, {{ city }}</p>',
      variables: [
        { name: 'name', required: true, description: '' },
        { name: 'city', required: false, default: 'Hamburg', description: '' },
      ],
    };
    // Typed variables: a client sending "3" where the template multiplies a number.
    const typedLines: Partial<TemplateVersionContent> = {
      body: '{% for line in lines %}<p>{{ line.description }}: {{ line.quantity | times: 2 }}</p>{% endfor %}',
      variables: [
        {
          name: 'lines',
          required: true,
          description: '',
          schema: {
            type: 'array',
            items: {
              type: 'object',
              required: ['description', 'quantity'],
              properties: { description: { type: 'string' }, quantity: { type: 'number' } },
            },
          },
        },
      ],
    };
    const cases: { name: string; templateId: () => Promise<string>; variables: JsonObject; error: RegExp }[] = [
      {
        name: 'unknown template',
        templateId: async () => 'tpl_0123456789abcdef01234567',
        variables: {},
        error: /does not exist/,
      },
      {
        name: 'no published version',
        templateId: () => template(greeting, { publish: false }),
        variables: { name: 'A' },
        error: /no published version/,
      },
      {
        name: 'archived template',
        templateId: () => template(greeting, { archive: true }),
        variables: { name: 'A' },
        error: /archived/,
      },
      {
        name: 'unknown variable',
        templateId: () => template(greeting),
        variables: { name: 'A', colour: 'red' },
        error: /colour[\s\S]*name[\s\S]*city|colour/,
      },
      {
        name: 'missing required variable',
        templateId: () => template(greeting),
        variables: { city: 'Köln' },
        error: /name/,
      },
      {
        name: 'variables that break their schema',
        templateId: () => template(typedLines),
        variables: {
          lines: [
            { description: 'a', quantity: 1 },
            { description: 'b', quantity: 2 },
            { description: 'c', quantity: '3' },
          ],
        },
        error: /^Variables do not match the template's schema: lines\[2\]\.quantity: expected number, got string "3"$/,
      },
      {
        name: 'Liquid error',
        templateId: () => template({ body: '{% if %}broken' }),
        variables: {},
        error: /Liquid|tag|syntax|if/i,
      },
      {
        name: 'endless Liquid loop',
        templateId: () =>
          template({ body: '{% for i in (1..100000000) %}{% for j in (1..100000000) %}x{% endfor %}{% endfor %}' }),
        variables: {},
        error: /time|limit/i,
      },
    ];
    const started = Date.now();
    const created = await Promise.all(
      cases.map(async (c) => ({ c, g: await create(await c.templateId(), c.variables) })),
    );
    for (const { c, g } of created) {
      const done = await waitFinal(g.id);
      expect(done.status, c.name).toBe('FAILED');
      expect(done.error, c.name).toMatch(c.error);
      expect(done.outputUrl, c.name).toBeNull();
    }
    // Permanent means no retries with back-off: all of them end well within one render time-out.
    expect(Date.now() - started).toBeLessThan(20_000);
    const unknownVariable = created.find(({ c }) => c.name === 'unknown variable')!;
    const message = (await get(unknownVariable.g.id)).error!;
    expect(message).toContain('colour');
    expect(message).toContain('name');
    await pollUntil(
      async () => created.map(({ g }) => eventsByGeneration().get(g.id) ?? []),
      (all) => all.every((e) => e.length === 1),
      {
        timeoutMs: 15_000,
        description: 'one failed event per generation',
      },
    );
    for (const { g } of created) expect(eventsByGeneration().get(g.id)).toEqual(['generation.failed']);
  }, 60_000);
});

describe('crashes', () => {
  /** A document that takes a while to print: many pages of table rows. */
  const slow: Partial<TemplateVersionContent> = {
    body: '<h1>{{ title }}</h1><table>{% for i in (1..2500) %}<tr><td>{{ i }}</td><td>{{ title }} row {{ i }}</td></tr>{% endfor %}</table>',
    variables: [{ name: 'title', required: true, description: '' }],
  };

  /**
   * The workspace statistics (GetWorkspaceStats' counters) count each generation once, however
   * many attempts and crashes it took; the killed renders show as an extra "picked up" step.
   */
  async function expectCountedOnce(templateId: string, ids: string[]): Promise<void> {
    const { stats, generations } = stack.app.infrastructure.repositories;
    const template = parseId('template', templateId)!;
    const rows = async () =>
      (
        await stats.range(
          parseId('workspace', workspaceId)!,
          new Date(Date.now() - 86_400_000),
          new Date(Date.now() + 3_600_000),
        )
      ).filter((r) => r.templateId?.equals(template));
    // Counting happens with the final event, which the receiver has seen: nothing is in flight.
    const counted = await pollUntil(rows, (r) => r.reduce((n, row) => n + (row.count ?? 0), 0) >= ids.length, {
      timeoutMs: 15_000,
      description: 'every generation counted',
    });
    await new Promise((r) => setTimeout(r, 1500));
    const settled = await rows();
    expect(settled.map((r) => [r.status, r.count])).toEqual([['COMPLETED', ids.length]]);
    expect(counted.length).toBe(1);
    const docs = await Promise.all(ids.map((id) => generations.get(parseId('generation', id)!)));
    const retaken = docs.filter((d) => (d!.history ?? []).filter((h) => h.event === 'picked_up').length >= 2);
    expect(retaken.length, 'generations the killed process had claimed show two pick-ups').toBeGreaterThan(0);
    for (const d of docs) expect(d!.pickedUpAt).toBeInstanceOf(Date);
  }

  async function expectOneOutcomeEach(ids: string[]): Promise<void> {
    const finals = await Promise.all(ids.map((id) => waitFinal(id, 90_000)));
    for (const g of finals) expect(g.status, g.error ?? '').toBe('COMPLETED');
    for (const id of ids) {
      const doc = await stack.app.infrastructure.repositories.generations.get(parseId('generation', id)!);
      expect(await stack.app.infrastructure.objects.exists(outputKeyFor(doc!))).toBe(true);
    }
    await pollUntil(
      async () => ids.map((id) => eventsByGeneration().get(id) ?? []),
      (all) => all.every((e) => e.length >= 1),
      {
        timeoutMs: 30_000,
        description: 'a webhook event for every generation',
      },
    );
    // Give stragglers a moment: a duplicate event would arrive now.
    await new Promise((r) => setTimeout(r, 1500));
    for (const id of ids) expect(eventsByGeneration().get(id)).toEqual(['generation.completed']);
  }

  it('SIGKILL of the render process mid-render: every generation completes once, elsewhere', async () => {
    // This stack's own render role keeps working; a second render process takes jobs too and
    // is killed while it renders. Its claimed generations are taken over once their lease and
    // JetStream's ack deadline run out (30 s).
    const templateId = await template(slow);
    const renderEnv = {
      ...stack.deps.env,
      DOCGEN_ROLES: 'render',
      DOCGEN_RENDER_CONCURRENCY: '4',
      DOCGEN_LOG_LEVEL: 'info',
    };
    let victim: DocgenProcess | undefined = spawnDocgen({ role: 'render', env: renderEnv });
    try {
      await victim.waitForLine((l) => l.json?.msg === 'docgen started', 60_000);
      const ids = (
        await Promise.all(Array.from({ length: 8 }, (_, i) => create(templateId, { title: `kill-${i}` })))
      ).map((g) => g.id);
      // The in-process render role renders at most 2 at once (DOCGEN_RENDER_CONCURRENCY below):
      // more leases than that held at once means the victim is rendering. Then kill it hard.
      await pollUntil(
        async () =>
          Promise.all(
            ids.map((id) => stack.app.infrastructure.repositories.generations.get(parseId('generation', id)!)),
          ),
        (docs) =>
          new Set(docs.filter((d) => d?.status === 'PROCESSING' && d.leaseOwner).map((d) => d!.leaseOwner)).size >= 2,
        { timeoutMs: 20_000, intervalMs: 20, description: 'both render processes rendering' },
      );
      victim.kill('SIGKILL');
      await victim.exited;
      victim = undefined;
      await expectOneOutcomeEach(ids);
      await expectCountedOnce(templateId, ids);
    } finally {
      await victim?.stop(5000);
    }
  }, 150_000);

  it('nats-server killed and restarted mid-flight: every generation completes once', async () => {
    const templateId = await template(slow);
    const ids = (
      await Promise.all(Array.from({ length: 6 }, (_, i) => create(templateId, { title: `nats-${i}` })))
    ).map((g) => g.id);
    await stack.deps.nats.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 2000));
    await stack.deps.nats.restart();
    await expectOneOutcomeEach(ids);
  }, 150_000);
});
