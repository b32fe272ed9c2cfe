// The bytes and headers of one webhook request (docs/interface.md#webhook-request).
// Two signatures travel together:
//  - X-Service-Signature (the interface's): `sha256=` + lower-case hex HMAC-SHA256 of the
//    raw body, keyed with the signing secret exactly as shown to the user, i.e. the UTF-8
//    bytes of the whole `whsec_…` string. That is what a receiver following the interface
//    literally does (`createHmac('sha256', secret)`), so it is the one we must match.
//  - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`): HMAC-SHA256
//    of `id.timestamp.body` keyed with the base64-DECODED part after `whsec_`, as their
//    libraries do; it carries the attempt time, so receivers get replay protection, and
//    lists the previous secret's signature too for 24 h after a rotation.
import { createHmac, timingSafeEqual } from 'node:crypto';
import pkg from '../../package.json' with { type: 'json' };
import { DomainError } from '../domain/errors.ts';
import { BATCH_EVENTS, FINAL_EVENTS, type BatchEventName, type FinalEventName } from '../queue/messages.ts';
import { decryptSecret, WEBHOOK_SECRET_PREFIX } from './secret-box.ts';
import type { SealedSecret } from './secret-box.ts';

/** The events an endpoint can subscribe to: the final events and the batch's (src/queue/messages.ts). */
export type WebhookEventName = FinalEventName | BatchEventName;
export const WEBHOOK_EVENTS: readonly WebhookEventName[] = [...FINAL_EVENTS, ...BATCH_EVENTS];

/** What a delivery says: `error` exists for `generation.failed` only. */
export type WebhookEventData = (
  | { event: 'generation.completed'; generationId: string }
  | { event: 'generation.failed'; generationId: string; error: string }
  | { event: 'batch.completed'; batchId: string; completed: number; failed: number }
) & {
  /** A test event sent from the admin plane (SendTestEvent): the body ends with `"test":true`. */
  test?: boolean;
};

export interface SigningSecrets {
  /** The endpoint's secret now (decrypted). Signs both headers. */
  current: string;
  /**
   * The secret replaced by the last rotation; it also signs `webhook-signature` until 24 h
   * after `rotatedAt`, or until `validUntil` when the caller stored the expiry instead.
   */
  previous?: { secret: string; rotatedAt: Date } | { secret: string; validUntil: Date } | null | undefined;
}

export interface SignedWebhookRequest {
  /** The exact bytes to send; both signatures cover them. */
  body: Buffer;
  headers: Record<string, string>;
}

export const USER_AGENT = `docgen-webhooks/${pkg.version}`;

/** How long the previous secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 60 * 60 * 1000;

/** Standard Webhooks' suggested tolerance between `webhook-timestamp` and the receiver's clock. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/**
 * The body: `{"event":…,"payload":{"generationId":…[,"error":…]},"timestamp":…[,"test":true]}`
 * (for `batch.completed` the payload is `{"batchId":…,"completed":…,"failed":…}`) in this key
 * order, no whitespace. `timestamp` is the event's time in Unix seconds, so the body is the same
 * on every attempt of a delivery.
 */
export function buildWebhookBody(data: WebhookEventData, timestamp: number): Buffer {
  if (!WEBHOOK_EVENTS.includes(data.event)) throw invalid(`unknown event ${JSON.stringify(data.event)}`);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw invalid('timestamp must be whole Unix seconds');
  let payload: { generationId: string; error?: string } | { batchId: string; completed: number; failed: number };
  if (data.event === 'batch.completed') {
    if (typeof data.batchId !== 'string' || data.batchId === '') throw invalid('batchId is empty');
    if (!Number.isSafeInteger(data.completed) || !Number.isSafeInteger(data.failed))
      throw invalid('batch.completed needs its counts');
    payload = { batchId: data.batchId, completed: data.completed, failed: data.failed };
  } else {
    if (typeof data.generationId !== 'string' || data.generationId === '') throw invalid('generationId is empty');
    if (data.event === 'generation.failed') {
      if (typeof data.error !== 'string') throw invalid('generation.failed needs an error message');
      payload = { generationId: data.generationId, error: data.error };
    } else payload = { generationId: data.generationId };
  }
  const body =
    data.test === true
      ? { event: data.event, payload, timestamp, test: true }
      : { event: data.event, payload, timestamp };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * Body and headers of one attempt. `eventTimestamp` (Unix seconds) goes in the body;
 * `now` is the attempt's time: it becomes `webhook-timestamp` and decides whether the
 * previous secret still signs.
 */
export function buildSignedRequest(input: {
  deliveryId: string;
  data: WebhookEventData;
  eventTimestamp: number;
  secrets: SigningSecrets;
  now?: Date;
}): SignedWebhookRequest {
  // Header values: keep them to a safe alphabet so nothing can split a header line.
  if (!/^dlv_[A-Za-z0-9_-]{1,100}$/.test(input.deliveryId)) throw invalid('deliveryId must look like dlv_…');
  const now = input.now ?? new Date();
  const body = buildWebhookBody(input.data, input.eventTimestamp);
  const attemptTimestamp = Math.floor(now.getTime() / 1000);
  const signatures = activeSecrets(input.secrets, now).map((secret) =>
    standardWebhookSignature(input.deliveryId, attemptTimestamp, body, secret),
  );
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'X-Service-Event': input.data.event,
      'X-Service-Delivery': input.deliveryId,
      'X-Service-Signature': serviceSignature(body, input.secrets.current),
      'webhook-id': input.deliveryId,
      'webhook-timestamp': String(attemptTimestamp),
      'webhook-signature': signatures.join(' '),
    },
  };
}

