// The admin listener's defences for browsers (issue #32, LOW 4 and 5), over real HTTP: a
// portal served over https (DOCGEN_PORTAL_BASE_URL=https://portal.test, as behind a TLS
// ingress) gets the `__Host-docgen_session` cookie; calls naming another Host (a DNS-rebinding
// page) are refused; and a 1 MiB SignIn body is refused from its Content-Length, before the
// body is even sent in full.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_RPC_MAX_BODY_BYTES } from '../../src/config/limits.ts';
import { startApiStack, type ApiStack } from './api-stack.ts';

const PORTAL = 'https://portal.test';
const PASSWORD = 'a passphrase for https';
let stack: ApiStack;
let email = '';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, any>;
}

function call(
  method: string,
  body: object,
  headers: { host?: string; origin?: string; cookie?: string; authorization?: string } = {},
): Promise<Answer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: stack.app.adminPort,
        method: 'POST',
        path: `/docgen.admin.v1.${method}`,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(payload)),
          host: headers.host ?? 'portal.test',
          ...(headers.origin === undefined ? { origin: PORTAL } : headers.origin ? { origin: headers.origin } : {}),
          ...(headers.cookie ? { cookie: headers.cookie } : {}),
          ...(headers.authorization ? { authorization: headers.authorization } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : {} });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

beforeAll(async () => {
  stack = await startApiStack({ env: { DOCGEN_PORTAL_BASE_URL: PORTAL } });
  const workspaceId = await stack.workspace('https portal');
  email = 'https.user@example.com';
  const invited = await stack.admin.users.inviteUser({ workspaceId, email, role: 1 });
  expect(invited.inviteUrl.startsWith(`${PORTAL}/invite/`)).toBe(true);
  const accepted = await call('SessionService/AcceptInvitation', {
    token: invited.inviteUrl.slice(`${PORTAL}/invite/`.length),
    password: PASSWORD,
  });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('session cookie over https', () => {
  it('is __Host-docgen_session: Secure, Path=/, no Domain; the unprefixed name is not accepted', async () => {
    const signedIn = await call('SessionService/SignIn', { email, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    const cookie = (signedIn.headers['set-cookie'] ?? [])[0] ?? '';
    expect(cookie).toMatch(/^__Host-docgen_session=[A-Za-z0-9_-]{20,}; /);
    const attributes = cookie.split('; ').slice(1);
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Path=/', 'Secure']));
    expect(attributes.some((a) => /^domain=/i.test(a))).toBe(false);
    const pair = cookie.split(';')[0]!;
    const me = await call('SessionService/GetCurrentSession', {}, { cookie: pair });
    expect(me.body.user?.email).toBe(email);
    // The same id under the plain name (as a sibling subdomain could plant it) is nobody.
    const planted = await call('SessionService/GetCurrentSession', {}, { cookie: pair.replace('__Host-', '') });
    expect(planted.status).toBe(401);
    expect(planted.body.user).toBeUndefined();
  });
});

describe('Host header (DNS rebinding)', () => {
  it('refuses browser calls addressed to another host, signed in or not; the operator token is unaffected', async () => {
    const port = stack.app.adminPort;
    const rebound = { host: `rebind.evil:${port}`, origin: `http://rebind.evil:${port}` };
    const signIn = await call('SessionService/SignIn', { email, password: PASSWORD }, rebound);
    expect(signIn.status).toBe(403);
    expect(signIn.body.message).toMatch(/not the portal's host/);
    expect(signIn.headers['set-cookie']).toBeUndefined();
    const accept = await call(
      'SessionService/AcceptInvitation',
      { token: 'x'.repeat(43), password: PASSWORD },
      rebound,
    );
    expect(accept.status).toBe(403);
    const operator = await call(
      'WorkspaceService/ListWorkspaces',
      {},
      { ...rebound, authorization: `Bearer ${stack.deps.adminToken}` },
    );
    expect(operator.status).toBe(200);
    // Addressed to the portal, the same sign-in works.
    expect((await call('SessionService/SignIn', { email, password: PASSWORD })).status).toBe(200);
  });
});

describe('session RPC body limit', () => {
  it('refuses a 1 MiB SignIn body from its Content-Length, before the body is sent', async () => {
    const size = 1024 * 1024;
    expect(size).toBeGreaterThan(SESSION_RPC_MAX_BODY_BYTES);
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: stack.app.adminPort,
          method: 'POST',
          path: '/docgen.admin.v1.SessionService/SignIn',
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': String(size), host: 'portal.test' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
            }),
          );
        },
      );
      req.on('error', reject);
      // Only the first kilobyte is sent: the answer must come without the rest.
      req.write(`{"email":"${'a'.repeat(1000)}`);
    });
    expect(answer.body.code).toBe('resource_exhausted');
    expect(answer.body.message).toMatch(/readMaxBytes/);
    // The other admin calls keep their large limit (asset uploads): the same body size is read.
    const big = await call('WorkspaceService/ListWorkspaces', { pad: 'x'.repeat(size) } as object, {
      authorization: `Bearer ${stack.deps.adminToken}`,
    });
    expect(big.body.code).not.toBe('resource_exhausted');
  });
});
