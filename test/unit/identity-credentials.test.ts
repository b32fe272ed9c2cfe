import { describe, expect, it } from 'vitest';
import { checkNewPassword, hashPassword, verifyAgainstDummy, verifyPassword } from '../../src/identity/passwords.ts';
import {
  clearedSessionCookie,
  isAllowedOrigin,
  isPortalHost,
  readSessionCookie,
  sessionCookie,
} from '../../src/auth/session-cookie.ts';
import { hashSecretToken, isWellFormedToken, newSecretToken } from '../../src/auth/secret-tokens.ts';

describe('passwords', () => {
  it('hashes with scrypt and a per-user salt, and verifies', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse battery'), hashPassword('correct horse battery')]);
    // N = 2^17, r = 8, p = 1: OWASP's scrypt minimum.
    expect(a).toMatch(/^scrypt\$17\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct');
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterz', a)).toBe(false);
    expect(await verifyPassword('anything', 'md5$abc')).toBe(false);
    expect(await verifyAgainstDummy('anything')).toBe(false);
  });

  it('refuses short, common, repetitive, sequential and email-like passwords', () => {
    const refused = [
      'elevenchars',
      'password1234',
      'Password1234',
      '111111111111',
      'abababababab',
      '123456789012',
      'lkjihgfedcba',
      'jane.doe@example.com',
      'jane.doe1234',
    ];
    for (const p of refused) expect(() => checkNewPassword(p, 'jane.doe@example.com'), p).toThrow(/password/);
    expect(checkNewPassword('plum tree at dawn', 'jane.doe@example.com')).toBe('plum tree at dawn');
    expect(() => checkNewPassword(undefined, 'a@b.c')).toThrow(/at least 12/);
  });
});

describe('session cookie, origin and host', () => {
  it('over https: `__Host-docgen_session`, Secure, Path=/, no Domain; over plain http: `docgen_session`', () => {
    expect(sessionCookie('abc', { portalBaseUrl: 'https://admin.example', maxAgeSeconds: 60 })).toBe(
      '__Host-docgen_session=abc; HttpOnly; SameSite=Lax; Path=/; Max-Age=60; Secure',
    );
    expect(clearedSessionCookie({ portalBaseUrl: 'http://127.0.0.1:8081' })).toBe(
      'docgen_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0',
    );
    expect(readSessionCookie('a=1; docgen_session=xyz; b=2', 'http://127.0.0.1:8081')).toBe('xyz');
    expect(readSessionCookie('docgen_session=', 'http://127.0.0.1:8081')).toBeUndefined();
    // Over https only the __Host- cookie counts: a plain one may have been planted by a sibling host.
    expect(readSessionCookie('docgen_session=planted', 'https://admin.example')).toBeUndefined();
    expect(readSessionCookie('docgen_session=planted; __Host-docgen_session=real', 'https://admin.example')).toBe(
      'real',
    );
  });

  it('accepts the portal origin, or a loopback alias of a loopback portal addressed as such; nothing else', () => {
    expect(isAllowedOrigin('https://admin.internal', 'admin.internal', 'https://admin.internal')).toBe(true);
    expect(isAllowedOrigin('http://localhost:8081', 'localhost:8081', 'http://127.0.0.1:8081')).toBe(true);
    expect(isAllowedOrigin('https://evil.example', 'admin.internal', 'https://admin.internal')).toBe(false);
    expect(isAllowedOrigin('http://admin.internal', 'admin.internal:8081', 'https://admin.internal')).toBe(false);
    expect(isAllowedOrigin(null, 'admin.internal', 'https://admin.internal')).toBe(false);
    expect(isAllowedOrigin('null', 'admin.internal', 'https://admin.internal')).toBe(false);
    // DNS rebinding: the page's origin and the Host agree, but name another site.
    expect(isAllowedOrigin('http://rebind.evil:8081', 'rebind.evil:8081', 'http://127.0.0.1:8081')).toBe(false);
  });

  it('serves browser calls only when Host names the portal (DNS rebinding)', () => {
    expect(isPortalHost('admin.example', 'https://admin.example')).toBe(true);
    expect(isPortalHost('ADMIN.example', 'https://admin.example')).toBe(true);
    expect(isPortalHost('rebind.evil', 'https://admin.example')).toBe(false);
    expect(isPortalHost('127.0.0.1:8081', 'http://127.0.0.1:8081')).toBe(true);
    expect(isPortalHost('localhost:8081', 'http://127.0.0.1:8081')).toBe(true);
    expect(isPortalHost('[::1]:8081', 'http://127.0.0.1:8081')).toBe(true);
    expect(isPortalHost('localhost:9999', 'http://127.0.0.1:8081')).toBe(false);
    expect(isPortalHost('rebind.evil:8081', 'http://127.0.0.1:8081')).toBe(false);
    expect(isPortalHost(null, 'http://127.0.0.1:8081')).toBe(false);
  });

  it('issues 256-bit tokens and stores only their SHA-256', () => {
    const token = newSecretToken();
    expect(isWellFormedToken(token)).toBe(true);
    expect(hashSecretToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(isWellFormedToken('short')).toBe(false);
  });
});

describe('client address for sign-in limits', () => {
  it('is the TCP peer, or the X-Forwarded-For entry the trusted proxies appended', async () => {
    const { clientAddress } = await import('../../src/rpc/admin-access-interceptor.ts');
    expect(clientAddress('10.0.0.5', '203.0.113.9', 0)).toBe('10.0.0.5');
    expect(clientAddress('10.0.0.5', '203.0.113.9', 1)).toBe('203.0.113.9');
    // A client that sends its own X-Forwarded-For cannot choose its address.
    expect(clientAddress('10.0.0.5', '1.2.3.4, 203.0.113.9', 1)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.5', '1.2.3.4, 198.51.100.7, 10.0.0.9', 2)).toBe('198.51.100.7');
    expect(clientAddress('10.0.0.5', undefined, 1)).toBe('10.0.0.5');
    expect(clientAddress('10.0.0.5', ['1.2.3.4', '203.0.113.9'], 1)).toBe('203.0.113.9');
  });
});
