import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.ts';
import {
  decryptSecret,
  encryptSecret,
  generateWebhookSecret,
  isWebhookSecret,
  sealSecret,
} from '../../src/webhooks/secret-box.ts';

const key = randomBytes(32);

describe('webhook secrets', () => {
  it('are whsec_ + base64 of 32 random bytes, all different', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const s = generateWebhookSecret();
      expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
      expect(isWebhookSecret(s)).toBe(true);
      seen.add(s);
    }
    expect(seen.size).toBe(200);
    expect(isWebhookSecret('whsec_short')).toBe(false);
    expect(isWebhookSecret('sk_' + 'A'.repeat(44))).toBe(false);
  });
});

describe('secret box', () => {
  it('round-trips the compact string and the document form', () => {
    const secret = generateWebhookSecret();
    const compact = encryptSecret(secret, key, 'whe_1');
    expect(compact).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(decryptSecret(compact, key, 'whe_1')).toBe(secret);

    const doc = sealSecret(secret, key, 'whe_1');
    expect(Object.keys(doc).sort()).toEqual(['data', 'iv', 'tag', 'v']);
    expect(Buffer.from(doc.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(doc.tag, 'base64')).toHaveLength(16);
    // A MongoDB round trip turns it into plain JSON-like data; it must still open.
    expect(decryptSecret(JSON.parse(JSON.stringify(doc)), key, 'whe_1')).toBe(secret);
  });

  it('uses a fresh IV every time', () => {
    const secret = generateWebhookSecret();
    expect(encryptSecret(secret, key)).not.toBe(encryptSecret(secret, key));
  });

  it('never contains the secret or its key bytes', () => {
    const secret = generateWebhookSecret();
    const compact = encryptSecret(secret, key);
    const doc = JSON.stringify(sealSecret(secret, key));
    const body = secret.slice(6);
    for (const text of [compact, doc]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(body);
      expect(text).not.toContain(Buffer.from(body, 'base64').toString('base64url'));
      expect(text).not.toContain(Buffer.from(secret).toString('base64'));
      expect(text).not.toContain(Buffer.from(secret).toString('hex'));
    }
  });

  it('detects tampering of ciphertext, tag and IV', () => {
    const secret = generateWebhookSecret();
    const doc = sealSecret(secret, key);
    const flip = (b64: string, i: number) => {
      const b = Buffer.from(b64, 'base64');
      b[i % b.length]! ^= 0x01;
      return b.toString('base64');
    };
    for (const field of ['data', 'tag', 'iv'] as const) {
      expect(() => decryptSecret({ ...doc, [field]: flip(doc[field], 3) }, key)).toThrow(DomainError);
    }
    const compact = encryptSecret(secret, key);
    const parts = compact.split('.');
    const data = Buffer.from(parts[3]!, 'base64url');
    data[0]! ^= 0x80;
    parts[3] = data.toString('base64url');
    expect(() => decryptSecret(parts.join('.'), key)).toThrow(/cannot be decrypted/);
    // Truncated ciphertext
    expect(() => decryptSecret({ ...doc, data: doc.data.slice(0, 8) }, key)).toThrow(DomainError);
  });

  it('refuses another key, another context, and malformed values', () => {
    const secret = generateWebhookSecret();
    const compact = encryptSecret(secret, key, 'whe_1');
    expect(() => decryptSecret(compact, randomBytes(32), 'whe_1')).toThrow(DomainError);
    expect(() => decryptSecret(compact, key, 'whe_2')).toThrow(DomainError);
    expect(() => decryptSecret(compact, key)).toThrow(DomainError);
    expect(() => decryptSecret('v2.a.b.c', key)).toThrow(DomainError);
    expect(() => decryptSecret('not sealed', key)).toThrow(DomainError);
    expect(() => decryptSecret({ v: 2 } as never, key)).toThrow(DomainError);
    expect(() => encryptSecret(secret, randomBytes(16))).toThrow(/32 bytes/);
  });

  it('reports failures as INTERNAL domain errors', () => {
    try {
      decryptSecret(encryptSecret('whsec_x', key), randomBytes(32));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('INTERNAL');
    }
  });
});