/** The secrets that sign at `now`: the current one, then the previous one while it is still valid. */
export function activeSecrets(secrets: SigningSecrets, now: Date): string[] {
  const out = [secrets.current];
  const prev = secrets.previous;
  if (prev && prev.secret !== secrets.current) {
    const t = now.getTime();
    const valid =
      'validUntil' in prev
        ? t < prev.validUntil.getTime()
        : t >= prev.rotatedAt.getTime() && t < prev.rotatedAt.getTime() + PREVIOUS_SECRET_VALIDITY_MS;
    if (valid) out.push(prev.secret);
  }
  return out;
}

/**
 * Decrypts an endpoint's stored secrets into SigningSecrets. The previous secret is only
 * opened while it still signs. `context` is the one the secrets were sealed under (the
 * endpoint id). Throws DomainError INTERNAL when a secret cannot be decrypted.
 */
export function openSigningSecrets(
  stored: {
    secret: SealedSecret | string;
    previousSecret?: SealedSecret | string | null;
    previousSecretExpiresAt?: Date | null;
  },
  key: Buffer,
  context: string,
  now: Date = new Date(),
): SigningSecrets {
  const current = decryptSecret(stored.secret, key, context);
  const until = stored.previousSecretExpiresAt;
  if (!stored.previousSecret || !until || now.getTime() >= until.getTime()) return { current };
  return { current, previous: { secret: decryptSecret(stored.previousSecret, key, context), validUntil: until } };
}

/** `sha256=` + lower-case hex HMAC-SHA256 of the body, keyed with the UTF-8 bytes of the whole secret. */
export function serviceSignature(body: Buffer | string, secret: string): string {
  return 'sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/** One Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export function standardWebhookSignature(id: string, timestamp: number, body: Buffer | string, secret: string): string {
  const mac = createHmac('sha256', standardWebhookKey(secret));
  mac.update(`${id}.${timestamp}.`, 'utf8');
  mac.update(body);
  return 'v1,' + mac.digest('base64');
}

/** The Standard Webhooks HMAC key: the base64-decoded part after `whsec_`. */
export function standardWebhookKey(secret: string): Buffer {
  const b64 = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  const key = Buffer.from(b64, 'base64');
  if (key.length === 0) throw invalid('the signing secret is empty');
  return key;
}

/** Checks an `X-Service-Signature` value; timing-safe. */
export function verifyServiceSignature(body: Buffer | string, header: string | undefined, secret: string): boolean {
  if (typeof header !== 'string') return false;
  return safeEqual(header, serviceSignature(body, secret));
}

/**
 * Checks Standard Webhooks headers against one secret: some `v1,` entry of
 * `webhook-signature` must match and `webhook-timestamp` be within the tolerance of `now`.
 */
export function verifyStandardWebhook(
  headers: { id: string | undefined; timestamp: string | undefined; signature: string | undefined },
  body: Buffer | string,
  secret: string,
  options: { now?: Date; toleranceSeconds?: number } = {},
): boolean {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d{1,15}$/.test(timestamp)) return false;
  const ts = Number(timestamp);
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - ts) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return false;
  const expected = standardWebhookSignature(id, ts, body, secret);
  // Check every entry (no early exit) so timing reveals nothing about which one matched.
  let ok = false;
  for (const entry of signature.split(' ')) {
    if (entry !== '' && safeEqual(entry, expected)) ok = true;
  }
  return ok;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  // Lengths are public (fixed by the algorithm); only the content comparison must be constant-time.
  return x.length === y.length && timingSafeEqual(x, y);
}

function invalid(why: string): DomainError {
  return new DomainError('INTERNAL', `Cannot build the webhook request: ${why}`);
}
