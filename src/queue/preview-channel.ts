// Template previews as NATS request/reply: the api role asks, any render process answers.
//
// Core NATS, not JetStream: a preview is wanted now or never, so it is never stored and never
// queued behind production render jobs (those are on `<p>.render.jobs`, this is
// `<p>.render.preview`, outside every stream). Render processes subscribe in one queue group,
// so each request reaches one of them; with none subscribed the server answers "no
// responders" at once, which becomes "no render worker is running".
//
// A PDF can be larger than NATS's largest message (max_payload, 1 MB by default), so a reply
// travels in parts on the requester's own inbox: the parts of one [uint32 header length |
// JSON header | PDF bytes] buffer, each numbered `i/n` in a header. NATS keeps the order of
// messages from one publisher to one subscriber; the numbers only check it. Requests are
// gzip-compressed JSON (template sources shrink well below max_payload).
import { gunzipSync, gzipSync } from 'node:zlib';
import { createInbox, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { unavailable, validationError } from '../domain/errors.ts';
import type { TemplateDiagnostic } from '../domain/template-diagnostics.ts';
import type { JsonObject, TemplateVersionContent } from '../domain/template.ts';

export const previewSubject = (prefix: string) => `${prefix.toLowerCase()}.render.preview`;
/** Every render process joins this queue group: one of them answers each request. */
export const PREVIEW_QUEUE_GROUP = 'render-previews';

const PART_HEADER = 'Docgen-Part';
const TIMEOUT_HEADER = 'Docgen-Timeout-Ms';
/** Room left in each part for the headers. */
const PART_HEADROOM = 1024;

export interface PreviewRequest {
  content: TemplateVersionContent;
  /** As supplied; the render process resolves them exactly as for a generation. */
  variables: JsonObject;
  /** Whose assets asset_url may use (`ws_…`), and the title when the version sets none. */
  options?: { workspaceId?: string | undefined; templateName?: string | undefined } | undefined;
}

export interface PreviewFailure {
  /** A render error code (src/render/render-error.ts), or BUSY when the process had no room. */
  code: string;
  message: string;
  diagnostic?: TemplateDiagnostic | undefined;
}

export type PreviewReply = { ok: true; pdf: Uint8Array; renderMs: number } | { ok: false; error: PreviewFailure };

// ---------------------------------------------------------------------------------------------
// The asking side (api role)

export interface RequestPreviewOptions {
  subject: string;
  /** How long to wait for the whole reply (queueing on the render process included). */
  timeoutMs: number;
}

/**
 * Sends one preview request and waits for its reply. Throws DomainError UNAVAILABLE when no
 * render process is subscribed or none answers in time, VALIDATION_ERROR when the request
 * cannot be sent (too large). Render failures are returned, not thrown.
 */
export function requestPreview(
  nc: NatsConnection,
  request: PreviewRequest,
  options: RequestPreviewOptions,
): Promise<PreviewReply> {
  const payload = gzipSync(JSON.stringify(request));
  const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
  if (payload.length > maxPayload - PART_HEADROOM) {
    return Promise.reject(
      validationError([
        {
          field: 'content',
          issue: `is too large to preview (${payload.length} bytes compressed; NATS carries at most ${maxPayload - PART_HEADROOM})`,
        },
      ]),
    );
  }
  const inbox = createInbox();
  return new Promise<PreviewReply>((resolve, reject) => {
    const parts: Uint8Array[] = [];
    let received = 0;
    const finish = (outcome: () => void) => {
      clearTimeout(timer);
      sub.unsubscribe();
      outcome();
    };
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            unavailable(
              `No render worker answered the preview within ${Math.round(options.timeoutMs / 1000)} s; the render role may be overloaded or stopping`,
            ),
          ),
        ),
      options.timeoutMs,
    );
    const sub = nc.subscribe(inbox, {
      callback: (err, msg) => {
        if (err) return finish(() => reject(unavailable(`Preview request failed: ${err.message}`, err)));
        if (msg.data.length === 0 && (msg.headers?.status === '503' || msg.headers?.code === 503)) {
          return finish(() =>
            reject(
              unavailable(
                'No render worker is running: previews render on the render role (docgen serve --role render); start one and retry',
              ),
            ),
          );
        }
        const [index, count] = (msg.headers?.get(PART_HEADER) ?? '1/1').split('/').map(Number) as [number, number];
        if (!(index >= 1 && count >= index) || parts[index - 1]) return;
        parts[index - 1] = msg.data;
        received += 1;
        if (received < count) return;
        finish(() => {
          try {
            resolve(decodeReply(Buffer.concat(parts)));
          } catch (e) {
            reject(unavailable('The render worker sent a malformed preview reply', e));
          }
        });
      },
    });
    const h = headers();
    h.set(TIMEOUT_HEADER, String(options.timeoutMs));
    try {
      nc.publish(options.subject, payload, { reply: inbox, headers: h });
    } catch (err) {
      finish(() => reject(unavailable(`Cannot send the preview request: ${(err as Error).message}`, err)));
    }
  });
}

