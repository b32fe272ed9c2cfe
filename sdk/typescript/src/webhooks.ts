// Verifying a webhook delivery (docs/webhooks.md in the docgen repository). docgen signs each
// request twice:
//  - Standard Webhooks: `webhook-signature` holds `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
//    entries keyed with the base64-decoded part of the secret after `whsec_`, and
//    `webhook-timestamp` is the attempt's time: the signature proves the time, so an old
//    (replayed) request is refused. After a secret rotation the previous secret signs too for
//    24 h, so a receiver still holding it keeps verifying.
//  - `X-Service-Signature`: `sha256=` + hex HMAC-SHA256 of the body keyed with the whole secret
//    string; it carries no time.
// So the Standard Webhooks headers are checked when present (docgen always sends them), and a
// request with only X-Service-Signature is accepted only when the caller turns the timestamp
// check off: otherwise stripping the timestamped headers would get a replay past the check.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.ts';
import type { WebhookEvent } from './types.ts';

/** Header sources: a fetch `Headers`, Node's `req.headers`, or any name-to-value record. */
export type WebhookHeaders =
  { get(name: string): string | null } | Record<string, string | readonly string[] | undefined>;

export interface VerifyOptions {
  /**
   * Largest difference between `webhook-timestamp` and now, in seconds. Default 300 (the
   * Standard Webhooks libraries' choice). `null` turns the check off and also accepts a
   * request that carries X-Service-Signature alone.
   */
  toleranceSeconds?: number | null;
  /** The time to check against (default: now). */
  now?: Date;
}

const SECRET_PREFIX = 'whsec_';
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Checks a delivery's signature (timing-safe) and age; returns its parsed body. */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): WebhookEvent {
  if (typeof secret !== 'string' || secret === '') fail('the signing secret is empty');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const header = headerReader(headers);
  const tolerance = options.toleranceSeconds === undefined ? DEFAULT_TOLERANCE_SECONDS : options.toleranceSeconds;
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signature = header('webhook-signature');
  const serviceSignature = header('x-service-signature');

  if (id !== undefined || timestamp !== undefined || signature !== undefined) {
    if (id === undefined || timestamp === undefined || signature === undefined)
      fail('webhook-id, webhook-timestamp and webhook-signature must come together');
    if (!/^\d{1,15}$/.test(timestamp)) fail('webhook-timestamp is not Unix seconds');
    if (tolerance !== null) {
      const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
      const age = now - Number(timestamp);
      if (Math.abs(age) > tolerance) {
        fail(
          age > 0
            ? `webhook-timestamp is ${age} s old, more than the ${tolerance} s allowed: an old or replayed request`
            : `webhook-timestamp is ${-age} s in the future, more than the ${tolerance} s allowed`,
        );
      }
    }
    const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    if (key.length === 0) fail('the signing secret is not a whsec_… secret');
    const expected = 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
    // Every entry is compared (no early exit), so timing tells nothing about which matched.
    let matched = false;
    for (const entry of signature.split(' ')) if (entry !== '' && safeEqual(entry, expected)) matched = true;
    if (!matched) fail('webhook-signature does not match: a wrong secret or an altered body');
  } else if (serviceSignature !== undefined) {
    if (tolerance !== null) {
      fail(
        'the request has no webhook-timestamp, so its age cannot be checked (pass toleranceSeconds: null to accept X-Service-Signature alone)',
      );
    }
    const expected = 'sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
    if (!safeEqual(serviceSignature, expected))
      fail('X-Service-Signature does not match: a wrong secret or an altered body');
  } else {
    fail('the request carries no signature (webhook-signature or X-Service-Signature)');
  }

  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    fail('the signed body is not JSON');
  }
  if (typeof event !== 'object' || event === null || typeof (event as { event?: unknown }).event !== 'string')
    fail('the signed body is not a docgen event');
  return event as WebhookEvent;
}

/** `client.webhooks`: the same check as `verifyWebhook`. */
export class Webhooks {
  verify(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options?: VerifyOptions): WebhookEvent {
    return verifyWebhook(rawBody, headers, secret, options);
  }
}

function headerReader(headers: WebhookHeaders): (name: string) => string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const source = headers as { get(name: string): string | null };
    return (name) => source.get(name) ?? undefined;
  }
  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (value === undefined) continue;
    lower.set(name.toLowerCase(), typeof value === 'string' ? value : value.join(', '));
  }
  return (name) => lower.get(name);
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  // Lengths are public (fixed by the algorithm); only the content comparison must be constant-time.
  return x.length === y.length && timingSafeEqual(x, y);
}

function fail(reason: string): never {
  throw new WebhookVerificationError(`Webhook verification failed: ${reason}`);
}
