// The receiver side here is written with node:crypto only, the way a client following
// docs/webhooks.md would, so the test checks the wire format rather than our helpers.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { randomBytes } from 'node:crypto';
import { generateWebhookSecret, sealSecret } from '../../src/webhooks/secret-box.ts';
import {
  activeSecrets,
  buildSignedRequest,
  buildWebhookBody,
  openSigningSecrets,
  PREVIOUS_SECRET_VALIDITY_MS,
  verifyServiceSignature,
  verifyStandardWebhook,
} from '../../src/webhooks/signing.ts';

function receiverVerifies(rawBody: Buffer, header: string, secret: string): boolean {
  const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

// Standard Webhooks, by hand: key = base64-decoded part after whsec_, content = id.timestamp.body.
function standardReceiverVerifies(rawBody: Buffer, headers: Record<string, string>, secret: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${rawBody.toString('utf8')}`;
  const expected = Buffer.from(createHmac('sha256', key).update(signed).digest('base64'));
  let ok = false;
  for (const entry of (headers['webhook-signature'] ?? '').split(' ')) {
    const [version, sig] = entry.split(',');
    if (version !== 'v1' || !sig) continue;
    const given = Buffer.from(sig);
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}

const now = new Date('2026-11-21T08:00:00.500Z');

describe('webhook body', () => {
  it('is exactly event, payload, timestamp in that order', () => {
    expect(buildWebhookBody({ event: 'generation.completed', generationId: 'gen_1' }, 1763712000).toString()).toBe(
      '{"event":"generation.completed","payload":{"generationId":"gen_1"},"timestamp":1763712000}',
    );
    expect(
      buildWebhookBody(
        { event: 'generation.failed', generationId: 'gen_2', error: 'Unknown variable "x"' },
        1763712001,
      ).toString(),
    ).toBe(
      '{"event":"generation.failed","payload":{"generationId":"gen_2","error":"Unknown variable \\"x\\""},"timestamp":1763712001}',
    );
  });

  it('never carries error on generation.completed and requires it on generation.failed', () => {
    const body = buildWebhookBody({ event: 'generation.completed', generationId: 'gen_1', error: 'x' } as never, 1);
    expect(JSON.parse(body.toString()).payload).toEqual({ generationId: 'gen_1' });
    expect(() => buildWebhookBody({ event: 'generation.failed', generationId: 'gen_1' } as never, 1)).toThrow(/error/);
  });

  it('rejects unknown events, empty ids and non-integer timestamps', () => {
    expect(() => buildWebhookBody({ event: 'generation.started', generationId: 'gen_1' } as never, 1)).toThrow();
    expect(() => buildWebhookBody({ event: 'generation.completed', generationId: '' }, 1)).toThrow();
    expect(() => buildWebhookBody({ event: 'generation.completed', generationId: 'gen_1' }, 1.5)).toThrow();
    expect(() => buildWebhookBody({ event: 'generation.completed', generationId: 'gen_1' }, Date.now())).not.toThrow();
  });
});

describe('signed webhook request', () => {
  const secret = generateWebhookSecret();

  it('has the headers of docs/interface.md#webhook-request', () => {
    const { body, headers } = buildSignedRequest({
      deliveryId: 'dlv_65a1b2c3d4e5f60718293a4b',
      data: { event: 'generation.completed', generationId: 'gen_1' },
      eventTimestamp: 1795248000,
      secrets: { current: secret },
      now,
    });
    expect(headers['Content-Type']).toBe('application/json');
    expect(headers['X-Service-Event']).toBe('generation.completed');
    expect(headers['X-Service-Delivery']).toBe('dlv_65a1b2c3d4e5f60718293a4b');
    expect(headers['User-Agent']).toBe(`docgen-webhooks/${pkg.version}`);
    expect(headers['X-Service-Signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(headers['webhook-id']).toBe('dlv_65a1b2c3d4e5f60718293a4b');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(JSON.parse(body.toString()).timestamp).toBe(1795248000);
  });

  it('verifies at a node:crypto receiver, for both events, with a timing-safe comparison', () => {
    for (const data of [
      { event: 'generation.completed', generationId: 'gen_1' } as const,
      { event: 'generation.failed', generationId: 'gen_2', error: 'Template tpl_9 has no published version' } as const,
    ]) {
      const { body, headers } = buildSignedRequest({
        deliveryId: 'dlv_1',
        data,
        eventTimestamp: 1795248000,
        secrets: { current: secret },
        now,
      });
      expect(receiverVerifies(body, headers['X-Service-Signature']!, secret)).toBe(true);
      expect(standardReceiverVerifies(body, headers, secret)).toBe(true);
      expect(verifyServiceSignature(body, headers['X-Service-Signature'], secret)).toBe(true);
      const parsed = JSON.parse(body.toString());
      expect(parsed.event).toBe(data.event);
      expect(parsed.payload).toEqual(
        'error' in data ? { generationId: data.generationId, error: data.error } : { generationId: data.generationId },
      );
    }
  });

  it('fails verification for a changed body, another secret, or a re-serialised body', () => {
    const { body, headers } = buildSignedRequest({
      deliveryId: 'dlv_1',
      data: { event: 'generation.completed', generationId: 'gen_1' },
      eventTimestamp: 1795248000,
      secrets: { current: secret },
      now,
    });
    const sig = headers['X-Service-Signature']!;
    expect(receiverVerifies(Buffer.from(body.toString().replace('gen_1', 'gen_2')), sig, secret)).toBe(false);
    expect(receiverVerifies(body, sig, generateWebhookSecret())).toBe(false);
    expect(receiverVerifies(Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2)), sig, secret)).toBe(
      false,
    );
    expect(standardReceiverVerifies(body, { ...headers, 'webhook-timestamp': '1' }, secret)).toBe(false);
    expect(verifyServiceSignature(body, undefined, secret)).toBe(false);
    expect(verifyServiceSignature(body, 'sha256=00', secret)).toBe(false);
  });

  it('keys X-Service-Signature with the whole whsec_ string and Standard Webhooks with the decoded key', () => {
    const { body, headers } = buildSignedRequest({
      deliveryId: 'dlv_1',
      data: { event: 'generation.completed', generationId: 'gen_1' },
      eventTimestamp: 1795248000,
      secrets: { current: secret },
      now,
    });
    const decoded = Buffer.from(secret.slice(6), 'base64');
    expect(headers['X-Service-Signature']).toBe(
      'sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex'),
    );
    expect(headers['X-Service-Signature']).not.toBe(
      'sha256=' + createHmac('sha256', decoded).update(body).digest('hex'),
    );
  });

  it('signs with both secrets for 24 h after a rotation, then with the current one only', () => {
    const previous = generateWebhookSecret();
    const current = generateWebhookSecret();
    const rotatedAt = new Date(now.getTime() - 60_000);
    const build = (at: Date) =>
      buildSignedRequest({
        deliveryId: 'dlv_1',
        data: { event: 'generation.completed', generationId: 'gen_1' },
        eventTimestamp: 1795248000,
        secrets: { current, previous: { secret: previous, rotatedAt } },
        now: at,
      });

    const soon = build(now);
    expect(soon.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    // A receiver still configured with the old secret, and one already updated, both verify.
    expect(standardReceiverVerifies(soon.body, soon.headers, previous)).toBe(true);
    expect(standardReceiverVerifies(soon.body, soon.headers, current)).toBe(true);
    expect(
      verifyStandardWebhook(
        {
          id: soon.headers['webhook-id'],
          timestamp: soon.headers['webhook-timestamp'],
          signature: soon.headers['webhook-signature'],
        },
        soon.body,
        previous,
        { now },
      ),
    ).toBe(true);
    // X-Service-Signature: current secret only.
    expect(receiverVerifies(soon.body, soon.headers['X-Service-Signature']!, current)).toBe(true);
    expect(receiverVerifies(soon.body, soon.headers['X-Service-Signature']!, previous)).toBe(false);

    const later = build(new Date(rotatedAt.getTime() + PREVIOUS_SECRET_VALIDITY_MS));
    expect(later.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(standardReceiverVerifies(later.body, later.headers, previous)).toBe(false);
    expect(standardReceiverVerifies(later.body, later.headers, current)).toBe(true);
  });

  it('activeSecrets: previous only inside the 24 h window', () => {
    const rotatedAt = new Date('2026-11-20T08:00:00Z');
    const s = { current: 'whsec_a', previous: { secret: 'whsec_b', rotatedAt } };
    expect(activeSecrets(s, new Date(rotatedAt.getTime() + PREVIOUS_SECRET_VALIDITY_MS - 1))).toEqual([
      'whsec_a',
      'whsec_b',
    ]);
    expect(activeSecrets(s, new Date(rotatedAt.getTime() + PREVIOUS_SECRET_VALIDITY_MS))).toEqual(['whsec_a']);
    expect(activeSecrets({ current: 'whsec_a' }, now)).toEqual(['whsec_a']);
    expect(activeSecrets({ current: 'whsec_a', previous: null }, now)).toEqual(['whsec_a']);
    // The same rule from a stored expiry instead of the rotation time.
    const validUntil = new Date(rotatedAt.getTime() + PREVIOUS_SECRET_VALIDITY_MS);
    const e = { current: 'whsec_a', previous: { secret: 'whsec_b', validUntil } };
    expect(activeSecrets(e, new Date(validUntil.getTime() - 1))).toEqual(['whsec_a', 'whsec_b']);
    expect(activeSecrets(e, validUntil)).toEqual(['whsec_a']);
    // A previous secret equal to the current one is not listed twice.
    expect(activeSecrets({ current: 'whsec_a', previous: { secret: 'whsec_a', rotatedAt } }, rotatedAt)).toEqual([
      'whsec_a',
    ]);
  });

  it('verifyStandardWebhook enforces the timestamp tolerance', () => {
    const { body, headers } = buildSignedRequest({
      deliveryId: 'dlv_1',
      data: { event: 'generation.completed', generationId: 'gen_1' },
      eventTimestamp: 1795248000,
      secrets: { current: secret },
      now,
    });
    const h = {
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
    };
    expect(verifyStandardWebhook(h, body, secret, { now })).toBe(true);
    expect(verifyStandardWebhook(h, body, secret, { now: new Date(now.getTime() + 301_000) })).toBe(false);
    expect(verifyStandardWebhook({ ...h, id: 'dlv_2' }, body, secret, { now })).toBe(false);
  });

  it('refuses delivery ids that could break a header', () => {
    const base = {
      data: { event: 'generation.completed', generationId: 'gen_1' } as const,
      eventTimestamp: 1,
      secrets: { current: secret },
    };
    expect(() => buildSignedRequest({ ...base, deliveryId: 'dlv_1\r\nX-Evil: 1' })).toThrow();
    expect(() => buildSignedRequest({ ...base, deliveryId: 'evt_1' })).toThrow();
  });
});

describe('openSigningSecrets', () => {
  it('decrypts the stored secrets, the previous one only while it is valid', () => {
    const key = randomBytes(32);
    const current = generateWebhookSecret();
    const previous = generateWebhookSecret();
    const stored = {
      secret: sealSecret(current, key, 'whe_1'),
      previousSecret: sealSecret(previous, key, 'whe_1'),
      previousSecretExpiresAt: new Date(now.getTime() + 1000),
    };
    expect(openSigningSecrets(stored, key, 'whe_1', now)).toEqual({
      current,
      previous: { secret: previous, validUntil: stored.previousSecretExpiresAt },
    });
    expect(openSigningSecrets(stored, key, 'whe_1', new Date(now.getTime() + 1000))).toEqual({ current });
    expect(
      openSigningSecrets({ ...stored, previousSecret: null, previousSecretExpiresAt: null }, key, 'whe_1', now),
    ).toEqual({ current });
    expect(() => openSigningSecrets(stored, key, 'whe_2', now)).toThrow(/cannot be decrypted/);
  });
});