function decodeReply(buffer: Buffer): PreviewReply {
  const length = buffer.readUInt32BE(0);
  const head = JSON.parse(buffer.subarray(4, 4 + length).toString('utf8')) as {
    ok: boolean;
    renderMs?: number;
    error?: PreviewFailure;
  };
  if (head.ok) return { ok: true, pdf: new Uint8Array(buffer.subarray(4 + length)), renderMs: head.renderMs ?? 0 };
  return { ok: false, error: head.error ?? { code: 'INTERNAL', message: 'Preview failed' } };
}

// ---------------------------------------------------------------------------------------------
// The answering side (render role)

export interface ServePreviewsOptions {
  subject: string;
  /** Previews rendering at once in this process; more wait (up to maxWaiting), then BUSY. */
  concurrency: number;
  maxWaiting?: number;
  /** Renders one preview; throws a render error (code, message, diagnostic) on failure. */
  render: (request: PreviewRequest) => Promise<Uint8Array>;
  /** Turns a render failure into what the requester sees. */
  describeFailure: (err: unknown) => PreviewFailure;
  onOutcome?: (outcome: 'rendered' | 'failed' | 'busy' | 'expired', ms: number) => void;
  onError?: (err: unknown) => void;
}

export interface PreviewServer {
  /** Previews rendering or waiting right now. */
  inFlight(): number;
  /** Stops taking requests (others in the queue group get them) and waits for those taken. */
  stop(): Promise<void>;
}

interface Waiting {
  msg: Msg;
  arrived: number;
}

export function servePreviews(nc: NatsConnection, options: ServePreviewsOptions): PreviewServer {
  const maxWaiting = options.maxWaiting ?? options.concurrency * 4;
  const waiting: Waiting[] = [];
  const running = new Set<Promise<void>>();
  let active = 0;

  const reply = (msg: Msg, head: object, pdf?: Uint8Array) => {
    const json = Buffer.from(JSON.stringify(head), 'utf8');
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(json.length, 0);
    const whole = Buffer.concat([prefix, json, pdf ?? new Uint8Array()]);
    const partSize = Math.max(4096, (nc.info?.max_payload ?? 1024 * 1024) - PART_HEADROOM);
    const count = Math.max(1, Math.ceil(whole.length / partSize));
    for (let i = 0; i < count; i++) {
      const h = headers();
      h.set(PART_HEADER, `${i + 1}/${count}`);
      nc.publish(msg.reply!, whole.subarray(i * partSize, (i + 1) * partSize), { headers: h });
    }
  };

  const run = async ({ msg, arrived }: Waiting): Promise<void> => {
    const timeoutMs = Number(msg.headers?.get(TIMEOUT_HEADER)) || 60_000;
    if (Date.now() - arrived > timeoutMs) {
      options.onOutcome?.('expired', Date.now() - arrived); // the requester gave up already
      return;
    }
    const started = performance.now();
    let request: PreviewRequest;
    try {
      request = JSON.parse(gunzipSync(msg.data).toString('utf8')) as PreviewRequest;
    } catch (err) {
      reply(msg, { ok: false, error: { code: 'INTERNAL', message: 'The preview request could not be read' } });
      options.onError?.(err);
      return;
    }
    try {
      const pdf = await options.render(request);
      const renderMs = Math.round(performance.now() - started);
      reply(msg, { ok: true, renderMs }, pdf);
      options.onOutcome?.('rendered', renderMs);
    } catch (err) {
      reply(msg, { ok: false, error: options.describeFailure(err) });
      options.onOutcome?.('failed', performance.now() - started);
    }
  };

  const pump = () => {
    while (active < options.concurrency && waiting.length > 0) {
      const next = waiting.shift()!;
      active += 1;
      const done = run(next)
        .catch((err: unknown) => options.onError?.(err))
        .finally(() => {
          active -= 1;
          running.delete(done);
          pump();
        });
      running.add(done);
    }
  };

  const sub = nc.subscribe(options.subject, {
    queue: PREVIEW_QUEUE_GROUP,
    callback: (err, msg) => {
      if (err) return options.onError?.(err);
      if (!msg.reply) return;
      if (active >= options.concurrency && waiting.length >= maxWaiting) {
        reply(msg, {
          ok: false,
          error: { code: 'BUSY', message: 'The render workers are busy with other previews; retry shortly' },
        });
        options.onOutcome?.('busy', 0);
        return;
      }
      waiting.push({ msg, arrived: Date.now() });
      pump();
    },
  });

  let stopped: Promise<void> | undefined;
  return {
    inFlight: () => active + waiting.length,
    stop() {
      stopped ??= (async () => {
        // drain(): the server stops routing to us; messages already here are still delivered.
        await sub.drain().catch(() => {});
        while (waiting.length > 0 || running.size > 0) await Promise.allSettled([...running]);
      })();
      return stopped;
    },
  };
}
