// The preview request/reply channel over a real nats-server: replies larger than NATS's
// largest message arrive whole, one of several render processes answers each request, a
// process with no room says BUSY instead of queueing without bound, nobody subscribed means
// "no render worker is running", and stopping hands new requests to the others.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DomainError } from '../../src/domain/errors.ts';
import { type TemplateVersionContent } from '../../src/domain/template.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import {
  requestPreview,
  servePreviews,
  type PreviewRequest,
  type PreviewServer,
} from '../../src/queue/preview-channel.ts';
import { startNats } from '../harness/dependencies.ts';

let nats: EmbeddedNats;
let nc: NatsConnection;
const content: TemplateVersionContent = {
  body: '<p>x</p>',
  css: '',
  partials: {},
  variables: [],
  pdfOptions: DEFAULT_PDF_OPTIONS,
};

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

function subject(): string {
  return `t${randomBytes(4).toString('hex')}.render.preview`;
}

function serve(
  subj: string,
  render: (r: PreviewRequest) => Promise<Uint8Array>,
  concurrency = 1,
  maxWaiting?: number,
): PreviewServer {
  return servePreviews(nc, {
    subject: subj,
    concurrency,
    ...(maxWaiting === undefined ? {} : { maxWaiting }),
    render,
    describeFailure: (err) => ({ code: 'LIQUID_ERROR', message: (err as Error).message }),
  });
}

describe('preview channel', () => {
  it('carries a reply several times larger than max_payload intact, and the request as sent', async () => {
    const subj = subject();
    const big = randomBytes(Math.round(nc.info!.max_payload * 3.5)); // 3.5 MB with the default 1 MB
    let seen: PreviewRequest | undefined;
    const server = serve(subj, async (r) => ((seen = r), big));
    const reply = await requestPreview(
      nc,
      { content, variables: { name: 'Ada', n: [1, 2] } },
      { subject: subj, timeoutMs: 10_000 },
    );
    expect(reply.ok).toBe(true);
    expect(Buffer.from((reply as { pdf: Uint8Array }).pdf).equals(big)).toBe(true);
    expect(seen).toEqual({ content, variables: { name: 'Ada', n: [1, 2] } });
    await server.stop();
  });

  it('returns a render failure with its code and message', async () => {
    const subj = subject();
    const server = serve(subj, async () => Promise.reject(new Error('undefined filter: nope')));
    const reply = await requestPreview(nc, { content, variables: {} }, { subject: subj, timeoutMs: 10_000 });
    expect(reply).toEqual({ ok: false, error: { code: 'LIQUID_ERROR', message: 'undefined filter: nope' } });
    await server.stop();
  });

  it('answers Unavailable at once when no render process is subscribed', async () => {
    const started = Date.now();
    const err = await requestPreview(nc, { content, variables: {} }, { subject: subject(), timeoutMs: 10_000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'UNAVAILABLE' });
    expect((err as Error).message).toContain('No render worker is running');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('bounds previews per process: beyond concurrency plus the waiting room it answers BUSY', async () => {
    const subj = subject();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let active = 0;
    let peak = 0;
    const server = serve(
      subj,
      async () => {
        active += 1;
        peak = Math.max(peak, active);
        await gate;
        active -= 1;
        return new Uint8Array([1]);
      },
      1,
      1,
    );
    const requests = Array.from({ length: 4 }, () =>
      requestPreview(nc, { content, variables: {} }, { subject: subj, timeoutMs: 10_000 }),
    );
    const busy = await Promise.race(
      requests.map((p) => p.then((r) => (!r.ok && r.error.code === 'BUSY' ? r : new Promise(() => {})))),
    );
    expect(busy).toMatchObject({ ok: false, error: { code: 'BUSY' } });
    release();
    const replies = await Promise.all(requests);
    expect(replies.filter((r) => r.ok)).toHaveLength(2);
    expect(replies.filter((r) => !r.ok && r.error.code === 'BUSY')).toHaveLength(2);
    expect(peak).toBe(1);
    await server.stop();
  });

  it('spreads requests over the queue group; a stopped process gets none', async () => {
    const subj = subject();
    const served = { a: 0, b: 0 };
    // Waiting rooms big enough that no request is refused as BUSY.
    const a = serve(subj, async () => ((served.a += 1), new Uint8Array([1])), 4, 40);
    const b = serve(subj, async () => ((served.b += 1), new Uint8Array([2])), 4, 40);
    await nc.flush();
    await Promise.all(
      Array.from({ length: 40 }, () =>
        requestPreview(nc, { content, variables: {} }, { subject: subj, timeoutMs: 10_000 }),
      ),
    );
    expect(served.a + served.b).toBe(40);
    expect(served.a).toBeGreaterThan(0);
    expect(served.b).toBeGreaterThan(0);
    await a.stop();
    await nc.flush();
    const before = served.a;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        requestPreview(nc, { content, variables: {} }, { subject: subj, timeoutMs: 10_000 }),
      ),
    );
    expect(served.a).toBe(before);
    await b.stop();
  });
});
